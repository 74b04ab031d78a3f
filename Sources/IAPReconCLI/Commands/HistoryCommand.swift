import Foundation
import IAPRecon

/// `iaprecon history`: one customer's story, for support.
enum HistoryCommand {
    /// What a support agent's terminal shows without wrapping.
    static let tableWidth = 120

    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let lookup = try lookup(command)
        let zone = try command.zone("tz")
        let window = UserHistory.Window(sinceMs: try since(command, zone), limit: try command.optionalInt("limit"))
        let database = try Store.open(path: command.databasePath, readOnly: true)
        let history: UserHistory
        do {
            history = try UserHistory.load(database, lookup, currency: command.value("currency"), zone: zone, window: window)
        } catch let notFound as UserHistory.NotFound {
            console.err("Error: \(Terminal.visible(notFound.description))")
            return .failure
        }
        // On stderr, so the json, csv and html formats stay what scripts parse.
        if let caveat = history.caveat { console.err("Warning: \(caveat)") }
        if let failure = history.events.spillFailure {
            console.err("Warning: this long story is held in memory, not sorted on disk: \(failure); set TMPDIR to a folder it may write")
        }
        let format = command.value("format") ?? "table"
        // A CSV has no header of its own to say it: on stderr, so the file stays what scripts parse.
        if format == "csv", let shown = history.shownEvents(zone) { console.err("Note: \(shown)") }
        // Written an event at a time: a customer's story can run to hundreds of thousands of events.
        switch format {
        case "json": console.streamOut { writeJSON(history, to: $0) }
        case "csv": console.streamOut { writeCSV(history, to: $0) }
        case "html": console.streamOut { history.writeHTML(zone, to: $0) }
        default:
            console.streamOut { writeTable(history, zone, to: $0) }
            if case .transaction(let id) = lookup {
                try consumptionAnswers(database, transactionID: id, zone: zone, currency: history.reportingCurrency).map(console.out)
            }
        }
        // A long story is read back from disk as it is written: what could not be read is said, not left out in silence.
        if let failure = history.events.readFailure {
            console.err("Error: the history stopped short: \(failure)")
            return .failure
        }
        return .ok
    }

    /// The key the command names, without the spaces a copy and paste brings along; an empty key or a
    /// token that is no UUID is a usage error, not a customer the store does not know.
    static func lookup(_ command: ParsedCommand) throws -> UserHistory.Lookup {
        let given: [(name: String, label: String, lookup: (String) -> UserHistory.Lookup)] = [
            ("transaction", "--transaction", UserHistory.Lookup.transaction), ("order", "--order", UserHistory.Lookup.order),
            ("original-transaction", "--original-transaction", UserHistory.Lookup.originalTransaction),
            ("app-account-token", "--app-account-token", UserHistory.Lookup.appAccountToken),
        ]
        for (name, label, lookup) in given {
            guard let value = command.value(name) else { continue }
            let key = try trimmed(value, label, command)
            if name == "app-account-token", !UserHistory.isUUID(key) {
                throw command.usageError("\(label) takes a UUID (8-4-4-4-12 hex digits, such as 7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47), not '\(key)'")
            }
            return lookup(key)
        }
        guard let id = command.positional("user-id") else {
            throw command.usageError("name a user, --transaction, --order, --original-transaction or --app-account-token")
        }
        return .user(try trimmed(id, "the user id", command))
    }

    /// `value` without the spaces, and the quotes, a copy and paste brings along: a key copied from a
    /// JSON log, a spreadsheet cell or a chat comes in quotes (`"u_1005"`, `“u_1005”`), and no store
    /// holds an id wrapped in them. A quote on one side only, or inside, is part of the key.
    private static func trimmed(_ value: String, _ label: String, _ command: ParsedCommand) throws -> String {
        var key = value.trimmingCharacters(in: .whitespacesAndNewlines)
        let pairs: [(Character, Character)] = [("\"", "\""), ("'", "'"), ("`", "`"), ("\u{201C}", "\u{201D}"), ("\u{2018}", "\u{2019}"),
                                                ("\u{201E}", "\u{201C}"), ("\u{00AB}", "\u{00BB}")]
        if key.count >= 2, let first = key.first, let last = key.last, pairs.contains(where: { $0 == (first, last) }) {
            key = String(key.dropFirst().dropLast()).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !key.isEmpty else { throw command.usageError("\(label) is empty: give the id to look up") }
        return key
    }

    /// `--since`: a day (`2026-11-01`, from its midnight in `zone`, as support reads dates), a time as the table shows
    /// it (`2026-11-01 10:15:03` on the wall clock of `zone`, or with the offset the table adds in an hour the clocks
    /// repeat), or an instant as `--as-of` takes it.
    static func since(_ command: ParsedCommand, _ zone: Zone) throws -> Int64? {
        guard let text = command.value("since")?.trimmingCharacters(in: .whitespaces) else { return nil }
        let bytes = Array(text.utf8)
        if bytes.count == 10, let midnight = Timestamp.parse(text + "T00:00:00Z"), Timestamp.day(midnight) == text {
            return zone.utc(fromLocal: midnight)
        }
        // A row's time pasted from the table is on the wall clock of --tz, as the day is: `--as-of`'s reading of the
        // same text in UTC would move the window by the zone's offset, and hide events the table showed after it.
        if bytes.count >= 19, bytes[10] == UInt8(ascii: " ") {
            let iso = String(decoding: bytes[..<10], as: UTF8.self) + "T" + String(decoding: bytes[11..<19], as: UTF8.self)
            if bytes.count == 19, let wall = Timestamp.parse(iso + "Z"), Timestamp.iso8601(wall).hasPrefix(iso) {
                return zone.utc(fromLocal: wall)
            }
            if bytes.count == 26, bytes[19] == UInt8(ascii: " "), let ms = Timestamp.parse(iso + String(decoding: bytes[20...], as: UTF8.self)) {
                return ms
            }
        }
        if bytes.count > 10, case .success(let ms) = ValueKind.instantMs(text) { return ms }
        throw command.usageError("--since takes a day (yyyy-MM-dd, such as 2026-11-01, from its midnight in --tz) or a time "
            + "(as the table shows it, in --tz, such as 2026-11-01 09:00:00, or ISO 8601 with its offset, such as 2026-11-01T09:00:00Z), not '\(text)'")
    }

    /// What `consumption_requests.jsonl` answers Apple's `CONSUMPTION_REQUEST`s about the transaction, if it was asked,
    /// in the history's zone and reporting currency, as a run with those settings writes it: for each request its
    /// time and notification, then a line per member of the body, its value as sent and what that says.
    static func consumptionAnswers(_ database: Database, transactionID: String, zone: Zone, currency: String) throws -> String? {
        let answers = try ConsumptionRequestsReport.answers(database: database, zone: zone, currency: currency, transactionID: transactionID)
        guard !answers.isEmpty else { return nil }
        return "\nCONSUMPTION_REQUEST answers (Send Consumption Information body):\n" + answers.map { answer in
            let members = answer.body.objectValue?.members ?? []
            let values = members.map { JSONWriter.compact($0.value) }
            let keyWidth = members.map(\.key.count).max() ?? 0
            // The meanings line up after the short values; a token's, after its own.
            let valueWidth = values.map(\.count).filter { $0 <= 8 }.max() ?? 0
            func padded(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count) + 2) }
            let meanings = answer.bodyMeanings
            let lines = zip(members, values).map { member, value in
                let key = "  " + padded(member.key, keyWidth)
                guard let meaning = meanings[member.key] else { return key + value }
                return key + padded(value, valueWidth) + meaning
            }
            let heading = "requested \(UserHistory.localTime(answer.requestedMs, zone)) \(zone.identifier), notification "
                + Terminal.visible(answer.notificationUUID)
            return ([heading] + lines.map { Terminal.visible($0) }).joined(separator: "\n")
        }.joined(separator: "\n\n")
    }

    /// The header, then one event per row in at most `tableWidth` columns: the id above its
    /// product, and the detail wrapped. No id is split across lines, where a copy would take half
    /// of it: a long one widens its column, or its line.
    static func writeTable(_ history: UserHistory, _ zone: Zone, to write: (String) -> Void) {
        var table = TextTable(["time (\(zone.identifier))", "event", "id / product", "amount", "detail"], numeric: [3],
                              maxWidth: tableWidth, wrapping: 4)
        table.keepsWordsWhole = true
        let rows = history.events.lazy.map { event -> [String] in
            let idAndProduct = [event.id, event.product].filter { !$0.isEmpty }.map(Terminal.visible).joined(separator: "\n")
            // A finding's kind goes to the detail, beside its severity, so the event column stays narrow.
            var name = event.event, detail = event.shownDetail
            if name.hasPrefix("FINDING "), let colon = detail.firstIndex(of: ":") {
                detail = detail[..<colon] + " " + name.dropFirst("FINDING ".count) + detail[colon...]
                name = "FINDING"
            }
            return [UserHistory.localTime(event.ms, zone), name, idAndProduct,
                    event.amount.isEmpty ? "" : event.amount + " " + event.currency, Terminal.visible(detail)]
        }
        for line in history.headerLines(zone).map(Terminal.visible).flatMap({ TextTable.wrap($0, tableWidth, keepingWords: true) }) { write(line + "\n") }
        write("\n")
        table.writeLines(of: rows) { write($0 + "\n") }
    }

    /// One JSON document: the header's values, then the events.
    static func writeJSON(_ history: UserHistory, to write: (String) -> Void) {
        let members: [(String, JSONValue)] = [
            ("subject", .string(history.subject)),
            ("notes", .array(history.notes.map { .string($0) })),
            ("user_id", .string(history.userID)),
            ("as_of", .string(Timestamp.iso8601(history.asOfMs))),
            // The events `--since` and `--limit` left out of `events`; the other members cover the whole story.
            ("events_not_shown", .number(String(history.eventsNotShown))),
            ("reporting_currency", .string(history.reportingCurrency)),
            ("spent", .string(history.spent)),
            ("refunded", .string(history.refunded)),
            ("purchases_without_fx_rate", .number(String(history.unconverted))),
            ("active_subscriptions", .array(history.activeSubscriptions.map { subscription in
                .object([
                    ("original_transaction_id", .string(subscription.originalTransactionID)), ("product", .string(subscription.productID)),
                    ("expires", .string(Timestamp.iso8601(subscription.expiresMs))), ("environment", .string(subscription.environment)),
                ])
            })),
            ("finding_ids", .array(history.findingIDs.map { .string($0) })),
            ("findings", .array(history.findings.map { finding in
                .object([("finding_id", .string(finding.findingID)), ("kind", .string(finding.kind)), ("severity", .string(finding.severity))])
            })),
            ("rejected_lines", .array(history.rejectedLines.map { line in
                .object([("source", .string(line.source)), ("reason", .string(line.reason))])
            })),
        ]
        // As JSONWriter.pretty writes the whole object, with `events` its last member.
        write("{\n")
        for (key, value) in members { write("  \(JSONWriter.quote(key)): \(JSONWriter.pretty(value, nestedAt: 1)),\n") }
        guard !history.events.isEmpty else {
            write("  \"events\": []\n}\n")
            return
        }
        write("  \"events\": [\n")
        for (index, event) in history.events.enumerated() {
            let object = JSONValue.object([
                ("time", .string(Timestamp.iso8601(event.ms))), ("event", .string(event.event)), ("id", .string(event.id)),
                ("product", .string(event.product)), ("amount", .string(event.amount)), ("currency", .string(event.currency)),
                ("detail", .string(event.detail)), ("source", .string(event.source)),
            ])
            write("    " + JSONWriter.pretty(object, nestedAt: 2) + (index + 1 < history.events.count ? ",\n" : "\n"))
        }
        write("  ]\n}\n")
    }

    /// One event per record; texts keep their characters except control ones, shown escaped as on the table.
    static func writeCSV(_ history: UserHistory, to write: (String) -> Void) {
        // Records end in CRLF, as in every CSV iaprecon writes (RFC 4180, CONTRACT.md §3).
        write("time,event,id,product,amount,currency,detail,source\r\n")
        for event in history.events {
            let texts = [event.event, event.id, event.product].map { CSV.textCell(Terminal.visible($0)) }
            let rest = [event.currency, event.detail, event.source].map { CSV.textCell(Terminal.visible($0)) }
            write(([Timestamp.iso8601(event.ms)] + texts + [CSV.numberCell(event.amount)] + rest).joined(separator: ",") + "\r\n")
        }
    }
}
