import Foundation
import Testing
@testable import IAPRecon

/// `multi_apple_id_subscription`'s overlap of paid periods, found by one sweep, against the
/// pairwise comparison it replaced; and the cap on its sources.
@Suite("Multi Apple ID overlap")
struct MultiAppleIDOverlapTests {
    typealias Period = (start: Int64, end: Int64)

    /// The rule as it was: every pair of chains, and in each every pair of paid periods.
    static func pairwise(_ held: [[Period]]) -> (start: Int64, chains: [Int])? {
        var overlapStart: Int64?
        var overlapping = Set<Int>()
        for i in 0..<held.count {
            for j in (i + 1)..<held.count {
                for a in held[i] {
                    for b in held[j] where a.start < b.end && b.start < a.end {
                        let start = max(a.start, b.start)
                        overlapStart = min(overlapStart ?? start, start)
                        overlapping.formUnion([i, j])
                    }
                }
            }
        }
        guard let overlapStart else { return nil }
        return (overlapStart, overlapping.sorted())
    }

    /// A user's chains in one group: some of one period, some renewed many times (back to back,
    /// so a period ends exactly as the next starts, or with gaps and overlaps of their own), some
    /// with no paid period left (all refunded or family-shared), on a coarse grid so that equal
    /// starts and periods that touch are common.
    static func chains(_ random: inout SplitMix64) -> [[Period]] {
        let count = Int.random(in: 1...14, using: &random)
        let grid = Int64.random(in: 1...4, using: &random) * 10
        return (0..<count).map { _ in
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                return []
            case 1...3:
                let start = Int64.random(in: 0...grid, using: &random)
                return [(start, start + Int64.random(in: 1...12, using: &random))]
            default:
                var periods: [Period] = []
                var start = Int64.random(in: 0...grid, using: &random)
                for _ in 0..<Int.random(in: 2...8, using: &random) {
                    let length = Int64.random(in: 1...6, using: &random)
                    // A refunded renewal leaves a gap where it was.
                    if Int.random(in: 0..<5, using: &random) > 0 { periods.append((start, start + length)) }
                    start += length + Int64.random(in: -2...3, using: &random)
                }
                return periods.shuffled(using: &random)
            }
        }
    }

    @Test("the sweep finds what comparing every pair of periods found, on many seeded cases")
    func sameAsPairwise() {
        var random = SplitMix64(state: 20_261_207)
        var overlapped = 0, apart = 0
        for number in 0..<20_000 {
            let held = Self.chains(&random)
            let expected = Self.pairwise(held)
            let found = FindingRules.overlap(held)
            #expect(found?.start == expected?.start && found?.chains == expected?.chains, "case \(number): \(held)")
            if expected == nil { apart += 1 } else { overlapped += 1 }
        }
        // Both outcomes are common, so neither side is tested only by the other.
        #expect(overlapped > 5_000 && apart > 2_000, "\(overlapped) overlapping, \(apart) apart")
    }

    @Test("edge cases: touching periods, equal starts, one chain's own overlaps, nested and identical periods")
    func edges() {
        // b starts as a ends: no overlap.
        #expect(FindingRules.overlap([[(0, 10)], [(10, 20)]]) == nil)
        // A chain's own periods overlapping each other do not count.
        #expect(FindingRules.overlap([[(0, 10), (5, 15)], [(15, 20)]]) == nil)
        // Equal starts overlap, at that start.
        let same = FindingRules.overlap([[(5, 6)], [(5, 100)]])
        #expect(same?.start == 5 && same?.chains == [0, 1])
        // Nested: the inner period's start; the third chain, apart, is not named.
        let nested = FindingRules.overlap([[(0, 100)], [(200, 300)], [(40, 50)]])
        #expect(nested?.start == 40 && nested?.chains == [0, 2])
        // The earliest overlap of any pair, not of the first pair found.
        let earliest = FindingRules.overlap([[(50, 60)], [(55, 70), (1, 3)], [(2, 4)]])
        #expect(earliest?.start == 2 && earliest?.chains == [0, 1, 2])
        // A chain with no paid period, and a lone chain.
        #expect(FindingRules.overlap([[], [(0, 10)]]) == nil)
        #expect(FindingRules.overlap([[(0, 10)]]) == nil)
    }

    /// `count` chains of u1 in group premium, each bought and delivered on its own day of
    /// November and paid until December, so that all overlap; then c01 renewed, on line
    /// `count + 1` of the receipts.
    static func overlappingChains(_ count: Int) throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        let chains = (1...count).map { String(format: "c%02d", $0) }
        try scenario.write("server/s.jsonl", chains.enumerated().map { index, chain in
            Line.delivered(String(format: "2026-11-%02dT10:00:09Z", index + 1), "u1", chain, "pro.monthly")
        } + [Line.delivered("2026-11-20T10:00:09Z", "u1", "c01r", "pro.monthly")])
        try scenario.write("receipts/r.jsonl", chains.enumerated().map { index, chain in
            Line.v2Receipt(String(format: "2026-11-%02dT10:00:05Z", index + 1), "u1",
                           transaction: Line.v2(chain, "pro.monthly", purchase: String(format: "2026-11-%02dT10:00:00Z", index + 1),
                                                expires: "2026-11-20T10:00:00Z", price: 9990))
        } + [Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("c01r", "pro.monthly", purchase: "2026-11-20T10:00:00Z",
                                                                                original: "c01", expires: "2026-12-20T10:00:00Z", price: 9990))])
        return scenario
    }

    @Test("a user paying from more than ten Apple IDs: sources lists the first ten lines in file order, as detail names ten chains; ten chains list every line")
    func sourcesCut() throws {
        let eleven = try Self.overlappingChains(11).reconcile(asOf: "2026-11-30T00:00:00Z")
        #expect(eleven.map(\.kind) == [.multiAppleIDSubscription])
        let finding = try #require(eleven.first { $0.kind == .multiAppleIDSubscription })
        #expect(finding.sources == (1...10).map { "receipts/r.jsonl:\($0)" })
        #expect(finding.detail == "11 Apple IDs pay for group premium at once: chains c01, c02, c03, c04, c05, c06, c07, c08, c09, c10 and 1 more")
        #expect(finding.originalTransactionID == "c01")
        #expect(finding.eventMs == Line.ms("2026-11-02T10:00:00Z"))

        // The near miss: ten chains, named in full, and all their eleven lines.
        let ten = try Self.overlappingChains(10).reconcile(asOf: "2026-11-30T00:00:00Z")
        #expect(ten.map(\.kind) == [.multiAppleIDSubscription])
        let all = try #require(ten.first { $0.kind == .multiAppleIDSubscription })
        #expect(all.sources == (1...11).map { "receipts/r.jsonl:\($0)" })
        #expect(all.detail == "10 Apple IDs pay for group premium at once: chains c01, c02, c03, c04, c05, c06, c07, c08, c09, c10")
    }

    @Test("ten distinct lines: a line that is the source of several of the chains' transactions counts once")
    func sourcesCountLinesOnce() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let chains = (1...12).map { String(format: "c%02d", $0) }
        try scenario.write("server/s.jsonl", chains.map { Line.delivered("2026-11-02T10:00:09Z", "u1", $0, "pro.monthly") })
        // Line 1 holds the first two chains' transactions; then one line each.
        let transactions = chains.map { Line.v2($0, "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990) }
        try scenario.write("receipts/r.jsonl", [
            "{\"received_at\":\"2026-11-01T10:00:05Z\",\"user_id\":\"u1\",\"transactions\":[\(transactions[0]),\(transactions[1])]}",
        ] + transactions.dropFirst(2).map { Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: $0) })
        let findings = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        let finding = try #require(findings.first { $0.kind == .multiAppleIDSubscription })
        #expect(finding.sources == (1...10).map { "receipts/r.jsonl:\($0)" })
    }
}
