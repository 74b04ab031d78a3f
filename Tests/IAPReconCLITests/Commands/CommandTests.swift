import Foundation
import Synchronization
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

    /// What a command ended with: its exit code, stdout and stderr.
    typealias Ending = (code: Int32, out: String, err: String)

    /// Runs `iaprecon` with `arguments`, in-process; returns exit code, stdout and stderr.
    func iaprecon(_ arguments: [String]) -> Ending {
        Self.run(arguments)
    }

    /// Runs `iaprecon` with `arguments` on a thread of its own and waits `seconds` from now:
    /// nil if it has not returned by then, for a test whose failure is a run that never ends.
    /// The harness's own time limit cannot tell that: it counts from when the test was
    /// scheduled, and on a busy two-core run a test may wait most of a minute for a thread.
    func iaprecon(_ arguments: [String], within seconds: Double) -> Ending? {
        let outcome = Outcome()
        Thread { outcome.finish(Self.run(arguments)) }.start()
        guard outcome.done.wait(timeout: .now() + seconds) == .success else { return nil }
        return outcome.ending.withLock { $0 }
    }

    private static func run(_ arguments: [String]) -> Ending {
        let console = Console.capturing()
        let code = IAPReconCLI.run(arguments, console: console)
        return (code, console.stdout, console.stderr)
    }

    private final class Outcome: Sendable {
        let ending = Mutex<Ending?>(nil)
        let done = DispatchSemaphore(value: 0)

        func finish(_ value: Ending) {
            ending.withLock { $0 = value }
            done.signal()
        }
    }

    func path(_ name: String) -> String { root + "/" + name }

    func read(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

    /// An output without what depends on which runs came before (CONTRACT.md §3: a finding's
    /// `first_seen` and `new`, and the summary's counts and amounts of new findings), for comparing
    /// the reports of stores with different histories: everything else must match.
    static func withoutHistory(_ text: String, name: String) -> String {
        switch name {
        case "findings.csv":
            return text.split(separator: "\r\n", omittingEmptySubsequences: false).map { line in
                // first_seen and new are the last two cells, and hold no comma.
                line.split(separator: ",", omittingEmptySubsequences: false).dropLast(2).joined(separator: ",")
            }.joined(separator: "\r\n")
        case "findings.json", "summary.json":
            return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return !(trimmed.hasPrefix("\"first_seen\"") || trimmed.hasPrefix("\"new\"") || trimmed.hasPrefix("\"new_"))
            }.map { $0.hasSuffix(",") ? String($0.dropLast()) : String($0) }.joined(separator: "\n")
        default:
            return text
        }
    }

    func readWithoutHistory(_ name: String) throws -> String {
        Self.withoutHistory(try read(name), name: (name as NSString).lastPathComponent)
    }
}

@Suite("Commands end to end")
struct CommandTests {
    @Test("run on sample-data exits 0 and says what it found; --fail-on critical exits 1 after writing everything")
    func runAndFailOn() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let first = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out")])
        #expect(first.code == 0)
        #expect(first.out == "as of 2026-11-29T23:59:00.000Z: 8 critical, 5 warning, 2 info findings; reports in \(work.path("out"))/\n")
        #expect(first.err.contains("ingest: "))
        // Without --bundle-id, the sample's receipt of another app is accepted, and named.
        #expect(first.err.contains("Warning: receipts and notifications name 2 app bundles (com.example.game, com.other.app); set --bundle-id to reject the others\n"))
        #expect(try work.read("out/summary.json").contains("\"bundle_ids\": [\n    \"com.example.game\",\n    \"com.other.app\"\n  ],"))
        let failing = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out2"), "--fail-on", "critical", "--quiet"])
        #expect(failing.code == 1)
        // --quiet keeps stdout empty; stderr gets the one alert line cron mails.
        #expect(failing.out.isEmpty)
        #expect(failing.err == "iaprecon: exit 1: 8 critical findings (lost_delivery 1, duplicate_delivery 2, refunded_not_revoked 3, "
            + "orphan_delivery 2), 90.98 USD at risk; see \(work.path("out2"))/findings.csv\n")
        // The same findings; the second run on the store reports none of them as new.
        #expect(try work.read("out2/findings.csv") == work.read("out/findings.csv").replacingOccurrences(of: ",true\r\n", with: ",false\r\n"))
        let info = work.iaprecon(["report", "--db", db, "--out", work.path("out3"), "--fail-on", "info"])
        #expect(info.code == 1)
    }

    @Test("the stage commands take --quiet as run does, to resume a failed night from cron: nothing on stdout, the alert line on stderr")
    func quietStages() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--quiet"]).code == 0)
        for stage in [["normalize", "--quiet"], ["join", "-q"]] {
            let result = work.iaprecon(stage + ["--db", db])
            #expect(result.code == 0 && result.out.isEmpty && result.err.isEmpty, "\(stage): \(result)")
        }
        let report = work.iaprecon(["report", "--db", db, "--out", work.path("out"), "--fail-on", "critical", "--quiet"])
        #expect(report.code == 1)
        #expect(report.out.isEmpty)
        #expect(report.err.hasPrefix("iaprecon: exit 1: 8 critical findings ("))
        #expect(report.err.split(separator: "\n").count == 1)
    }

    @Test("--fail-on-new alerts once per new problem: the first night exits 1 with its alert line, a rerun with nothing new exits 0")
    func failOnNew() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let arguments = ["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--fail-on-new", "critical", "--quiet"]
        let first = work.iaprecon(arguments + ["--out", work.path("out1")])
        #expect(first.code == 1)
        #expect(first.err.hasPrefix("iaprecon: exit 1: 8 new critical findings (lost_delivery "))
        let second = work.iaprecon(arguments + ["--out", work.path("out2")])
        #expect(second.code == 0)
        #expect(second.err.isEmpty)
        // The second night still lists every finding, none of them new, each with its first sighting.
        let findings = try work.read("out2/findings.csv")
        #expect(findings.contains(",2026-11-29T23:59:00.000Z,false\r\n"))
        #expect(!findings.contains(",true\r\n"))
    }

    @Test("a report run on its own says which signatures the stored receipts and notifications were read with, as run says of its own")
    func reportAloneStatesStoredSignatures() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        func signatures(_ out: String) throws -> String {
            let summary = try work.read(out + "/summary.json")
            guard let start = summary.range(of: "\"signatures\": {"), let end = summary[start.upperBound...].range(of: "}") else { return "" }
            return summary[start.upperBound..<end.lowerBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        }
        #expect(work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--quiet"]).code == 0)
        #expect(work.iaprecon(["normalize", "--db", db]).code == 0)
        #expect(work.iaprecon(["join", "--db", db]).code == 0)
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("verified")]).code == 0)
        #expect(try signatures("verified") == "\"mode\": \"verified\", \"extra_trusted_roots\": 1")
        // Ingested again trusting every payload, the files are read again: the report says so.
        #expect(work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-unsigned", "--db", db, "--quiet"]).code == 0)
        #expect(work.iaprecon(["normalize", "--db", db]).code == 0)
        #expect(work.iaprecon(["join", "--db", db]).code == 0)
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("unsigned")]).code == 0)
        #expect(try signatures("unsigned") == "\"mode\": \"trust_unsigned\"")
        // Near miss: run states the mode it ran with.
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("run"),
                               "--quiet"]).code == 0)
        #expect(try signatures("run") == "\"mode\": \"verified\", \"extra_trusted_roots\": 1")
    }

    @Test("a report that fails before its outputs are switched in reports nothing as seen: the next one calls its findings new and alerts")
    func failedReportKeepsFindingsNew() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--quiet"]).code == 0)
        #expect(work.iaprecon(["normalize", "--db", db]).code == 0)
        #expect(work.iaprecon(["join", "--db", db]).code == 0)
        // The report reads the findings, then cannot make its --out (a file stands where its parent should be).
        try "a file".write(toFile: work.path("blocked"), atomically: true, encoding: .utf8)
        let failed = work.iaprecon(["report", "--db", db, "--out", work.path("blocked/out"), "--fail-on-new", "critical"])
        #expect(failed.code == 1)
        #expect(failed.err.hasPrefix("Error: cannot write "))
        // Nothing showed the findings, so the re-run is their first report: new, and the alert cron mails.
        let rerun = work.iaprecon(["report", "--db", db, "--out", work.path("out1"), "--fail-on-new", "critical"])
        #expect(rerun.code == 1)
        #expect(rerun.err.hasPrefix("iaprecon: exit 1: 8 new critical findings (lost_delivery "))
        let findings = try work.read("out1/findings.csv")
        #expect(findings.contains(",true\r\n") && !findings.contains(",false\r\n"))
        // Once published they are not new again, however many reports fail in between.
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("blocked/out"), "--fail-on-new", "critical"]).code == 1)
        let after = work.iaprecon(["report", "--db", db, "--out", work.path("out2"), "--fail-on-new", "critical"])
        #expect(after.code == 0)
        #expect(after.err.isEmpty)
        #expect(try !work.read("out2/findings.csv").contains(",true\r\n"))
    }

    @Test("the stages read MMP times in --mmp-tz as run does: an Event Time with its own offset, or one near the clock, lands where run puts it")
    func stagesReadMMPTimesInTheirZone() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["apple", "attribution", "notifications", "receipts", "registrations", "server", "spend", "catalog.csv", "fx.csv"] {
            try FileManager.default.copyItem(atPath: Workspace.sampleData + "/" + name, toPath: input + "/" + name)
        }
        // Times that carry their own offset: stored on the wall clock of the zone they were read in.
        let events = input + "/attribution/in_app_events_2026-11-20_2026-11-29.csv"
        let installs = input + "/attribution/installs_2026-11-20_2026-11-29.csv"
        let eventText = try String(contentsOfFile: events, encoding: .utf8)
        let installText = try String(contentsOfFile: installs, encoding: .utf8)
        try #require(eventText.contains("2026-11-20 09:41:10") && eventText.contains("2026-11-20 14:02:33,2026-11-20 14:03:10"))
        try #require(installText.contains("2026-11-20 09:40:00,2026-11-20 09:40:00"))
        try eventText.replacingOccurrences(of: "2026-11-20 09:41:10", with: "2026-11-20T09:41:10+09:00")
            .replacingOccurrences(of: "2026-11-20 14:02:33,2026-11-20 14:03:10", with: "2026-11-20T14:02:33Z,2026-11-20T14:03:10Z")
            .write(toFile: events, atomically: true, encoding: .utf8)
        try installText.replacingOccurrences(of: "2026-11-20 09:40:00,2026-11-20 09:40:00", with: "2026-11-20T09:40:00+09:00,2026-11-20T09:40:00+09:00")
            .write(toFile: installs, atomically: true, encoding: .utf8)
        let now = ["--now", "2026-12-01T00:00:00Z"]
        let zone = ["--mmp-tz", "Asia/Tokyo"]
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("run.sqlite"), "--out", work.path("run"), "--quiet"]
                              + now + zone).code == 0)
        let db = work.path("stages.sqlite")
        #expect(work.iaprecon(["ingest", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", db, "--quiet"] + now + zone).code == 0)
        #expect(work.iaprecon(["normalize", "--db", db]).code == 0)
        #expect(work.iaprecon(["join", "--db", db] + zone).code == 0)
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("stages")]).code == 0)
        for name in ["attribution.csv", "findings.csv", "transactions.csv", "rejects.csv", "revenue_daily.csv"] {
            #expect(try work.readWithoutHistory("stages/" + name) == work.readWithoutHistory("run/" + name), "\(name)")
        }
        // Near miss: the zone matters to these rows, so the stages did not match run by chance.
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("utc.sqlite"), "--out", work.path("utc"), "--quiet"]
                              + now).code == 0)
        #expect(try work.read("utc/attribution.csv") != work.read("run/attribution.csv"))

        // validate judges an Event Time near the clock in the zone run reads it in: 05:00 in Tokyo is
        // 20:00 UTC the day before, within a day of --now; read as UTC it is in the future.
        let nearClock = try String(contentsOfFile: events, encoding: .utf8)
        try #require(nearClock.contains("2026-11-20T14:03:10Z"))
        try nearClock.replacingOccurrences(of: "2026-11-20T14:03:10Z", with: "2026-12-02 05:00:00").write(toFile: events, atomically: true, encoding: .utf8)
        let inTokyo = work.iaprecon(["validate", "--input", input, "--trust-root", Workspace.sampleRoot] + now + zone)
        let inUTC = work.iaprecon(["validate", "--input", input, "--trust-root", Workspace.sampleRoot] + now)
        #expect(!inTokyo.out.contains("time in the future: 'Event Time'"))
        #expect(inUTC.out.contains("time in the future: 'Event Time' is 2026-12-02T05:00:00.000Z"))
    }

    @Test("fx.csv is checked against --currency before anything else is read: exit 2 naming both currencies")
    func currencyMismatch() throws {
        let work = try Workspace()
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out"),
                                    "--currency", "JPY", "--quiet"])
        #expect(result.code == 2)
        #expect(result.err == "Error: fx.csv converts into USD, not JPY\n")
        // Nothing was read into the store, but the run is in its log, with its exit and reason.
        #expect(!FileManager.default.fileExists(atPath: work.path("out/summary.json")))
        #expect(try Store.open(path: work.path("s.sqlite"), readOnly: true).scalar("SELECT count(*) FROM files") == .integer(0))
        #expect(try Store.open(path: work.path("s.sqlite"), readOnly: true).scalar("SELECT status || ' ' || exit_code || ' ' || message FROM runs")
            == .text("failed 2 fx.csv converts into USD, not JPY"))
        // report alone checks the rates the store holds.
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("usd"), "--quiet"]).code == 0)
        let report = work.iaprecon(["report", "--db", work.path("s.sqlite"), "--out", work.path("jpy"), "--currency", "JPY"])
        #expect(report.code == 2)
        #expect(report.err == "Error: fx.csv converts into USD, not JPY\n")
    }

    @Test("fx.csv that converts into --currency but gives another currency rate 1 on a day stops naming that row, not calling the file another currency's")
    func strayRateOne() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/server"), withIntermediateDirectories: true)
        try "".write(toFile: work.path("in/server/a.jsonl"), atomically: true, encoding: .utf8)
        func run(_ fx: [String], _ command: String = "run") throws -> (code: Int32, out: String, err: String) {
            try (["date,currency,rate"] + fx).joined(separator: "\n").appending("\n").write(toFile: work.path("in/fx.csv"), atomically: true, encoding: .utf8)
            return work.iaprecon([command, "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out"), "--currency", "EUR", "--quiet"])
        }
        // The franc at parity with the euro for a day: the file still converts into euros.
        let result = try run(["2026-11-01,EUR,1", "2026-11-01,CHF,1.0012", "2026-11-02,EUR,1", "2026-11-02,CHF,1.0000", "2026-11-03,CHF,1"])
        #expect(result.code == 2)
        #expect(result.err == "Error: fx.csv converts into EUR, but gives CHF rate 1 on 2026-11-02 (fx.csv:5), and on 1 more row: "
            + "only EUR may have rate 1, or the file reads as converting into CHF\n")
        // Near miss: a file in another currency altogether keeps its message.
        let dollars = try run(["2026-11-01,USD,1", "2026-11-01,EUR,1.05"])
        #expect(dollars.err == "Error: fx.csv converts into USD, not EUR\n")
    }

    @Test("fx.csv whose rate-1 row is rejected stops the run naming that line and its reason; its other rejects do not matter once a rate-1 row is right")
    func currencyRowRejected() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/server"), withIntermediateDirectories: true)
        try "".write(toFile: work.path("in/server/a.jsonl"), atomically: true, encoding: .utf8)
        func run(_ fx: [String]) throws -> (code: Int32, out: String, err: String) {
            try (["date,currency,rate"] + fx).joined(separator: "\n").appending("\n").write(toFile: work.path("in/fx.csv"), atomically: true, encoding: .utf8)
            return work.iaprecon(["run", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out"), "--quiet"])
        }
        let result = try run(["2026-11-01,EUR,1.1", "2026-11-01,usd,1", "2026-11-01,yen,0.0066"])
        #expect(result.code == 2)
        #expect(result.err == #"Error: fx.csv has no rate-1 row for USD: it does not convert into USD (fx.csv:3 is rejected: bad currency in 'currency': "usd", and 1 more line)"# + "\n")
        // Near miss: with its rate-1 row right, the run reads on and rejects the other line as any.
        #expect(try run(["2026-11-01,EUR,1.1", "2026-11-01,USD,1", "2026-11-01,yen,0.0066"]).code == 0)
    }

    @Test("validate refuses the fx.csv a run would refuse, after its accounting: exit 2 with the run's words; a right one passes")
    func validateChecksTheRates() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/server"), withIntermediateDirectories: true)
        try "".write(toFile: work.path("in/server/a.jsonl"), atomically: true, encoding: .utf8)
        func validate(_ fx: [String], _ options: [String] = []) throws -> (code: Int32, out: String, err: String) {
            try (["date,currency,rate"] + fx).joined(separator: "\n").appending("\n").write(toFile: work.path("in/fx.csv"), atomically: true, encoding: .utf8)
            return work.iaprecon(["validate", "--input", work.path("in")] + options)
        }
        let lowercase = try validate(["2026-11-01,EUR,1.1", "2026-11-01,usd,1"])
        #expect(lowercase.code == 2)
        #expect(lowercase.err == #"Error: fx.csv has no rate-1 row for USD: it does not convert into USD (fx.csv:3 is rejected: bad currency in 'currency': "usd")"# + "\n")
        #expect(lowercase.out.contains("fx.csv"), "the accounting is printed first")
        let yen = try validate(["2026-11-01,EUR,1.1", "2026-11-01,USD,1"], ["--currency", "JPY"])
        #expect(yen.code == 2)
        #expect(yen.err == "Error: fx.csv converts into USD, not JPY\n")
        // Near misses: the rates convert into the reporting currency, by default or as named.
        #expect(try validate(["2026-11-01,EUR,1.1", "2026-11-01,USD,1"]).code == 0)
        #expect(try validate(["2026-11-01,EUR,0.0062", "2026-11-01,JPY,1"], ["--currency", "JPY"]).code == 0)
    }

    @Test("a missing input folder exits 3 naming it")
    func missingInput() throws {
        let work = try Workspace()
        let result = work.iaprecon(["run", "--input", work.path("nope"), "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(work.path("nope")): no such folder\n")
        // A mistyped --input is refused before the store: no store, lock or note is made, by run or by ingest.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).isEmpty)
        let ingest = work.iaprecon(["ingest", "--input", work.path("nope"), "--db", work.path("s.sqlite")])
        #expect(ingest.code == 3)
        #expect(ingest.err == "Error: cannot read \(work.path("nope")): no such folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).isEmpty)
        // An --input that names a file (a single export given in place of its folder) is there, but no folder.
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: work.path("server.jsonl")))
        let file = work.iaprecon(["run", "--input", work.path("server.jsonl"), "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(file.code == 3)
        #expect(file.err == "Error: cannot read \(work.path("server.jsonl")): not a folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root) == ["server.jsonl"])
        try FileManager.default.removeItem(atPath: work.path("server.jsonl"))
        // A --now ingest cannot read is refused before the store too, as run refuses it.
        try FileManager.default.createDirectory(atPath: work.path("in"), withIntermediateDirectories: true)
        let badNow = work.iaprecon(["ingest", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--now", "2026-11-13T00:00:00"])
        #expect(badNow.code == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root) == ["in"])
        try FileManager.default.removeItem(atPath: work.path("in"))
        // Near miss: a folder there but holding no source is read, and the run is in the store's log.
        try FileManager.default.createDirectory(atPath: work.path("empty"), withIntermediateDirectories: true)
        #expect(work.iaprecon(["run", "--input", work.path("empty"), "--db", work.path("s.sqlite"), "--out", work.path("out")]).code == 3)
        #expect(try Store.open(path: work.path("s.sqlite"), readOnly: true).scalar("SELECT status FROM runs") == .text("failed"))
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

    /// Makes `s.sqlite` a store that a newer iaprecon has migrated to `migration`.
    private func storeOfNewerIAPRecon(_ work: Workspace, migration: Int, _ more: (Database) throws -> Void = { _ in }) throws {
        let database = try Store.open(path: work.path("s.sqlite"))
        try database.execute("INSERT INTO schema_migrations (id) VALUES (\(migration))")
        try more(database)
    }

    @Test("a store from a newer iaprecon is refused, not guessed at")
    func newerSchema() throws {
        let work = try Workspace()
        try storeOfNewerIAPRecon(work, migration: 99)
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 1)
        #expect(result.err.contains("the store has schema version 99, newer than this iaprecon (\(Schema.latestVersion))"))
    }

    @Test("a store from a newer iaprecon is refused before anything is written to it, its journal mode too")
    func newerSchemaUntouched() throws {
        let work = try Workspace()
        // A journal mode other than this build's: the newer iaprecon's to choose.
        try storeOfNewerIAPRecon(work, migration: Schema.latestVersion + 1) { try $0.execute("PRAGMA journal_mode = DELETE") }
        let before = try Data(contentsOf: URL(fileURLWithPath: work.path("s.sqlite")))
        for arguments in [["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--out", work.path("out")],
                          ["join"], ["forget", "server/a.jsonl"]] {
            let result = work.iaprecon(arguments + ["--db", work.path("s.sqlite")])
            #expect(result.code == 1)
            #expect(result.err.contains("newer than this iaprecon"), "\(arguments[0])")
            #expect(try Data(contentsOf: URL(fileURLWithPath: work.path("s.sqlite"))) == before, "\(arguments[0])")
        }
        #expect(try Database(path: work.path("s.sqlite"), readOnly: true).scalar("PRAGMA journal_mode") == .text("delete"))
    }

    @Test("runs shows a run killed mid-way as interrupted, not running; while a process holds the store its run is running")
    func killedRunIsInterrupted() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/server"), withIntermediateDirectories: true)
        try ("{\"ts\":\"2026-11-28T10:00:00Z\",\"event\":\"order_created\",\"order_id\":\"o1\",\"user_id\":\"u1\",\"product_id\":\"gems60\"}\n")
            .write(toFile: work.path("in/server/a.jsonl"), atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", work.path("in"), "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        // What a SIGKILL leaves: the run's row still says running, and no process holds the lock.
        try Store.open(path: db).run("UPDATE runs SET status = 'running', exit_code = NULL, ended_ms = NULL")
        // The run's row (the table's third line) names one status.
        func status() -> String? {
            let row = work.iaprecon(["runs", "--db", db]).out.split(separator: "\n").dropFirst(2).first ?? ""
            return row.split(separator: " ").map(String.init).first { ["running", "interrupted", "ok", "failed"].contains($0) }
        }
        #expect(status() == "interrupted")
        let lock = try RunLock(databasePath: db, command: "run")
        #expect(status() == "running")
        withExtendedLifetime(lock) {}
    }

    @Test("the join stage dates spend days in --tz as run does, for the as-of of an input no event time dates")
    func joinTakesTheReportZone() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/spend"), withIntermediateDirectories: true)
        try "date,media_source,campaign,spend,currency\n2026-11-24,Facebook Ads,FB_US,10,USD\n"
            .write(toFile: work.path("in/spend/s.csv"), atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        let run = work.iaprecon(["run", "--input", work.path("in"), "--db", db, "--out", work.path("out"), "--tz", "Asia/Tokyo"])
        #expect(run.code == 0)
        // 2026-11-24 in Tokyo ends at 14:59:59.999Z.
        #expect(run.out.hasPrefix("as of 2026-11-24T14:59:59.999Z: "))
        let join = work.iaprecon(["join", "--db", db, "--tz", "Asia/Tokyo"])
        #expect(join.code == 0)
        #expect(join.out == "as of 2026-11-24T14:59:59.999Z: 0 findings\n")
        // Near miss: without --tz, the day is UTC's.
        #expect(work.iaprecon(["join", "--db", db]).out == "as of 2026-11-24T23:59:59.999Z: 0 findings\n")
    }

    @Test("--as-of and --now refuse an ISO 8601 time without an offset, which names no zone, on the command line and in a config file (naming its line), and read one with its offset")
    func timeOptionsNeedAnOffset() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/spend"), withIntermediateDirectories: true)
        try "date,media_source,campaign,spend,currency\n2026-10-31,Facebook Ads,FB_US,10,USD\n"
            .write(toFile: work.path("in/spend/s.csv"), atomically: true, encoding: .utf8)
        let common = ["run", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out"), "--tz", "America/Los_Angeles"]
        // Meant in Los Angeles, read as UTC it would judge seven hours early, unseen.
        let asOf = work.iaprecon(common + ["--as-of", "2026-11-01T01:30:00"])
        #expect(asOf.code == 2)
        let noOffset = ": expected its offset, such as Z, +09:00 or -08:00: an ISO 8601 time without one names no zone, and is not read in --tz"
        #expect(asOf.err.hasPrefix("Error: The value '2026-11-01T01:30:00' is invalid for '--as-of <time>'" + noOffset))
        let now = work.iaprecon(common + ["--now", "2026-11-01T01:30:00.000"])
        #expect(now.code == 2)
        #expect(now.err.hasPrefix("Error: The value '2026-11-01T01:30:00.000' is invalid for '--now <time>'" + noOffset))
        // A nightly config names the file and line, as for any other bad value, and makes no store.
        try "tz = America/Los_Angeles\nas-of = 2026-11-01T01:30:00\n".write(toFile: work.path("night.conf"), atomically: true, encoding: .utf8)
        let configured = work.iaprecon(["run", "--config", work.path("night.conf"), "--input", work.path("in"), "--db", work.path("c.sqlite"),
                                        "--out", work.path("out")])
        #expect(configured.code == 2)
        #expect(configured.err.hasPrefix("Error: \(work.path("night.conf")):2: The value '2026-11-01T01:30:00' is invalid for 'as-of'" + noOffset))
        #expect(!FileManager.default.fileExists(atPath: work.path("c.sqlite")))
        let words = work.iaprecon(common + ["--as-of", "yesterday"])
        #expect(words.code == 2)
        #expect(words.err.hasPrefix("Error: The value 'yesterday' is invalid for '--as-of <time>': expected ISO 8601 with its offset"))
        // Near misses: with its offset it is that instant; the zone-less form with a space is UTC, as the help says.
        #expect(work.iaprecon(common + ["--as-of", "2026-11-01T01:30:00-07:00"]).out.hasPrefix("as of 2026-11-01T08:30:00.000Z: "))
        #expect(work.iaprecon(common + ["--as-of", "2026-11-01 01:30:00"]).out.hasPrefix("as of 2026-11-01T01:30:00.000Z: "))
    }

    @Test("--as-of and --now refuse a time before the App Store opened, naming what it reads as epoch seconds (`date +%s` where milliseconds are due), as the inputs reject such a time; near miss: the App Store's first millisecond is read")
    func timeOptionsRefuseEpochSeconds() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/spend"), withIntermediateDirectories: true)
        try "date,media_source,campaign,spend,currency\n2026-10-31,Facebook Ads,FB_US,10,USD\n"
            .write(toFile: work.path("in/spend/s.csv"), atomically: true, encoding: .utf8)
        let common = ["run", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out")]
        // 2026-11-29T00:00:00Z in seconds: read as milliseconds it is 1970-01-21, and no purchase would be due.
        let asOf = work.iaprecon(common + ["--as-of", "1795910400"])
        #expect(asOf.code == 2)
        #expect(asOf.err.hasPrefix("Error: The value '1795910400' is invalid for '--as-of <time>': expected a time after the App Store "
            + "opened (2008-07-10T00:00:00.000Z), not 1970-01-21T18:51:50.400Z; as epoch seconds it is 2026-11-29T00:00:00.000Z: give milliseconds"))
        let now = work.iaprecon(common + ["--now", "1795910400"])
        #expect(now.code == 2)
        #expect(now.err.hasPrefix("Error: The value '1795910400' is invalid for '--now <time>': expected a time after the App Store opened"))
        let early = work.iaprecon(common + ["--as-of", "2008-07-09T23:59:59.999Z"])
        #expect(early.code == 2)
        #expect(early.err.hasPrefix("Error: The value '2008-07-09T23:59:59.999Z' is invalid for '--as-of <time>': expected a time after the "
            + "App Store opened (2008-07-10T00:00:00.000Z), not 2008-07-09T23:59:59.999Z (see"))
        // A config file's value is refused alike, naming its line, before any store is made.
        try "as-of = 1795910400\n".write(toFile: work.path("night.conf"), atomically: true, encoding: .utf8)
        let configured = work.iaprecon(["run", "--config", work.path("night.conf"), "--input", work.path("in"), "--db", work.path("c.sqlite"),
                                        "--out", work.path("out")])
        #expect(configured.code == 2)
        #expect(configured.err.hasPrefix("Error: \(work.path("night.conf")):1: The value '1795910400' is invalid for 'as-of': expected a time after"))
        #expect(!FileManager.default.fileExists(atPath: work.path("c.sqlite")))
        // Near misses: the App Store's first millisecond, and the same instant in milliseconds, are read.
        #expect(work.iaprecon(common + ["--as-of", "1215648000000"]).out.hasPrefix("as of 2008-07-10T00:00:00.000Z: "))
        #expect(work.iaprecon(common + ["--as-of", "1795910400000", "--now", "1795910400000"]).out.hasPrefix("as of 2026-11-29T00:00:00.000Z: "))
    }

    @Test("--as-of more than a day after the run's clock is refused before any store is made (a year typed 2062 for 2026 would judge every open purchase lost and keep that as-of as each finding's first_seen); near miss: a day after the clock is read")
    func asOfAfterTheClock() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/spend"), withIntermediateDirectories: true)
        try "date,media_source,campaign,spend,currency\n2026-10-31,Facebook Ads,FB_US,10,USD\n"
            .write(toFile: work.path("in/spend/s.csv"), atomically: true, encoding: .utf8)
        let common = ["run", "--input", work.path("in"), "--out", work.path("out"), "--now", "2026-11-30T00:00:00Z"]
        let late = work.iaprecon(common + ["--db", work.path("late.sqlite"), "--as-of", "2026-12-01T00:00:00.001Z"])
        #expect(late.code == 2)
        #expect(late.err.hasPrefix("Error: --as-of 2026-12-01T00:00:00.001Z is more than 24 hours after the run's clock "
            + "(2026-11-30T00:00:00.000Z, --now or the system clock): no event read can be that late"))
        #expect(!FileManager.default.fileExists(atPath: work.path("late.sqlite")))
        let typo = work.iaprecon(["join", "--db", work.path("late.sqlite"), "--as-of", "2062-11-29T00:00:00Z", "--now", "2026-11-30T00:00:00Z"])
        #expect(typo.code == 2)
        #expect(typo.err.hasPrefix("Error: --as-of 2062-11-29T00:00:00.000Z is more than 24 hours after the run's clock"))
        // Near miss: a day after the clock, the latest event time a run accepts, is an as-of.
        let dayAhead = work.iaprecon(common + ["--db", work.path("ok.sqlite"), "--as-of", "2026-12-01T00:00:00Z"])
        #expect(dayAhead.code == 0)
        #expect(dayAhead.out.hasPrefix("as of 2026-12-01T00:00:00.000Z: "))
    }

    @Test("the join stage takes --now as run does: the as-of of an input no event time dates is at most a day after it")
    func joinTakesTheClock() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/spend"), withIntermediateDirectories: true)
        try "date,media_source,campaign,spend,currency\n2026-12-02,Facebook Ads,FB_US,10,USD\n"
            .write(toFile: work.path("in/spend/s.csv"), atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        let now = ["--now", "2026-12-01T00:00:00Z"]
        let run = work.iaprecon(["run", "--input", work.path("in"), "--db", db, "--out", work.path("out")] + now)
        #expect(run.code == 0)
        // The day begins within a day of the clock, so it is read; it ends more than a day after it.
        #expect(run.out.hasPrefix("as of 2026-12-02T00:00:00.000Z: "))
        #expect(work.iaprecon(["join", "--db", db] + now).out == "as of 2026-12-02T00:00:00.000Z: 0 findings\n")
        // Near miss: by a clock days later, the day is over, and ends the as-of.
        #expect(work.iaprecon(["join", "--db", db, "--now", "2026-12-05T00:00:00Z"]).out == "as of 2026-12-02T23:59:59.999Z: 0 findings\n")
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

    @Test("a run through a symlink to a held store exits 4 naming the holder, and leaves the store alone")
    func lockedThroughSymlink() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        try FileManager.default.createSymbolicLink(atPath: work.path("link.sqlite"), withDestinationPath: db)
        let lock = try RunLock(databasePath: db, command: "nightly")
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("link.sqlite"), "--out", work.path("out2")])
        #expect(result.code == 4)
        #expect(result.err.hasPrefix("Error: another run holds the database (pid \(getpid()), iaprecon nightly, started "))
        #expect(!FileManager.default.fileExists(atPath: work.path("out2")))
        withExtendedLifetime(lock) {}
    }

    @Test("a run through a hard link to a held store exits 4 naming the holder's pid")
    func lockedThroughHardLink() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        try FileManager.default.linkItem(atPath: db, toPath: work.path("hard.sqlite"))
        do {
            let lock = try RunLock(databasePath: work.path("hard.sqlite"), command: "run")
            defer { withExtendedLifetime(lock) {} }
            let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out2")])
            #expect(result.code == 4)
            #expect(result.err.hasPrefix("Error: another run holds the database (pid \(getpid())"))
            #expect(RunLock.holder(databasePath: db)?.hasPrefix("pid \(getpid())") == true)
        }
        // Released, the store is free again under either name.
        #expect(RunLock.holder(databasePath: db) == nil)
        let again = work.iaprecon(["report", "--db", work.path("hard.sqlite"), "--out", work.path("out3")])
        #expect(again.code == 0)
        #expect(try work.readWithoutHistory("out3/findings.csv") == work.readWithoutHistory("out/findings.csv"))
    }

    @Test("a lock that made the store file removes it and its note for a refused command, and the next run makes its own; a file that was there, or written since, stays")
    func lockRemovesOnlyTheStoreItMade() throws {
        let work = try Workspace()
        let manager = FileManager.default
        let db = work.path("s.sqlite")
        let made = try RunLock(databasePath: db, command: "nightly")
        #expect(made.madeStore)
        #expect(manager.fileExists(atPath: RunLock.notePath(db)))
        made.removeMadeStore()
        #expect(!manager.fileExists(atPath: db))
        #expect(!manager.fileExists(atPath: RunLock.notePath(db)))
        // While the refused run still holds the file it removed, the path is free: the next run makes a store there and holds it.
        let next = try RunLock(databasePath: db, command: "run")
        #expect(next.madeStore)
        #expect(RunLock.holder(databasePath: db)?.hasPrefix("pid \(getpid()), iaprecon run, started ") == true)
        withExtendedLifetime(made) {}

        // Near misses: a store file another run wrote to since, and one that was there before the lock, are not the lock's to remove.
        #expect(throws: Never.self) { try "SQLite format 3\0".write(toFile: db, atomically: false, encoding: .utf8) }
        next.removeMadeStore()
        #expect(manager.fileExists(atPath: db))
        withExtendedLifetime(next) {}
        let ahead = work.path("ahead.sqlite")
        #expect(manager.createFile(atPath: ahead, contents: nil))
        let found = try RunLock(databasePath: ahead, command: "nightly")
        #expect(!found.madeStore)
        found.removeMadeStore()
        #expect(manager.fileExists(atPath: ahead))
        withExtendedLifetime(found) {}

        // Through a symlink to a store not made yet, the lock makes the file it leads to, and removes that file, never the symlink.
        let link = work.path("link.sqlite")
        try manager.createSymbolicLink(atPath: link, withDestinationPath: "target.sqlite")
        let linked = try RunLock(databasePath: link, command: "nightly")
        #expect(linked.madeStore)
        #expect(manager.fileExists(atPath: work.path("target.sqlite")))
        #expect(manager.fileExists(atPath: work.path("target.sqlite.lock")))
        linked.removeMadeStore()
        #expect(!manager.fileExists(atPath: work.path("target.sqlite")))
        #expect(!manager.fileExists(atPath: work.path("target.sqlite.lock")))
        #expect(try manager.destinationOfSymbolicLink(atPath: link) == "target.sqlite")
        withExtendedLifetime(linked) {}

        // A run that set up the store it made and recorded itself in it, and stopped before it stored what it read, leaves
        // none of it, through a symlink too; near miss: once it stores what it read, the store stays.
        for (name, stored) in [("started.sqlite", false), ("link-started.sqlite", false), ("stored.sqlite", true)] {
            let path = work.path(name)
            if name.hasPrefix("link-") { try manager.createSymbolicLink(atPath: path, withDestinationPath: "started-target.sqlite") }
            let lock = try RunLock(databasePath: path, command: "nightly")
            lock.startsRun()
            do {
                let database = try Store.open(path: path)
                _ = try RunLog.start(database, command: "nightly")
                if stored { lock.storesInputs() }
            }
            #expect(lock.removeMadeStore() == !stored, "\(name)")
            let left = try manager.contentsOfDirectory(atPath: work.root).filter { $0.hasPrefix(name) || $0.hasPrefix("started-target") }.sorted()
            #expect(left == (stored ? [name, name + ".lock"] : name.hasPrefix("link-") ? [name] : []), "\(name)")
            withExtendedLifetime(lock) {}
        }
    }

    @Test("a file system that refuses flock is named as the store's problem, not as another run holding it, and leaves no store file behind; near miss: a held lock is still a held lock")
    func lockRefusedByTheFileSystem() throws {
        let work = try Workspace()
        let manager = FileManager.default
        let refusing: (Int32) -> Int32 = { _ in errno = ENOLCK; return -1 }
        let db = work.path("s.sqlite")
        do {
            _ = try RunLock(databasePath: db, command: "nightly", lock: refusing)
            Issue.record("locked a store its file system refuses to lock")
        } catch let error as StoreError {
            #expect(error.description == "cannot use store \(db): cannot lock it: \(String(cString: strerror(ENOLCK))) "
                + "(keep the store on a file system with flock(2), such as a local disk)")
        }
        #expect(!manager.fileExists(atPath: db))
        #expect(!manager.fileExists(atPath: RunLock.notePath(db)))
        // A store that was there stays, with its bytes.
        #expect(manager.createFile(atPath: db, contents: Data("kept".utf8)))
        #expect(throws: StoreError.self) { try RunLock(databasePath: db, command: "run", lock: refusing) }
        #expect(manager.contents(atPath: db) == Data("kept".utf8))

        let held: (Int32) -> Int32 = { _ in errno = EWOULDBLOCK; return -1 }
        #expect(throws: LockedError.self) { try RunLock(databasePath: db, command: "run", lock: held) }
    }

    @Test("a lock whose file leaves the store's path between its open and its lock opens the path again and locks the file now there; left alone, it opens it once")
    func lockOpensThePathAgain() throws {
        let work = try Workspace()
        let manager = FileManager.default
        // A refused first night removes the store it made, and lets go of it, once this run has opened that file: this run makes the next.
        let db = work.path("s.sqlite")
        var refused: RunLock? = try RunLock(databasePath: db, command: "nightly")
        var opens = 0
        let next = try RunLock(databasePath: db, command: "run") { point in
            guard point == "store opened" else { return }
            opens += 1
            refused?.removeMadeStore()
            refused = nil
        }
        #expect(opens == 2)
        #expect(next.madeStore)
        #expect(next.locks(databasePath: db))
        #expect(RunLock.holder(databasePath: db)?.hasPrefix("pid \(getpid()), iaprecon run, started ") == true)
        // The file it holds is the one at the path: another run is refused.
        #expect(throws: LockedError.self) { try RunLock(databasePath: db, command: "run") }
        withExtendedLifetime(next) {}

        // Another file put in its place (a store moved there) is the one locked, and was not made by the lock.
        let moved = work.path("moved.sqlite")
        #expect(manager.createFile(atPath: moved, contents: nil))
        var movedOpens = 0
        let replaced = try RunLock(databasePath: moved, command: "run") { point in
            guard point == "store opened" else { return }
            movedOpens += 1
            if movedOpens == 1 {
                #expect(manager.createFile(atPath: work.path("new.sqlite"), contents: Data("new".utf8)))
                #expect(rename(work.path("new.sqlite"), moved) == 0)
            }
        }
        #expect(movedOpens == 2)
        #expect(!replaced.madeStore)
        #expect(replaced.locks(databasePath: moved))
        withExtendedLifetime(replaced) {}

        // A path that changes at every open is named, after three.
        let busy = work.path("busy.sqlite")
        #expect(manager.createFile(atPath: busy, contents: nil))
        var busyOpens = 0
        let changing = #expect(throws: StoreError.self) {
            try RunLock(databasePath: busy, command: "run") { point in
                guard point == "store opened" else { return }
                busyOpens += 1
                #expect(manager.createFile(atPath: work.path("new.sqlite"), contents: nil))
                #expect(rename(work.path("new.sqlite"), busy) == 0)
            }
        }
        #expect(changing?.description == "cannot use store \(busy): it was removed or replaced each time this run locked it")
        #expect(busyOpens == 3)

        // Near miss: a file left alone is opened once, whether the lock makes it or finds it.
        for (name, made) in [("made.sqlite", true), ("found.sqlite", false)] {
            let path = work.path(name)
            if !made { #expect(manager.createFile(atPath: path, contents: nil)) }
            var once = 0
            let lock = try RunLock(databasePath: path, command: "run") { point in
                if point == "store opened" { once += 1 }
            }
            #expect(once == 1, "\(name)")
            #expect(lock.madeStore == made, "\(name)")
            #expect(lock.locks(databasePath: path), "\(name)")
            withExtendedLifetime(lock) {}
        }
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
        #expect(lines.contains("total                                                 294       277         8      3        6"))
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

    @Test("two runs on the same inputs and store write the same outputs, but for which findings are new, and leave the store's data unchanged")
    func idempotent() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        for out in ["a", "b"] {
            #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path(out), "--quiet"]).code == 0)
        }
        for name in ["revenue_daily.csv", "apple_tieout.csv", "attribution.csv", "rejects.csv"] {
            #expect(try work.read("a/" + name) == work.read("b/" + name), "\(name)")
        }
        // The first run reported every finding first; the second, nothing new.
        #expect(try work.read("a/findings.csv").replacingOccurrences(of: ",true\r\n", with: ",false\r\n") == work.read("b/findings.csv"))
        #expect(try work.read("a/findings.json").replacingOccurrences(of: "\"new\": true", with: "\"new\": false") == work.read("b/findings.json"))
        func withoutNew(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { !$0.contains("\"new\": ") && !$0.contains("\"new_amount_") }
        }
        #expect(withoutNew(try work.read("a/summary.json")) == withoutNew(try work.read("b/summary.json")))
        #expect(try work.read("b/summary.json").contains("\"new\": 0,"))
        let database = try Store.open(path: db)
        #expect(try database.scalar("SELECT sum(lines_read) FROM files") == .integer(294))
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

    @Test("history --transaction shows the answer to Apple's CONSUMPTION_REQUEST a member a line, with what each says; a transaction Apple did not ask about shows none")
    func historyConsumptionAnswer() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        let asked = work.iaprecon(["history", "--transaction", "2000000629466000", "--db", db])
        #expect(asked.code == 0)
        #expect(asked.out.hasSuffix("""

            CONSUMPTION_REQUEST answers (Send Consumption Information body):
            requested 2026-11-23 10:02:13 UTC, notification 0a3cee3d-920a-4658-8128-61d634efc3d1
              accountTenure             1      0 to 3 days since sign-up
              appAccountToken           ""     none
              consumptionStatus         0      undeclared
              customerConsented         false  not on record here: the app server sets it before sending
              deliveryStatus            0      delivered and working
              lifetimeDollarsPurchased  2      0.01 to 49.99 USD
              lifetimeDollarsRefunded   1      0 USD
              platform                  1      Apple (signed up with an IDFV)
              playTime                  0      undeclared
              refundPreference          0      undeclared
              sampleContentProvided     false  no
              userStatus                0      undeclared

            """))
        #expect(asked.out.split(separator: "\n").allSatisfy { $0.count <= 120 })
        // The file Apple's answer is sent from keeps its one JSON line.
        #expect(try work.read("out/consumption_requests.jsonl").contains("""
            {"notificationUUID":"0a3cee3d-920a-4658-8128-61d634efc3d1","transactionId":"2000000629466000","requestDate":"2026-11-23T10:02:13.000Z",\
            "consumptionRequest":{"accountTenure":1,"appAccountToken":"","consumptionStatus":0,"customerConsented":false,"deliveryStatus":0,\
            "lifetimeDollarsPurchased":2,"lifetimeDollarsRefunded":1,"platform":1,"playTime":0,"refundPreference":0,"sampleContentProvided":false,\
            "userStatus":0}}
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

extension CommandTests {
    @Test("every sample user's history table fits 120 columns, and --tz moves its times and says so")
    func historyWidthAndZone() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        for user in (1001...1030).map({ "u_\($0)" }) {
            let table = work.iaprecon(["history", user, "--db", db])
            #expect(table.code == 0, "\(user)")
            let widest = table.out.split(separator: "\n").map(\.count).max() ?? 0
            #expect(widest <= 120, "\(user): a line of \(widest) columns")
        }
        let utc = work.iaprecon(["history", "u_1005", "--db", db])
        let tokyo = work.iaprecon(["history", "u_1005", "--db", db, "--tz", "Asia/Tokyo"])
        #expect(utc.out.contains("\n2026-11-24 19:40:02  install"))
        #expect(tokyo.out.contains("time (Asia/Tokyo)"))
        #expect(tokyo.out.contains("\n2026-11-25 04:40:02  install"))
        #expect(tokyo.out.hasPrefix("user u_1005 · as of 2026-11-30 08:59:00 Asia/Tokyo"))
        #expect(work.iaprecon(["history", "u_1005", "--db", db, "--tz", "Mars/Olympus"]).code == 2)

        // A time inside a detail moves with the time column on the table and page; scripts keep ISO UTC.
        let yearly = work.iaprecon(["history", "u_1008", "--db", db, "--tz", "Asia/Tokyo"])
        // The order id widens its column, and the detail wraps before the time, which stays whole.
        #expect(yearly.out.contains("Production, expires\n") && yearly.out.contains(" 2027-11-21 11:30:04\n"))
        #expect(!yearly.out.contains("2027-11-21T02:30:04"))
        let page = work.iaprecon(["history", "u_1008", "--db", db, "--tz", "Asia/Tokyo", "--format", "html"])
        #expect(page.out.contains("Production, expires 2027-11-21 11:30:04"))
        let json = work.iaprecon(["history", "u_1008", "--db", db, "--tz", "Asia/Tokyo", "--format", "json"])
        #expect(json.out.contains("\"Production, expires 2027-11-21T02:30:04.000Z\""))
    }

    @Test("history's JSON, written an event at a time, is the document JSONWriter writes whole, with events or none")
    func historyJSONWrittenInPieces() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        for lookup in [["u_1005"], ["u_1008"], ["--transaction", "2000000629466000"]] {
            let json = work.iaprecon(["history"] + lookup + ["--db", db, "--format", "json"])
            #expect(json.code == 0, "\(lookup): \(json.err)")
            #expect(json.out.contains("\"events\": [\n    {\n      \"time\": "), "\(lookup)")
            #expect(JSONWriter.pretty(try JSONParser.parse(json.out)) == json.out, "\(lookup)")
        }
        let empty = UserHistory(subject: "user u_0", notes: [], userID: "u_0", events: HistoryEvents(), findingIDs: [], findings: [], spent: "0",
                                refunded: "0", reportingCurrency: "USD", unconverted: 0, activeSubscriptions: [], asOfMs: 0, rejectedLines: [],
                                caveat: nil)
        var text = ""
        HistoryCommand.writeJSON(empty) { text += $0 }
        #expect(text.hasSuffix("\n  \"findings\": [],\n  \"rejected_lines\": [],\n  \"events\": []\n}\n"))
        #expect(JSONWriter.pretty(try JSONParser.parse(text)) == text)
    }

    @Test("history's JSON and CSV carry amount and currency apart; the header's totals and subscriptions are in the JSON")
    func historyAmountFields() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        let json = work.iaprecon(["history", "u_1008", "--db", db, "--format", "json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["spent"] as? String == "39.74")
        #expect(object["refunded"] as? String == "19.87")
        #expect(object["reporting_currency"] as? String == "USD")
        let events = try #require(object["events"] as? [[String: Any]])
        let refund = try #require(events.first { $0["event"] as? String == "refund" })
        #expect(refund["amount"] as? String == "3000")
        #expect(refund["currency"] as? String == "JPY")
        let output = work.iaprecon(["history", "u_1008", "--db", db, "--format", "csv"]).out
        // RFC 4180, as every CSV iaprecon writes (CONTRACT.md §3): each record ends in CRLF, none in a bare LF.
        let bytes = Array(output.utf8)
        #expect(output.hasSuffix("\r\n") && bytes.indices.allSatisfy { bytes[$0] != 0x0A || ($0 > 0 && bytes[$0 - 1] == 0x0D) })
        let csv = output.split(separator: "\r\n")
        #expect(csv.first == "time,event,id,product,amount,currency,detail,source")
        #expect(csv.contains { $0.hasPrefix("2026-11-27T05:12:00.000Z,refund,2000000629057412,com.example.premium.yearly,3000,JPY,") })
    }

    @Test("history without --currency shows a store reported in euros in euros; a currency its fx.csv does not convert into exits 2")
    func historyStoreCurrency() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/receipts", withIntermediateDirectories: true)
        try ("{\"received_at\":\"2026-11-28T20:00:00Z\",\"user_id\":\"u_1\",\"transactions\":[{\"transactionId\":\"t1\","
             + "\"productId\":\"gems60\",\"purchaseDate\":\"2026-11-28T19:00:00Z\",\"price\":990,\"currency\":\"EUR\"}]}\n")
            .write(toFile: input + "/receipts/r.jsonl", atomically: true, encoding: .utf8)
        try "date,currency,rate\n2026-11-01,EUR,1\n2026-11-01,USD,0.9\n".write(toFile: input + "/fx.csv", atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        let run = work.iaprecon(["run", "--input", input, "--currency", "EUR", "--now", "2026-11-29T00:00:00Z", "--db", db,
                                 "--out", work.path("out"), "--quiet"])
        #expect(run.code == 0, "\(run.err)")
        let json = work.iaprecon(["history", "u_1", "--db", db, "--format", "json"])
        #expect(json.code == 0, "\(json.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(object["reporting_currency"] as? String == "EUR")
        #expect(object["spent"] as? String == "0.99")
        let usd = work.iaprecon(["history", "u_1", "--db", db, "--currency", "USD"])
        #expect(usd.code == 2)
        #expect(usd.err == "Error: fx.csv converts into EUR, not USD\n")
    }

    @Test("Terminal.visible escapes every control and format character, ASCII's DEL and tab too, and nothing printable")
    func visibleCharacters() {
        #expect(Terminal.visible("a\u{7F}b\tc") == "a\\u{7F}b\\u{9}c")
        #expect(Terminal.visible("zero\u{200B}width") == "zero\\u{200B}width")
        #expect(Terminal.visible(" ~Café 円 u_1005") == " ~Café 円 u_1005")
    }

    @Test("control characters and markup in a user id or campaign are shown escaped in the table, CSV and HTML, never raw")
    func historyEscapes() throws {
        let work = try Workspace()
        let input = work.path("in")
        let user = "u_\u{1B}[2J<b>x</b>"
        let jsonUser = "u_\\u001b[2J<b>x</b>"
        try FileManager.default.createDirectory(atPath: input + "/registrations", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: input + "/attribution", withIntermediateDirectories: true)
        try "{\"ts\":\"2026-11-10T09:00:00Z\",\"user_id\":\"\(jsonUser)\",\"method\":\"apple\",\"appsflyer_id\":\"af1\"}\n"
            .write(toFile: input + "/registrations/r.jsonl", atomically: true, encoding: .utf8)
        try ("Event Time,Event Name,Media Source,Campaign,AppsFlyer ID\n"
             + "2026-11-10 08:00:00,install,Facebook Ads,\"Camp\u{1B}]0;owned\u{07}\",af1\n")
            .write(toFile: input + "/attribution/af.csv", atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", input, "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        for format in ["table", "csv", "html"] {
            let result = work.iaprecon(["history", user, "--db", db, "--format", format])
            #expect(result.code == 0, "\(format): \(result.err)")
            #expect(!result.out.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "\(format) prints a raw control character")
            #expect(result.out.contains("u_\\u{1B}[2J"), "\(format)")
            #expect(result.out.contains("Camp\\u{1B}]0;owned\\u{7}"), "\(format)")
        }
        let html = work.iaprecon(["history", user, "--db", db, "--format", "html"]).out
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("&lt;b&gt;x&lt;/b&gt;") && !html.contains("<b>x</b>"))
    }

    @Test("warnings and errors naming a file or a notification type from input show its control characters escaped, on stderr and in the log")
    func warningsEscape() throws {
        let work = try Workspace()
        let root = work.path("days")
        let input = root + "/2026-11-21"
        try FileManager.default.createDirectory(atPath: input + "/notifications", withIntermediateDirectories: true)
        let expired = try String(contentsOfFile: Workspace.sampleData + "/notifications/asn-2026-11.jsonl", encoding: .utf8)
            .split(separator: "\n").first { $0.contains("\"notificationType\":\"EXPIRED\"") } ?? ""
        try (expired.replacingOccurrences(of: "\"notificationType\":\"EXPIRED\"", with: "\"notificationType\":\"X\\u001b[2JY\"") + "\n")
            .write(toFile: input + "/notifications/n.jsonl", atomically: true, encoding: .utf8)
        try "{}\n".write(toFile: input + "/notifications/n\u{1B}]0;owned\u{07}.json", atomically: true, encoding: .utf8)
        let (night, log) = try Self.nightWithLog(work, root: root)
        for (name, text) in [("stderr", night.err), ("log", log)] {
            #expect(!text.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" }, "\(name) holds a raw control character: \(text)")
            #expect(text.contains("(X\\u{1B}[2JY 1)"), "\(name): \(text)")
            #expect(text.contains("Warning: not read, matches no source: \(input)/notifications/n\\u{1B}]0;owned\\u{7}.json"), "\(name): \(text)")
        }
        let missing = work.iaprecon(["run", "--input", work.path("no\u{1B}such"), "--db", work.path("t.sqlite"), "--out", work.path("out")])
        #expect(missing.code == 3)
        #expect(missing.err == "Error: cannot read \(work.path("no\\u{1B}such")): no such folder\n")
        // Near miss: a message of several lines keeps its line breaks, and plain text is left as it is.
        let console = Console.capturing()
        console.errLines("first line\nsecond \u{1B}[1m line, café")
        console.err("Warning: not read, matches no source: in/Catalog.csv")
        #expect(console.stderr == "first line\nsecond \\u{1B}[1m line, café\nWarning: not read, matches no source: in/Catalog.csv\n")
    }

    /// The night of 2026-11-21 over the partitions under `root`, which must end 0, and its nightly log's text.
    static func nightWithLog(_ work: Workspace, root: String) throws -> (night: Workspace.Ending, log: String) {
        let logs = work.path("logs")
        let night = work.iaprecon(["nightly", "--root", root, "--db", work.path("s.sqlite"), "--reports", work.path("reports"),
                                   "--log-dir", logs, "--now", "2026-11-22T00:00:00Z"])
        #expect(night.code == 0, "\(night.err)")
        let log = try FileManager.default.contentsOfDirectory(atPath: logs).map { try String(contentsOfFile: logs + "/" + $0, encoding: .utf8) }.joined()
        return (night, log)
    }

    @Test("a line break in an input value never starts a line of its own on stderr or in the log: cron's mail cannot be forged")
    func warningsKeepInputOnOneLine() throws {
        let work = try Workspace()
        let root = work.path("days")
        let input = root + "/2026-11-21"
        for folder in ["spend", "server"] {
            try FileManager.default.createDirectory(atPath: input + "/" + folder, withIntermediateDirectories: true)
        }
        // A campaign (a quoted CSV cell may hold a line break) that two files give, and an order id two users logged:
        // each is named in a warning.
        let spend = "date,media_source,campaign,spend,currency\r\n2026-11-20,fb,\"c1\niaprecon: exit 0: forged\",10,USD\r\n"
        for name in ["a.csv", "b.csv"] { try spend.write(toFile: input + "/spend/" + name, atomically: true, encoding: .utf8) }
        try ["u1", "u2"].map { #"{"ts":"2026-11-20T10:00:00Z","event":"order_created","order_id":"o1\nForged: line","user_id":"\#($0)","product_id":"p"}"# }
            .joined(separator: "\n").write(toFile: input + "/server/s.jsonl", atomically: true, encoding: .utf8)
        let (night, log) = try Self.nightWithLog(work, root: root)
        for (name, text) in [("stderr", night.err), ("log", log)] {
            #expect(text.contains("c1\\u{A}iaprecon: exit 0: forged"), "\(name): \(text)")
            #expect(text.contains("order id o1\\u{A}Forged: line was logged by 2 users"), "\(name): \(text)")
            let lines = text.split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("iaprecon: exit 0") || $0.hasPrefix("Forged") }, "\(name): \(text)")
        }
        // Every line of the log is stamped: none is a value's second line.
        #expect(log.split(separator: "\n").allSatisfy { $0.hasPrefix("20") }, "\(log)")
        // Near miss: the same warnings of plain values are one line each, as they were.
        let plain = work.path("plain")
        try FileManager.default.createDirectory(atPath: plain + "/spend", withIntermediateDirectories: true)
        for name in ["a.csv", "b.csv"] {
            try "date,media_source,campaign,spend,currency\n2026-11-20,fb,c1,10,USD\n".write(toFile: plain + "/spend/" + name, atomically: true, encoding: .utf8)
        }
        let run = work.iaprecon(["run", "--input", plain, "--db", work.path("p.sqlite"), "--out", work.path("out"), "--now", "2026-11-22T00:00:00Z"])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.err.contains("\nWarning: spend for 2026-11-20, fb, c1 comes from two files, spend/a.csv:2 and spend/b.csv:2: all their lines are counted\n"),
                "\(run.err)")
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

    @Test("normalize and join count the rows they wrote, report its files")
    func laterStages() {
        #expect(StageProgress.line(stage: "join", lines: 40_000, seconds: 2, doneBytes: 0, plannedBytes: 0) == "join: 40000 rows, 20000 rows/s")
        #expect(StageProgress.line(stage: "report", lines: 5, seconds: 3.5, doneBytes: 0, plannedBytes: 0) == "report: 5 files, 3 s")
    }

    @Test("the stages report their progress as they write: every row the join inserts, every report file")
    func stagesReport() throws {
        let work = try Workspace()
        final class Counting: ProgressSink {
            var stages: [String] = []
            var counts: [String: Int] = [:]
            func stageStarted(_ stage: String) { stages.append(stage) }
            func advanced(_ progress: IngestProgress) {
                if case .lines(let count) = progress, let stage = stages.last { counts[stage, default: 0] += count }
            }
            func stageFinished(_ stage: String, seconds: Double, note: String) {}
            func warning(_ message: String) {}
        }
        let counting = Counting()
        let options = RunOptions(input: Workspace.sampleData, databasePath: work.path("s.sqlite"), outFolder: work.path("out"), jobs: 2,
                                 reconcile: ReconcileSettings(), report: ReportSettings(outFolder: work.path("out")))
        _ = try Pipeline.run(options, progress: counting)
        #expect(counting.stages == ["ingest", "normalize", "join", "report"])
        #expect(counting.counts["ingest"] == 294)
        // Every file the report writes counts once: the live line never shows more than the set holds.
        #expect(counting.counts["report"] == 11)
        // Near miss: without apple/ there is no apple_tieout.csv to count.
        let input = work.path("signups")
        try FileManager.default.createDirectory(atPath: input + "/registrations", withIntermediateDirectories: true)
        try "{\"ts\":\"2026-11-10T09:00:00Z\",\"user_id\":\"u_1\",\"method\":\"apple\"}\n"
            .write(toFile: input + "/registrations/r.jsonl", atomically: true, encoding: .utf8)
        let withoutApple = Counting()
        _ = try Pipeline.run(RunOptions(input: input, databasePath: work.path("t.sqlite"), outFolder: work.path("out2"), jobs: 2,
                                        reconcile: ReconcileSettings(), report: ReportSettings(outFolder: work.path("out2"))), progress: withoutApple)
        #expect(withoutApple.counts["report"] == 10)
        let database = try Store.open(path: work.path("s.sqlite"), readOnly: true)
        let joinRows = try database.scalar("""
            SELECT (SELECT count(*) FROM int_transactions_resolved) + (SELECT count(*) FROM fct_findings)
            """).integerValue
        #expect((counting.counts["join"] ?? 0) >= Int(joinRows))
        // Normalize builds indexes: it writes no rows to count.
        #expect(counting.counts["normalize"] == nil)
    }
}

/// `--out` is iaprecon's to replace only where iaprecon wrote it.
@Suite("Output folder safety")
struct OutputFolderTests {
    @Test("a non-empty folder iaprecon did not write is refused with exit 2 before any work, and left as it was")
    func foreignFolder() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("mine"), withIntermediateDirectories: true)
        try "my notes\n".write(toFile: work.path("mine/notes.txt"), atomically: true, encoding: .utf8)
        try "my own findings\n".write(toFile: work.path("mine/findings.csv"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("mine")])
        #expect(result.code == 2)
        #expect(result.err == "Error: will not write into \(work.path("mine")): it holds files iaprecon did not write ('findings.csv', 'notes.txt'); name a new or empty folder\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("mine")).sorted() == ["findings.csv", "notes.txt"])
        #expect(try work.read("mine/findings.csv") == "my own findings\n")
        let report = work.iaprecon(["report", "--db", work.path("s.sqlite"), "--out", work.path("mine")])
        #expect(report.code == 2 || report.code == 1)
        #expect(try work.read("mine/findings.csv") == "my own findings\n")
    }

    /// The runs a store records, oldest first, as `command status exit`.
    static func runs(_ db: String) throws -> [String] {
        var runs: [String] = []
        try Store.open(path: db, readOnly: true).forEach("SELECT command || ' ' || status || ' ' || exit_code FROM runs ORDER BY run_id") {
            runs.append($0.string(0))
        }
        return runs
    }

    @Test("a refused --out is refused before the store: run creates none, report records no run, nightly and backfill neither, nor a log")
    func refusedBeforeTheStore() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("mine"), withIntermediateDirectories: true)
        try "my notes\n".write(toFile: work.path("mine/notes.txt"), atomically: true, encoding: .utf8)
        let refusal = "Error: will not write into \(work.path("mine")): it holds files iaprecon did not write ('notes.txt'); name a new or empty folder\n"
        let run = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("new.sqlite"),
                                 "--out", work.path("mine"), "--quiet"])
        #expect(run.code == 2)
        #expect(run.err == refusal)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).sorted() == ["mine"])

        // Near miss: a store that exists keeps the runs it recorded, and a run into a folder of its own is one of them.
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"),
                               "--quiet"]).code == 0)
        #expect(try Self.runs(db) == ["run ok 0"])
        let report = work.iaprecon(["report", "--db", db, "--out", work.path("mine"), "--quiet"])
        #expect(report.code == 2)
        #expect(report.err == refusal)
        let rerun = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("mine"),
                                   "--quiet"])
        #expect(rerun.code == 2)
        #expect(try Self.runs(db) == ["run ok 0"])

        // A night's dated folder holding a user's file: no store, no log, and a backfill runs none of its nights.
        let root = try NightlyTests.partitions(in: work)
        try FileManager.default.createDirectory(atPath: work.path("reports/2026-11-29"), withIntermediateDirectories: true)
        try "my notes\n".write(toFile: work.path("reports/2026-11-29/notes.txt"), atomically: true, encoding: .utf8)
        let common = ["--root", root, "--db", work.path("n.sqlite"), "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        for arguments in [["nightly"], ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"]] {
            let night = work.iaprecon(arguments + common)
            #expect(night.code == 2, "\(arguments)")
            #expect(night.err == "Error: will not write into \(work.path("reports/2026-11-29")): it holds files iaprecon did not write ('notes.txt'); "
                    + "name a new or empty folder\n", "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: work.path("n.sqlite")), "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: work.path("logs")), "\(arguments)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("reports")) == ["2026-11-29"], "\(arguments)")
        }
    }

    @Test("in its own folder iaprecon replaces its links only: a user's file, even one named .tmp-, stays; a user's findings.csv is refused")
    func ownFolderOnly() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        #expect(FileManager.default.fileExists(atPath: work.path("out/.iaprecon-out")))
        try "keep me\n".write(toFile: work.path("out/draft.tmp-42"), atomically: true, encoding: .utf8)
        try "keep me too\n".write(toFile: work.path("out/notes.txt"), atomically: true, encoding: .utf8)
        #expect(work.iaprecon(["report", "--db", db, "--out", work.path("out")]).code == 0)
        #expect(try work.read("out/draft.tmp-42") == "keep me\n")
        #expect(try work.read("out/notes.txt") == "keep me too\n")

        try FileManager.default.removeItem(atPath: work.path("out/findings.csv"))
        try "edited by hand\n".write(toFile: work.path("out/findings.csv"), atomically: true, encoding: .utf8)
        let refused = work.iaprecon(["report", "--db", db, "--out", work.path("out")])
        #expect(refused.code == 2)
        #expect(refused.err == "Error: will not write into \(work.path("out")): 'findings.csv' is not iaprecon's (it writes a link into .current/); move it away\n")
        #expect(try work.read("out/findings.csv") == "edited by hand\n")
    }

    @Test("an existing empty folder is filled in place (a mount point cannot be replaced), all names at once")
    func emptyFolderInPlace() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("mount"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.path("mount/lost+found"), withIntermediateDirectories: true)
        var before = stat()
        #expect(stat(work.path("mount"), &before) == 0)
        let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("mount"), "--quiet",
                                    "--bundle-id", "com.example.game"])
        #expect(result.code == 0)
        var after = stat()
        #expect(stat(work.path("mount"), &after) == 0)
        #expect(after.st_ino == before.st_ino)
        #expect(try work.read("mount/findings.csv") == String(contentsOfFile: Workspace.sampleData + "/expected/findings.csv", encoding: .utf8))
        // Nothing is left beside it either.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).sorted() == ["mount", "s.sqlite", "s.sqlite.lock"])
    }
}
