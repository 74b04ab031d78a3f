import Foundation
import Testing
@testable import IAPRecon

/// A delivery the server logged more than once (a retry under the same `delivery_id`, a shipper's
/// copy) is one delivery (CONTRACT.md §1.1), but each of its lines still says what it says: the
/// delivery happened when it was first logged, and any of its lines naming an order is "a
/// `delivered` line naming both" for matching rule 1 (§2).
@Suite("Delivery lines logged again")
struct DeliveryRetryTests {
    let asOf = "2026-11-30T00:00:00Z"

    @Test("collapsed: a delivery keeps its first line's fields, but takes its earliest line's time and the first order a line names")
    func collapsedTimeAndOrder() {
        func line(_ user: String, at ms: Int64, order: String? = nil, id: String? = "d_1") -> DeliveryLine {
            DeliveryLine(ms: ms, userID: user, transactionID: "t_1", productID: "gems", orderID: order, quantity: 1, deliveryID: id)
        }
        let deliveries = ServerDeliveries.collapsed([
            line("u_1", at: 9_000), line("u_9", at: 2_000, order: "o_1"), line("u_1", at: 1_000, order: "o_2"),
            line("u_1", at: 5_000, order: "o_3", id: nil), line("u_1", at: 5_000, order: "o_4", id: nil),
        ].enumerated().map { (line: $0.element, source: $0.offset + 1) })
        #expect(deliveries.map { "\($0.line.userID) \($0.line.ms) \($0.line.orderID ?? "-") :\($0.source) ×\($0.copies)" }
            == ["u_1 1000 o_1 :1 ×3", "u_1 5000 o_3 :4 ×2"])
    }

    private func purchase(_ id: String, _ user: String, product: String = "gems60", at purchase: String = "2026-11-26T10:00:03Z") -> String {
        Line.v2Receipt("2026-11-26T10:00:05Z", user, transaction: Line.v2(id, product, purchase: purchase))
    }

    @Test("a delivery retried under its delivery_id by another host a day later was delivered when first logged: no late_delivery")
    func retryOnAnotherHostIsNotLate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // host-a sorts first, but holds the retry; host-b logged the delivery itself, 6 s after purchase.
        try scenario.write("server/host-a.jsonl", [Line.delivered("2026-11-27T16:00:00Z", "u1", "t1", "gems60", deliveryID: "d1")])
        try scenario.write("server/host-b.jsonl", [Line.delivered("2026-11-26T10:00:09Z", "u1", "t1", "gems60", deliveryID: "d1")])
        try scenario.write("receipts/r.jsonl", [purchase("t1", "u1")])
        #expect(try scenario.reconcile(asOf: asOf).isEmpty)
        // history tells it as the join decided it: one delivery, at its earliest line's time, logged twice.
        _ = try scenario.run(asOf: asOf)
        let deliveries = try UserHistory.load(scenario.open(), .user("u1")).events.filter { $0.event == "delivered" }
        #expect(deliveries.map(\.ms) == [Line.ms("2026-11-26T10:00:09Z")])
    }

    @Test("near miss: a delivery whose only line is a day late is late, dated by that line")
    func onlyLateLineIsLate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/host-a.jsonl", [Line.delivered("2026-11-27T16:00:00Z", "u1", "t1", "gems60", deliveryID: "d1")])
        try scenario.write("receipts/r.jsonl", [purchase("t1", "u1")])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lateDelivery])
        #expect(findings.first?.eventMs == Line.ms("2026-11-27T16:00:00Z"))
    }

    @Test("a duplicate is dated by its second delivery's first line, wherever its copies sort")
    func duplicateDatedByEarliestLines() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/host-a.jsonl", [
            Line.delivered("2026-11-27T16:00:00Z", "u1", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-27T17:00:00Z", "u1", "t1", "gems60", deliveryID: "d2"),
        ])
        try scenario.write("server/host-b.jsonl", [
            Line.delivered("2026-11-26T10:00:09Z", "u1", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-26T11:00:00Z", "u1", "t1", "gems60", deliveryID: "d2"),
        ])
        try scenario.write("receipts/r.jsonl", [purchase("t1", "u1")])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        #expect(findings.first?.eventMs == Line.ms("2026-11-26T11:00:00Z"))
    }

    /// An order made two hours before the purchase (Ask to Buy, a purchase left pending), which the
    /// heuristic's hour never reaches: only a line naming it matches it.
    private func orderNamedByARetry(_ server: [String]) throws -> [Scenario.StoredFinding] {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-26T08:00:00Z", "o1", "u1", "gems300", price: "4.99")] + server)
        try scenario.write("receipts/r.jsonl", [purchase("t1", "u2")])
        return try scenario.reconcile(asOf: asOf)
    }

    @Test("a retry under the same delivery_id that names the order the first line left out matches it: wrong user and product seen",
          arguments: [
              // The same delivery id; the retry names the order.
              [Line.delivered("2026-11-26T10:00:09Z", "u2", "t1", "gems60", deliveryID: "d1"),
               Line.delivered("2026-11-26T10:00:20Z", "u2", "t1", "gems60", orderID: "o1", deliveryID: "d1")],
              // No delivery id: the second line is the first one again, but for the order it names.
              [Line.delivered("2026-11-26T10:00:09Z", "u2", "t1", "gems60"),
               Line.delivered("2026-11-26T10:00:09Z", "u2", "t1", "gems60", orderID: "o1")],
          ])
    func retryNamingTheOrderMatchesIt(server: [String]) throws {
        let findings = try orderNamedByARetry(server)
        #expect(findings.map(\.kind) == [.productMismatch, .wrongUserDelivery])
        #expect(findings.allSatisfy { $0.orderID == "o1" && $0.userID == "u1" })
    }

    @Test("a retry naming the order that comes in a later night's file matches it in the incremental join, as in a fresh one")
    func laterRetryMatchesIncrementally() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s-1.jsonl", [
            Line.order("2026-11-26T08:00:00Z", "o1", "u1", "gems300", price: "4.99"),
            Line.delivered("2026-11-27T16:00:00Z", "u2", "t1", "gems60", deliveryID: "d1"),
        ])
        try scenario.write("receipts/r.jsonl", [purchase("t1", "u2")])
        #expect(try scenario.reconcile(asOf: asOf).map(\.kind) == [.lateDelivery])
        try scenario.write("server/s-2.jsonl", [Line.delivered("2026-11-26T10:00:09Z", "u2", "t1", "gems60", orderID: "o1", deliveryID: "d1")])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.productMismatch, .wrongUserDelivery])
        #expect(findings.allSatisfy { $0.orderID == "o1" })
    }

    @Test("near miss: with no line naming the order, nothing matches it and nothing is flagged")
    func noLineNamesTheOrder() throws {
        let findings = try orderNamedByARetry([
            Line.delivered("2026-11-26T10:00:09Z", "u2", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-26T10:00:20Z", "u2", "t1", "gems60", deliveryID: "d1"),
        ])
        #expect(findings.isEmpty)
    }

    @Test("an orphan delivery names the order a later copy of its line names")
    func orphanNamesTheOrderOfACopy() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-26T10:00:09Z", "u2", "t9", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-26T10:00:20Z", "u2", "t9", "gems60", orderID: "o9", deliveryID: "d1"),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.orphanDelivery])
        #expect(findings.first?.orderID == "o9")
        #expect(findings.first?.detail == "delivered 1 time(s); no receipt or notification knows this transaction")
    }
}
