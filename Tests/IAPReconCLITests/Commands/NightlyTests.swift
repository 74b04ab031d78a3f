import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// The nightly entry point over day partitions built from sample-data.
@Suite("Nightly job")
struct NightlyTests {
    /// Two day partitions: the history up to 11-27, then the live log and everything Apple said.
    static func partitions(in work: Workspace) throws -> String {
        let manager = FileManager.default
        let root = work.path("data")
        let days: [String: [String]] = [
            "2026-11-28": ["server/server-2026-11-27.jsonl.gz", "registrations/signups.jsonl",
                           "attribution/installs_2026-11-20_2026-11-29.csv", "catalog.csv", "fx.csv"],
            "2026-11-29": ["server/server-2026-11-28.jsonl", "receipts/verify-2026-11.jsonl", "notifications/asn-2026-11.jsonl",
                           "attribution/in_app_events_2026-11-20_2026-11-29.csv", "spend/spend.csv"],
        ]
        for (day, files) in days {
            for file in files {
                let target = root + "/" + day + "/" + file
                try manager.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try manager.copyItem(atPath: Workspace.sampleData + "/" + file, toPath: target)
            }
        }
        return root
    }

    @Test("two nights: dated folders, latest, the runs table, logs, and exit codes with --fail-on")
    func twoNights() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let reports = work.path("reports")
        let common = ["--root", root, "--db", work.path("s.sqlite"), "--reports", reports, "--log-dir", work.path("logs"), "--quiet",
                      "--trust-root", Workspace.sampleRoot]

        let first = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(first.code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: reports + "/latest") == "2026-11-28")
        #expect(FileManager.default.fileExists(atPath: reports + "/2026-11-28/findings.csv"))

        // The newest partition by default; a critical finding trips --fail-on after everything is written.
        let second = work.iaprecon(["nightly", "--fail-on", "critical"] + common)
        #expect(second.code == 1)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: reports + "/latest") == "2026-11-29")
        let findings = try work.read("reports/latest/findings.csv")
        #expect(findings.split(separator: "\r\n").count == 1 + 14)
        #expect(findings.contains(",lost_delivery,critical,u_1003,"))

        // The second night re-read nothing of the first: its files were already stored.
        let database = try Store.open(path: work.path("s.sqlite"), readOnly: true)
        #expect(try database.scalar("SELECT count(*) FROM files") == .integer(10))
        var runs: [String] = []
        try database.forEach("SELECT command || ':' || status || ':' || lines_read FROM runs ORDER BY run_id") { runs.append($0.string(0)) }
        #expect(runs == ["run:ok:160", "run:ok:267"])
        let logs = try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).sorted()
        #expect(logs.count == 2)
        let log = try work.read("logs/" + logs[1])
        #expect(log.contains("ingest: ") && log.contains("report: ") && log.contains("exit 1"))

        // Same as one run over the whole sample: the same 14 findings by kind and transaction.
        let whole = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("whole.sqlite"), "--out", work.path("whole"), "--quiet"])
        #expect(whole.code == 0)
        func keys(_ text: String) -> [String] {
            text.split(separator: "\r\n").dropFirst().map { line in line.split(separator: ",", omittingEmptySubsequences: false).prefix(6).joined(separator: ",") }
        }
        #expect(keys(findings) == keys(try work.read("whole/findings.csv")))
    }

    @Test("backfill runs each day as that night saw it, oldest first; latest ends at the last day")
    func backfill() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let result = work.iaprecon(["backfill", "--root", root, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--reports", work.path("reports"),
                                    "--log-dir", work.path("logs"), "--from", "2026-11-28", "--to", "2026-11-29", "--quiet"])
        #expect(result.code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        let early = try work.read("reports/2026-11-28/summary.json")
        #expect(early.contains("\"read\": 160"))
        let bad = work.iaprecon(["backfill", "--root", root, "--from", "2026-11-29", "--to", "2026-11-28"])
        #expect(bad.code == 2)
    }

    @Test("a root without day partitions exits 3 naming it")
    func noPartitions() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("empty"), withIntermediateDirectories: true)
        let result = work.iaprecon(["nightly", "--root", work.path("empty"), "--db", work.path("s.sqlite"), "--reports", work.path("r"),
                                    "--log-dir", work.path("logs")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(work.path("empty")): no YYYY-MM-DD partition folders\n")
    }
}
