import Foundation
import Testing
@testable import IAPRecon

/// Each match is kept once, on the resolved transaction it was matched to: what the summary,
/// `history` and a night's closure say of an order is read from there.
@Suite("Matched orders")
struct MatchedOrdersTests {
    /// Orders matched by two rules, three left unmatched (two of them past the grace), a resent
    /// order line, and near misses: an order just over the heuristic's hour before a purchase, and
    /// a transaction whose `appAccountToken` names an order no line holds.
    private func ordersScenario() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o-delivered", "u1", "gems60"),
            Line.order("2026-11-28T10:00:00Z", "o-delivered", "u1", "gems60"),
            Line.order("2026-11-28T09:30:00Z", "o-heuristic", "u2", "gems60"),
            Line.order("2026-11-27T10:00:00Z", "o-unpaid", "u3", "gems60"),
            Line.order("2026-11-29T12:00:00Z", "o-recent", "u3", "gems300"),
            Line.order("2026-11-28T09:00:02Z", "o-too-early", "u4", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o-delivered"),
            Line.delivered("2026-11-28T10:00:09Z", "u2", "t2", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u4", "t4", "gems60"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u4", transaction: Line.v2("t4", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u5",
                           transaction: Line.v2("t5", "gems60", purchase: "2026-11-28T10:00:03Z", token: "o-nowhere")),
        ])
        return scenario
    }

    @Test("the summary counts each order once: matched by rule, unmatched, unpaid after grace; an order no transaction names is never matched")
    func summaryCounts() throws {
        let scenario = try ordersScenario()
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let orders = try #require(summary["orders"] as? [String: Any])
        #expect(orders["total"] as? Int == 5)
        #expect(orders["matched_by_rule"] as? [String: Int] == ["delivery": 1, "receipt": 0, "app_account_token": 0, "heuristic": 1])
        #expect(orders["unmatched"] as? Int == 3)
        // o-unpaid and o-too-early are older than the day's grace; o-recent is not.
        #expect(orders["unpaid_after_grace"] as? Int == 2)

        var matches: [String: String] = [:]
        try scenario.open().forEach("SELECT transaction_id, coalesce(order_id, '-') || ' ' || coalesce(match_rule, '-') FROM int_transactions_resolved") {
            matches[$0.string(0)] = $0.string(1)
        }
        #expect(matches == ["t1": "o-delivered delivery", "t2": "o-heuristic heuristic", "t4": "- -", "t5": "- -"])
    }

    @Test("unmatched orders: ids that prefix each other, an order's repeated lines counted once by its first")
    func unmatchedBesideMatched() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.order("2026-11-28T10:00:00Z", "o100", "u1", "gems60"),
            // First created before the grace, then sent again after it: unpaid, once.
            Line.order("2026-11-27T10:00:00Z", "o10", "u2", "gems60"),
            Line.order("2026-11-29T20:00:00Z", "o10", "u2", "gems60"),
            Line.order("2026-11-29T20:00:00Z", "o2", "u3", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o1"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t100", "gems60", orderID: "o100"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t100", "gems60", purchase: "2026-11-28T10:00:04Z")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        let counts = try StoredSummaryCounts.unmatchedOrders(database, createdByMs: Line.ms("2026-11-29T00:00:00Z"))
        #expect(counts.unmatched == 2)
        #expect(counts.unpaid == 1)
        // The id of two lines is listed once; both are one user's, so no id is of several users.
        #expect(counts.repeatedOrderIDs == ["o10"])
        #expect(try StoredSummaryCounts.ordersOfSeveralUsers(database, among: counts.repeatedOrderIDs).isEmpty)
        // Asked again on the same connection: the same answer, nothing left over from the first.
        let again = try StoredSummaryCounts.unmatchedOrders(database, createdByMs: Line.ms("2026-11-30T00:00:00Z"))
        #expect((again.unmatched, again.unpaid) == (2, 2))
        #expect(again.repeatedOrderIDs == ["o10"])
    }

    @Test("history shows an order's transaction and rule, and says so of an order none is matched to")
    func historyOfOrders() throws {
        let scenario = try ordersScenario()
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        func orderDetails(_ lookup: UserHistory.Lookup) throws -> [String] {
            try UserHistory.load(database, lookup).events.filter { $0.event == "order" }.map { "\($0.id): \($0.detail)" }
        }
        #expect(try orderDetails(.order("o-delivered")) == ["o-delivered: matched to t1 by delivery"])
        #expect(try orderDetails(.user("u2")) == ["o-heuristic: matched to t2 by heuristic"])
        #expect(try orderDetails(.transaction("t2")) == ["o-heuristic: matched to t2 by heuristic"])
        #expect(try orderDetails(.user("u3")) == ["o-unpaid: no transaction matched", "o-recent: no transaction matched"])
        #expect(try orderDetails(.order("o-too-early")) == ["o-too-early: no transaction matched"])
        #expect(try orderDetails(.transaction("t5")).isEmpty)
    }

    @Test("a night that changes only an order reaches the transaction the last join matched it to, though no input line links them any more")
    func closureReachesMatchedTransaction() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o1"),
        ])
        // Sent by a user with no orders: without the delivery, no rule matches t1.
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u9", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        #expect(try database.scalar("SELECT order_id FROM int_transactions_resolved WHERE transaction_id = 't1'") == .text("o1"))

        // The delivery goes with no key recorded but the order's: only the last join's match leads from o1 to t1.
        try database.execute("""
            DELETE FROM raw_server__deliveries WHERE transaction_id = 't1';
            INSERT INTO dirty_keys VALUES ('order', 'o1');
            """)
        let scope = try JoinScope.closure(of: JoinScope(orders: ["o1"]), in: SQLiteJoinStore(database), limit: 1_000).get().scope
        #expect(scope.transactions == ["t1"] && scope.orders == ["o1"])
        let night = try Pipeline.join(database: database, settings: ReconcileSettings(asOfMs: Line.ms("2026-11-30T00:00:00Z")))
        #expect(night.recomputedTransactions == 1)
        #expect(try database.scalar("SELECT count(*) FROM int_transactions_resolved WHERE order_id IS NOT NULL") == .integer(0))

        // What a full rebuild of the same lines writes.
        let full = try Scenario()
        try full.catalog()
        try full.write("server/s.jsonl", [Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60")])
        try full.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u9", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        _ = try full.reconcile(asOf: "2026-11-30T00:00:00Z")
        for table in ["int_transactions_resolved", "fct_findings"] {
            #expect(try rows(database, table) == rows(full.open(), table), "\(table)")
        }
    }

    @Test("every lookup of an order's transaction uses the partial index of matched orders")
    func lookupsUseTheIndex() throws {
        let scenario = try ordersScenario()
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS frontier_orders (key TEXT PRIMARY KEY) WITHOUT ROWID")
        let lookups = [
            // history's
            "SELECT transaction_id, match_rule FROM int_transactions_resolved WHERE order_id = ?1",
            // a night's closure
            "SELECT transaction_id FROM int_transactions_resolved WHERE order_id IN temp.frontier_orders AND order_id IS NOT NULL",
            // the summary's walk of the matched orders beside every order
            StoredSummaryCounts.matchedOrderIDs,
        ]
        for sql in lookups {
            var plan: [String] = []
            try database.forEach("EXPLAIN QUERY PLAN " + sql) { plan.append($0.string(3)) }
            #expect(plan.contains { $0.contains("INDEX \(Tables.matchedOrderIndex) ") }, "\(sql): \(plan)")
        }
        // Unmatched transactions are left out of it.
        let entries = try database.scalar("SELECT count(*) FROM int_transactions_resolved INDEXED BY \(Tables.matchedOrderIndex) WHERE order_id IS NOT NULL")
        #expect(entries == .integer(2))
    }

    /// Every row, in key order.
    private func rows(_ database: Database, _ table: String) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        let columns = Int(try database.scalar("SELECT count(*) FROM pragma_table_info('\(table)')").integerValue)
        try database.forEach("SELECT * FROM \(table) ORDER BY 1") { row in rows.append((0..<columns).map { row.value($0) }) }
        return rows
    }
}
