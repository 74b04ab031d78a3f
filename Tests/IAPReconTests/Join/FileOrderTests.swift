import Foundation
import Testing
@testable import IAPRecon

/// At an equal time, the earlier line in file order comes first: by file path, then by line
/// number, so line 6 of a file before its line 50 (as text, `s.jsonl:50` sorts before `s.jsonl:6`).
@Suite("File order: which line comes first at an equal time")
struct FileOrderTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// A busy second on the server: orders of other users, none of them for the transactions under test.
    private func otherOrders(_ lines: ClosedRange<Int>) -> [String] {
        lines.map { Line.order("2026-11-28T10:00:09Z", "o\($0)", "u_\(2000 + $0)", "gems60") }
    }

    @Test("two deliveries of one purchase in the same second: the one on line 6 is the first, not the one on line 50")
    func deliveriesAtOneTime() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", otherOrders(1...5)
            + [Line.delivered("2026-11-28T10:00:09Z", "u_1001", "t1", "gems60", deliveryID: "d1")]
            + otherOrders(7...49)
            + [Line.delivered("2026-11-28T10:00:09Z", "u_1002", "t1", "gems60", deliveryID: "d2")])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u_1001", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        let duplicate = try #require(findings.first)
        #expect(duplicate.userID == "u_1001")
        #expect(duplicate.detail == "cross_user: delivered 2 times to u_1001, u_1002")
        #expect(duplicate.sources == ["receipts/r.jsonl:1", "server/s.jsonl:6", "server/s.jsonl:50"])
        let buyer = try scenario.open().scalar("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = 't1'")
        #expect(buyer == .text("u_1001"))
    }

    @Test("one subscription delivered to two accounts in the same second: the holder on line 6 is its first holder")
    func holdersAtOneTime() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", otherOrders(1...5)
            + [Line.delivered("2026-11-28T10:00:09Z", "u_1001", "t1", "pro.monthly")]
            + otherOrders(7...49)
            + [Line.delivered("2026-11-28T10:00:09Z", "u_1002", "t1", "pro.monthly")])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u_1001", transaction: Line.v2(
                "t1", "pro.monthly", purchase: "2026-11-28T10:00:03Z", expires: "2026-12-28T10:00:03Z", price: 9990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.sharedAppleIDSubscription])
        let shared = try #require(findings.first)
        #expect(shared.userID == "u_1001")
        #expect(shared.detail == "one Apple ID's subscription delivered to 2 users: u_1001, u_1002")
        #expect(shared.sources == ["server/s.jsonl:6", "server/s.jsonl:50"])
    }

    @Test("two users sending one undelivered purchase's receipt in the same second: the sender on line 6 is its user")
    func sendersAtOneTime() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // Other users' purchases, received in the same second and delivered.
        func other(_ n: Int) -> String {
            Line.v2Receipt("2026-11-27T10:00:05Z", "u_\(2000 + n)", transaction: Line.v2("t\(n)", "gems60", purchase: "2026-11-27T10:00:03Z"))
        }
        let t1 = Line.v2("t1", "gems60", purchase: "2026-11-27T10:00:03Z")
        try scenario.write("receipts/r.jsonl", (2...6).map(other)
            + [Line.v2Receipt("2026-11-27T10:00:05Z", "u_1001", transaction: t1)]
            + (7...49).map(other)
            + [Line.v2Receipt("2026-11-27T10:00:05Z", "u_1002", transaction: t1)])
        try scenario.write("server/s.jsonl", (2...49).map { Line.delivered("2026-11-27T10:00:09Z", "u_\(2000 + $0)", "t\($0)", "gems60") })
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lostDelivery])
        let lost = try #require(findings.first)
        #expect(lost.transactionID == "t1")
        #expect(lost.userID == "u_1001")
        #expect(lost.sources == ["receipts/r.jsonl:6", "receipts/r.jsonl:50"])
    }
}
