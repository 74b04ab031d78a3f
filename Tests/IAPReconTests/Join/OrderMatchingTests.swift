import Foundation
import Testing
@testable import IAPRecon

/// The four matching rules of CONTRACT.md §2, in order.
@Suite("Order matching")
struct OrderMatchingTests {
    /// Each order's transaction and rule, as the resolved transactions keep them; `- -` for an order none is matched to.
    private func matches(_ scenario: Scenario) throws -> [String: String] {
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        var result: [String: String] = [:]
        let database = try scenario.open()
        try database.forEach("SELECT DISTINCT order_id FROM raw_server__orders") { result[$0.string(0)] = "- -" }
        try database.forEach("SELECT order_id, transaction_id || ' ' || match_rule FROM int_transactions_resolved WHERE order_id IS NOT NULL") {
            result[$0.string(0)] = $0.string(1)
        }
        return result
    }

    @Test("each rule matches, and a rule never takes an order an earlier rule took")
    func rulesInOrder() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o-delivery", "u1", "gems60"),
            Line.order("2026-11-28T10:00:00Z", "o-receipt", "u2", "gems60"),
            Line.order("2026-11-28T10:00:00Z", "o-token", "u3", "gems60"),
            Line.order("2026-11-28T09:30:00Z", "o-older", "u4", "gems60"),
            Line.order("2026-11-28T09:45:00Z", "o-latest", "u4", "gems60"),
            Line.order("2026-11-28T08:00:00Z", "o-too-early", "u5", "gems60"),
            Line.order("2026-11-28T09:59:00Z", "o-other-product", "u5", "gems300"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o-delivery"),
            Line.delivered("2026-11-28T10:00:09Z", "u2", "t2", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u3", "t3", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u4", "t4", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u5", "t5", "gems60"),
        ])
        try scenario.write("receipts/r.jsonl", [
            // The receipt for t1 also names o-delivery, which rule 1 already took.
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o-delivery", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", orderID: "o-receipt", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u3", transaction: Line.v2("t3", "gems60", purchase: "2026-11-28T10:00:03Z", token: "o-token")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u4", transaction: Line.v2("t4", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u5", transaction: Line.v2("t5", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let result = try matches(scenario)
        #expect(result == [
            "o-delivery": "t1 delivery", "o-receipt": "t2 receipt", "o-token": "t3 app_account_token",
            "o-latest": "t4 heuristic", "o-older": "- -", "o-too-early": "- -", "o-other-product": "- -",
        ])
    }
}

extension OrderMatchingTests {
    @Test("a family member's copy carrying its purchaser's appAccountToken takes no order, though it sorts first: the purchase does, and no wrong-user delivery is found; near miss: a purchase carrying the token takes it")
    func familyCopyTakesNoOrderByToken() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // The purchaser's t2 and u2's family copy t1, bought at the same moment, both carrying o1.
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T09:59:50Z", "o1", "u1", "pro.monthly"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t2", "pro.monthly"),
            Line.delivered("2026-11-28T10:00:09Z", "u2", "t1", "pro.monthly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2(
                "t2", "pro.monthly", purchase: "2026-11-28T10:00:00Z", expires: "2026-12-28T10:00:00Z", price: 9990, token: "o1")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", transaction: Line.v2(
                "t1", "pro.monthly", purchase: "2026-11-28T10:00:00Z", expires: "2026-12-28T10:00:00Z", price: 9990,
                ownership: "FAMILY_SHARED", token: "o1")),
        ])
        #expect(try matches(scenario) == ["o1": "t2 app_account_token"])
        #expect(try scenario.reconcile(asOf: "2026-11-30T00:00:00Z").isEmpty)
    }
}
