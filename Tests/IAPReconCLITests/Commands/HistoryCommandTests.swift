import Foundation
import Testing
@testable import IAPRecon

/// `iaprecon history` as a support agent types it and reads it.
@Suite("history command")
struct HistoryCommandTests {
    /// A workspace with the sample run's store.
    static func sampleStore() -> (Workspace, String)? {
        guard let work = try? Workspace() else { return nil }
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        return (work, db)
    }

    @Test("a key of the wrong kind exits 1 and says what the key is and the command that looks it up")
    func keyOfAnotherKind() throws {
        let (work, db) = try #require(Self.sampleStore())
        let result = work.iaprecon(["history", "2000000630024936", "--db", db])
        #expect(result.code == 1)
        #expect(result.err == "Error: '2000000630024936' is a transaction, not a user: iaprecon history --transaction 2000000630024936\n")
        #expect(result.out.isEmpty)
    }

    @Test("keys are trimmed of surrounding spaces; an empty key or a token that is no UUID is a usage error")
    func keysAsTyped() throws {
        let (work, db) = try #require(Self.sampleStore())
        let plain = work.iaprecon(["history", "u_1005", "--db", db])
        #expect(plain.code == 0)
        #expect(work.iaprecon(["history", " u_1005\t", "--db", db]).out == plain.out)
        #expect(work.iaprecon(["history", "--order", " OrderID_1795550691000_gems300 ", "--db", db]).out == plain.out)
        for arguments in [["history", ""], ["history", "--transaction", "  "], ["history", "--order", ""]] {
            let empty = work.iaprecon(arguments + ["--db", db])
            #expect(empty.code == 2, "\(arguments)")
            #expect(empty.err.hasPrefix("Error: "), "\(arguments)")
        }
        let notUUID = work.iaprecon(["history", "--app-account-token", "not-a-uuid", "--db", db])
        #expect(notUUID.code == 2)
        #expect(notUUID.err.contains("a UUID"))
        // Near miss: a UUID in capitals is a token.
        #expect(work.iaprecon(["history", "--app-account-token", "7D3F8E2A-5B1C-4C9E-9F0A-3E6B2D1C8A47", "--db", db]).code == 0)
    }

    @Test("a key pasted with the quotes around it (from a JSON log, a spreadsheet, a chat) finds the story the bare key finds")
    func quotedKeys() throws {
        let (work, db) = try #require(Self.sampleStore())
        let plain = work.iaprecon(["history", "u_1005", "--db", db])
        #expect(plain.code == 0)
        for quoted in ["'u_1005'", "\"u_1005\"", "\u{201C}u_1005\u{201D}", "\u{2018}u_1005\u{2019}", "`u_1005`", " \"u_1005\" ", "\" u_1005 \""] {
            let result = work.iaprecon(["history", quoted, "--db", db])
            #expect(result.code == 0, "\(quoted): \(result.err)")
            #expect(result.out == plain.out, "\(quoted)")
        }
        #expect(work.iaprecon(["history", "--order", "\"OrderID_1795550691000_gems300\"", "--db", db]).out == plain.out)
        #expect(work.iaprecon(["history", "--transaction", "'2000000630024936'", "--db", db]).code == 0)
        #expect(work.iaprecon(["history", "--app-account-token", "\"7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47\"", "--db", db]).code == 0)
        // The message names the key without the quotes, as the store would hold it.
        let unknown = work.iaprecon(["history", "'u_9'", "--db", db])
        #expect(unknown.code == 1)
        #expect(unknown.err == "Error: no user 'u_9' in the store\n")
        // Near misses: a quote on one side only, or inside the key, is part of the key; so are quotes that are the whole key.
        for kept in ["'u_1005", "u_1005\"", "u_10'05"] {
            let result = work.iaprecon(["history", kept, "--db", db])
            #expect(result.code == 1, "\(kept)")
            #expect(result.err.hasPrefix("Error: no user '\(kept)' in the store"), "\(kept): \(result.err)")
        }
        #expect(work.iaprecon(["history", "''", "--db", db]).code == 2)
    }

    @Test("--since and --limit show the latest events of a long story and say how many earlier ones are not shown; the header still covers the whole story")
    func sinceAndLimit() throws {
        let (work, db) = try #require(Self.sampleStore())
        // u_1002: install and sign-up on 11-20, then an order, its purchase and its delivery on each of 11-21, 11-25 and 11-27.
        let whole = work.iaprecon(["history", "u_1002", "--db", db])
        let header = whole.out.split(separator: "\n", omittingEmptySubsequences: false)
        func rows(_ text: String) -> [Substring] { text.split(separator: "\n").filter { $0.hasPrefix("2026-") } }
        // The header wraps at 120 columns: its words, as one text.
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(rows(whole.out).count == 11)

        let since = work.iaprecon(["history", "u_1002", "--since", "2026-11-25", "--db", db])
        #expect(since.code == 0, "\(since.err)")
        let sinceLines = since.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(sinceLines[0] == header[0], "the first line counts the whole story's events")
        #expect(Array(sinceLines[1...3]) == Array(header[1...3]), "the totals, subscriptions and findings cover the whole story")
        #expect(words(sinceLines[4...5].joined(separator: "\n")) == "showing the 6 events since 2026-11-25 00:00:00 UTC; 5 earlier events are not shown "
                + "(--since); the lines above cover the whole story")
        #expect(rows(since.out).count == 6)
        #expect(rows(since.out).first?.hasPrefix("2026-11-25 18:40:11  order") == true)

        let limit = work.iaprecon(["history", "u_1002", "--limit", "3", "--db", db])
        #expect(words(limit.out).contains(" showing the latest 3 events; 8 earlier events are not shown (--limit); the lines above cover the whole story time (UTC)"))
        #expect(rows(limit.out).map { String($0.prefix(19)) } == ["2026-11-27 11:05:00", "2026-11-27 11:05:19", "2026-11-27 11:05:22"])

        let both = work.iaprecon(["history", "u_1002", "--since", "2026-11-21", "--limit", "4", "--db", db])
        #expect(words(both.out).contains(" showing the latest 4 of the 9 events since 2026-11-21 00:00:00 UTC; 7 earlier events are not shown (--since, --limit); "))
        #expect(rows(both.out).count == 4)

        // --since is a day in --tz: Los Angeles' 11-25 starts at 08:00 UTC.
        let zoned = work.iaprecon(["history", "u_1002", "--since", "2026-11-25", "--tz", "America/Los_Angeles", "--db", db])
        #expect(words(zoned.out).contains(" showing the 6 events since 2026-11-25 00:00:00 America/Los_Angeles; 5 earlier events are not shown (--since); "))
        // An instant is taken as it is.
        let instant = work.iaprecon(["history", "u_1002", "--since", "2026-11-27T11:05:19Z", "--db", db])
        #expect(rows(instant.out).count == 2)

        // Near misses: a window that leaves nothing out says so, and lists every event.
        let all = work.iaprecon(["history", "u_1002", "--since", "2026-11-01", "--limit", "50", "--db", db])
        #expect(all.out.contains("\nshowing all 11 events: none is earlier than --since or past --limit\n"))
        #expect(rows(all.out) == rows(whole.out))
        let none = work.iaprecon(["history", "u_1002", "--since", "2026-12-01", "--db", db])
        #expect(none.code == 0)
        #expect(words(none.out).contains(" no events since 2026-12-01 00:00:00 UTC; 11 earlier events are not shown (--since); "))
        #expect(rows(none.out).isEmpty)

        for bad in [["--since", "yesterday"], ["--since", "2026-13-01"], ["--limit", "0"], ["--limit", "ten"]] {
            let refused = work.iaprecon(["history", "u_1002", "--db", db] + bad)
            #expect(refused.code == 2, "\(bad)")
            #expect(refused.err.hasPrefix("Error: "), "\(bad)")
        }
    }

    @Test("--since takes a time as the table shows it, a wall clock in --tz, so a row's time pasted from it starts the window at that row")
    func sinceAsTheTableShowsIt() throws {
        let (work, db) = try #require(Self.sampleStore())
        func rows(_ text: String) -> [Substring] { text.split(separator: "\n").filter { $0.hasPrefix("2026-") } }
        // u_1002's last three events are at 11:05:00, 11:05:19 and 11:05:22 UTC on 11-27: 12:05 in Berlin.
        let berlin = work.iaprecon(["history", "u_1002", "--tz", "Europe/Berlin", "--db", db])
        let shown = try #require(rows(berlin.out).first { $0.hasPrefix("2026-11-27 12:05:19") }.map { String($0.prefix(19)) })
        let pasted = work.iaprecon(["history", "u_1002", "--tz", "Europe/Berlin", "--since", shown, "--db", db])
        #expect(pasted.code == 0, "\(pasted.err)")
        #expect(rows(pasted.out).map { String($0.prefix(19)) } == ["2026-11-27 12:05:19", "2026-11-27 12:05:22"])
        #expect(pasted.out.contains("since 2026-11-27 12:05:19 Europe/Berlin"))
        // Near misses: in UTC the same wall clock is the same instant; a time with its offset is that instant in any --tz.
        let utc = work.iaprecon(["history", "u_1002", "--since", "2026-11-27 11:05:19", "--db", db])
        #expect(rows(utc.out).count == 2)
        let offset = work.iaprecon(["history", "u_1002", "--tz", "Europe/Berlin", "--since", "2026-11-27T11:05:19Z", "--db", db])
        #expect(rows(offset.out).count == 2)
        // In an hour the clocks repeat the table adds the offset: pasted with it, the time is that instant.
        let repeated = work.iaprecon(["history", "u_1002", "--tz", "Europe/Berlin", "--since", "2026-11-27 12:05:19 +01:00", "--db", db])
        #expect(rows(repeated.out).count == 2)
        #expect(work.iaprecon(["history", "u_1002", "--since", "2026-11-27 25:05:19", "--db", db]).code == 2)
    }

    @Test("--since and --limit in json, csv and html: the same events, and what was not shown said in each")
    func sinceAndLimitInOtherFormats() throws {
        let (work, db) = try #require(Self.sampleStore())
        let window = ["history", "u_1002", "--limit", "3", "--db", db]
        let json = work.iaprecon(window + ["--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect((object["events"] as? [Any])?.count == 3)
        #expect(object["events_not_shown"] as? Int == 8)
        #expect(object["spent"] as? String == "10.96")
        let whole = try #require(try JSONSerialization.jsonObject(with: Data(work.iaprecon(["history", "u_1002", "--db", db, "--format", "json"]).out.utf8))
            as? [String: Any])
        #expect(whole["events_not_shown"] as? Int == 0)

        let csv = work.iaprecon(window + ["--format", "csv"])
        // Records end in CRLF, which Swift reads as one character: split on it, not on "\n".
        #expect(csv.out.split(separator: "\r\n").count == 4)
        #expect(csv.out.hasSuffix("\r\n"))
        // CSV has no header lines of its own: what was not shown goes to stderr, so the file stays what scripts parse.
        #expect(csv.err == "Note: showing the latest 3 events; 8 earlier events are not shown (--limit)\n")
        #expect(work.iaprecon(["history", "u_1002", "--db", db, "--format", "csv"]).err.isEmpty)

        let html = work.iaprecon(window + ["--format", "html"])
        #expect(html.out.contains("showing the latest 3 events; 8 earlier events are not shown (--limit)"))
        #expect(html.out.components(separatedBy: "<tr>").count - 1 == 4, "a header row and three events")
    }

    @Test("no id on the table is split across lines, though the details still wrap within 120 columns")
    func idsNeverSplit() throws {
        let (work, db) = try #require(Self.sampleStore())
        let table = work.iaprecon(["history", "u_1008", "--db", db])
        #expect(table.code == 0)
        #expect(table.out.split(separator: "\n").contains { $0.contains("OrderID_1795228171000_premium_yearly") })
        for user in (1001...1033).map({ "u_\($0)" }) {
            let json = work.iaprecon(["history", user, "--db", db, "--format", "json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any], "\(user)")
            let events = try #require(object["events"] as? [[String: Any]], "\(user)")
            let lines = work.iaprecon(["history", user, "--db", db]).out.split(separator: "\n")
            for event in events {
                for id in [event["id"], event["product"]].compactMap({ $0 as? String }) where !id.isEmpty {
                    #expect(lines.contains { $0.contains(id) }, "\(user): \(id) is split")
                }
            }
        }
    }

    @Test("--tz shows a finding's UTC times on the table in that zone, as the time column; json and csv keep them as findings.csv has them")
    func findingTimesFollowTheZone() throws {
        let (work, db) = try #require(Self.sampleStore())
        let local = "refunded 2026-11-26 21:12:00 (REFUND_PRORATED 50000)", stored = "refunded 2026-11-27T05:12:00.000Z (REFUND_PRORATED 50000)"
        let table = work.iaprecon(["history", "u_1008", "--db", db, "--tz", "America/Los_Angeles"])
        #expect(table.code == 0)
        // The table wraps its details: read them as one text.
        let words = table.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains(local))
        #expect(!words.contains("2026-11-27T05:12:00.000Z"))
        for format in ["json", "csv"] {
            let script = work.iaprecon(["history", "u_1008", "--db", db, "--tz", "America/Los_Angeles", "--format", format])
            #expect(script.out.contains(stored), "\(format)")
            #expect(!script.out.contains(local), "\(format)")
        }
        // Near miss: the UTC table shows the detail as stored.
        #expect(work.iaprecon(["history", "u_1008", "--db", db]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(stored))
    }

    @Test("a store only ingested has no reconciliation to tell, and says every stage that makes one; after them it answers")
    func ingestedOnly() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--quiet"]).code == 0)
        let result = work.iaprecon(["history", "u_1005", "--db", db])
        #expect(result.code == 1)
        #expect(result.err == "Error: no reconciliation in the store; run 'iaprecon run' (or the normalize, join and report stages) on it first\n")
        // While the store's first run is under way (past its ingest), the line names that run, not a command to run:
        // one started now would only be refused (exit 4).
        do {
            let lock = try RunLock(databasePath: db, command: "run")
            defer { withExtendedLifetime(lock) {} }
            let busy = work.iaprecon(["history", "u_1005", "--db", db])
            #expect(busy.code == 1)
            #expect(busy.err.hasPrefix("Error: no reconciliation in the store yet; the run that holds it (pid \(getpid()), iaprecon run, started "))
            #expect(busy.err.hasSuffix(") is making the first; look again when it finishes\n"))
        }
        // Near miss: the stages it names, in order, make a store history reads.
        #expect(work.iaprecon(["normalize", "--db", db, "--quiet"]).code == 0)
        #expect(work.iaprecon(["join", "--db", db, "--quiet"]).code == 0)
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        #expect(work.iaprecon(["history", "u_1005", "--db", db]).code == 0)
    }

    @Test("--db naming a folder says it is a folder, not a store file")
    func databaseIsAFolder() throws {
        let work = try Workspace()
        let result = work.iaprecon(["history", "u_1", "--db", work.root])
        #expect(result.code == 1)
        #expect(result.err == "Error: cannot use store \(work.root): it is a directory, not a store file; --db names the store's file\n")
    }
}
