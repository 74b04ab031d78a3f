import Foundation
import Testing
@testable import IAPRecon

/// `revenue_daily.csv` and the revenue part of `summary.json` (CONTRACT.md §1.6, §2, §3).
///
/// Each test is a tiny input whose expected rows are written out whole, so a
/// change of rounding, day, rate or sign shows as a one-line diff.
@Suite("revenue_daily.csv")
struct RevenueReportTests {
    static let header = "date,product_id,storefront,currency,units,refund_units,gross,refunds,net,gross_usd,refunds_usd,net_usd"
    let asOf = "2026-11-30T00:00:00Z"

    // MARK: - FX and refund days

    @Test("a JPY purchase converts at the latest rate on or before its day; its refund lands on its own day at that same rate and nets to zero")
    func fxAtPurchaseDay() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", [
            "date,currency,rate",
            "2026-11-01,USD,1",
            "2026-11-08,JPY,0.0066",  // D-2: the rate of the purchase
            "2026-11-11,JPY,0.0070",  // D+1: after the purchase, never used for it
            "2026-11-13,JPY,0.0080",  // the refund day: never used either
        ])
        let purchase = Fixture.v2("t1", "gems300", purchase: "2026-11-10T05:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN")
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-10T05:00:05Z", "u1", transaction: purchase)])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-13T06:00:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T05:00:00Z", price: 800_000, currency: "JPY",
                                                      storefront: "JPN", revocation: "2026-11-13T06:00:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,JPN,JPY,1,0,800,0,800,5.28,0,5.28",
            "2026-11-13,gems300,JPN,JPY,0,1,0,800,-800,0,5.28,-5.28",
        ])
        let table = try Fixture.table(scenario.output("revenue_daily.csv"))
        #expect(Fixture.sum(table, "net_usd") == 0)
        #expect(Fixture.sum(table, "net") == 0)
        let revenue = try Fixture.summary(scenario)["revenue"] as? [String: Any]
        #expect(revenue?["gross_usd"] as? String == "5.28")
        #expect(revenue?["refunds_usd"] as? String == "5.28")
        #expect(revenue?["net_usd"] as? String == "0")
    }

    @Test("purchase and refund days, and the purchase day's rate, follow --tz", arguments: [
        ("UTC", [
            "2026-11-10,gems300,JPN,JPY,1,0,800,0,800,5.28,0,5.28",
            "2026-11-12,gems300,JPN,JPY,0,1,0,800,-800,0,5.28,-5.28",
        ]),
        ("Asia/Tokyo", [
            "2026-11-11,gems300,JPN,JPY,1,0,800,0,800,5.6,0,5.6",
            "2026-11-13,gems300,JPN,JPY,0,1,0,800,-800,0,5.6,-5.6",
        ]),
    ])
    func daysInZone(zone: String, rows: [String]) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-10,JPY,0.0066", "2026-11-11,JPY,0.0070"])
        // 20:00 UTC is 05:00 the next day in Tokyo; 16:30 UTC is 01:30 the next day in Tokyo.
        let purchase = Fixture.v2("t1", "gems300", purchase: "2026-11-10T20:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN")
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-10T20:00:05Z", "u1", transaction: purchase)])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T16:30:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T20:00:00Z", price: 800_000, currency: "JPY",
                                                      storefront: "JPN", revocation: "2026-11-12T16:30:00Z")),
        ])
        _ = try scenario.run(asOf: asOf, zone: zone)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [Self.header] + rows)
        #expect(Fixture.sum(try Fixture.table(scenario.output("revenue_daily.csv")), "net_usd") == 0)
    }

    @Test("REFUND_PRORATED refunds revocationPercentage / 100000 of the price, on the refund day")
    func proratedRefund() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-10T11:00:05Z", "u2", transaction: Fixture.v2("t2", "pro.yearly", purchase: "2026-11-10T11:00:00Z", price: 79990)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990,
                                                      revocation: "2026-11-12T10:00:00Z", revocationType: "REFUND_PRORATED", percentage: 50000)),
            Line.notification("REFUND", uuid: "n2", signed: "2026-11-12T11:00:01Z",
                              transaction: Fixture.v2("t2", "pro.yearly", purchase: "2026-11-10T11:00:00Z", price: 79990,
                                                      revocation: "2026-11-12T11:00:00Z", revocationType: "REFUND_PRORATED", percentage: 25000)),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,USA,USD,1,0,4.99,0,4.99,4.99,0,4.99",
            "2026-11-10,pro.yearly,USA,USD,1,0,79.99,0,79.99,79.99,0,79.99",
            "2026-11-12,gems300,USA,USD,0,1,0,2.495,-2.495,0,2.5,-2.5",
            "2026-11-12,pro.yearly,USA,USD,0,1,0,19.9975,-19.9975,0,20,-20",
        ])
        let revenue = try Fixture.summary(scenario)["revenue"] as? [String: Any]
        #expect(revenue?["refunds_usd"] as? String == "22.5")
        #expect(revenue?["net_usd"] as? String == "62.48")
    }

    @Test("a prorated refund stays prorated when a later-read line shows the same refund without its type; a later refund time without one is a later, whole refund", arguments: [
        // Read after the notification (receipts/ sorts after notifications/): the same refund, as a receipt tells it.
        ("2026-11-12", "2026-11-12,gems300,USA,USD,0,1,0,2.495,-2.495,0,2.5,-2.5"),
        ("2026-11-14", "2026-11-14,gems300,USA,USD,0,1,0,4.99,-4.99,0,4.99,-4.99"),
    ])
    func proratedRefundSeenTwice(receiptRefundDay: String, refundRow: String) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func transaction(revocation: String? = nil, type: String? = nil, percentage: Int? = nil) -> String {
            Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, revocation: revocation, revocationType: type, percentage: percentage)
        }
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:01Z",
                              transaction: transaction(revocation: "2026-11-12T10:00:00Z", type: "REFUND_PRORATED", percentage: 50000)),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: transaction()),
            Line.v2Receipt("\(receiptRefundDay)T12:00:00Z", "u1", transaction: transaction(revocation: "\(receiptRefundDay)T10:00:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header, "2026-11-10,gems300,USA,USD,1,0,4.99,0,4.99,4.99,0,4.99", refundRow,
        ])
    }

    @Test("a refund later undone by REFUND_REVERSED is no refund")
    func reversedRefund() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let purchase = Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: purchase)])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, revocation: "2026-11-12T10:00:00Z")),
            Line.notification("REFUND_REVERSED", uuid: "n2", signed: "2026-11-13T10:00:00Z", transaction: purchase),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,USA,USD,1,0,4.99,0,4.99,4.99,0,4.99",
        ])
    }

    // MARK: - Quantity and exclusions

    @Test("quantity multiplies units, and the order's price into gross and the refund; Apple's V2 price is the whole quantity's already")
    func quantityMultiplies() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-10T09:59:00Z", "o2", "u2", "gems300", price: "4.99"),
            Line.delivered("2026-11-10T10:00:09Z", "u2", "t2", "gems300", orderID: "o2", quantity: 3),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T09:00:05Z", "u1",
                           transaction: Fixture.v2("t1", "gems60", purchase: "2026-11-10T09:00:00Z", price: 2970, quantity: 3)),
            Fixture.inAppReceipt("2026-11-10T10:00:05Z", "u2", orderID: "o2",
                                 items: [Fixture.inApp("t2", "gems300", purchase: "2026-11-10T10:00:00Z", quantity: 3)]),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-11T09:00:01Z",
                              transaction: Fixture.v2("t1", "gems60", purchase: "2026-11-10T09:00:00Z", price: 2970, quantity: 3,
                                                      revocation: "2026-11-11T09:00:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,,USD,3,0,14.97,0,14.97,14.97,0,14.97",
            "2026-11-10,gems60,USA,USD,3,0,2.97,0,2.97,2.97,0,2.97",
            "2026-11-11,gems60,USA,USD,0,3,0,2.97,-2.97,0,2.97,-2.97",
        ])
    }

    @Test("Apple's V2 price of several units, in currencies of 0, 2 and 3 decimals, is their total: the unit price is its share, a prorated refund a share of the total; near miss: one unit's price is the unit price")
    func v2PriceOfSeveralUnits() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066", "2026-11-01,KWD,3.25"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T09:00:05Z", "u1",
                           transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T09:00:00Z", price: 1_600_000, currency: "JPY",
                                                   storefront: "JPN", quantity: 2)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u2",
                           transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-10T09:00:00Z", price: 3750, currency: "KWD",
                                                   storefront: "KWT", quantity: 3)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u3",
                           transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-10T09:00:00Z", price: 14970, quantity: 3)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u4",
                           transaction: Fixture.v2("t4", "gems60", purchase: "2026-11-10T09:00:00Z", price: 990)),
        ])
        // One of t3's three units given back: Apple's share applies to the whole quantity.
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-11T09:00:01Z",
                              transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-10T09:00:00Z", price: 14970, quantity: 3,
                                                      revocation: "2026-11-11T09:00:00Z", revocationType: "REFUND_PRORATED", percentage: 33333)),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,JPN,JPY,2,0,1600,0,1600,10.56,0,10.56",
            "2026-11-10,gems300,KWT,KWD,3,0,3.75,0,3.75,12.19,0,12.19",
            "2026-11-10,gems300,USA,USD,3,0,14.97,0,14.97,14.97,0,14.97",
            "2026-11-10,gems60,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
            "2026-11-11,gems300,USA,USD,0,3,0,4.9899501,-4.9899501,0,4.99,-4.99",
        ])
        let prices = Fixture.table(try scenario.output("transactions.csv")).map { [$0["transaction_id"], $0["unit_price"], $0["price"]] }
        #expect(prices == [["t1", "800", "1600"], ["t2", "1.25", "3.75"], ["t3", "4.99", "14.97"], ["t4", "0.99", "0.99"]])
    }

    @Test("Apple's V2 price of several units whose share has endless digits gives a unit price rounded to the milliunit, which every report reads: the row's gross is not blanked and no amount has 38 digits; near misses: a share that divides, or ends in less than a milliunit, is exact")
    func v2PriceNotDividingIntoUnits() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            // 10.000 for 3 is 3.3333…: 3.333. 0.010 for 4 is 0.0025 and 0.014 for 4 is 0.0035, exactly.
            Line.v2Receipt("2026-11-10T09:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T09:00:00Z", price: 10000, quantity: 3)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u2", transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-10T09:00:00Z", price: 14970, quantity: 3)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u3", transaction: Fixture.v2("t3", "gems60", purchase: "2026-11-10T09:00:00Z", price: 10, quantity: 4)),
            Line.v2Receipt("2026-11-10T09:00:05Z", "u4", transaction: Fixture.v2("t4", "gems60", purchase: "2026-11-10T09:00:00Z", price: 14, quantity: 4)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-11T09:00:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T09:00:00Z", price: 10000, quantity: 3,
                                                      revocation: "2026-11-11T09:00:00Z", revocationType: "REFUND_PRORATED", percentage: 50000)),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,USA,USD,6,0,24.969,0,24.969,24.97,0,24.97",
            "2026-11-10,gems60,USA,USD,8,0,0.024,0,0.024,0.02,0,0.02",
            "2026-11-11,gems300,USA,USD,0,3,0,4.9995,-4.9995,0,5,-5",
        ])
        let prices = Fixture.table(try scenario.output("transactions.csv")).map { [$0["transaction_id"], $0["unit_price"], $0["price"], $0["refund_amount"]] }
        #expect(prices == [["t1", "3.333", "9.999", "4.9995"], ["t2", "4.99", "14.97", ""], ["t3", "0.0025", "0.01", ""], ["t4", "0.0035", "0.014", ""]])
        #expect(Money.unitPrice(milliunits: 10000, quantity: 3) == Decimal(string: "3.333"))
        #expect(Money.unitPrice(milliunits: 20000, quantity: 3) == Decimal(string: "6.667"))
        #expect(Money.unitPrice(milliunits: 1_600_000, quantity: 2) == 800)
        #expect(Money.unitPrice(milliunits: 990, quantity: 1) == Decimal(string: "0.99"))
    }

    @Test("Sandbox, Xcode, LocalTesting and FAMILY_SHARED transactions, and their refunds, are never revenue")
    func testAndFamilyPurchasesExcluded() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let family = Fixture.v2("t5", "pro.yearly", purchase: "2026-11-10T14:00:00Z", price: 79990, ownership: "FAMILY_SHARED")
        let sandbox = Fixture.v2("t2", "gems300", purchase: "2026-11-10T11:00:00Z", price: 4990, environment: "Sandbox")
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 990)),
            Line.v2Receipt("2026-11-10T11:00:05Z", "u1", transaction: sandbox),
            Line.v2Receipt("2026-11-10T12:00:05Z", "u1",
                           transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-10T12:00:00Z", price: 4990, environment: "Xcode")),
            Line.v2Receipt("2026-11-10T13:00:05Z", "u1",
                           transaction: Fixture.v2("t4", "pro.monthly", purchase: "2026-11-10T13:00:00Z", price: 9990, environment: "LocalTesting")),
            Line.v2Receipt("2026-11-10T14:00:05Z", "u2", transaction: family),
            // A V1 receipt answered from the sandbox.
            "{\"received_at\":\"2026-11-10T15:00:05Z\",\"user_id\":\"u3\",\"response\":{\"status\":0,\"environment\":\"Sandbox\",\"receipt\":{\"bundle_id\":\"com.example.game\",\"in_app\":[\(Fixture.inApp("t6", "gems300", purchase: "2026-11-10T15:00:00Z"))]}}}",
        ])
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-10T14:00:09Z", "u2", "t5", "pro.yearly")])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:01Z",
                              transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-10T11:00:00Z", price: 4990, environment: "Sandbox",
                                                      revocation: "2026-11-12T10:00:00Z")),
            Line.notification("REVOKE", uuid: "n2", signed: "2026-11-12T11:00:01Z",
                              transaction: Fixture.v2("t5", "pro.yearly", purchase: "2026-11-10T14:00:00Z", price: 79990, ownership: "FAMILY_SHARED",
                                                      revocation: "2026-11-12T11:00:00Z", revocationType: "FAMILY_REVOKE")),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems60,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
        ])
        let summary = try Fixture.summary(scenario)
        let revenue = summary["revenue"] as? [String: Any]
        #expect(revenue?["gross_usd"] as? String == "0.99")
        #expect(revenue?["refunds_usd"] as? String == "0")
        let transactions = summary["transactions"] as? [String: Any]
        #expect(transactions?["family_shared"] as? Int == 1)
        #expect(transactions?["by_environment"] as? [String: Int] == ["Production": 2, "Sandbox": 2, "Xcode": 1, "LocalTesting": 1])
    }

    // MARK: - Price sources

    @Test("price comes from the V2 price, else the matched order, else the catalog; summary counts each source and the unpriced")
    func priceSourceOrder() throws {
        let scenario = try Scenario()
        try scenario.write("catalog.csv", [
            "product_id,type,subscription_group,price,currency",
            "gems60,consumable,,0.99,USD",
            "gems300,consumable,,4.99,USD",
            "gems980,consumable,,14.99,USD",
        ])
        try scenario.write("server/s.jsonl", [
            // t1 has all three prices: Apple's 1.99 wins over the order's 0.49 and the catalog's 0.99.
            Line.order("2026-11-10T09:59:00Z", "o1", "u1", "gems60", price: "0.49"),
            Line.delivered("2026-11-10T10:00:09Z", "u1", "t1", "gems60", orderID: "o1"),
            // t2 has no Apple price: the order's 2.49 wins over the catalog's 4.99.
            Line.order("2026-11-10T10:59:00Z", "o2", "u2", "gems300", price: "2.49"),
            Line.delivered("2026-11-10T11:00:09Z", "u2", "t2", "gems300", orderID: "o2"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", orderID: "o1",
                           transaction: Fixture.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 1990)),
            Fixture.inAppReceipt("2026-11-10T11:00:05Z", "u2", orderID: "o2", items: [Fixture.inApp("t2", "gems300", purchase: "2026-11-10T11:00:00Z")]),
            // t3: no Apple price, no order: the catalog's 14.99.
            Fixture.inAppReceipt("2026-11-10T12:00:05Z", "u3", items: [Fixture.inApp("t3", "gems980", purchase: "2026-11-10T12:00:00Z")]),
            // t4: no price anywhere.
            Fixture.inAppReceipt("2026-11-10T13:00:05Z", "u4", items: [Fixture.inApp("t4", "mystery.bundle", purchase: "2026-11-10T13:00:00Z")]),
        ])
        _ = try scenario.run(asOf: asOf)
        let text = try scenario.output("revenue_daily.csv")
        #expect(Fixture.lines(text) == [
            Self.header,
            "2026-11-10,gems300,,USD,1,0,2.49,0,2.49,2.49,0,2.49",
            "2026-11-10,gems60,USA,USD,1,0,1.99,0,1.99,1.99,0,1.99",
            "2026-11-10,gems980,,USD,1,0,14.99,0,14.99,14.99,0,14.99",
            "2026-11-10,mystery.bundle,,,1,0,,0,,,0,",  // unpriced: counted in units, gross unknown (empty), never 0
        ])
        // The fiscal month sums the days: still unknown, never 0.
        let month = try #require(try Fixture.table(scenario.output("revenue_monthly.csv")).first { $0["product_id"] == "mystery.bundle" })
        #expect(["units", "gross", "refunds", "net", "gross_usd", "refunds_usd", "net_usd"].map { month[$0] } == ["1", "", "0", "", "", "0", ""])
        let summary = try Fixture.summary(scenario)
        let transactions = summary["transactions"] as? [String: Any]
        #expect(transactions?["price_source"] as? [String: Int] == ["v2_price": 1, "order": 1, "catalog": 1, "none": 1])
        #expect(transactions?["products_missing_from_catalog"] as? Int == 1)
        let grossUSD = try #require((summary["revenue"] as? [String: Any])?["gross_usd"] as? String)
        #expect(grossUSD == "19.47")
        #expect(Money.parse(grossUSD) == Fixture.sum(Fixture.table(text), "gross_usd"))
    }

    /// fx.csv with rates into USD from 2026-11-01 and for EUR only from 2026-11-11.
    static let firstEuroRate = ["date,currency,rate", "2026-11-01,USD,1", "2026-11-11,EUR,1.05"]
    /// u1's EUR purchases the day before `firstEuroRate`'s EUR rate and on its day.
    static let eurosAroundFirstRate = [
        Line.v2Receipt("2026-11-10T10:00:05Z", "u1",
                       transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 5490, currency: "EUR", storefront: "DEU")),
        Line.v2Receipt("2026-11-11T10:00:05Z", "u1",
                       transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-11T10:00:00Z", price: 5490, currency: "EUR", storefront: "DEU")),
    ]

    @Test("a purchase with no rate on or before its day keeps its local amounts, leaves its USD gross and net empty and is counted")
    func missingRate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", Self.firstEuroRate)
        try scenario.write("receipts/r.jsonl", Self.eurosAroundFirstRate)
        _ = try scenario.run(asOf: asOf)
        let text = try scenario.output("revenue_daily.csv")
        #expect(Fixture.lines(text) == [
            Self.header,
            "2026-11-10,gems300,DEU,EUR,1,0,5.49,0,5.49,,0,",  // no rate: gross and net in USD unknown; no refunds
            "2026-11-11,gems300,DEU,EUR,1,0,5.49,0,5.49,5.76,0,5.76",  // 5.7645 to the cent, half-even
        ])
        let summary = try Fixture.summary(scenario)
        #expect((summary["transactions"] as? [String: Any])?["without_fx_rate"] as? Int == 1)
        #expect((summary["revenue"] as? [String: Any])?["gross_usd"] as? String == "5.76")
        #expect(Money.parse("5.76") == Fixture.sum(Fixture.table(text), "gross_usd"))
    }

    @Test("revenue fx.csv cannot convert is named in a warning, by currency and purchase days, not only counted in summary.json")
    func missingRateWarning() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", Self.firstEuroRate)
        try scenario.write("receipts/r.jsonl", Self.eurosAroundFirstRate + [
            Line.v2Receipt("2026-11-12T10:00:05Z", "u2",
                           transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-12T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR")),
            Line.v2Receipt("2026-11-14T10:00:05Z", "u2",
                           transaction: Fixture.v2("t4", "gems300", purchase: "2026-11-14T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR")),
        ])
        let result = try scenario.run(asOf: asOf)
        // Never delivered, they are lost deliveries too, whose findings are named on lines of their own.
        #expect(result.report.warnings.filter { $0.contains("revenue transaction") } == [
            "fx.csv has no rate into USD for EUR on or before 2026-11-10: 1 revenue transaction bought on 2026-11-10 "
                + "is left out of gross_usd and summary.json's revenue",
            "fx.csv has no rate into USD for GBP on or before 2026-11-14: 2 revenue transactions bought 2026-11-12 to 2026-11-14 "
                + "are left out of gross_usd and summary.json's revenue",
        ])
    }

    @Test("a free transaction (price 0) in a currency fx.csv cannot convert leaves no money out: 0 in gross_usd, named in no warning; a priced one is")
    func freeTransactionWithoutRate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-12T10:00:05Z", "u2",
                           transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-12T10:00:00Z", price: 0, currency: "GBP", storefront: "GBR")),
            // Near miss: a priced one on the same day is left out, and named.
            Line.v2Receipt("2026-11-12T11:00:05Z", "u3",
                           transaction: Fixture.v2("t4", "gems60", purchase: "2026-11-12T11:00:00Z", price: 990, currency: "GBP", storefront: "GBR")),
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-12T10:00:09Z", "u2", "t3", "gems300"),
            Line.delivered("2026-11-12T11:00:09Z", "u3", "t4", "gems60"),
        ])
        let result = try scenario.run(asOf: asOf)
        #expect(result.report.warnings.filter { $0.contains("revenue transaction") } == [
            "fx.csv has no rate into USD for GBP on or before 2026-11-12: 1 revenue transaction bought on 2026-11-12 "
                + "is left out of gross_usd and summary.json's revenue",
        ])
        let lines = try Fixture.lines(scenario.output("revenue_daily.csv"))
        #expect(lines.contains("2026-11-12,gems300,GBR,GBP,1,0,0,0,0,0,0,0"))
        #expect(lines.contains("2026-11-12,gems60,GBR,GBP,1,0,0.99,0,0.99,,0,"))
        let summary = try Fixture.summary(scenario)
        #expect((summary["transactions"] as? [String: Any])?["without_fx_rate"] as? Int == 1)
    }

    @Test("near miss: revenue in the reporting currency before fx.csv's first day, and revenue with a rate, warn of nothing")
    func convertedRevenueWarnsNothing() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-11,USD,1", "2026-11-11,EUR,1.05"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1",
                           transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, currency: "USD")),
            Line.v2Receipt("2026-11-12T10:00:05Z", "u1",
                           transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-12T10:00:00Z", price: 5490, currency: "EUR", storefront: "DEU")),
        ])
        let result = try scenario.run(asOf: asOf)
        #expect(result.report.warnings == [])
        #expect((try Fixture.summary(scenario)["transactions"] as? [String: Any])?["without_fx_rate"] as? Int == 0)
    }

    // MARK: - Unpriced refunds

    @Test("a refund of an unpriced purchase lands on its day with its units and unknown (empty) refunds and net, never 0; a priced refund beside it stays exact")
    func unpricedRefund() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)),
            // No V2 price, no order, not in the catalog: no price at all.
            Line.v2Receipt("2026-11-10T11:00:05Z", "u2", transaction: Fixture.v2("t2", "mystery.bundle", purchase: "2026-11-10T11:00:00Z", price: nil)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T06:00:01Z",
                              transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, revocation: "2026-11-12T06:00:00Z")),
            Line.notification("REFUND", uuid: "n2", signed: "2026-11-12T07:00:01Z",
                              transaction: Fixture.v2("t2", "mystery.bundle", purchase: "2026-11-10T11:00:00Z", price: nil,
                                                      revocation: "2026-11-12T07:00:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)
        let text = try scenario.output("revenue_daily.csv")
        #expect(Fixture.lines(text) == [
            Self.header,
            "2026-11-10,gems300,USA,USD,1,0,4.99,0,4.99,4.99,0,4.99",
            "2026-11-10,mystery.bundle,USA,,1,0,,0,,,0,",
            "2026-11-12,gems300,USA,USD,0,1,0,4.99,-4.99,0,4.99,-4.99",
            "2026-11-12,mystery.bundle,USA,,0,1,0,,,0,,",  // its refund: a unit, money unknown, never 0
        ])
        let table = Fixture.table(text)
        let units = table.map { Int($0["units"] ?? "") ?? 0 }.reduce(0, +)
        let refundUnits = table.map { Int($0["refund_units"] ?? "") ?? 0 }.reduce(0, +)
        #expect(units == 2 && refundUnits == 2)
        // The fiscal month sums the days: unknown stays unknown.
        let month = try #require(try Fixture.table(scenario.output("revenue_monthly.csv")).first { $0["product_id"] == "mystery.bundle" })
        #expect(["units", "gross", "refunds", "net", "gross_usd", "refunds_usd", "net_usd"].map { month[$0] } == ["1", "", "", "", "", "", ""])
        // The totals are the column sums: the unpriced refund adds nothing, as its unpriced purchase adds nothing to the gross.
        let summary = try Fixture.summary(scenario)
        let revenue = try #require(summary["revenue"] as? [String: Any])
        #expect(["gross_usd", "refunds_usd", "net_usd"].map { revenue[$0] as? String } == ["4.99", "4.99", "0"])
        #expect((summary["transactions"] as? [String: Any])?["price_source"] as? [String: Int] == ["v2_price": 1, "order": 0, "catalog": 0, "none": 1])
    }

    @Test("near miss: a row whose refunds are partly unpriced has unknown refunds and net, in both currencies; a priced part alone stays exact")
    func partlyUnpricedRefunds() throws {
        let amount = { (text: String) in Amount.parse(text) ?? .zero }
        let priced = RevenueReport.Row(units: 1, refundUnits: 1, gross: amount("4.99"), refunds: amount("4.99"),
                                       grossUSD: amount("4.99"), refundsUSD: amount("4.99"))
        let unpriced = RevenueReport.Row(units: 0, refundUnits: 1, gross: .zero, refunds: nil, grossUSD: .zero, refundsUSD: nil)
        #expect(priced.moneyCells == ["4.99", "4.99", "0", "4.99", "4.99", "0"])
        #expect(unpriced.moneyCells == ["0", "", "", "0", "", ""])
        let both = priced.adding(unpriced)
        #expect(both.refundUnits == 2)
        #expect(both.moneyCells == ["4.99", "", "", "4.99", "", ""])
        #expect(unpriced.adding(priced).moneyCells == both.moneyCells)
    }

    @Test("near miss: a refund of a priced purchase with no fx rate keeps its local refund and leaves only the converted cells empty")
    func pricedRefundWithoutRate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        let refunded = Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR",
                                  revocation: "2026-11-12T06:00:00Z")
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-12T10:00:05Z", "u1", transaction: refunded)])
        _ = try scenario.run(asOf: asOf)
        #expect(Fixture.lines(try scenario.output("revenue_daily.csv")) == [
            Self.header,
            "2026-11-10,gems300,GBR,GBP,1,0,4.99,0,4.99,,0,",
            "2026-11-12,gems300,GBR,GBP,0,1,0,4.99,-4.99,0,,",
        ])
    }

    @Test("two different rates for one currency and day are named in a warning, and the last in file order is used; the same rate twice is not")
    func conflictingRates() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-10,EUR,1.05", "2026-11-10,EUR,1.050",
                                      "2026-11-11,EUR,1.05", "2026-11-11,EUR,1.10"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1",
                           transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-11T10:00:00Z", price: 5000, currency: "EUR", storefront: "DEU")),
        ])
        let result = try scenario.run(asOf: asOf)
        #expect(result.report.warnings == ["fx.csv gives EUR two rates on 2026-11-11, 1.05 (fx.csv:5) and 1.1 (fx.csv:6): the last is used"])
        // 5 EUR at 1.10, not 1.05.
        #expect(Fixture.lines(try scenario.output("revenue_daily.csv")).last == "2026-11-11,gems300,DEU,EUR,1,0,5,0,5,5.5,0,5.5")
    }

    @Test("a product the catalog files describe otherwise is named in a warning with each line, and its last line in path order prices it; the same description twice is not")
    func conflictingCatalogLines() throws {
        let scenario = try Scenario()
        let header = "product_id,type,subscription_group,price,currency"
        try scenario.write("2026-11-10/catalog.csv", [header, "gems60,consumable,,0.99,USD", "gems300,consumable,,4.99,USD"])
        // The root's catalog comes after the day folder's; gems300's price changes and changes back.
        try scenario.write("catalog.csv", [header, "gems60,consumable,,0.990,USD", "gems300,consumable,,5.99,USD", "gems300,consumable,,4.49,USD"])
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-11T10:00:00Z", price: nil)),
        ])
        let result = try scenario.run(asOf: asOf)
        #expect(result.report.warnings == [
            "catalog.csv describes gems300 3 ways, consumable 4.99 USD (2026-11-10/catalog.csv:3), consumable 5.99 USD (catalog.csv:3) "
                + "and consumable 4.49 USD (catalog.csv:4): the last line in path order, catalog.csv:4, is used",
        ])
        #expect(Fixture.lines(try scenario.output("revenue_daily.csv")).last == "2026-11-11,gems300,USA,USD,1,0,4.49,0,4.49,4.49,0,4.49")
    }

    @Test("summary revenue.gross_usd, refunds_usd and net_usd equal the column sums of revenue_daily.csv on sample-data")
    func summaryMatchesColumnsOnSampleData() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let table = try Fixture.table(scenario.output("revenue_daily.csv"))
        let revenue = try #require(try Fixture.summary(scenario)["revenue"] as? [String: Any])
        #expect((revenue["gross_usd"] as? String).flatMap(Money.parse) == Fixture.sum(table, "gross_usd"))
        #expect((revenue["refunds_usd"] as? String).flatMap(Money.parse) == Fixture.sum(table, "refunds_usd"))
        #expect((revenue["net_usd"] as? String).flatMap(Money.parse) == Fixture.sum(table, "net_usd"))
        for row in table {
            let gross = Money.parse(row["gross"] ?? ""), refunds = Money.parse(row["refunds"] ?? ""), net = Money.parse(row["net"] ?? "")
            #expect(gross.flatMap { g in refunds.map { g - $0 } } == net, "net = gross - refunds on \(row)")
        }
    }
}

extension RevenueReportTests {
    /// Input builders and output readers for these tests.
    enum Fixture {
        /// A decoded V2 transaction with any currency, storefront and quantity.
        static func v2(_ transactionID: String, _ productID: String, purchase: String, price: Int?, currency: String = "USD",
                       storefront: String = "USA", quantity: Int = 1, environment: String = "Production", ownership: String = "PURCHASED",
                       revocation: String? = nil, revocationType: String? = nil, percentage: Int? = nil) -> String {
            var fields = "\"transactionId\":\"\(transactionID)\",\"originalTransactionId\":\"\(transactionID)\",\"productId\":\"\(productID)\""
            fields += ",\"purchaseDate\":\(Line.ms(purchase)),\"quantity\":\(quantity),\"environment\":\"\(environment)\""
            fields += ",\"inAppOwnershipType\":\"\(ownership)\",\"storefront\":\"\(storefront)\""
            if let price { fields += ",\"price\":\(price),\"currency\":\"\(currency)\"" }
            if let revocation { fields += ",\"revocationDate\":\(Line.ms(revocation)),\"revocationReason\":0" }
            if let revocationType { fields += ",\"revocationType\":\"\(revocationType)\"" }
            if let percentage { fields += ",\"revocationPercentage\":\(percentage)" }
            return "{\(fields)}"
        }

        /// One `in_app` item of a verifyReceipt answer: no price, no currency, no storefront.
        static func inApp(_ transactionID: String, _ productID: String, purchase: String, quantity: Int = 1) -> String {
            "{\"quantity\":\"\(quantity)\",\"product_id\":\"\(productID)\",\"transaction_id\":\"\(transactionID)\",\"original_transaction_id\":\"\(transactionID)\",\"purchase_date_ms\":\"\(Line.ms(purchase))\",\"in_app_ownership_type\":\"PURCHASED\"}"
        }

        /// A receipts line with a Production verifyReceipt answer (status 0).
        static func inAppReceipt(_ receivedAt: String, _ userID: String, orderID: String? = nil, items: [String]) -> String {
            let order = orderID.map { ",\"order_id\":\"\($0)\"" } ?? ""
            return "{\"received_at\":\"\(receivedAt)\",\"user_id\":\"\(userID)\"\(order),\"response\":{\"status\":0,\"environment\":\"Production\",\"receipt\":{\"bundle_id\":\"com.example.game\",\"in_app\":[\(items.joined(separator: ","))]}}}"
        }

        /// The records of a CSV file with no embedded line breaks.
        static func lines(_ text: String) -> [String] {
            var lines = text.components(separatedBy: "\r\n")
            if lines.last == "" { lines.removeLast() }
            return lines
        }

        /// The data rows of a CSV file, by column name.
        static func table(_ text: String) -> [[String: String]] {
            let records = lines(text).map { CSV.fields($0) ?? [] }
            guard let header = records.first else { return [] }
            return records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        }

        /// The exact sum of a numeric column; empty cells count as nothing.
        static func sum(_ table: [[String: String]], _ column: String) -> Decimal {
            table.reduce(Decimal(0)) { $0 + ($1[column].flatMap(Money.parse) ?? 0) }
        }

        static func summary(_ scenario: Scenario) throws -> [String: Any] {
            let data = Data(try scenario.output("summary.json").utf8)
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
    }
}
