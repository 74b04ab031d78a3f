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
    static let outputs = [
        "findings.csv", "findings.json", "summary.json", "revenue_daily.csv", "revenue_monthly.csv", "transactions.csv", "apple_tieout.csv",
        "attribution.csv", "rejects.csv", "report.html",
    ]

    /// An output without what depends on the store's earlier runs: which findings are new and
    /// since when (`first_seen`, `new`, the summary's new counts). Two stores that reached the same
    /// data by different nights must agree on everything else.
    /// `report.html` without what says which findings this run reported first: the marks, the money-at-risk
    /// table's `new` column, and the critical findings of earlier events listed apart.
    static func withoutNewMarks(_ html: String) -> String {
        var html = html.replacingOccurrences(of: " <b class=\"new\">new</b>", with: "")
            .replacingOccurrences(of: "<th class=\"num\">new</th>", with: "")
        for pattern in [#"<aside class="earlier-new">.*?</aside>"#,
                        #"<td class="num"><span data-summary-key="findings\.by_kind\.[a-z_]+\.new" data-value="[0-9]+">[0-9,]+</span></td>"#,
                        #"<td class="num"><b data-summary-key="findings\.new" data-value="[0-9]+">[0-9,]+</b></td>"#] {
            html = html.replacingOccurrences(of: pattern, with: "", options: .regularExpression)
        }
        return html
    }

    static func withoutHistory(_ name: String, _ text: String) -> String {
        switch name {
        case "findings.csv":
            // The last two cells, first_seen and new, never hold a comma.
            return text.components(separatedBy: "\r\n").map { line in
                line.split(separator: ",", omittingEmptySubsequences: false).dropLast(2).joined(separator: ",")
            }.joined(separator: "\r\n")
        case "findings.json", "summary.json":
            return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
                !line.contains("\"first_seen\": ") && !line.contains("\"new\": ") && !line.contains("\"new_amount_")
            }.joined(separator: "\n")
        case "report.html":
            // The revenue a run restates is history too: a fresh store has published nothing before.
            return withoutNewMarks(text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
                !line.hasPrefix("<p class=\"warn\">Restated revenue: ")
            }.joined(separator: "\n"))
        default:
            return text
        }
    }

    /// The README's main command names the demo app's bundle (`--bundle-id com.example.game`), so the
    /// sample's foreign-bundle receipt is rejected; the clock is fixed so the outputs never age.
    static let lineRules = LineRules(nowMs: 1_796_083_200_000, bundleID: "com.example.game", signatures: .testChain)  // 2026-12-01T00:00:00Z

    private func runSample(jobs: Int) throws -> (Scenario, RunResult) {
        let scenario = try Scenario()
        var options = RunOptions(
            input: Self.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: jobs,
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out))
        options.lineRules = Self.lineRules
        let result = try Pipeline.run(options, progress: nil)
        return (scenario, result)
    }

    @Test("every output file matches sample-data/expected byte for byte")
    func matchesExpected() throws {
        let (scenario, _) = try runSample(jobs: 2)
        let update = ProcessInfo.processInfo.environment["IAPRECON_UPDATE_EXPECTED"] == "1"
        for name in Self.outputs {
            let actual = try scenario.output(name)
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
            "apple/S_D_85012345_20261124.txt.gz": LineCounts(read: 6, accepted: 4, ignored: 2),
            "apple/S_D_85012345_20261125.txt": LineCounts(read: 5, accepted: 4, ignored: 1),
            "apple/S_D_85012345_20261126.txt.gz": LineCounts(read: 5, accepted: 4, ignored: 1),
            "attribution/in_app_events_2026-11-20_2026-11-29.csv": LineCounts(read: 27, accepted: 26, rejected: 1),
            "attribution/installs_2026-11-20_2026-11-29.csv": LineCounts(read: 25, accepted: 25),
            "catalog.csv": LineCounts(read: 7, accepted: 7),
            "fx.csv": LineCounts(read: 36, accepted: 36),
            "notifications/asn-2026-11.jsonl": LineCounts(read: 27, accepted: 26, blank: 1),
            "receipts/verify-2026-11.jsonl": LineCounts(read: 34, accepted: 32, rejected: 2),
            "registrations/signups.jsonl": LineCounts(read: 33, accepted: 30, rejected: 2, blank: 1),
            "server/server-2026-11-27.jsonl.gz": LineCounts(read: 60, accepted: 57, rejected: 2, ignored: 1),
            "server/server-2026-11-28.jsonl": LineCounts(read: 16, accepted: 12, rejected: 2, blank: 1, ignored: 1),
            "spend/spend.csv": LineCounts(read: 13, accepted: 13),
        ])
        for file in result.ingest.files {
            let c = file.counts
            #expect(c.read == c.accepted + c.rejected + c.blank + c.ignored, "\(file.path)")
        }
        #expect(result.ingest.totals == LineCounts(read: 294, accepted: 276, rejected: 9, blank: 3, ignored: 6))
    }

    @Test("--jobs 1 and --jobs 4 write byte-identical outputs and the same findings")
    func jobsEquality() throws {
        let (one, _) = try runSample(jobs: 1)
        let (four, _) = try runSample(jobs: 4)
        for name in Self.outputs {
            #expect(try one.output(name) == four.output(name), "\(name)")
        }
    }
}
