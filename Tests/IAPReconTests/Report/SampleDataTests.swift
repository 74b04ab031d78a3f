import Foundation
import Testing
@testable import IAPRecon

/// End to end on `sample-data/`: the README's main command, compared with the checked-in expected outputs.
///
/// To accept a deliberate change of output, run the tests with
/// `IAPRECON_UPDATE_EXPECTED=1` and review the diff of `sample-data/expected/`.
@Suite("sample-data end to end")
struct SampleDataTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let sampleData = repository + "/sample-data"
    static let expected = sampleData + "/expected"
    static let outputs = ["findings.csv", "findings.json", "summary.json", "revenue_daily.csv", "attribution.csv", "rejects.csv",
                          "consumption_requests.jsonl"]

    /// summary.json's stage timings differ run to run; everything before them must not.
    static func stable(_ name: String, _ text: String) -> String {
        guard name == "summary.json", let range = text.range(of: ",\n  \"stage_seconds\"") else { return text }
        return String(text[..<range.lowerBound]) + "\n}\n"
    }

    private func runSample(jobs: Int) throws -> (Scenario, RunResult) {
        let scenario = try Scenario()
        let result = try Pipeline.run(RunOptions(
            input: Self.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: jobs,
            signatures: .testChain, reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        return (scenario, result)
    }

    @Test("every output file matches sample-data/expected byte for byte")
    func matchesExpected() throws {
        let (scenario, _) = try runSample(jobs: 2)
        let update = ProcessInfo.processInfo.environment["IAPRECON_UPDATE_EXPECTED"] == "1"
        for name in Self.outputs {
            let actual = Self.stable(name, try scenario.output(name))
            let path = Self.expected + "/" + name
            if update {
                try FileManager.default.createDirectory(atPath: Self.expected, withIntermediateDirectories: true)
                try actual.write(toFile: path, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOfFile: path, encoding: .utf8)
            #expect(actual == expected, "\(name) differs from sample-data/expected/\(name)")
        }
    }

    @Test("the per-file accounting of sample-data is exact, and read = accepted + rejected + blank + ignored")
    func accounting() throws {
        let (_, result) = try runSample(jobs: 2)
        let counts = Dictionary(uniqueKeysWithValues: result.ingest.files.map { ($0.path, $0.counts) })
        #expect(counts == [
            "attribution/in_app_events_2026-11-20_2026-11-29.csv": LineCounts(read: 27, accepted: 26, rejected: 1),
            "attribution/installs_2026-11-20_2026-11-29.csv": LineCounts(read: 25, accepted: 25),
            "catalog.csv": LineCounts(read: 7, accepted: 7),
            "fx.csv": LineCounts(read: 36, accepted: 36),
            "notifications/asn-2026-11.jsonl": LineCounts(read: 26, accepted: 25, blank: 1),
            "receipts/verify-2026-11.jsonl": LineCounts(read: 31, accepted: 30, rejected: 1),
            "registrations/signups.jsonl": LineCounts(read: 32, accepted: 30, rejected: 1, blank: 1),
            "server/server-2026-11-27.jsonl.gz": LineCounts(read: 60, accepted: 57, rejected: 2, ignored: 1),
            "server/server-2026-11-28.jsonl": LineCounts(read: 10, accepted: 6, rejected: 2, blank: 1, ignored: 1),
            "spend/spend.csv": LineCounts(read: 13, accepted: 13),
        ])
        for file in result.ingest.files {
            let c = file.counts
            #expect(c.read == c.accepted + c.rejected + c.blank + c.ignored, "\(file.path)")
        }
        #expect(result.ingest.totals == LineCounts(read: 267, accepted: 255, rejected: 7, blank: 3, ignored: 2))
    }

    @Test("--jobs 1 and --jobs 4 write byte-identical outputs and the same findings")
    func jobsEquality() throws {
        let (one, _) = try runSample(jobs: 1)
        let (four, _) = try runSample(jobs: 4)
        for name in Self.outputs {
            #expect(Self.stable(name, try one.output(name)) == Self.stable(name, try four.output(name)), "\(name)")
        }
    }
}
