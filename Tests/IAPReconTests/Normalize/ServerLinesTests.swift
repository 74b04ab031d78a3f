import Foundation
import Testing
@testable import IAPRecon

/// Orders and deliveries are normalized from the raw lines by whoever reads them: one order per
/// id, one delivery per key, the first line in file order giving the fields.
@Suite("Server lines normalized as they are read")
struct ServerLinesTests {
    private func run(_ scenario: Scenario) throws {
        _ = try Pipeline.run(RunOptions(input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                                        lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(),
                                        report: ReportSettings(outFolder: scenario.out)), progress: nil)
    }

    /// Each order's user and source, as `ServerOrders` picks them.
    private func orders(_ database: Database) throws -> [String] {
        var orders: [String] = []
        try ServerOrders.forEachFirst(in: database, where: "1") { row in
            typealias O = ServerOrders.Column
            orders.append("\(row.string(O.orderID)) \(row.string(O.userID)) \(row.string(O.path)):\(row.int(O.line))")
        }
        return orders
    }

    /// Each delivery's transaction, user, copies and source, as `ServerDeliveries` collapses them.
    private func deliveries(_ database: Database) throws -> [String] {
        var deliveries: [String] = []
        typealias D = StoredDeliveries.Column
        let cursor = try StoredDeliveries.Cursor(database, where: "1")
        while cursor.hasDelivery {
            let row = cursor.row
            let text = "\(row.string(D.transactionID)) \(row.string(D.userID)) q\(row.int(D.quantity)) \(row.string(D.path)):\(row.int(D.line))"
            deliveries.append(text + " ×\(try cursor.advance())")
        }
        return deliveries
    }

    @Test("an order is its first line in file order, whichever night each file arrives; another order id is another order")
    func firstOrderLine() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/b.jsonl", [
            Line.order("2026-11-01T10:00:00Z", "o_1", "u_2", "gems60"),
            Line.order("2026-11-01T10:00:00Z", "o_1", "u_3", "gems60"),
            Line.order("2026-11-01T10:01:00Z", "o_2", "u_2", "gems60"),
        ])
        try run(scenario)
        #expect(try orders(scenario.open()) == ["o_1 u_2 server/b.jsonl:1", "o_2 u_2 server/b.jsonl:3"])

        // A later night brings a file that sorts first: its line is o_1's first now.
        try scenario.write("server/a.jsonl", [Line.order("2026-11-01T09:59:00Z", "o_1", "u_1", "gems60")])
        try run(scenario)
        let database = try scenario.open()
        #expect(try orders(database) == ["o_1 u_1 server/a.jsonl:1", "o_2 u_2 server/b.jsonl:3"])
        #expect(try UserHistory.load(database, .order("o_1")).userID == "u_1")
        // u_2's own o_1 line is still in u_2's story, said to be another's in the reconciliation.
        let ordersOfU2 = try UserHistory.load(database, .user("u_2")).events.filter { $0.event == "order" }
        #expect(ordersOfU2.map(\.id) == ["o_1", "o_2"])
        #expect(ordersOfU2.first?.source == "server/b.jsonl:1")
        #expect(ordersOfU2.first?.detail.hasPrefix("order id logged first by u_1 (server/a.jsonl:1)") == true)
        #expect(try UserHistory.load(database, .user("u_1")).events.filter { $0.event == "order" }.map(\.source) == ["server/a.jsonl:1"])
    }

    @Test("delivery lines collapse per transaction and delivery id, else per identical line; the first in file order gives the user")
    func deliveryCopies() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/b.jsonl", [
            Line.delivered("2026-11-01T10:00:00Z", "u_1", "t_1", "gems60", deliveryID: "d_1"),
            // A copy: the same delivery id in the same transaction, whatever else it says.
            Line.delivered("2026-11-01T10:00:05Z", "u_9", "t_1", "gems60", deliveryID: "d_1"),
            // Near miss: the same delivery id in another transaction is another delivery.
            Line.delivered("2026-11-01T10:00:00Z", "u_1", "t_2", "gems60", deliveryID: "d_1"),
            Line.delivered("2026-11-01T11:00:00Z", "u_1", "t_3", "gems60"),
            Line.delivered("2026-11-01T11:00:00Z", "u_1", "t_3", "gems60"),
            // Near miss: an identical line but for its quantity is another delivery.
            Line.delivered("2026-11-01T11:00:00Z", "u_1", "t_3", "gems60", quantity: 2),
            // Near miss: ids with a `|` in them (an Auth0 user id is `auth0|…`) that read the same
            // when joined are two users' deliveries, not one delivery's copies.
            Line.delivered("2026-11-01T12:00:00Z", "auth0|u", "t_4", "gems"),
            Line.delivered("2026-11-01T12:00:00Z", "auth0", "t_4", "u|gems"),
        ])
        try run(scenario)
        #expect(try deliveries(scenario.open()) == [
            "t_1 u_1 q1 server/b.jsonl:1 ×2", "t_2 u_1 q1 server/b.jsonl:3 ×1",
            "t_3 u_1 q1 server/b.jsonl:4 ×2", "t_3 u_1 q2 server/b.jsonl:6 ×1",
            "t_4 auth0 q1 server/b.jsonl:8 ×1", "t_4 auth0|u q1 server/b.jsonl:7 ×1",
        ])
        #expect(try UserHistory.load(scenario.open(), .user("u_9")).events.filter { $0.event == "delivered" }.isEmpty,
                "a copy delivers nothing of its own")

        // A file that sorts first, arriving later, holds t_1's first line now.
        try scenario.write("server/a.jsonl", [Line.delivered("2026-11-01T09:59:00Z", "u_5", "t_1", "gems60", deliveryID: "d_1")])
        try run(scenario)
        let database = try scenario.open()
        #expect(try deliveries(database).first == "t_1 u_5 q1 server/a.jsonl:1 ×3")
        let shown = try UserHistory.load(database, .user("u_5")).events.filter { $0.event == "delivered" }
        #expect(shown.map(\.detail) == ["to u_5, 3 copies in the log"])
        #expect(try UserHistory.load(database, .user("u_1")).events.filter { $0.event == "delivered" }.map(\.id) == ["t_2", "t_3", "t_3"])
    }

    @Test("two orders whose ids differ only in how an accent is spelled are two orders, each matched to its own transaction and shown in history")
    func orderIDsByBytes() throws {
        let (composed, decomposed) = ("p\u{E9}dido-1", "pe\u{301}dido-1")
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/a.jsonl", [
            Line.order("2026-11-01T10:00:00Z", composed, "u_1", "gems60"),
            Line.order("2026-11-01T10:00:00Z", decomposed, "u_1", "gems60"),
            Line.delivered("2026-11-01T10:01:00Z", "u_1", "t_1", "gems60", orderID: composed),
            Line.delivered("2026-11-01T10:01:00Z", "u_1", "t_2", "gems60", orderID: decomposed),
        ])
        try scenario.write("receipts/a.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:30Z", "u_1", orderID: composed, transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:20Z")),
            Line.v2Receipt("2026-11-01T10:00:30Z", "u_1", orderID: decomposed, transaction: Line.v2("t_2", "gems60", purchase: "2026-11-01T10:00:20Z")),
        ])
        try run(scenario)
        var matched: [String: [UInt8]] = [:]
        try scenario.open().forEach("SELECT transaction_id, order_id FROM int_transactions_resolved") { row in
            matched[row.string(0)] = row.optionalString(1).map { Array($0.utf8) }
        }
        #expect(matched == ["t_1": Array(composed.utf8), "t_2": Array(decomposed.utf8)])
        let shown = try UserHistory.load(scenario.open(), .user("u_1")).events.filter { $0.event == "order" }.map { Array($0.id.utf8) }
        #expect(Set(shown) == [Array(composed.utf8), Array(decomposed.utf8)])
    }
}
