import Foundation
import Testing
@testable import IAPRecon

/// Free trials in a subscriptions business: a trial is nobody's payment, so it is no paid period of
/// a chain (`multi_apple_id_subscription`) and makes no payer, however Apple's payload spells it.
@Suite("Subscription trials")
struct SubscriptionTrialTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// `transaction` (a `Line.v2` object) with more keys of Apple's, as JSON text (`"offerType":1`).
    static func with(_ transaction: String, _ keys: String) -> String {
        String(transaction.dropLast()) + "," + keys + "}"
    }

    /// u1 pays for the monthly plan from one Apple ID (`a1`, 2026-11-01 to 12-01) and, from a second
    /// Apple ID, starts the yearly plan's week of free trial on 2026-11-10 (`b1`), as Apple's
    /// payload of `trial` marks it; `converted` adds the trial's first paid year (`b2`, from 11-17).
    static func trialOnSecondAppleID(trial: String, converted: Bool) throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        var deliveries = [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-10T10:00:09Z", "u1", "b1", "pro.yearly"),
        ]
        var receipts = [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2(
                "a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Self.with(Line.v2(
                "b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2026-11-17T10:00:00Z", price: 0), trial)),
        ]
        if converted {
            deliveries.append(Line.delivered("2026-11-17T10:00:09Z", "u1", "b2", "pro.yearly"))
            receipts.append(Line.v2Receipt("2026-11-17T10:00:05Z", "u1", transaction: Line.v2(
                "b2", "pro.yearly", purchase: "2026-11-17T10:00:00Z", original: "b1", expires: "2027-11-17T10:00:00Z", price: 79990)))
        }
        try scenario.write("server/s.jsonl", deliveries)
        try scenario.write("receipts/r.jsonl", receipts)
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-01T09:00:00Z","user_id":"u1","method":"apple"}"#,
        ])
        return scenario
    }

    @Test("a free trial on a second Apple ID is no second payment: no multi_apple_id_subscription; near miss: once the trial converts, both Apple IDs pay",
          arguments: [#""offerType":1,"offerDiscountType":"FREE_TRIAL""#, #""offerType":1"#])
    func freeTrialIsNoPaidPeriod(trial: String) throws {
        let trialOnly = try Self.trialOnSecondAppleID(trial: trial, converted: false)
        #expect(try trialOnly.reconcile(asOf: asOf).map(\.kind) == [])

        let converted = try Self.trialOnSecondAppleID(trial: trial, converted: true)
        let findings = try converted.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.multiAppleIDSubscription])
        // Both pay from 11-17, when the trial's first paid year starts, not from the trial's start.
        #expect(findings.first?.eventMs == Line.ms("2026-11-17T10:00:00Z"))
        #expect(findings.first?.detail == "2 Apple IDs pay for group premium at once: chains a1, b1")
    }

    @Test("near misses of a second Apple ID paying at once: its chain is a family member's copy, a test purchase, or refunded; each is nobody's second payment",
          arguments: ["family", "sandbox", "refunded"])
    func secondChainThatIsNoPayment(second: String) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-10T10:00:09Z", "u1", "b1", "pro.yearly"),
        ])
        let b1 = Line.v2("b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2027-11-10T10:00:00Z", price: 79990,
                         environment: second == "sandbox" ? "Sandbox" : "Production",
                         ownership: second == "family" ? "FAMILY_SHARED" : "PURCHASED",
                         revocation: second == "refunded" ? "2026-11-12T10:00:00Z" : nil,
                         revocationType: second == "refunded" ? "REFUND_FULL" : nil)
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2(
                "a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: b1),
        ])
        let kinds = try scenario.reconcile(asOf: asOf).map(\.kind)
        #expect(!kinds.contains(.multiAppleIDSubscription))
        // What each is instead: a test purchase delivered, a refund never revoked, or nothing.
        #expect(kinds == (second == "sandbox" ? [.sandboxDelivery] : second == "refunded" ? [.refundedNotRevoked] : []))
    }

    /// The resolved price source and revenue flag of `transactionID`.
    static func resolved(_ scenario: Scenario, _ transactionID: String) throws -> (source: String, revenue: Bool)? {
        var found: (String, Bool)?
        try scenario.open().forEach("SELECT price_source, is_revenue FROM int_transactions_resolved WHERE transaction_id = ?",
                                    [.text(transactionID)]) { row in
            found = (row.string(0), row.int(1) == 1)
        }
        return found
    }

    @Test("a V2 offer at price 0 with no offerDiscountType (Apple's payloads before it had one) is a free trial: no revenue, no payer; near miss: a paid intro offer is revenue and makes a payer",
          arguments: [(price: 0, payer: false), (price: 990, payer: true)])
    func zeroPricedOfferIsATrial(price: Int, payer: Bool) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-10T10:00:09Z", "u1", "t1", "pro.monthly")])
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Self.with(Line.v2(
            "t1", "pro.monthly", purchase: "2026-11-10T10:00:00Z", expires: "2026-11-17T10:00:00Z", price: price), #""offerType":1"#))])
        try scenario.write("registrations/r.jsonl", [#"{"ts":"2026-11-10T09:00:00Z","user_id":"u1","method":"apple"}"#])
        _ = try scenario.run(asOf: asOf)
        let resolved = try #require(try Self.resolved(scenario, "t1"))
        #expect(resolved.source == (payer ? "v2_price" : "free_trial"))
        #expect(resolved.revenue == payer)
        let attribution = try scenario.output("attribution.csv").split(separator: "\r\n")
        let row = try #require(attribution.first { $0.hasPrefix("2026-11-10,unattributed,") }).split(separator: ",", omittingEmptySubsequences: false)
        // installs, registrations, payers
        #expect(row[3...5] == (payer ? ["0", "1", "1"] : ["0", "1", "0"]))
        #expect(try scenario.output("revenue_daily.csv").contains("2026-11-10,pro.monthly,") == payer)
    }
}
