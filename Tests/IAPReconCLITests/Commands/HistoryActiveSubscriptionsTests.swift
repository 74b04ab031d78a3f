import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// The header's active subscriptions of a customer holding many chains: named up to ten, then
/// counted, while `--format json` keeps every one.
@Suite("History active subscriptions")
struct HistoryActiveSubscriptionsTests {
    static func history(subscriptions count: Int) -> UserHistory {
        let day: Int64 = 86_400_000
        let asOf = Timestamp.parse("2026-11-30T00:00:00Z") ?? 0
        let subscriptions = (1...count).map { index in
            UserHistory.ActiveSubscription(originalTransactionID: String(format: "c%02d", index), productID: "pro.monthly",
                                           expiresMs: asOf + Int64(index) * day, environment: "Production")
        }
        return UserHistory(subject: "user u1", notes: [], userID: "u1", events: HistoryEvents(), findingIDs: [], findings: [], spent: "0",
                           refunded: "0", reportingCurrency: "USD", unconverted: 0, activeSubscriptions: subscriptions, asOfMs: asOf,
                           rejectedLines: [], caveat: nil)
    }

    static func named(_ range: ClosedRange<Int>) -> String {
        range.map { String(format: "pro.monthly until 2026-12-%02d 00:00:00 (chain c%02d)", $0, $0) }.joined(separator: "; ")
    }

    @Test("past ten, the header names the first ten (by expiry) and counts the rest; ten are all named")
    func cut() {
        let twelve = Self.history(subscriptions: 12).headerLines(.utc)
        #expect(twelve.contains("active subscriptions: " + Self.named(1...10) + "; and 2 more (--format json lists them)"))
        #expect(twelve.last == "open findings: none")
        // The near miss: ten, every one named.
        #expect(Self.history(subscriptions: 10).headerLines(.utc).contains("active subscriptions: " + Self.named(1...10)))
    }

    @Test("--format json lists every active subscription")
    func jsonKeepsAll() throws {
        var text = ""
        HistoryCommand.writeJSON(Self.history(subscriptions: 12)) { text += $0 }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let listed = try #require(object["active_subscriptions"] as? [[String: Any]])
        #expect(listed.compactMap { $0["original_transaction_id"] as? String } == (1...12).map { String(format: "c%02d", $0) })
    }
}
