import Foundation
import Testing
@testable import IAPRecon

/// `transactions.csv`: one row per verified transaction, the rows behind revenue_daily.csv.
@Suite("transactions.csv")
struct TransactionsReportTests {
    typealias Fixture = RevenueReportTests.Fixture

    /// A small night: an order delivered twice to two users, a refunded yen purchase, a sandbox
    /// purchase and a family-shared one (neither of them revenue), and a delivery Apple never saw.
    static func night() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-10T09:59:00Z", "o1", "u1", "gems300", price: "4.99"),
            Line.delivered("2026-11-10T10:00:10Z", "u1", "1000000000000001", "gems300", orderID: "o1"),
            Line.delivered("2026-11-11T08:00:00Z", "u2", "1000000000000001", "gems300"),
            Line.delivered("2026-11-12T08:00:00Z", "u3", "1000000000000009", "gems300"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", orderID: "o1", transaction: Fixture.v2(
                "1000000000000001", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-12T10:00:05Z", "u2", transaction: Fixture.v2(
                "1000000000000002", "gems300", purchase: "2026-11-12T10:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN")),
            Line.v2Receipt("2026-11-13T10:00:05Z", "u2", transaction: Fixture.v2(
                "1000000000000003", "gems60", purchase: "2026-11-13T10:00:00Z", price: 990, environment: "Sandbox")),
            Line.v2Receipt("2026-11-14T10:00:05Z", "u4", transaction: Fixture.v2(
                "1000000000000004", "gems60", purchase: "2026-11-14T10:00:00Z", price: 990, ownership: "FAMILY_SHARED")),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-15T06:00:01Z", transaction: Fixture.v2(
                "1000000000000002", "gems300", purchase: "2026-11-12T10:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN",
                revocation: "2026-11-15T06:00:00Z")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        return scenario
    }

    @Test("one row per verified transaction with its order, rule, price source, refund, deliveries and findings; ids stay text")
    func rows() throws {
        let scenario = try Self.night()
        let rows = try Fixture.table(scenario.output("transactions.csv"))
        #expect(rows.map { $0["transaction_id"] ?? "" } == ["1000000000000001", "1000000000000002", "1000000000000003", "1000000000000004"])
        let findings = try Fixture.table(scenario.output("findings.csv"))
        func findingIDs(_ transaction: String) -> String {
            findings.filter { $0["transaction_id"] == transaction }.compactMap { $0["finding_id"] }.sorted().joined(separator: ";")
        }

        let duplicated = try #require(rows.first)
        #expect(duplicated["user_id"] == "u1")
        #expect(duplicated["order_id"] == "o1")
        #expect(duplicated["match_rule"] == "delivery")
        #expect(duplicated["product_type"] == "consumable")
        #expect((duplicated["unit_price"], duplicated["price"], duplicated["price_source"]) == ("4.99", "4.99", "v2_price"))
        #expect(duplicated["purchase_time"] == "2026-11-10T10:00:00.000Z")
        #expect((duplicated["revenue"], duplicated["gross_usd"], duplicated["net_usd"]) == ("true", "4.99", "4.99"))
        #expect(duplicated["deliveries"] == "2")
        #expect(duplicated["delivered_to"] == "u1;u2")
        #expect(!findingIDs("1000000000000001").isEmpty)
        #expect(duplicated["finding_ids"] == findingIDs("1000000000000001"))

        let refunded = rows[1]
        #expect((refunded["currency"], refunded["price"], refunded["storefront"]) == ("JPY", "800", "JPN"))
        #expect((refunded["refund_time"], refunded["refund_amount"]) == ("2026-11-15T06:00:00.000Z", "800"))
        #expect((refunded["gross_usd"], refunded["refunds_usd"], refunded["net_usd"]) == ("5.28", "5.28", "0"))
        #expect(refunded["deliveries"] == "0")

        // Test and family-shared purchases are listed, but never revenue.
        let sandbox = rows[2], shared = rows[3]
        #expect((sandbox["environment"], sandbox["revenue"], sandbox["gross_usd"]) == ("Sandbox", "false", ""))
        #expect((shared["ownership"], shared["revenue"], shared["gross_usd"], shared["price"]) == ("FAMILY_SHARED", "false", "", "0.99"))
        // The orphan delivery's transaction is not verified: it has no row.
        #expect(!rows.contains { $0["transaction_id"] == "1000000000000009" })
    }

    @Test("its reporting-currency amounts sum to revenue_daily.csv's totals and summary.json's")
    func sumsTieOut() throws {
        let scenario = try Self.night()
        let transactions = try Fixture.table(scenario.output("transactions.csv"))
        let daily = try Fixture.table(scenario.output("revenue_daily.csv"))
        for column in ["gross_usd", "refunds_usd", "net_usd"] {
            #expect(Fixture.sum(transactions, column) == Fixture.sum(daily, column), "\(column)")
        }
        let revenue = try #require(try Fixture.summary(scenario)["revenue"] as? [String: String])
        #expect(Fixture.sum(transactions, "gross_usd") == Money.parse(revenue["gross_usd"] ?? ""))
        #expect(Fixture.sum(transactions, "net_usd") == Money.parse(revenue["net_usd"] ?? ""))
    }

    @Test("its text cells are guarded like every CSV output's: a formula sign, comma, quote or control character in an id or the delivered_to list")
    func guardedCells() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // Received by three users, one of them twice: listed by first delivery, not by id.
        func delivered(_ time: String, _ user: String) -> String {
            "{\"ts\":\"2026-11-10T\(time)Z\",\"event\":\"delivered\",\"user_id\":\"\(OutputFormatTests.json(user))\","
                + "\"transaction_id\":\"1000000000000001\",\"product_id\":\"+gems\",\"quantity\":1}"
        }
        try scenario.write("server/s.jsonl", [
            delivered("10:00:30", "=evil,\"x\""), delivered("10:00:10", "u\tb"), delivered("10:00:20", "=evil,\"x\""),
            delivered("10:00:05", "+z"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Fixture.v2("1000000000000001", "+gems", purchase: "2026-11-10T10:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Fixture.v2("1000000000000002", "gems60", purchase: "2026-11-11T10:00:00Z", price: 990)),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let text = try scenario.output("transactions.csv")
        // The raw record: the list is prefixed, and so is each user in it that a `;` list separator (Excel in most of
        // Europe) would make a cell's start; its tab shown escaped, and the cell quoted for its comma and quotes.
        #expect(text.contains(",\"'+z;u\\tb;'=evil,\"\"x\"\"\","))
        let rows = Fixture.table(text)
        let guarded = try #require(rows.first)
        #expect(guarded["product_id"] == "'+gems")
        #expect(guarded["delivered_to"] == "'+z;u\\tb;'=evil,\"x\"")
        // The near miss: plain ids and a transaction nobody received pass through as they are.
        let plain = try #require(rows.dropFirst().first)
        #expect((plain["transaction_id"], plain["product_id"], plain["delivered_to"]) == ("1000000000000002", "gems60", ""))
    }

    @Test("delivered_to names each user once, at their first delivery; users first served at one moment come in id order")
    func receiverOrder() {
        let deliveries: [(ms: Int64, userID: String)] = [(5, "b"), (5, "a"), (7, "c"), (3, "c"), (9, "a")]
        #expect(ResolvedTransaction.deliveredTo(deliveries) == "c;a;b")
        // One delivery is its user alone; none is an empty list.
        #expect(ResolvedTransaction.deliveredTo([(1, "bacca")]) == "bacca")
        #expect(ResolvedTransaction.deliveredTo([]) == "")
        // Ids equal only as Unicode (an accent composed, and decomposed) are two users, in byte order.
        let spellings = ResolvedTransaction.deliveredTo([(2, "jos\u{E9}"), (2, "jose\u{301}")])
        #expect(Array(spellings.utf8) == Array("jose\u{301};jos\u{E9}".utf8))
    }

    @Test("product_type is the catalog's type, else Apple's type of the transaction, with a catalog or without one",
          arguments: [true, false])
    func productType(withCatalog: Bool) throws {
        let scenario = try Scenario()
        if withCatalog { try scenario.catalog() }
        func receipt(_ transactionID: String, _ productID: String, appleType: String?) -> String {
            var payload = Fixture.v2(transactionID, productID, purchase: "2026-11-10T10:00:00Z", price: 990)
            if let appleType { payload = "{\"type\":\"\(appleType)\"," + payload.dropFirst() }
            return Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: payload)
        }
        try scenario.write("receipts/r.jsonl", [
            receipt("1000000000000001", "gems60", appleType: "Non-Consumable"),
            receipt("1000000000000002", "sword", appleType: "Consumable"),
            receipt("1000000000000003", "shield", appleType: nil),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let rows = Fixture.table(try scenario.output("transactions.csv"))
        #expect(rows.map { $0["product_type"] ?? "?" } == [withCatalog ? "consumable" : "Non-Consumable", "Consumable", ""])
    }
}
