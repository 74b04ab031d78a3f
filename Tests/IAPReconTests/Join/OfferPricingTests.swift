import Foundation
import Testing
@testable import IAPRecon

/// Free trials and intro offers (CONTRACT.md §1.2): a trial is priced 0 and never revenue, an
/// intro offer never takes the catalog's full price.
@Suite("Trials and intro offers")
struct OfferPricingTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// The resolved price, its source and whether it is revenue, per transaction.
    private func resolved(_ scenario: Scenario) throws -> [String: (price: String?, source: String, revenue: Bool)] {
        var rows: [String: (String?, String, Bool)] = [:]
        try scenario.open().forEach("SELECT transaction_id, unit_price, price_source, is_revenue FROM int_transactions_resolved") { row in
            rows[row.string(0)] = (row.optionalString(1), row.string(2), row.int(3) == 1)
        }
        return rows
    }

    /// A week's free trial of the monthly plan, delivered; the receipt's `in_app` marks it a trial,
    /// its `latest_receipt_info` (Apple is not consistent) does not.
    static let trialReceipt = #"{"received_at":"2026-11-20T10:00:05Z","user_id":"u_1060","order_id":"OrderID_1795168800000_pro","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"1","product_id":"pro.monthly","transaction_id":"2000000900000001","original_transaction_id":"2000000900000001","purchase_date_ms":"1795168803000","expires_date_ms":"1795773603000","is_trial_period":"true","is_in_intro_offer_period":"false","in_app_ownership_type":"PURCHASED"}]},"latest_receipt_info":[{"quantity":"1","product_id":"pro.monthly","transaction_id":"2000000900000001","original_transaction_id":"2000000900000001","purchase_date_ms":"1795168803000","expires_date_ms":"1795773603000","is_trial_period":"false","in_app_ownership_type":"PURCHASED"}]}}"#

    @Test("a trial marked only in in_app is priced 0, is no revenue, and is still reconciled (delivered, no finding)")
    func trialInInAppOnly() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-20T10:00:00Z", "OrderID_1795168800000_pro", "u_1060", "pro.monthly", price: "9.99"),
            Line.delivered("2026-11-20T10:00:09Z", "u_1060", "2000000900000001", "pro.monthly", orderID: "OrderID_1795168800000_pro"),
        ])
        try scenario.write("receipts/r.jsonl", [Self.trialReceipt])
        _ = try scenario.run(asOf: asOf)
        let trial = try #require(try resolved(scenario)["2000000900000001"])
        #expect(trial.price == "0")
        #expect(trial.source == "free_trial")
        #expect(trial.revenue == false)
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_daily.csv")).count == 1)
        #expect(try scenario.output("findings.csv").split(separator: "\n").count == 1)
    }

    @Test("an undelivered trial is still a lost delivery, at no money")
    func undeliveredTrial() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.trialReceipt])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lostDelivery])
        #expect(findings.first?.amount == 0)
    }

    @Test("a V2 FREE_TRIAL offer is priced 0 though Apple sends a price")
    func v2FreeTrial() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let transaction = #"{"transactionId":"2000000900000002","originalTransactionId":"2000000900000002","productId":"pro.monthly","purchaseDate":1795168803000,"quantity":1,"environment":"Production","inAppOwnershipType":"PURCHASED","price":0,"currency":"USD","storefront":"USA","offerType":1,"offerDiscountType":"FREE_TRIAL"}"#
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-20T10:00:05Z", "u_1061", transaction: transaction)])
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-20T10:00:09Z", "u_1061", "2000000900000002", "pro.monthly")])
        _ = try scenario.run(asOf: asOf)
        #expect(try resolved(scenario)["2000000900000002"]?.source == "free_trial")
    }

    @Test("an intro offer takes Apple's price, else the order's, else none: never the catalog's full price")
    func introOffer() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func item(_ id: String, purchaseMs: Int64) -> String {
            #"{"quantity":"1","product_id":"pro.monthly","transaction_id":"\#(id)","original_transaction_id":"\#(id)","purchase_date_ms":"\#(purchaseMs)","is_trial_period":"false","is_in_intro_offer_period":"true"}"#
        }
        let v2 = #"{"transactionId":"2000000900000013","originalTransactionId":"2000000900000013","productId":"pro.monthly","purchaseDate":1795168803000,"quantity":1,"environment":"Production","price":1990,"currency":"USD","storefront":"USA","offerType":1,"offerDiscountType":"PAY_AS_YOU_GO"}"#
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-20T10:00:00Z", "o_intro", "u_1062", "pro.monthly", price: "0.99"),
        ])
        try scenario.write("receipts/r.jsonl", [
            RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_1062", orderID: "o_intro",
                                                    items: [item("2000000900000011", purchaseMs: 1_795_168_803_000)]),
            RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_1063", items: [item("2000000900000012", purchaseMs: 1_795_168_803_000)]),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u_1064", transaction: v2),
        ])
        _ = try scenario.run(asOf: asOf)
        let rows = try resolved(scenario)
        #expect(rows["2000000900000011"]?.price == "0.99")
        #expect(rows["2000000900000011"]?.source == "order")
        #expect(rows["2000000900000012"]?.price == nil)
        #expect(rows["2000000900000012"]?.source == "none")
        #expect(rows["2000000900000013"]?.price == "1.99")
        #expect(rows["2000000900000013"]?.source == "v2_price")
    }

    @Test("a receipt item bought with an offer code or a promotional offer takes the order's price, else none: never the catalog's full price; near miss: a plain item takes it",
          arguments: [#""offer_code_ref_name":"BLACKFRIDAY","#, #""promotional_offer_id":"winback50","#, ""])
    func receiptOffers(offer: String) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func item(_ id: String) -> String {
            #"{"quantity":"1","product_id":"pro.monthly","transaction_id":"\#(id)","original_transaction_id":"\#(id)","purchase_date_ms":"1795168803000",\#(offer)"is_trial_period":"false","is_in_intro_offer_period":"false"}"#
        }
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-20T10:00:00Z", "o_offer", "u_1065", "pro.monthly", price: "4.99"),
        ])
        try scenario.write("receipts/r.jsonl", [
            RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_1065", orderID: "o_offer", items: [item("2000000900000021")]),
            RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_1066", items: [item("2000000900000022")]),
        ])
        _ = try scenario.run(asOf: asOf)
        let rows = try resolved(scenario)
        #expect(rows["2000000900000021"]?.price == "4.99")
        #expect(rows["2000000900000021"]?.source == "order")
        if offer.isEmpty {
            #expect(rows["2000000900000022"]?.price == "9.99")
            #expect(rows["2000000900000022"]?.source == "catalog")
        } else {
            #expect(rows["2000000900000022"]?.price == nil)
            #expect(rows["2000000900000022"]?.source == "none")
        }
    }
}
