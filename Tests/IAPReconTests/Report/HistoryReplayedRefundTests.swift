import Foundation
import Testing
@testable import IAPRecon

/// A client that sends its receipt again on every launch tells of each refunded purchase on every
/// line: `history` shows each refund once, and a reversed one with its reversal, as for one line.
@Suite("history of refunds told by replayed receipts")
struct HistoryReplayedRefundTests {
    /// `rep` bought two packs, both refunded (Apple's notification, typed, then `replays` receipt
    /// lines listing both purchases refunded); Apple reversed the refund of the first.
    static func store(replays: Int) throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let refunded = "2026-11-08T10:00:00Z"
        func pack(_ id: String, revocationType: String? = nil) -> String {
            Line.v2(id, "gems", purchase: "2026-11-07T10:00:10Z", revocation: refunded, revocationType: revocationType)
        }
        try scenario.write("receipts/r.jsonl", (0..<replays).map { replay in
            let receivedAt = Timestamp.iso8601(Line.ms("2026-11-08T12:00:00Z") + Int64(replay) * 60_000)
            return "{\"received_at\":\"\(receivedAt)\",\"user_id\":\"rep\",\"transactions\":[\(pack("3600000000000001")),\(pack("3600000000000002"))]}"
        })
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-07T10:00:15Z", "rep", "3600000000000001", "gems"),
            Line.delivered("2026-11-07T10:00:16Z", "rep", "3600000000000002", "gems"),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "33333333-3333-4333-8333-333333333331", signed: "2026-11-08T10:00:01Z",
                              transaction: pack("3600000000000001", revocationType: "REFUND_FULL")),
            Line.notification("REFUND", uuid: "33333333-3333-4333-8333-333333333332", signed: "2026-11-08T10:00:02Z",
                              transaction: pack("3600000000000002", revocationType: "REFUND_FULL")),
            Line.notification("REFUND_REVERSED", uuid: "33333333-3333-4333-8333-333333333333", signed: "2026-11-09T10:00:01Z",
                              transaction: Line.v2("3600000000000001", "gems", purchase: "2026-11-07T10:00:10Z")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        return (scenario, try scenario.open())
    }

    private static func refundEvents(_ database: Database, _ lookup: UserHistory.Lookup) throws -> [String] {
        try UserHistory.load(database, lookup).events.filter { $0.event.hasPrefix("refund") }
            .map { "\($0.event) \($0.id) \(Timestamp.iso8601($0.ms)) \($0.source)" }
    }

    @Test("each refund once, the reversed one with its reversal, with the same times and lines as for one receipt line")
    func replayedRefunds() throws {
        let (once, onceDatabase) = try Self.store(replays: 1)
        let (replayed, replayedDatabase) = try Self.store(replays: 40)
        defer { withExtendedLifetime((once, replayed)) {} }
        let lookups: [(UserHistory.Lookup, reversed: Bool, standing: Bool)] = [
            (.user("rep"), true, true), (.transaction("3600000000000001"), true, false), (.transaction("3600000000000002"), false, true),
        ]
        for (lookup, hasReversed, hasStanding) in lookups {
            let events = try Self.refundEvents(replayedDatabase, lookup)
            #expect(events == (try Self.refundEvents(onceDatabase, lookup)), "\(lookup)")
            let kinds = { (id: String) in events.filter { $0.contains(" \(id) ") }.map { $0.hasPrefix("refund reversed") ? "refund reversed" : "refund" } }
            #expect(kinds("3600000000000001") == (hasReversed ? ["refund", "refund reversed"] : []), "\(lookup)")
            #expect(kinds("3600000000000002") == (hasStanding ? ["refund"] : []), "\(lookup)")
        }
    }
}
