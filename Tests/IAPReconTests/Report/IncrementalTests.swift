import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// An incremental night gives exactly what a full rebuild gives, even for findings that depend
/// on history (a refund today for a purchase weeks ago).
@Suite("Incremental nights")
struct IncrementalTests {
    @Test("adding the last day's files to a store of the earlier days equals a full rebuild, byte for byte")
    func incrementalEqualsFullRebuild() throws {
        let generated = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 1500, days: 20, seed: 9), to: generated.input)
        let lastDay = "2026-09-20"
        let files = try SourceFile.list(in: generated.input)
        #expect(files.contains { $0.relativePath.contains(lastDay) })

        // Night 1..19: a view of every file but the last day's; night 20: the whole folder.
        let incremental = try Scenario()
        for file in files where !file.relativePath.contains(lastDay) {
            let target = incremental.input + "/" + file.relativePath
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: file.absolutePath)
        }
        let before = try run(incremental, input: incremental.input)
        let night = try run(incremental, input: generated.input)
        #expect(night.ingest.files.filter { $0.status == .added }.map(\.path).allSatisfy { $0.contains(lastDay) })
        #expect(night.ingest.files.filter { $0.status == .unchanged }.count == before.ingest.files.count)

        let full = try Scenario()
        _ = try run(full, input: generated.input)
        for name in SampleDataTests.outputs {
            #expect(SampleDataTests.stable(name, try incremental.output(name)) == SampleDataTests.stable(name, try full.output(name)), "\(name)")
        }
        // History matters: the last day's files refund purchases made on earlier days.
        let refundsOfOlderPurchases = try full.open().scalar("""
            SELECT count(*) FROM int_transactions_resolved WHERE refund_ms >= ? AND purchase_ms < ?
            """, [.integer(Timestamp.startOfDay(lastDay) ?? 0), .integer(Timestamp.startOfDay(lastDay) ?? 0)])
        #expect((refundsOfOlderPurchases.integerValue) > 0)
    }

    private func run(_ scenario: Scenario, input: String) throws -> RunResult {
        try Pipeline.run(RunOptions(input: input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                                    reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
    }
}
