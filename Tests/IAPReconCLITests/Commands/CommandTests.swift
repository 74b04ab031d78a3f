import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// A temporary working folder for one command-line test.
final class Workspace {
    let root: String
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let sampleData = repository + "/sample-data"
    /// The test root that signs sample-data's JWS (the README's command trusts it).
    static let sampleRoot = sampleData + "/trust/test-root.pem"

    init() throws {
        root = FileManager.default.temporaryDirectory.path + "/iaprecon-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Runs `iaprecon` with `arguments`, in-process; returns exit code, stdout and stderr.
    func iaprecon(_ arguments: [String]) -> (code: Int32, out: String, err: String) {
        let console = Console.capturing()
        let code = IAPReconCLI.run(arguments, console: console)
        return (code, console.stdout, console.stderr)
    }

    func path(_ name: String) -> String { root + "/" + name }

    func read(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }
}

@Suite("Commands end to end")
struct CommandTests {
    @Test("run on sample-data exits 0 and says what it found; --fail-on critical exits 1 after writing everything")
    func runAndFailOn() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let first = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out")])
        #expect(first.code == 0)
        #expect(first.out == "as of 2026-11-29T23:59:00.000Z: 8 critical, 4 warning, 2 info findings; reports in \(work.path("out"))/\n")
        #expect(first.err.contains("ingest: "))
        let failing = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out2"), "--fail-on", "critical", "--quiet"])
        #expect(failing.code == 1)
        #expect(failing.out.isEmpty && failing.err.isEmpty)
        #expect(try work.read("out2/findings.csv") == work.read("out/findings.csv"))
        let info = work.iaprecon(["report", "--db", db, "--out", work.path("out3"), "--fail-on", "info"])
        #expect(info.code == 1)
    }

    @Test("a missing input folder exits 3 naming it")
    func missingInput() throws {
        let work = try Workspace()
        let result = work.iaprecon(["run", "--input", work.path("nope"), "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(work.path("nope")): no such folder\n")
    }

    @Test("an unreadable input file exits 3 naming it, after storing the readable files")
    func unreadableFile() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/server/broken.jsonl.gz"), withIntermediateDirectories: true)
        try ("{\"ts\":\"2026-11-28T10:00:00Z\",\"event\":\"order_created\",\"order_id\":\"o1\",\"user_id\":\"u1\",\"product_id\":\"gems60\"}\n").write(toFile: work.path("in/server/a.jsonl"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(work.path("in/server/broken.jsonl.gz")): Is a directory\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("out/findings.csv")))
        let database = try Store.open(path: work.path("s.sqlite"))
        #expect(try database.scalar("SELECT group_concat(path) FROM files") == .text("server/a.jsonl"))
        #expect(try database.scalar("SELECT status FROM runs") == .text("failed"))
    }

    @Test("a store that is not a database exits 1 with one clear line and is left untouched")
    func notADatabase() throws {
        let work = try Workspace()
        let junk = String(repeating: "not a database\n", count: 100)
        try junk.write(toFile: work.path("s.sqlite"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 1)
        #expect(result.err == "Error: cannot use store \(work.path("s.sqlite")): the file is not an iaprecon store (not a SQLite database)\n")
        #expect(try work.read("s.sqlite") == junk)
    }

    @Test("a store from a newer iaprecon is refused, not guessed at")
    func newerSchema() throws {
        let work = try Workspace()
        do {
            let database = try Store.open(path: work.path("s.sqlite"))
            try database.execute("INSERT INTO schema_migrations (id) VALUES (99)")
        }
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 1)
        #expect(result.err.contains("the store has schema version 99, newer than this iaprecon (\(Schema.latestVersion))"))
    }

    @Test("a second run on a held store exits 4 naming the holder")
    func locked() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let lock = try RunLock(databasePath: db, command: "run")
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out")])
        #expect(result.code == 4)
        #expect(result.err.hasPrefix("Error: another run holds the database (pid \(getpid()), iaprecon run, started "))
        withExtendedLifetime(lock) {}
    }

    @Test("an --out that cannot be written exits 1 at once with the system's reason; with a good --out the night runs")
    func outNotWritable() throws {
        let work = try Workspace()
        try "a file".write(toFile: work.path("out"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 1)
        #expect(result.err == "Error: cannot write \(work.path("out")): Not a directory\n")
        let under = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out/x")])
        #expect(under.err == "Error: cannot write \(work.path("out/x")): Not a directory\n")
        #expect(try work.read("out") == "a file")
        let rerun = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out-fixed"), "--quiet"])
        #expect(rerun.code == 0)
    }

    @Test("another application's SQLite database is refused and left untouched")
    func foreignDatabase() throws {
        let work = try Workspace()
        do {
            let other = try Database(path: work.path("other.db"))
            try other.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: work.path("other.db")))
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("other.db"), "--out", work.path("out")])
        #expect(result.code == 1)
        #expect(result.err == "Error: cannot use store \(work.path("other.db")): the file is not an iaprecon store (a SQLite database of something else)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.path("other.db"))) == before)
    }

    @Test("validate prints the accounting and writes no store")
    func validate() throws {
        let work = try Workspace()
        let result = work.iaprecon(["validate", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot])
        #expect(result.code == 0)
        let lines = result.out.split(separator: "\n")
        #expect(lines.first?.hasPrefix("file") == true)
        #expect(lines.last == "total                                                 267       255         7      3        2")
        #expect(lines.contains { $0.hasPrefix("server/server-2026-11-27.jsonl.gz") && $0.hasSuffix("60        57         2      0        1  added") })
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).isEmpty)
    }

    @Test("the config file sets options and the command line wins over it")
    func configFile() throws {
        let work = try Workspace()
        try """
            # nightly settings
            input = \(Workspace.sampleData)
            trust-root = \(Workspace.sampleRoot)
            db = \(work.path("from-config.sqlite"))
            out = \(work.path("config-out"))
            fail-on = critical
            """.write(toFile: work.path("iaprecon.conf"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--config", work.path("iaprecon.conf"), "--out", work.path("cli-out"), "--quiet"])
        #expect(result.code == 1)
        #expect(FileManager.default.fileExists(atPath: work.path("from-config.sqlite")))
        #expect(FileManager.default.fileExists(atPath: work.path("cli-out/findings.csv")))
        #expect(!FileManager.default.fileExists(atPath: work.path("config-out")))
        let bad = work.iaprecon(["run", "--config", work.path("nope.conf")])
        #expect(bad.code == 2)
    }

    @Test("two runs on the same inputs write byte-identical outputs and leave the store's data unchanged")
    func idempotent() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        for out in ["a", "b"] {
            #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path(out), "--quiet"]).code == 0)
        }
        for name in ["findings.csv", "findings.json", "revenue_daily.csv", "attribution.csv", "rejects.csv"] {
            #expect(try work.read("a/" + name) == work.read("b/" + name), "\(name)")
        }
        let summaryA = try work.read("a/summary.json")
        let summaryB = try work.read("b/summary.json")
        #expect(summaryA.components(separatedBy: "\"stage_seconds\"")[0] == summaryB.components(separatedBy: "\"stage_seconds\"")[0])
        let database = try Store.open(path: db)
        #expect(try database.scalar("SELECT sum(lines_read) FROM files") == .integer(267))
        #expect(try database.scalar("SELECT count(*) FROM runs WHERE status = 'ok'") == .integer(2))
    }

    @Test("history of an unknown user exits 1 with a clear message, not an empty table")
    func historyUnknown() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        let result = work.iaprecon(["history", "u_9999", "--db", db])
        #expect(result.code == 1)
        #expect(result.err == "Error: no user 'u_9999' in the store\n")
        #expect(result.out.isEmpty)
        #expect(work.iaprecon(["history", "--order", "nope", "--db", db]).err == "Error: no order 'nope' in the store\n")
        #expect(work.iaprecon(["history", "--transaction", "0", "--db", db]).err == "Error: no transaction '0' in the store\n")
    }

    @Test("history --transaction shows the answer to Apple's CONSUMPTION_REQUEST; a transaction Apple did not ask about shows none")
    func historyConsumptionAnswer() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        let asked = work.iaprecon(["history", "--transaction", "2000000629466000", "--db", db])
        #expect(asked.code == 0)
        #expect(asked.out.contains("""
            CONSUMPTION_REQUEST answers (Send Consumption Information body):
            2026-11-23T10:02:13.000Z 0a3cee3d-920a-4658-8128-61d634efc3d1: {"accountTenure":1,"appAccountToken":"",\
            "consumptionStatus":0,"customerConsented":false,"deliveryStatus":0,"lifetimeDollarsPurchased":2,"lifetimeDollarsRefunded":1,\
            "platform":1,"playTime":0,"refundPreference":0,"sampleContentProvided":false,"userStatus":0}
            """))
        let notAsked = work.iaprecon(["history", "--transaction", "2000000629584020", "--db", db])
        #expect(notAsked.code == 0)
        #expect(!notAsked.out.contains("CONSUMPTION_REQUEST answers"))
    }

    @Test("history prints a user's whole story as the checked-in table; its JSON carries every finding id")
    func historyTable() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        let expectedPath = Workspace.repository + "/Tests/IAPReconCLITests/Expected/history-u_1005.txt"
        let table = work.iaprecon(["history", "u_1005", "--db", db])
        #expect(table.code == 0)
        if ProcessInfo.processInfo.environment["IAPRECON_UPDATE_EXPECTED"] == "1" {
            try table.out.write(toFile: expectedPath, atomically: true, encoding: .utf8)
        }
        #expect(table.out == (try String(contentsOfFile: expectedPath, encoding: .utf8)))
        let json = work.iaprecon(["history", "u_1005", "--db", db, "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        var expectedIDs: [String] = []
        try Store.open(path: db, readOnly: true).forEach("""
            SELECT finding_id FROM fct_findings WHERE user_id = 'u_1005'
              OR transaction_id IN (SELECT transaction_id FROM int_transactions_resolved WHERE user_id = 'u_1005') ORDER BY 1
            """) { expectedIDs.append($0.string(0)) }
        #expect(!expectedIDs.isEmpty)
        #expect(object["finding_ids"] as? [String] == expectedIDs)
        let byOrder = work.iaprecon(["history", "--order", "OrderID_1795550691000_gems300", "--db", db])
        #expect(byOrder.out == table.out)
        #expect(table.err.isEmpty && json.err.isEmpty, "a settled store gives no warning")

        // Looked up while a run holds the store: the same history, with a warning on stderr only.
        let lock = try RunLock(databasePath: db, command: "join")
        defer { withExtendedLifetime(lock) {} }
        let busy = work.iaprecon(["history", "u_1005", "--db", db, "--format", "json"])
        #expect(busy.code == 0)
        #expect(busy.out == json.out)
        #expect(busy.err.hasPrefix("Warning: a run is updating this store (pid \(getpid()), iaprecon join, started "))
    }
}

@Suite("Progress line")
struct ProgressLineTests {
    @Test("the live line shows lines, rate and the time left from the bytes stored so far")
    func line() {
        #expect(StageProgress.line(stage: "ingest", lines: 50_000, seconds: 2, doneBytes: 25, plannedBytes: 100)
            == "ingest: 50000 lines, 25000 lines/s, 6 s left")
        #expect(StageProgress.line(stage: "ingest", lines: 10, seconds: 1, doneBytes: 0, plannedBytes: 100) == "ingest: 10 lines, 10 lines/s")
    }
}
