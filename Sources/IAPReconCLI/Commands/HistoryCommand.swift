import Foundation
import IAPRecon

/// `iaprecon history`: one user's whole story, for support.
enum HistoryCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let lookup: UserHistory.Lookup
        if let id = command.value("transaction") {
            lookup = .transaction(id)
        } else if let id = command.value("order") {
            lookup = .order(id)
        } else if let id = command.positional("user-id") {
            lookup = .user(id)
        } else {
            throw command.usageError("name a user, --transaction or --order")
        }
        let database = try Store.open(path: command.databasePath, readOnly: true)
        let history: UserHistory
        do {
            history = try UserHistory.load(database, lookup)
        } catch let notFound as UserHistory.NotFound {
            console.err("Error: \(notFound)")
            return .failure
        }
        // On stderr, so the json and csv formats stay what scripts parse.
        if let caveat = history.caveat { console.err("Warning: \(caveat)") }
        switch command.value("format") ?? "table" {
        case "json": console.out(json(history))
        case "csv": console.out(csv(history))
        default:
            console.out(table(history))
            if case .transaction(let id) = lookup { try consumptionAnswers(database, transactionID: id).map(console.out) }
        }
        return .ok
    }

    /// What `consumption_requests.jsonl` answers Apple's `CONSUMPTION_REQUEST`s about the transaction, if it was asked.
    static func consumptionAnswers(_ database: Database, transactionID: String) throws -> String? {
        let answers = try ConsumptionRequestsReport.answers(database: database, transactionID: transactionID)
        guard !answers.isEmpty else { return nil }
        return "\nCONSUMPTION_REQUEST answers (Send Consumption Information body):\n" + answers.map { answer in
            "\(Timestamp.iso8601(answer.requestedMs)) \(answer.notificationUUID): \(JSONWriter.compact(answer.body))"
        }.joined(separator: "\n")
    }

    static func table(_ history: UserHistory) -> String {
        var table = TextTable(["time (UTC)", "event", "id", "product", "amount", "detail"])
        for event in history.events {
            table.add([String(Timestamp.iso8601(event.ms).prefix(19)).replacingOccurrences(of: "T", with: " "), event.event, event.id,
                       event.product, event.amount, event.detail])
        }
        let findings = history.findingIDs.isEmpty ? "no findings" : "\(history.findingIDs.count) finding(s)"
        return "user \(history.userID): \(history.events.count) events, \(findings)\n\n" + table.text
    }

    static func json(_ history: UserHistory) -> String {
        JSONWriter.pretty(.object([
            ("user_id", .string(history.userID)),
            ("finding_ids", .array(history.findingIDs.map { .string($0) })),
            ("events", .array(history.events.map { event in
                .object([
                    ("time", .string(Timestamp.iso8601(event.ms))), ("event", .string(event.event)), ("id", .string(event.id)),
                    ("product", .string(event.product)), ("amount", .string(event.amount)), ("detail", .string(event.detail)),
                    ("source", .string(event.source)),
                ])
            })),
        ])).trimmingCharacters(in: .newlines)
    }

    static func csv(_ history: UserHistory) -> String {
        var lines = ["time,event,id,product,amount,detail,source"]
        for event in history.events {
            lines.append([Timestamp.iso8601(event.ms), event.event, event.id, event.product, event.amount, event.detail, event.source]
                .map(CSV.textCell).joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }
}
