import Foundation
import Testing
@testable import IAPRecon

/// Apple sightings keep origin and Apple's enumerations as small integer codes (`AppleCodes`,
/// `TransactionOrigin.code`): what users rely on is that every value reads back exactly as Apple
/// sent it, known or not, and that a store from before the codes means the same after its migration.
@Suite("Stored codes")
struct StoredCodesTests {
    /// The codes are part of the stored format: a store in the field holds these numbers, so none may change.
    @Test("every stored code keeps its number")
    func pinned() {
        #expect(TransactionOrigin.allCases.map { "\($0.code) \($0.rawValue)" } == ["1 receipt", "2 v2", "3 notification"])
        func listed(_ codes: AppleCodes) -> [String] { codes.values.map { "\($0.code) \($0.text)" } }
        #expect(listed(AppleEnvironment.codes) == ["1 Production", "2 Sandbox", "3 PROD", "4 Xcode", "5 LocalTesting"])
        #expect(listed(AppleProductType.codes) == [
            "1 Auto-Renewable Subscription", "2 Non-Consumable", "3 Consumable", "4 Non-Renewing Subscription",
        ])
        #expect(listed(AppleOwnership.codes) == ["1 PURCHASED", "2 FAMILY_SHARED"])
        #expect(listed(AppleNotificationType.codes) == [
            "1 CONSUMPTION_REQUEST", "2 DID_CHANGE_RENEWAL_PREF", "3 DID_CHANGE_RENEWAL_STATUS", "4 DID_FAIL_TO_RENEW", "5 DID_RENEW",
            "6 EXPIRED", "7 EXTERNAL_PURCHASE_TOKEN", "8 GRACE_PERIOD_EXPIRED", "9 OFFER_REDEEMED", "10 ONE_TIME_CHARGE",
            "11 PRICE_INCREASE", "12 REFUND", "13 REFUND_DECLINED", "14 REFUND_REVERSED", "15 RENEWAL_EXTENDED",
            "16 RENEWAL_EXTENSION", "17 REVOKE", "18 SUBSCRIBED", "19 TEST", "20 CANCEL", "21 DID_RECOVER", "22 INITIAL_BUY",
            "23 INTERACTIVE_RENEWAL", "24 PRICE_INCREASE_CONSENT", "25 RENEWAL",
        ])
    }

    @Test("a known value is its code, any other its text; each reads back as it was, and SQL finds each by its own literal")
    func codec() {
        let codes = AppleEnvironment.codes
        #expect(codes.stored("Sandbox") == .integer(2))
        #expect(codes.stored("Staging") == .text("Staging"))
        // A text that looks like a code is a text: it never reads back as the value of that code.
        #expect(codes.stored("2") == .text("2"))
        #expect(codes.stored(nil) == .null)
        #expect(codes.text(2) == "Sandbox")
        #expect(codes.text(0) == nil && codes.text(6) == nil)
        #expect(codes.sqlLiteral("Sandbox") == "2")
        #expect(codes.sqlLiteral("it's new") == "'it''s new'")
        #expect(UnknownStoredCode(column: "environment", stored: .integer(9)).description
            == "the store has environment code 9, which this iaprecon does not know; use the iaprecon that wrote it, or a newer one")
    }
}
