import Foundation
import Testing
@testable import IAPRecon

/// Subscription lifecycles as Apple reports them: upgrades, Family Sharing.
@Suite("Subscription lifecycles")
struct SubscriptionLifecycleTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// `transaction` (a `Line.v2` object) marked `isUpgraded`, as Apple marks the plan an upgrade replaced.
    static func upgraded(_ transaction: String) -> String {
        String(transaction.dropLast()) + ",\"isUpgraded\":true}"
    }

    /// u1's monthly plan `t1` (2026-11-01 to 12-01), as a sighting before the upgrade gives it.
    static let monthly = Line.v2("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)
    /// `t1` as Apple dates it once upgraded: the upgrade's time as its revocation date (mark it with `upgraded`).
    static let replaced = Line.v2("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990,
                                  revocation: "2026-11-11T10:00:00Z")
    /// The yearly plan that replaced it on 2026-11-11, in the same chain.
    static let yearly = Line.v2("t2", "pro.yearly", purchase: "2026-11-11T10:00:00Z", original: "t1", expires: "2027-11-11T10:00:00Z", price: 79990)

    /// A scenario with the catalog and u1's deliveries of `t1` and `t2`.
    static func upgradeScenario() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "t1", "pro.monthly"),
            Line.delivered("2026-11-11T10:00:09Z", "u1", "t2", "pro.yearly"),
        ])
        return scenario
    }

    /// The row of `transactionID` in the scenario's `transactions.csv`, as its cells.
    static func row(_ scenario: Scenario, _ transactionID: String) throws -> [Substring] {
        let csv = try scenario.output("transactions.csv")
        let header = try #require(csv.split(separator: "\r\n").first).split(separator: ",")
        let line = try #require(csv.split(separator: "\r\n").first { $0.hasPrefix(transactionID + ",") })
        let cells = line.split(separator: ",", omittingEmptySubsequences: false)
        #expect(cells.count >= header.count)
        return cells
    }

    static func column(_ scenario: Scenario, _ name: String) throws -> Int {
        let csv = try scenario.output("transactions.csv")
        let header = try #require(csv.split(separator: "\r\n").first).split(separator: ",")
        return try #require(header.firstIndex { $0 == name })
    }

    @Test("a V2 plan an upgrade replaced (isUpgraded), in a receipt or a notification, is no refund; near misses: without isUpgraded, in a REFUND, with a revocationType or for an issue in the app, it is one",
          arguments: ["receipt", "notification", "refund notification", "typed refund", "app issue refund", "no flag"])
    func v2UpgradeIsNoRefund(place: String) throws {
        let scenario = try Self.upgradeScenario()
        let (monthly, replaced, yearly) = (Self.monthly, Self.replaced, Self.yearly)
        var receipts = [Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: monthly)]
        var notifications: [String] = []
        switch place {
        case "receipt":
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Self.upgraded(replaced) + "," + yearly))
        case "notification":
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: yearly))
            notifications.append(Line.notification("DID_CHANGE_RENEWAL_PREF", uuid: "n1", signed: "2026-11-11T10:00:01Z",
                                                   transaction: Self.upgraded(replaced), subtype: "UPGRADE"))
        case "refund notification":
            // Apple refunding the replaced plan later says so with a REFUND: that is a refund.
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: yearly))
            notifications.append(Line.notification("REFUND", uuid: "n1", signed: "2026-11-11T10:00:01Z", transaction: Self.upgraded(replaced)))
        case "app issue refund":
            // Refunded for an issue in the app (revocationReason 1), with no type: refunded too.
            let refunded = replaced.replacingOccurrences(of: "\"revocationReason\":0", with: "\"revocationReason\":1")
            #expect(refunded != replaced)
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Self.upgraded(refunded) + "," + yearly))
        case "typed refund":
            // Apple's refunds carry a revocationType: an upgraded plan refunded is refunded.
            let refunded = Line.v2("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990,
                                   revocation: "2026-11-11T10:00:00Z", revocationType: "REFUND_FULL")
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Self.upgraded(refunded) + "," + yearly))
        default:
            receipts.append(Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: replaced + "," + yearly))
        }
        try scenario.write("receipts/r.jsonl", receipts)
        if !notifications.isEmpty { try scenario.write("notifications/n.jsonl", notifications) }
        _ = try scenario.run(asOf: asOf)
        let kinds = try Scenario.findings(scenario.open()).map(\.kind)
        let refundTime = try Self.row(scenario, "t1")[Self.column(scenario, "refund_time")]
        let revenue = try scenario.output("revenue_daily.csv")
        if place == "receipt" || place == "notification" {
            #expect(kinds.isEmpty)
            #expect(refundTime.isEmpty)
            #expect(!revenue.contains("2026-11-11,pro.monthly,"))
        } else {
            #expect(kinds == [.refundedNotRevoked])
            #expect(refundTime == "2026-11-11T10:00:00.000Z")
            #expect(revenue.contains("2026-11-11,pro.monthly,USA,USD,0,1,0,9.99,-9.99,"))
        }
    }

    @Test("a plan an upgrade replaced ends at the upgrade, in transactions.csv and history, though a sighting from before the upgrade, in a file sorting before or after, gives its full period; near miss: a later expiry with no upgrade extends it",
          arguments: ["v2 receipt", "v2 notification", "v1 receipt", "v1 receipt, upgrade first", "extension"])
    func upgradeEndsThePlanWhateverSightingSortsFirst(place: String) throws {
        let scenario = try Self.upgradeScenario()
        let (monthly, replaced, yearly) = (Self.monthly, Self.replaced, Self.yearly)
        func item(_ id: String, _ product: String, purchase: String, expires: String, upgraded: Bool) -> String {
            let cancelled = upgraded ? #","cancellation_date_ms":"\#(Line.ms("2026-11-11T10:00:00Z"))","is_upgraded":"true""# : ""
            return #"{"quantity":"1","product_id":"\#(product)","transaction_id":"\#(id)","original_transaction_id":"t1","purchase_date_ms":"\#(Line.ms(purchase))","expires_date_ms":"\#(Line.ms(expires))"\#(cancelled)}"#
        }
        let fullPeriod = item("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", upgraded: false)
        let upgradedItem = item("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", upgraded: true)
        let yearlyItem = item("t2", "pro.yearly", purchase: "2026-11-11T10:00:00Z", expires: "2027-11-11T10:00:00Z", upgraded: false)
        let before = RevenueReportTests.Fixture.inAppReceipt("2026-11-01T10:00:05Z", "u1", items: [fullPeriod])
        let after = RevenueReportTests.Fixture.inAppReceipt("2026-11-11T10:00:05Z", "u1", items: [upgradedItem, yearlyItem])
        // Each case: the file sorting first, the one sorting after it, and the end expected.
        let upgradeEnd = "2026-11-11T10:00:00.000Z"
        switch place {
        case "v2 receipt":
            try scenario.write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: monthly)])
            try scenario.write("receipts/b.jsonl", [Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Self.upgraded(replaced) + "," + yearly)])
        case "v2 notification":
            try scenario.write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: monthly),
                                                    Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: yearly)])
            try scenario.write("notifications/n.jsonl", [Line.notification("DID_CHANGE_RENEWAL_PREF", uuid: "n1", signed: "2026-11-11T10:00:01Z",
                                                                           transaction: Self.upgraded(replaced), subtype: "UPGRADE")])
        case "v1 receipt":
            try scenario.write("receipts/a.jsonl", [before])
            try scenario.write("receipts/b.jsonl", [after])
        case "v1 receipt, upgrade first":
            try scenario.write("receipts/a.jsonl", [after])
            try scenario.write("receipts/b.jsonl", [before])
        default:
            // Apple extends the plan by a week (RENEWAL_EXTENDED): the later expiry holds, as no upgrade tells otherwise.
            try scenario.write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: monthly)])
            try scenario.write("notifications/n.jsonl", [Line.notification(
                "RENEWAL_EXTENDED", uuid: "n1", signed: "2026-11-20T10:00:01Z",
                transaction: Line.v2("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-08T10:00:00Z", price: 9990))])
        }
        _ = try scenario.run(asOf: asOf)
        let expires = try Self.row(scenario, "t1")[Self.column(scenario, "expires_time")]
        let active = try UserHistory.load(scenario.open(), .user("u1")).activeSubscriptions.map(\.productID)
        if place == "extension" {
            #expect(expires == "2026-12-08T10:00:00.000Z")
            #expect(active == ["pro.monthly"])
        } else {
            #expect(expires == Substring(upgradeEnd))
            #expect(active == ["pro.yearly"])
            #expect(try Scenario.findings(scenario.open()).isEmpty)
        }
    }

    @Test("a family-shared transaction's refund gives back nothing, though Apple's REVOKE or a receipt names no revocationType; near miss: a purchase's refund gives back its price")
    func familySharedRefundGivesNothingBack() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-20T10:00:09Z", "u2", "f1", "pro.monthly"),
            Line.delivered("2026-11-20T10:00:09Z", "u3", "f2", "pro.monthly"),
            Line.delivered("2026-11-20T10:00:09Z", "u4", "p1", "pro.monthly"),
        ])
        func family(_ id: String, revoked: Bool = false) -> String {
            Line.v2(id, "pro.monthly", purchase: "2026-11-20T10:00:03Z", expires: "2026-12-20T10:00:03Z", price: 9990, ownership: "FAMILY_SHARED",
                    revocation: revoked ? "2026-11-22T00:00:00Z" : nil)
        }
        let purchase = { (revoked: Bool) in
            Line.v2("p1", "pro.monthly", purchase: "2026-11-20T10:00:03Z", expires: "2026-12-20T10:00:03Z", price: 9990,
                    revocation: revoked ? "2026-11-22T00:00:00Z" : nil)
        }
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-20T10:00:05Z", "u2", transaction: family("f1")),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u3", transaction: family("f2")),
            Line.v2Receipt("2026-11-23T10:00:05Z", "u3", transaction: family("f2", revoked: true)),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u4", transaction: purchase(false)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REVOKE", uuid: "n1", signed: "2026-11-22T00:00:01Z", transaction: family("f1", revoked: true)),
            Line.notification("REFUND", uuid: "n2", signed: "2026-11-22T00:00:01Z", transaction: purchase(true)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.refundedNotRevoked, .refundedNotRevoked, .refundedNotRevoked])
        #expect(findings.map(\.transactionID) == ["f1", "f2", "p1"])
        #expect(findings.map(\.amount) == [0, 0, Money.parse("9.99")])
    }
}
