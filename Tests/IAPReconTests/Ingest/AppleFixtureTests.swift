import Foundation
import Testing
@testable import IAPRecon

/// Apple's own test payloads (`Tests/Fixtures/apple/`, from app-store-server-library-swift) through
/// the ingest decoders: every transaction, renewal and notification payload, each field checked
/// against the file (CONTRACT.md §1.2, §1.3).
@Suite("Apple fixtures")
struct AppleFixtureTests {
    private func fixtureObject(_ name: String) throws -> JSONObject {
        try IngestLine.object(try AppleFixtureFile.text(name))
    }

    /// A V2 transaction payload decoded as a receipts line's; its refund time is left to the line (`reported`).
    private static func decodeV2(_ fields: Fields) throws(LineReject) -> AppleTransaction {
        var reported: [ReportedTime] = []
        return try AppleTransaction(v2: fields, origin: .serverAPI, reported: &reported)
    }

    /// The decoded fields of `signedTransaction.json` and `signedTransactionWithRevocation.json`.
    private func libraryTransaction(revocationType: String?, revocationPercentage: Int64?) -> AppleTransaction {
        var expected = AppleTransaction(origin: .serverAPI, transactionID: "23456", productID: "com.example.product", purchaseMs: 1_698_148_900_000)
        expected.originalTransactionID = "12345"
        expected.expiresMs = 1_698_149_000_000
        expected.revocationMs = 1_698_148_950_000
        expected.revocationReason = "1"
        expected.revocationType = revocationType
        expected.revocationPercentage = revocationPercentage
        expected.priceMilliunits = 10990
        expected.currency = "USD"
        expected.storefront = "USA"
        expected.environment = "LocalTesting"
        expected.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        expected.type = "Auto-Renewable Subscription"
        expected.quantity = 1
        expected.ownership = "PURCHASED"
        expected.subscriptionGroup = "55555"
        expected.offer = .introOffer  // offerType 1, PAY_AS_YOU_GO
        return expected
    }

    /// The decoded fields of the `xcode-signed-transaction` JWS.
    private var xcodeTransaction: AppleTransaction {
        var expected = AppleTransaction(origin: .serverAPI, transactionID: "0", productID: "pass.premium", purchaseMs: 1_697_679_936_049)
        expected.originalTransactionID = "0"
        expected.expiresMs = 1_700_358_336_049
        expected.storefront = "USA"
        expected.environment = "Xcode"
        expected.type = "Auto-Renewable Subscription"
        expected.quantity = 1
        expected.ownership = "PURCHASED"
        expected.subscriptionGroup = "6F3A93AB"
        expected.offer = .introOffer  // offerType 1
        return expected
    }

    // MARK: - Transactions

    @Test("signedTransaction.json decodes every contract field; the nested advancedCommerceInfo dates are not taken")
    func signedTransaction() throws {
        let decoded = try IngestLine.withFields(try fixtureObject("signedTransaction.json")) { try Self.decodeV2($0) }
        #expect(decoded == libraryTransaction(revocationType: nil, revocationPercentage: nil))
    }

    @Test("signedTransactionWithRevocation.json: REFUND_PRORATED of 50000 on 10990 milliunits refunds 5.495 USD")
    func transactionWithRevocation() throws {
        let decoded = try IngestLine.withFields(try fixtureObject("signedTransactionWithRevocation.json")) { try Self.decodeV2($0) }
        #expect(decoded == libraryTransaction(revocationType: "REFUND_PRORATED", revocationPercentage: 50000))
        let percentage = try #require(decoded.revocationPercentage)
        let price = Money.fromMilliunits(try #require(decoded.priceMilliunits))
        #expect(price == Decimal(string: "10.99"))
        #expect(Money.format(price * Decimal(percentage) / Decimal(100_000)) == "5.495")
        // LocalTesting is kept as sent, and it is not revenue.
        #expect(AppleEnvironment.isProduction(decoded.environment) == false)
    }

    @Test("the revocation fixture as a receipts line's decoded transaction: one verification and one transaction row")
    func revocationThroughReceipts() throws {
        let payload = try AppleFixtureFile.text("signedTransactionWithRevocation.json")
        let line = #"{"received_at":"2023-10-24T12:05:00Z","user_id":"u_1","order_id":"o_1","transactions":["# + payload + "]}"
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.map(\.table) == [.verifications, .appleTransactions])
        #expect(rows[0].byColumn == [
            "received_ms": .integer(1_698_149_100_000), "user_id": .text("u_1"), "order_id": .text("o_1"),
            "transaction_id": .text("23456"), "status_n": .integer(0), "environment": .null, "bundle_id": .text("com.example"),
            "shape": .text("transactions"),
        ])
        #expect(rows[1].item == 1)
        #expect(rows[1].byColumn == IngestLine.appleTransactionRow([
            "origin": .integer(TransactionOrigin.serverAPI.code), "event_ms": .integer(1_698_149_100_000), "user_id": .text("u_1"), "claimed_order_id": .text("o_1"),
            "transaction_id": .text("23456"), "original_transaction_id": .text("12345"), "product_id": .text("com.example.product"),
            "purchase_ms": .integer(1_698_148_900_000), "expires_ms": .integer(1_698_149_000_000),
            "revocation_ms": .integer(1_698_148_950_000), "revocation_reason": .text("1"), "revocation_type": .text("REFUND_PRORATED"),
            "revocation_percentage_n": .integer(50000), "price_milli_n": .integer(10990), "currency": .text("USD"),
            "storefront": .text("USA"), "environment": AppleEnvironment.codes.stored("LocalTesting"),
            "app_account_token": .text("7e3fb20b-4cdb-47cc-936d-99d65f608138"), "type": AppleProductType.codes.stored("Auto-Renewable Subscription"),
            "quantity_n": .integer(1), "ownership": AppleOwnership.codes.stored("PURCHASED"), "subscription_group": .text("55555"),
            "offer": .text("intro_offer"),
        ]))
    }

    @Test("the revocation fixture inside a decoded REFUND notification carries the notification's uuid, type and time")
    func revocationThroughNotification() throws {
        let payload = try AppleFixtureFile.text("signedTransactionWithRevocation.json")
        let line = #"{"notificationType":"REFUND","notificationUUID":"n-1","signedDate":1698149000000,"data":{"environment":"Sandbox","transactionInfo":"#
            + payload + "}}"
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn == [
            "notification_uuid": .text("n-1"), "notification_type": .text("REFUND"), "subtype": .null,
            "signed_ms": .integer(1_698_149_000_000), "environment": .text("LocalTesting"), "version": .text("2"),
            "transaction_id": .text("23456"), "bundle_id": .text("com.example"),
        ])
        let transaction = rows[1].byColumn
        #expect(transaction["origin"] == .integer(TransactionOrigin.notification.code))
        #expect(transaction["event_ms"] == .integer(1_698_149_000_000))
        #expect(transaction["notification_uuid"] == .text("n-1"))
        #expect(transaction["notification_type"] == AppleNotificationType.codes.stored("REFUND"))
        #expect(transaction["revocation_ms"] == .integer(1_698_148_950_000))
        #expect(transaction["revocation_type"] == .text("REFUND_PRORATED"))
        #expect(transaction["revocation_percentage_n"] == .integer(50000))
        // The transaction's own environment wins over the notification's.
        #expect(transaction["environment"] == AppleEnvironment.codes.stored("LocalTesting"))
        #expect(transaction["user_id"] == .null)
    }

    @Test("xcode-signed-transaction: fractional-millisecond dates floor to whole milliseconds; environment Xcode")
    func xcodeTransactionJWS() throws {
        let payload = try JWS.payload(try AppleFixtureFile.text("xcode-signed-transaction"))
        #expect(payload["purchaseDate"] == .number("1697679936049.7297"))
        let decoded = try IngestLine.withFields(payload) { try Self.decodeV2($0) }
        #expect(decoded == xcodeTransaction)
    }

    @Test("xcode-signed-transaction in a receipts line's signed_transactions keeps Xcode (not defaulted to Production)")
    func xcodeTransactionThroughReceipts() throws {
        let jws = try AppleFixtureFile.text("xcode-signed-transaction")
        let line = #"{"received_at":1697679940000,"user_id":"u_2","signed_transactions":[""# + jws + #""]}"#
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["shape"] == .text("signed_transactions"))
        #expect(rows[0].byColumn["transaction_id"] == .text("0"))
        #expect(rows[1].byColumn == IngestLine.appleTransactionRow([
            "origin": .integer(TransactionOrigin.serverAPI.code), "event_ms": .integer(1_697_679_940_000), "user_id": .text("u_2"),
            "transaction_id": .text("0"), "original_transaction_id": .text("0"), "product_id": .text("pass.premium"),
            "purchase_ms": .integer(1_697_679_936_049), "expires_ms": .integer(1_700_358_336_049),
            "storefront": .text("USA"), "environment": AppleEnvironment.codes.stored("Xcode"), "type": AppleProductType.codes.stored("Auto-Renewable Subscription"),
            "quantity_n": .integer(1), "ownership": AppleOwnership.codes.stored("PURCHASED"), "subscription_group": .text("6F3A93AB"),
            "offer": .text("intro_offer"),
        ]))
    }

    @Test("xcode-signed-transaction as data.signedTransactionInfo of a V2 notification")
    func xcodeTransactionThroughNotification() throws {
        let jws = try AppleFixtureFile.text("xcode-signed-transaction")
        let line = #"{"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"n-2","signedDate":1697679937000,"#
            + #""data":{"environment":"Xcode","signedTransactionInfo":""# + jws + #""}}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["transaction_id"] == .text("0"))
        #expect(rows[0].byColumn["subtype"] == .text("INITIAL_BUY"))
        #expect(rows[1].byColumn["purchase_ms"] == .integer(1_697_679_936_049))
        #expect(rows[1].byColumn["event_ms"] == .integer(1_697_679_937_000))
        #expect(rows[1].byColumn["origin"] == .integer(TransactionOrigin.notification.code))
    }

    @Test("transactionInfo is a real JWS whose payload has no transactionId: decoded, then rejected naming the field")
    func transactionInfoJWS() throws {
        let jws = try AppleFixtureFile.text("transactionInfo")
        let payload = try JWS.payload(jws)
        #expect(payload["environment"] == .string("Sandbox"))
        #expect(payload["bundleId"] == .string("com.example"))
        #expect(Timestamp.parse(try #require(payload["signedDate"])) == 1_672_956_154_000)
        #expect(throws: LineReject("missing required field 'transactionId'")) {
            try IngestLine.withFields(payload) { try Self.decodeV2($0) }
        }
        let line = #"{"received_at":"2023-01-05T22:00:00Z","user_id":"u_3","signed_transactions":[""# + jws + #""]}"#
        #expect(IngestLine.reason(line, .receipts) == "missing required field 'signed_transactions[0].transactionId'")
        let notification = #"{"notificationType":"DID_RENEW","data":{"signedTransactionInfo":""# + jws + #""}}"#
        #expect(IngestLine.reason(notification, .notifications) == "missing required field 'data.signedTransactionInfo.transactionId'")
    }

    @Test("an unknown product type, revocation reason or notification type is kept raw; an environment, ownership or refund type Apple does not send rejects the line")
    func unknownEnumsKeptRaw() throws {
        let text = #"""
            {"transactionId":"9","productId":"p","purchaseDate":1698148900000,"environment":"Sandbox",
             "type":"Brand-New Type","inAppOwnershipType":"FAMILY_SHARED","revocationType":"REFUND_PRORATED","revocationReason":7}
            """#
        let decoded = try IngestLine.withFields(try IngestLine.object(text)) { try Self.decodeV2($0) }
        #expect(decoded.type == "Brand-New Type")
        #expect(decoded.revocationReason == "7")
        #expect(decoded.environment == "Sandbox")
        #expect(decoded.ownership == "FAMILY_SHARED")
        #expect(decoded.revocationType == "REFUND_PRORATED")

        for (known, unknown, reason) in [
            ("Sandbox", "FutureEnv", "bad value in 'environment' (Production, Sandbox, Xcode or LocalTesting): \"FutureEnv\""),
            ("FAMILY_SHARED", "SOMETHING_NEW", "bad value in 'inAppOwnershipType' (PURCHASED or FAMILY_SHARED): \"SOMETHING_NEW\""),
            ("REFUND_PRORATED", "NEW_REVOCATION", "bad value in 'revocationType' (REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE): \"NEW_REVOCATION\""),
        ] {
            let changed = try IngestLine.object(text.replacingOccurrences(of: "\"\(known)\"", with: "\"\(unknown)\""))
            #expect(throws: LineReject(reason)) { try IngestLine.withFields(changed) { try Self.decodeV2($0) } }
        }

        let line = #"{"notificationType":"NEW_TYPE_2027","subtype":"NEW_SUBTYPE","notificationUUID":"n-3","data":{"transactionInfo":"#
            + #"{"transactionId":"9","productId":"p","purchaseDate":1698148900000,"environment":"Sandbox","type":"Brand-New Type","inAppOwnershipType":"PURCHASED"}}}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows[0].byColumn["notification_type"] == .text("NEW_TYPE_2027"))
        #expect(rows[0].byColumn["subtype"] == .text("NEW_SUBTYPE"))
        #expect(rows[1].byColumn["type"] == .text("Brand-New Type"))
        #expect(rows[1].byColumn["notification_type"] == .text("NEW_TYPE_2027"))
    }

    // MARK: - Notifications

    @Test("signedNotification.json: its signedTransactionInfo is a placeholder, so the line is rejected; the header still reads")
    func signedNotification() throws {
        let object = try fixtureObject("signedNotification.json")
        #expect(throws: LineReject("bad JWS in 'data.signedTransactionInfo': not three dot-separated parts")) {
            try IngestLine.withFields(object) { try NotificationParser.parse($0, rules: IngestLine.unsigned) }
        }
        let header = try IngestLine.withFields(object) { try NotificationParser.header($0) }
        #expect(header == NotificationParser.V2Header(
            type: "SUBSCRIBED", subtype: "INITIAL_BUY", uuid: "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
            signedMs: 1_698_148_900_000, environment: "LocalTesting"))
        // Through the line parser the reject keeps the line number and a redacted text.
        let parsed = IngestLine.parse(try AppleFixtureFile.text("signedNotification.json"), .notifications, number: 4)
        #expect(parsed.line == 4)
        #expect(parsed.outcome == .rejected("bad JWS in 'data.signedTransactionInfo': not three dot-separated parts"))
    }

    @Test("signedConsumptionRequestNotification.json carries the same placeholder JWS: rejected, header readable")
    func consumptionRequestNotification() throws {
        let object = try fixtureObject("signedConsumptionRequestNotification.json")
        #expect(throws: LineReject("bad JWS in 'data.signedTransactionInfo': not three dot-separated parts")) {
            try IngestLine.withFields(object) { try NotificationParser.parse($0, rules: IngestLine.unsigned) }
        }
        #expect(try IngestLine.withFields(object) { try NotificationParser.header($0) } == NotificationParser.V2Header(
            type: "CONSUMPTION_REQUEST", subtype: nil, uuid: "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
            signedMs: 1_698_148_900_000, environment: "LocalTesting"))
    }

    @Test("notifications without a transaction are accepted with one notification row and no transaction row", arguments: [
        ("signedSummaryNotification.json", "RENEWAL_EXTENSION", "SUMMARY", "LocalTesting"),
        ("signedExternalPurchaseTokenNotification.json", "EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", nil),
        ("signedRescindConsentNotification.json", "RESCIND_CONSENT", nil, "LocalTesting"),
    ] as [(String, String, String?, String?)])
    func notificationsWithoutTransaction(file: String, type: String, subtype: String?, environment: String?) throws {
        let rows = try #require(IngestLine.rows(try AppleFixtureFile.text(file), .notifications))
        #expect(rows.count == 1)
        #expect(rows[0].table == .notifications)
        #expect(rows[0].item == 0)
        #expect(rows[0].byColumn == [
            "notification_uuid": .text("002e14d5-51f5-4503-b5a8-c3a1af68eb20"), "notification_type": .text(type),
            "subtype": SQLValue(subtype), "signed_ms": .integer(1_698_148_900_000), "environment": SQLValue(environment),
            "version": .text("2"), "transaction_id": .null, "bundle_id": .text("com.example"),
        ])
    }

    @Test("testNotification as received ({\"signedPayload\": JWS}): TEST, its uuid, signedDate and Sandbox")
    func testNotification() throws {
        let jws = try AppleFixtureFile.text("testNotification")
        let line = #"{"signedPayload":""# + jws + #""}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 1)
        #expect(rows[0].byColumn == [
            "notification_uuid": .text("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"), "notification_type": .text("TEST"), "subtype": .null,
            "signed_ms": .integer(1_681_314_324_000), "environment": .text("Sandbox"), "version": .text("2"), "transaction_id": .null,
            "bundle_id": .text("com.example"),
        ])
        let header = try IngestLine.withFields(try JWS.payload(jws)) { try NotificationParser.header($0) }
        #expect(header == NotificationParser.V2Header(
            type: "TEST", subtype: nil, uuid: "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6", signedMs: 1_681_314_324_000, environment: "Sandbox"))
    }

    @Test("wrongBundleId and missingX5CHeaderClaim decode too without --bundle-id and signature checks, each keeping its app", arguments: [
        ("wrongBundleId", "com.example.wrong"), ("missingX5CHeaderClaim", "com.example"),
    ])
    func unverifiedNotifications(file: String, bundle: String) throws {
        let line = #"{"signedPayload":""# + (try AppleFixtureFile.text(file)) + #""}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 1)
        #expect(rows[0].byColumn == [
            "notification_uuid": .text("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"), "notification_type": .text("TEST"), "subtype": .null,
            "signed_ms": .null, "environment": .null, "version": .text("2"), "transaction_id": .null, "bundle_id": .text(bundle),
        ])
    }

    // MARK: - Renewal info (no renewal model: the JWS and JSON paths are proven on the payloads)

    @Test("signedRenewalInfo.json: the renewal fields read back exactly")
    func signedRenewalInfo() throws {
        try IngestLine.withFields(try fixtureObject("signedRenewalInfo.json")) { fields throws in
            #expect(try fields.requiredAppleString("originalTransactionId") == "12345")
            #expect(try fields.appleString("autoRenewProductId") == "com.example.product.2")
            #expect(try fields.appleString("productId") == "com.example.product")
            #expect(try fields.integer("autoRenewStatus") == 1)
            #expect(try fields.time("renewalDate") == 1_698_148_850_000)
            #expect(try fields.time("signedDate") == 1_698_148_800_000)
            #expect(try fields.integer("renewalPrice") == 9990)
            #expect(try fields.appleString("currency") == "USD")
            #expect(try fields.appleString("environment") == "LocalTesting")
            #expect(try fields.appleString("appAccountToken") == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
            #expect(try fields.value("isInBillingRetryPeriod") == .bool(true))
        }
    }

    @Test("renewalInfo is a JWS whose payload holds only environment and signedDate")
    func renewalInfoJWS() throws {
        let payload = try JWS.payload(try AppleFixtureFile.text("renewalInfo"))
        #expect(payload.members.map(\.key) == ["environment", "signedDate"])
        try IngestLine.withFields(payload) { fields throws in
            #expect(try fields.appleString("environment") == "Sandbox")
            #expect(try fields.time("signedDate") == 1_672_956_154_000)
            #expect(try fields.appleString("originalTransactionId") == nil)
        }
    }

    @Test("xcode-signed-renewal-info: fractional-millisecond renewal dates floor to whole milliseconds")
    func xcodeRenewalInfoJWS() throws {
        try IngestLine.withFields(try JWS.payload(try AppleFixtureFile.text("xcode-signed-renewal-info"))) { fields throws in
            #expect(try fields.requiredAppleString("originalTransactionId") == "0")
            #expect(try fields.appleString("autoRenewProductId") == "pass.premium")
            #expect(try fields.integer("autoRenewStatus") == 1)
            #expect(try fields.time("renewalDate") == 1_700_358_336_049)
            #expect(try fields.time("recentSubscriptionStartDate") == 1_697_679_936_049)
            #expect(try fields.time("signedDate") == 1_697_679_936_711)
            #expect(try fields.appleString("environment") == "Xcode")
        }
    }

    @Test("a V2 notification's data.signedRenewalInfo is read beside its transaction; alone, the line is rejected for the transaction Apple always sends with it")
    func renewalOnlyNotification() throws {
        let renewal = try AppleFixtureFile.text("xcode-signed-renewal-info")
        let transaction = try AppleFixtureFile.text("xcode-signed-transaction")
        let head = #"{"notificationType":"DID_CHANGE_RENEWAL_STATUS","notificationUUID":"n-4","signedDate":1697679937000,"#
        let both = head + #""data":{"environment":"Xcode","signedTransactionInfo":""# + transaction + #"","signedRenewalInfo":""# + renewal + #""}}"#
        let rows = try #require(IngestLine.rows(both, .notifications))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["environment"] == .text("Xcode"))
        #expect(rows[0].byColumn["transaction_id"] == .text("0"))
        let alone = head + #""data":{"environment":"Xcode","signedRenewalInfo":""# + renewal + #""}}"#
        #expect(IngestLine.reason(alone, .notifications)
                == "DID_CHANGE_RENEWAL_STATUS without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'")
    }

    // MARK: - Coverage

    /// Fixtures that are not transaction, renewal or notification payloads, and why.
    static let notPayloads: [String: String] = [
        "PROVENANCE.md": "documentation",
        "LICENSE.txt": "Apple's MIT licence for these files",
        "appTransaction.json": "app transaction (app purchase, not an in-app transaction)",
        "xcode-signed-app-transaction": "app transaction JWS (decoded in Base64JWSTests)",
        "getAllSubscriptionStatusesResponse.json": "API envelope of placeholder strings",
        "getNotificationHistoryResponse.json": "API envelope of placeholder strings",
        "getRefundHistoryResponse.json": "API envelope of placeholder strings",
        "transactionHistoryResponse.json": "API envelope of placeholder strings",
        "transactionInfoResponse.json": "API envelope of placeholder strings",
        "legacyTransaction": "iOS 6 receipt, base64 (decoded in Base64JWSTests)",
        "xcode-app-receipt-empty": "PKCS#7 app receipt, base64 (decoded in Base64JWSTests)",
        "xcode-app-receipt-with-transaction": "PKCS#7 app receipt, base64 (decoded in Base64JWSTests)",
    ]

    /// Payload fixtures and the tests above that decode them.
    static let payloads: Set<String> = [
        "signedTransaction.json", "signedTransactionWithRevocation.json", "transactionInfo", "xcode-signed-transaction",
        "signedRenewalInfo.json", "renewalInfo", "xcode-signed-renewal-info",
        "signedNotification.json", "signedConsumptionRequestNotification.json", "signedSummaryNotification.json",
        "signedExternalPurchaseTokenNotification.json", "signedRescindConsentNotification.json",
        "testNotification", "wrongBundleId", "missingX5CHeaderClaim",
    ]

    @Test("every file in the fixture folder is either decoded above or listed as not a payload")
    func everyFixtureClassified() throws {
        let names = Set(try AppleFixtureFile.names())
        #expect(names == Self.payloads.union(Self.notPayloads.keys))
        #expect(Self.payloads.isDisjoint(with: Self.notPayloads.keys))
    }
}
