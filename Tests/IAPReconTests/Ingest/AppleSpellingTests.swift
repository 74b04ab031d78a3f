import Foundation
import Testing
@testable import IAPRecon

/// Apple's enumerated values that change money or findings are read only as Apple spells them
/// (`AppleSpellings`); an order's price comes with its currency; a failed verification repeated is
/// one (CONTRACT.md §1, §1.1–§1.3, §2).
@Suite("Apple's spellings, price pairs, repeated failed verifications")
struct AppleSpellingTests {
    static let rules = ContractV2LineTests.rules

    /// A verified receipts line with one in-app purchase, `environment` as given (raw JSON) in the response.
    static func receipt(environment: String? = "\"Production\"", lineEnvironment: String? = nil, item extra: String = "") -> String {
        let answered = environment.map { ",\"environment\":\($0)" } ?? ""
        let called = lineEnvironment.map { ",\"environment\":\($0)" } ?? ""
        return #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001""# + called + #","response":{"status":0"# + answered
            + #","receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"1","product_id":"com.example.gems60","transaction_id":"2000000812345678","original_transaction_id":"2000000812345678","purchase_date_ms":"1795860905000""#
            + extra + "}]}}}"
    }

    static let environments = "(Production, Sandbox, Xcode or LocalTesting)"

    @Test("a spelling of an enumerated Apple value Apple does not send rejects its line, naming the field, the value and the accepted spellings", arguments: [
        // The reviewer's cases: each made a Production purchase a test one, or a family-shared one revenue.
        (receipt(environment: "\"production\""), .receipts, "bad value in 'response.environment' \(environments): \"production\""),
        (receipt(environment: "\"PRODUCTION\""), .receipts, "bad value in 'response.environment' \(environments): \"PRODUCTION\""),
        (receipt(environment: "\"Prod\""), .receipts, "bad value in 'response.environment' \(environments): \"Prod\""),
        (receipt(environment: "5"), .receipts, "bad value in 'response.environment' \(environments): 5"),
        (receipt(environment: nil, lineEnvironment: "\"production\""), .receipts, "bad value in 'environment' \(environments): \"production\""),
        (receipt(item: #","in_app_ownership_type":"Family_Shared""#), .receipts,
         "bad value in 'response.receipt.in_app[0].in_app_ownership_type' (PURCHASED or FAMILY_SHARED): \"Family_Shared\""),
        (receipt(item: #","is_trial_period":"TRUE""#), .receipts, "bad value in 'response.receipt.in_app[0].is_trial_period' (true or false): \"TRUE\""),
        (receipt(item: #","is_in_intro_offer_period":"1""#), .receipts, "bad value in 'response.receipt.in_app[0].is_in_intro_offer_period' (true or false): \"1\""),
        (Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: Line.v2("t1", "gems300", purchase: "2026-11-28T10:15:00Z", environment: "sandbox")),
         .receipts, "bad value in 'transactions[0].environment' \(environments): \"sandbox\""),
        (Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: Line.v2("t1", "gems300", purchase: "2026-11-28T10:15:00Z", ownership: "FAMILY")),
         .receipts, "bad value in 'transactions[0].inAppOwnershipType' (PURCHASED or FAMILY_SHARED): \"FAMILY\""),
        (Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: #"{"transactionId":"t1","productId":"p","purchaseDate":1795860905000,"offerType":1,"offerDiscountType":"free_trial"}"#),
         .receipts, "bad value in 'transactions[0].offerDiscountType' (FREE_TRIAL, PAY_AS_YOU_GO, PAY_UP_FRONT or ONE_TIME): \"free_trial\""),
        (Line.notification("REFUND", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-28T09:00:00Z", revocationType: "REFUND_PRORATE", percentage: 50000)),
         .notifications, "bad value in 'data.transactionInfo.revocationType' (REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE): \"REFUND_PRORATE\""),
        (Line.notification("REFUND", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-28T09:00:00Z", revocationType: "refund_prorated", percentage: 50000)),
         .notifications, "bad value in 'data.transactionInfo.revocationType' (REFUND_FULL, REFUND_PRORATED or FAMILY_REVOKE): \"refund_prorated\""),
        (Line.notification("DID_RENEW", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:00Z"))
            .replacingOccurrences(of: #""data":{"environment":"Production""#, with: #""data":{"environment":"PROD""#),
         .notifications, "bad value in 'data.environment' \(environments): \"PROD\""),
        (#"{"notification_type":"CANCEL","environment":"Prod","latest_receipt_info":{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}}"#,
         .notifications, "bad value in 'environment' (PROD, Sandbox or SANDBOX): \"Prod\""),
        (#"{"notification_type":"DID_RENEW","unified_receipt":{"environment":"PROD","latest_receipt_info":[{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}]}}"#,
         .notifications, "bad value in 'unified_receipt.environment' \(environments): \"PROD\""),
    ] as [(String, SourceKind, String)])
    func unknownSpellingRejected(line: String, kind: SourceKind, reason: String) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
    }

    @Test("near misses: every spelling Apple documents is read, an empty or absent value is none, and fields that change no money keep any value", arguments: [
        receipt(environment: "\"Production\""), receipt(environment: "\"Sandbox\""), receipt(environment: "\"Xcode\""),
        receipt(environment: "\"LocalTesting\""), receipt(environment: "\"\""), receipt(environment: nil),
        receipt(environment: nil, lineEnvironment: "\"Sandbox\""),
        receipt(item: #","in_app_ownership_type":"PURCHASED","is_trial_period":"false","is_in_intro_offer_period":"true""#),
        receipt(item: #","in_app_ownership_type":"FAMILY_SHARED","is_trial_period":"true","is_upgraded":"false","cancellation_reason":"7""#),
        Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: #"{"transactionId":"t1","productId":"p","purchaseDate":1795860905000,"type":"Brand-New Type","offerType":1,"offerDiscountType":"ONE_TIME","revocationReason":9}"#),
        Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: #"{"transactionId":"t1","productId":"p","purchaseDate":1795860905000,"offerType":1,"offerDiscountType":"PAY_UP_FRONT","inAppOwnershipType":""}"#),
        Line.notification("REFUND", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-28T09:00:00Z", revocationType: "REFUND_PRORATED", percentage: 50000)),
        Line.notification("REVOKE", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", ownership: "FAMILY_SHARED", revocation: "2026-11-28T09:00:00Z", revocationType: "FAMILY_REVOKE")),
        Line.notification("REFUND", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", environment: "Sandbox", revocation: "2026-11-28T09:00:00Z", revocationType: "REFUND_FULL")),
        // A type Apple does not document yet is kept (and named by ingest's warning), its subtype too.
        Line.notification("NEW_TYPE_2027", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:00Z"),
                          subtype: "NEW_SUBTYPE"),
        #"{"notification_type":"CANCEL","environment":"PROD","cancellation_date_ms":"1795860995000","latest_receipt_info":{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}}"#,
        #"{"notification_type":"RENEWAL","environment":"Sandbox","latest_receipt_info":{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}}"#,
        #"{"notification_type":"RENEWAL","environment":"SANDBOX","latest_receipt_info":{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}}"#,
        #"{"notification_type":"DID_RENEW","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t1","product_id":"p","purchase_date_ms":"1795860905000"}]}}"#,
    ])
    func documentedSpellingsRead(line: String) {
        let kind: SourceKind = line.contains("received_at") ? .receipts : .notifications
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == nil)
    }

    @Test("the spelling read is stored as sent: Apple's environments, ownerships and refund types keep their meaning")
    func documentedSpellingsStored() throws {
        for environment in ["Production", "Sandbox", "Xcode", "LocalTesting"] {
            let transactions = ContractV2LineTests.transactions(IngestLine.rows(Self.receipt(environment: "\"\(environment)\""), .receipts, rules: Self.rules))
            #expect(transactions.map { $0["environment"] } == [AppleEnvironment.codes.stored(environment)])
        }
        let shared = ContractV2LineTests.transactions(IngestLine.rows(Self.receipt(item: #","in_app_ownership_type":"FAMILY_SHARED""#), .receipts, rules: Self.rules))
        #expect(shared.map { $0["ownership"] } == [AppleOwnership.codes.stored("FAMILY_SHARED")])
        let prorated = Line.notification("REFUND", uuid: "n1", signed: "2026-11-28T10:00:00Z", transaction: Line.v2(
            "t1", "gems300", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-28T09:00:00Z", revocationType: "REFUND_PRORATED", percentage: 50000))
        let refund = ContractV2LineTests.transactions(IngestLine.rows(prorated, .notifications, rules: Self.rules))
        #expect(refund.map { $0["revocation_type"] } == [.text("REFUND_PRORATED")])
    }

    @Test("a run names the file, line and reason of a misspelled environment, and keeps the rest of the file: a lost delivery stays one")
    func misspellingInARun() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let purchase = Line.v2("t_lost", "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990)
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-20T08:00:00Z", "u1", transaction: purchase),
            Line.v2Receipt("2026-11-20T08:00:01Z", "u1", transaction: purchase.replacingOccurrences(of: #""environment":"Production""#, with: #""environment":"production""#)),
        ])
        let result = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(result.ingest.files.filter { $0.kind == .receipts }.map(\.counts) == [LineCounts(read: 2, accepted: 1, rejected: 1)])
        let rejects = try scenario.output("rejects.csv").split(separator: "\r\n").dropFirst()
        #expect(rejects.count == 1)
        #expect(rejects.first?.hasPrefix(
            #"receipts/r.jsonl,2,"bad value in 'transactions[0].environment' (Production, Sandbox, Xcode or LocalTesting): ""production""","#) == true)
        let lost = try Scenario.findings(try scenario.open()).filter { $0.kind == .lostDelivery }.compactMap(\.transactionID)
        #expect(lost == ["t_lost"])
    }

    // MARK: - Price and currency

    static func order(_ pair: String) -> String {
        #"{"ts":"2026-11-27T10:00:03Z","event":"order_created","order_id":"OrderID_1","user_id":"u_1","product_id":"com.example.gems300""# + pair + "}"
    }

    @Test("an order's price without its currency, or its currency without a price, rejects the line: the catalog's price would stand in, maybe in another currency", arguments: [
        (order(#","price":"7500""#), "price without a currency: 'price' is 7500"),
        (order(#","price":"7500","currency":"""#), "price without a currency: 'price' is 7500"),
        (order(#","price":"7500","currency":null"#), "price without a currency: 'price' is 7500"),
        (order(#","currency":"KRW""#), "currency without a price: 'currency' is KRW"),
        (order(#","price":"","currency":"KRW""#), "bad amount in 'price': \"\""),
        (Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: #"{"transactionId":"t1","productId":"p","purchaseDate":1795860905000,"price":990}"#),
         "price without a currency: 'transactions[0].price' is 990"),
    ])
    func priceWithoutCurrency(line: String, reason: String) {
        let kind: SourceKind = line.contains("received_at") ? .receipts : .server
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
    }

    @Test("near misses: an order with both, or with neither (the catalog's price then), and a V2 transaction with both, or with a currency alone, are read")
    func pricePairsRead() throws {
        let both = try #require(IngestLine.rows(Self.order(#","price":"7500","currency":"KRW""#), .server, rules: Self.rules))
        #expect(both[0].byColumn["price"] == .text("7500"))
        #expect(both[0].byColumn["currency"] == .text("KRW"))
        #expect(IngestLine.reason(Self.order(""), .server, rules: Self.rules) == nil)
        #expect(IngestLine.reason(Self.order(#","price":null,"currency":"""#), .server, rules: Self.rules) == nil)
        #expect(IngestLine.reason(Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: Line.v2("t1", "p", purchase: "2026-11-28T10:00:00Z")),
                                  .receipts, rules: Self.rules) == nil)
        let currencyAlone = #"{"transactionId":"t1","productId":"p","purchaseDate":1795860905000,"currency":"USD"}"#
        #expect(IngestLine.reason(Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: currencyAlone), .receipts, rules: Self.rules) == nil)
    }

    // MARK: - Failed verifications

    @Test("a failed verification repeated, in its file or in a copy under another name, counts once; two different ones count twice")
    func repeatedFailedVerification() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let failed = #"{"received_at":"2026-11-20T08:00:00Z","user_id":"u1","order_id":"o1","response":{"status":21003}}"#
        let another = #"{"received_at":"2026-11-20T08:00:05Z","user_id":"u1","order_id":"o1","response":{"status":21003}}"#
        let verified = Line.v2Receipt("2026-11-20T08:00:00Z", "u1", transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T07:59:00Z"))
        try scenario.write("receipts/r.jsonl", [failed, verified, failed, another, verified])
        try scenario.write("receipts/r-copy.jsonl", [failed])
        _ = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let transactions = try #require(summary["transactions"] as? [String: Any])
        #expect(transactions["failed_verifications"] as? Int == 2)
    }
}
