import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// The helper commands a person tries iaprecon with: generate and validate.
@Suite("Tools")
struct ToolsTests {
    @Test("generate refuses a non-empty --out without --force, and leaves what is there")
    func generateRefusesNonEmpty() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("demo/server"), withIntermediateDirectories: true)
        try "{\"event\":\"mine\"}\n".write(toFile: work.path("demo/server/server-2026-09-01.jsonl"), atomically: true, encoding: .utf8)
        let refused = work.iaprecon(["generate", "--out", work.path("demo"), "--users", "20", "--days", "2"])
        #expect(refused.code == 2)
        #expect(refused.err.hasPrefix("Error: --out \(work.path("demo")) is not empty; generating into it replaces its files (use --force, or name a new folder)"))
        #expect(try work.read("demo/server/server-2026-09-01.jsonl") == "{\"event\":\"mine\"}\n")
        let forced = work.iaprecon(["generate", "--out", work.path("demo"), "--users", "20", "--days", "2", "--force"])
        #expect(forced.code == 0)
        #expect(FileManager.default.fileExists(atPath: work.path("demo/server/server-2026-09-01.jsonl.gz")))
    }

    @Test("generate --partitioned writes day folders that nightly reads night by night, as a flat folder reads at once")
    func partitionedForNightly() throws {
        let work = try Workspace()
        let generated = work.iaprecon(["generate", "--out", work.path("days"), "--users", "60", "--days", "3", "--partitioned"])
        #expect(generated.code == 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: work.path("days")).sorted()
        #expect(names == ["2026-09-01", "2026-09-02", "2026-09-03", "catalog.csv", "fx.csv", "spend", "trust", "truth.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("days/2026-09-02")).sorted()
                == ["apple", "attribution", "notifications", "receipts", "registrations", "server"])
        #expect(FileManager.default.fileExists(atPath: work.path("days/2026-09-02/server/server-2026-09-02.jsonl")))

        let common = ["--root", work.path("days"), "--db", work.path("s.sqlite"), "--reports", work.path("reports"),
                      "--log-dir", work.path("logs"), "--quiet", "--trust-root", work.path("days/trust/test-root.pem")]
        for day in ["2026-09-01", "2026-09-02", "2026-09-03"] {
            #expect(work.iaprecon(["nightly", "--date", day] + common).code == 0, "\(day)")
        }
        #expect(work.iaprecon(["generate", "--out", work.path("flat"), "--users", "60", "--days", "3"]).code == 0)
        #expect(work.iaprecon(["run", "--input", work.path("flat"), "--trust-root", work.path("flat/trust/test-root.pem"), "--db", work.path("flat.sqlite"),
                               "--out", work.path("out"), "--quiet"]).code == 0)
        #expect(try work.read("reports/2026-09-03/revenue_daily.csv") == work.read("out/revenue_daily.csv"))
        #expect(try work.read("reports/2026-09-03/findings.csv").split(separator: "\r\n").count
                == work.read("out/findings.csv").split(separator: "\r\n").count)
    }

    @Test("validate prints the first rejects with file, line and reason, as its help says")
    func validateShowsRejects() throws {
        let work = try Workspace()
        let result = work.iaprecon(["validate", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot])
        #expect(result.code == 0)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "rejected lines (all):"))
        let rejects = lines[(start + 3)...].filter { !$0.isEmpty }
        #expect(rejects.count == 8)
        #expect(rejects.first?.hasPrefix("attribution/in_app_events_2026-11-20_2026-11-29.csv:") == true)
        #expect(rejects.contains { $0.hasPrefix("server/server-2026-11-28.jsonl:") })
        #expect(result.err == "Warning: not read, matches no source: \(Workspace.sampleData)/README.md\n"
                + "Warning: not read, matches no source: \(Workspace.sampleData)/expected/\n"
                + "Warning: not read, matches no source: \(Workspace.sampleData)/trust/\n")
    }
}
