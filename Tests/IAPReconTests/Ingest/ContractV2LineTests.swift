import Foundation
import Testing
@testable import IAPRecon

/// The line rules contract version 2 added (CONTRACT.md §1, §1.2, §1.3): old Apple shapes read,
/// impossible lines rejected with their reason, and the near misses that must still be accepted.
@Suite("Contract v2 line rules")
struct ContractV2LineTests {
    /// The run's clock of these tests: 2026-11-29T00:00:00Z.
    static let rules = LineRules(nowMs: 1_795_910_400_000)

    static func transactions(_ rows: [RawRow]?) -> [[String: SQLValue]] {
        (rows ?? []).filter { $0.table == .appleTransactions }.map(\.byColumn)
    }

    // MARK: - iOS 6 receipts

    /// An iOS 6 auto-renewable receipt as verifyReceipt answered it: the receipt is the transaction,
    /// its bundle is `bid`, `expires_date` holds milliseconds, and there is no `environment`.
    static let iOS6Receipt = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1050","response":{"status":0,"receipt":{"original_purchase_date_pst":"2026-11-28 02:15:05 America/Los_Angeles","purchase_date_ms":"1795860905000","original_transaction_id":"1000000177412525","bvrs":"1.0","transaction_id":"1000000177412525","quantity":"1","item_id":"1053829581","product_id":"com.example.vip.monthly","purchase_date":"2026-11-28 10:15:05 Etc/GMT","original_purchase_date":"2026-11-28 10:15:05 Etc/GMT","bid":"com.example.game","original_purchase_date_ms":"1795860905000","expires_date":"1798452905000","web_order_line_item_id":"1000000030274361"},"latest_receipt":"MIIT..."}}"#

    @Test("an iOS 6 receipt is its own transaction, with its expiry in milliseconds, verified in Production")
    func iOS6ReceiptIsATransaction() throws {
        let rows = try #require(IngestLine.rows(Self.iOS6Receipt, .receipts, rules: Self.rules))
        let transactions = Self.transactions(rows)
        try #require(transactions.count == 1)
        #expect(transactions[0]["transaction_id"] == .text("1000000177412525"))
        #expect(transactions[0]["product_id"] == .text("com.example.vip.monthly"))
        #expect(transactions[0]["purchase_ms"] == .integer(1_795_860_905_000))
        #expect(transactions[0]["expires_ms"] == .integer(1_798_452_905_000))
        #expect(transactions[0]["environment"] == AppleEnvironment.codes.stored("Production"))
        #expect(rows[0].byColumn["bundle_id"] == .text("com.example.game"))
    }

    @Test("a response without environment takes the line's own environment key")
    func lineEnvironmentKey() throws {
        let line = Self.iOS6Receipt.replacingOccurrences(of: #""user_id":"u_1050","#, with: #""user_id":"u_1050","environment":"Sandbox","#)
        let transactions = Self.transactions(IngestLine.rows(line, .receipts, rules: Self.rules))
        #expect(transactions.map { $0["environment"] } == [AppleEnvironment.codes.stored("Sandbox")])
    }

    @Test("status 21006 verifies, and latest_expired_receipt_info may be one object")
    func status21006Verifies() throws {
        let line = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1050","response":{"status":21006,"receipt":{"bid":"com.example.game","transaction_id":"1000000177412525","product_id":"com.example.vip.monthly","purchase_date_ms":"1795860905000","expires_date":"1798452905000","quantity":"1"},"latest_expired_receipt_info":{"transaction_id":"1000000181112233","original_transaction_id":"1000000177412525","product_id":"com.example.vip.monthly","purchase_date_ms":"1798452905000","expires_date":"1801044905000","quantity":"1"}}}"#
        let rows = try #require(IngestLine.rows(line, .receipts, rules: Self.rules))
        #expect(Self.transactions(rows).map { $0["transaction_id"] } == [.text("1000000177412525"), .text("1000000181112233")])
        #expect(Self.transactions(rows).map { $0["expires_ms"] } == [.integer(1_798_452_905_000), .integer(1_801_044_905_000)])
    }

    @Test("status 0 with no transaction anywhere is rejected, a failed status without one is not")
    func emptyVerifiedResponse() {
        let empty = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[]}}}"#
        #expect(IngestLine.reason(empty, .receipts, rules: Self.rules) == "no transaction in response")
        let sandboxAnswer = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","response":{"status":21007}}"#
        let rows = IngestLine.rows(sandboxAnswer, .receipts, rules: Self.rules)
        #expect(rows?.count == 1)
        #expect(rows?.first?.byColumn["status_n"] == .integer(21007))
    }

    @Test("a V2 REFUND or REVOKE whose transaction has no revocationDate is rejected: its refund has no time and would vanish")
    func refundWithoutRevocationDate() {
        let bare = Line.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)
        for type in ["REFUND", "REVOKE"] {
            let line = Line.notification(type, uuid: "n-\(type)", signed: "2026-11-12T10:00:00Z", transaction: bare)
            #expect(IngestLine.reason(line, .notifications, rules: Self.rules) == "\(type) without revocationDate in its transaction", "\(type)")
        }
        // Near misses: the same with its revocation date, and a type that carries no refund.
        let refunded = Line.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, revocation: "2026-11-11T10:00:00Z")
        #expect(IngestLine.rows(Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:00Z", transaction: refunded), .notifications, rules: Self.rules)?.count == 2)
        #expect(IngestLine.rows(Line.notification("REFUND_DECLINED", uuid: "n2", signed: "2026-11-12T10:00:00Z", transaction: bare), .notifications, rules: Self.rules)?.count == 2)
    }

    @Test("a V2 REFUND_REVERSED without signedDate is rejected: it is placed at its signing time, and would undo no refund; near miss: one with its signedDate is kept")
    func reversalWithoutSignedDate() {
        let purchase = Line.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990)
        let signed = Line.notification("REFUND_REVERSED", uuid: "n1", signed: "2026-11-12T10:00:00Z", transaction: purchase)
        let unsigned = signed.replacingOccurrences(of: #""signedDate":\#(Line.ms("2026-11-12T10:00:00Z")),"#, with: "")
        #expect(unsigned != signed)
        #expect(IngestLine.reason(unsigned, .notifications, rules: Self.rules) == "REFUND_REVERSED without signedDate")
        #expect(IngestLine.rows(signed, .notifications, rules: Self.rules)?.count == 2)
    }

    @Test("a V2 REFUND, REVOKE or REFUND_REVERSED that carries no transaction is rejected: its refund, or its reversal, would change nothing, unseen")
    func refundWithoutTransaction() {
        let refunded = Line.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, revocation: "2026-11-11T10:00:00Z")
        for type in ["REFUND", "REVOKE", "REFUND_REVERSED"] {
            let line = Line.notification(type, uuid: "n-\(type)", signed: "2026-11-12T10:00:00Z", transaction: refunded)
            // The transaction under a name Apple does not send, and no `data` at all.
            let misnamed = line.replacingOccurrences(of: #""transactionInfo":"#, with: #""transactionlnfo":"#)
            let bare = #"{"notificationType":"\#(type)","notificationUUID":"n-\#(type)","signedDate":1795000000000,"summary":{"environment":"Production"}}"#
            for text in [misnamed, bare] {
                #expect(IngestLine.reason(text, .notifications, rules: Self.rules)
                        == "\(type) without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'", "\(type)")
            }
        }
        let signedPayload = #"{"notificationType":"REFUND","notificationUUID":"n1","signedDate":1795000000000,"data":{"environment":"Production"}}"#
        let envelope = #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.\#(Base64URL.encode(Array(signedPayload.utf8))).c2ln"}"#
        #expect(IngestLine.reason(envelope, .notifications)
                == "REFUND without a transaction: no 'signedPayload.data.signedTransactionInfo' or 'signedPayload.data.transactionInfo'")
        // Near misses: a refund with its transaction, and a TEST, which carries none.
        #expect(IngestLine.rows(Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:00Z", transaction: refunded), .notifications, rules: Self.rules)?.count == 2)
        let test = #"{"notificationType":"TEST","notificationUUID":"n-TEST","signedDate":1795000000000,"data":{"environment":"Production","bundleId":"com.example.game"}}"#
        #expect(IngestLine.rows(test, .notifications, rules: Self.rules)?.count == 1)
    }

    @Test("a V2 notification of any type Apple sends with a transaction is rejected without one, as a refund is: a renewal or a purchase with its key misspelled would change no money, unseen", arguments: [
        ("DID_RENEW", nil), ("ONE_TIME_CHARGE", nil), ("SUBSCRIBED", "INITIAL_BUY"), ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"),
        ("EXPIRED", "VOLUNTARY"), ("CONSUMPTION_REQUEST", nil), ("REFUND_DECLINED", nil), ("RENEWAL_EXTENSION", "FAILURE"),
    ] as [(String, String?)])
    func typeWithoutTransaction(type: String, subtype: String?) {
        let sub = subtype.map { #","subtype":"\#($0)""# } ?? ""
        let renewed = Line.v2("t1", "vip.monthly", purchase: "2026-11-10T10:00:00Z", expires: "2026-12-10T10:00:00Z", price: 4990)
        let line = Line.notification(type, uuid: "n-\(type)", signed: "2026-11-12T10:00:00Z", transaction: renewed, subtype: subtype)
        // The transaction under a name Apple does not send, `data` without it, and no `data` at all.
        let misnamed = line.replacingOccurrences(of: #""transactionInfo":"#, with: #""transactionlnfo":"#)
        let dataAlone = #"{"notificationType":"\#(type)"\#(sub),"notificationUUID":"n-\#(type)","signedDate":1795000000000,"data":{"environment":"Production","bundleId":"com.example.game"}}"#
        let noData = #"{"notificationType":"\#(type)"\#(sub),"notificationUUID":"n-\#(type)","signedDate":1795000000000}"#
        for text in [misnamed, dataAlone, noData] {
            #expect(IngestLine.reason(text, .notifications, rules: Self.rules)
                    == "\(type) without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'", "\(type): \(text)")
        }
        let envelope = #"{"signedPayload":"\#(Self.unsignedJWS(dataAlone))"}"#
        #expect(IngestLine.reason(envelope, .notifications)
                == "\(type) without a transaction: no 'signedPayload.data.signedTransactionInfo' or 'signedPayload.data.transactionInfo'", "\(type)")
        // Near miss: the same notification with its transaction, whose row is the transaction as it came.
        let rows = IngestLine.rows(line, .notifications, rules: Self.rules)
        #expect(rows?.count == 2, "\(type)")
        let transactions = Self.transactions(rows)
        #expect(transactions.map { $0["transaction_id"] } == [.text("t1")], "\(type)")
        #expect(transactions.map { $0["expires_ms"] } == [.integer(Line.ms("2026-12-10T10:00:00Z"))], "\(type)")
        #expect(rows?.first?.byColumn["transaction_id"] == .text("t1"), "\(type)")
    }

    @Test("a V2 notification Apple sends without a transaction is kept without one: a TEST, a RENEWAL_EXTENSION SUMMARY, an EXTERNAL_PURCHASE_TOKEN, a RESCIND_CONSENT, and a type Apple does not document")
    func typesWithoutTransaction() {
        let lines = [
            #"{"notificationType":"TEST","notificationUUID":"n-1","version":"2.0","signedDate":1795000000000,"data":{"appAppleId":1460000000,"bundleId":"com.example.game","bundleVersion":"412","environment":"Production"}}"#,
            #"{"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"n-2","version":"2.0","signedDate":1795000000000,"summary":{"requestIdentifier":"3db5c98d-8acf-4e29-831e-8e1f82f9f6e9","environment":"Production","appAppleId":1460000000,"bundleId":"com.example.game","productId":"com.example.vip.monthly","storefrontCountryCodes":["USA"],"succeededCount":5,"failedCount":2}}"#,
            #"{"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED","notificationUUID":"n-3","version":"2.0","signedDate":1795000000000,"externalPurchaseToken":{"externalPurchaseId":"b2158121-7af9-49d4-9561-1f588205523e","tokenCreationDate":1795000000000,"appAppleId":1460000000,"bundleId":"com.example.game"}}"#,
            #"{"notificationType":"RESCIND_CONSENT","notificationUUID":"n-4","version":"2.0","signedDate":1795000000000,"appData":{"appAppleId":1460000000,"bundleId":"com.example.game","environment":"Production"}}"#,
            #"{"notificationType":"NEW_THING","notificationUUID":"n-5","version":"2.0","signedDate":1795000000000,"data":{"bundleId":"com.example.game","environment":"Production"}}"#,
        ]
        for line in lines {
            let rows = IngestLine.rows(line, .notifications, rules: Self.rules)
            #expect(rows?.count == 1, "\(line)")
            #expect(rows?.first?.byColumn["bundle_id"] == .text("com.example.game"), "\(line)")
            #expect(rows?.first?.byColumn["transaction_id"] == .null, "\(line)")
        }
    }

    @Test("a run names the file and line of a notification that lacks the transaction its type always has, and keeps the rest of the file: the renewal beside it, a TEST, a type Apple does not document")
    func typeWithoutTransactionInARun() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let renewal = Line.purchaseNotification("DID_RENEW", "t_renewed", number: 1)
        let misspelled = Line.purchaseNotification("DID_RENEW", "t_misspelled", number: 2)
            .replacingOccurrences(of: #""transactionInfo":"#, with: #""transaction_info":"#)
        let charge = #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"1b2c3d4e-0000-4000-8000-000000000003","signedDate":\#(Line.ms("2026-11-20T08:00:00Z")),"data":{"environment":"Production","bundleId":"com.example.game"}}"#
        let test = charge.replacingOccurrences(of: "ONE_TIME_CHARGE", with: "TEST").replacingOccurrences(of: "0003", with: "0004")
        let unknown = charge.replacingOccurrences(of: "ONE_TIME_CHARGE", with: "NEW_THING").replacingOccurrences(of: "0003", with: "0005")
        try scenario.write("notifications/n.jsonl", [renewal, misspelled, charge, test, unknown])
        let result = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(result.ingest.files.filter { $0.kind == .notifications }.map(\.counts) == [LineCounts(read: 5, accepted: 3, rejected: 2)])
        let rejects = try scenario.output("rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == [
            "notifications/n.jsonl,2,DID_RENEW without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'",
            "notifications/n.jsonl,3,ONE_TIME_CHARGE without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'",
        ])
        // The unknown type is named as before, and the renewal's transaction counts: never delivered, it is lost.
        #expect(result.ingest.warnings == [
            "1 notification has a type iaprecon does not know (NEW_THING 1); it is treated as any other notification: "
                + "a transaction it carries counts as a purchase Apple confirmed, and as refunded only if it gives a refund date; "
                + "check Apple's notes for what it means: notifications/n.jsonl:5",
        ])
        let lost = try Scenario.findings(try scenario.open()).filter { $0.kind == .lostDelivery }.compactMap(\.transactionID)
        #expect(lost == ["t_renewed"])
    }

    @Test("a V1 REFUND or REVOKE none of whose transactions has a cancellation date is rejected; one that has it is a refund")
    func v1RefundWithoutCancellationDate() {
        func body(_ type: String, cancelled: Bool) -> String {
            let date = cancelled ? #","cancellation_date_ms":"1795950000000""# : ""
            return #"{"notification_type":"\#(type)","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t_v1","product_id":"gems300","purchase_date_ms":"1795860900000","quantity":"1"\#(date)}]}}"#
        }
        for type in ["REFUND", "REVOKE"] {
            #expect(IngestLine.reason(body(type, cancelled: false), .notifications, rules: Self.rules)
                    == "\(type) without cancellation_date_ms in its transactions", "\(type)")
            let rows = IngestLine.rows(body(type, cancelled: true), .notifications, rules: Self.rules)
            #expect(Self.transactions(rows).map { $0["revocation_ms"] } == [.integer(1_795_950_000_000)], "\(type)")
        }
        // Near miss: a renewal without one is no refund, and fine.
        #expect(Self.transactions(IngestLine.rows(body("DID_RENEW", cancelled: false), .notifications, rules: Self.rules)).count == 1)
    }

    // MARK: - V1 notifications before 2021

    /// A 2019 `CANCEL`: no `unified_receipt`, the transaction a root object, `PROD`, and the refund
    /// time only at the root.
    static let preUnifiedCancel = #"{"notification_type":"CANCEL","environment":"PROD","password":"x","auto_renew_status":"false","auto_renew_product_id":"com.example.vip.monthly","cancellation_date_ms":"1551441600000","cancellation_date":"2019-03-01 12:00:00 Etc/GMT","web_order_line_item_id":"1000000043066111","latest_receipt_info":{"original_purchase_date_pst":"2019-02-20 01:00:00 America/Los_Angeles","quantity":"1","unique_vendor_identifier":"F1F5E1B0","original_purchase_date_ms":"1550653200000","expires_date":"1553072400000","is_in_intro_offer_period":"false","purchase_date_ms":"1550653200000","is_trial_period":"false","item_id":"1451234567","bid":"com.example.game","product_id":"com.example.vip.monthly","transaction_id":"310000501234567","original_transaction_id":"310000501234567","web_order_line_item_id":"1000000043066111"}}"#

    @Test("a pre-2021 V1 CANCEL carries its transaction, Production, and the root refund time")
    func preUnifiedV1Cancel() throws {
        let rows = try #require(IngestLine.rows(Self.preUnifiedCancel, .notifications, rules: Self.rules))
        let transactions = Self.transactions(rows)
        try #require(transactions.count == 1)
        #expect(transactions[0]["transaction_id"] == .text("310000501234567"))
        #expect(transactions[0]["expires_ms"] == .integer(1_553_072_400_000))
        #expect(transactions[0]["revocation_ms"] == .integer(1_551_441_600_000))
        #expect(transactions[0]["environment"] == AppleEnvironment.codes.stored("PROD"))
        #expect(rows[0].byColumn["transaction_id"] == .text("310000501234567"))
    }

    @Test("a V1 renewal's latest_expired_receipt_info array is read; a root refund time is only a CANCEL's")
    func preUnifiedV1ExpiredArray() throws {
        let line = #"{"notification_type":"DID_CHANGE_RENEWAL_STATUS","environment":"PROD","cancellation_date_ms":"1551441600000","latest_expired_receipt_info":[{"transaction_id":"310000501234567","product_id":"com.example.vip.monthly","purchase_date_ms":"1550653200000","expires_date":"1553072400000","quantity":"1"}]}"#
        let transactions = Self.transactions(IngestLine.rows(line, .notifications, rules: Self.rules))
        #expect(transactions.map { $0["transaction_id"] } == [.text("310000501234567")])
        #expect(transactions.map { $0["revocation_ms"] } == [.null])
    }

    // MARK: - Upgrades

    /// u_1050's monthly plan, bought 2026-11-01T10:00Z, upgraded on 2026-11-11T10:00Z to the yearly
    /// plan of the same group: the monthly item carries the upgrade as a cancellation.
    static func upgradedReceipt(upgraded: Bool) -> String {
        let mark = upgraded ? #""is_upgraded":"true","# : ""
        return #"{"received_at":"2026-11-11T10:00:05Z","user_id":"u_1050","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[]},"latest_receipt_info":[{"quantity":"1","product_id":"com.example.vip.monthly","transaction_id":"2000000900000010","original_transaction_id":"2000000900000010","purchase_date_ms":"1793527200000","expires_date_ms":"1796119200000",\#(mark)"cancellation_date_ms":"1794391200000","in_app_ownership_type":"PURCHASED"},{"quantity":"1","product_id":"com.example.vip.yearly","transaction_id":"2000000900000011","original_transaction_id":"2000000900000010","purchase_date_ms":"1794391200000","expires_date_ms":"1825927200000","in_app_ownership_type":"PURCHASED"}]}}"#
    }

    @Test("an item cancelled by an upgrade (is_upgraded) is no refund: its period ends at the upgrade; a cancellation without the mark is one")
    func upgradeIsNoRefund() throws {
        let upgraded = Self.transactions(IngestLine.rows(Self.upgradedReceipt(upgraded: true), .receipts, rules: Self.rules))
        try #require(upgraded.count == 2)
        #expect(upgraded[0]["revocation_ms"] == .null)
        #expect(upgraded[0]["expires_ms"] == .integer(1_794_391_200_000))
        #expect(upgraded[1]["expires_ms"] == .integer(1_825_927_200_000))
        // Near miss: the same item without the mark was refunded by Apple's support.
        let refunded = Self.transactions(IngestLine.rows(Self.upgradedReceipt(upgraded: false), .receipts, rules: Self.rules))
        #expect(refunded.first?["revocation_ms"] == .integer(1_794_391_200_000))
        #expect(refunded.first?["expires_ms"] == .integer(1_796_119_200_000))
    }

    @Test("a pre-2021 V1 CANCEL sent for an upgrade refunds nothing, its root time included")
    func preUnifiedV1CancelForAnUpgrade() throws {
        let line = Self.preUnifiedCancel.replacingOccurrences(of: #""is_trial_period":"false","#, with: #""is_trial_period":"false","is_upgraded":"true","#)
        let transactions = Self.transactions(IngestLine.rows(line, .notifications, rules: Self.rules))
        try #require(transactions.count == 1)
        #expect(transactions[0]["revocation_ms"] == .null)
        #expect(transactions[0]["expires_ms"] == .integer(1_551_441_600_000))
    }

    @Test("a V1 body with no transaction anywhere is rejected")
    func emptyV1() {
        let line = #"{"notification_type":"CANCEL","environment":"PROD","cancellation_date_ms":"1551441600000"}"#
        #expect(IngestLine.reason(line, .notifications, rules: Self.rules) == "no transaction in notification")
    }

    // MARK: - Times in the future

    @Test("an event time more than a day after the run's clock is rejected, in every source", arguments: [
        (#"{"ts":"2099-01-01T00:00:00Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60"}"#, SourceKind.server, "ts"),
        (#"{"ts":"2099-01-01T00:00:00Z","user_id":"u_1099","method":"apple"}"#, .registrations, "ts"),
        (#"{"received_at":"2026-11-30T00:00:01Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000}]}"#, .receipts, "received_at"),
        (#"{"notificationType":"TEST","notificationUUID":"8a1b","signedDate":4070908800000,"data":{"environment":"Production"}}"#, .notifications, "signedDate"),
    ])
    func futureEventTime(line: String, kind: SourceKind, field: String) throws {
        let reason = try #require(IngestLine.reason(line, kind, rules: Self.rules))
        #expect(reason.hasPrefix("time in the future: '\(field)'"))
    }

    @Test("a spend day that starts more than a day after the run's clock in every zone is rejected, naming it and its earliest start; today's and tomorrow's are read")
    func futureSpendDay() {
        // The clock is 2026-11-29T00:00Z; 2026-12-01 starts first at UTC+14, 2026-11-30T10:00Z, 34 hours after it.
        let parsed = IngestLine.csv(.spend, [
            "date,media_source,campaign,spend,currency", "2026-11-29,Facebook Ads,c,1,USD", "2026-11-30,Facebook Ads,c,1,USD",
            "2026-12-01,Facebook Ads,c,1,USD", "2062-11-29,Facebook Ads,c,1,USD",
        ], rules: Self.rules)
        #expect(IngestLine.outcomes(parsed) == [
            "2 accepted", "3 accepted",
            "4 rejected: time in the future: 'date' is 2026-12-01, which starts in no zone before 2026-11-30T10:00:00.000Z",
            "5 rejected: time in the future: 'date' is 2062-11-29, which starts in no zone before 2062-11-28T10:00:00.000Z",
        ])
        // The clock's check is the last: a row with another defect is rejected for that one.
        #expect(IngestLine.outcomes(IngestLine.csv(.spend, ["date,media_source,campaign,spend,currency", "2062-11-29,Facebook Ads,c,-1,USD"], rules: Self.rules))
            == ["2 rejected: negative amount: 'spend' is -1"])
    }

    @Test("a Sales Report day that starts more than a day after the run's clock in Los Angeles is rejected, an app row's too; today's and tomorrow's are read")
    func futureSalesReportDay() {
        // The clock, 2026-11-29T00:00Z, is 16:00 on 2026-11-28 in Los Angeles; 2026-11-30 starts there 32 hours later.
        func row(_ date: String, productType: String = "IA1", units: String = "1") -> String {
            AppleSalesReportTests.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", productType, units, "0.69", date, date, "USD", "US",
                                           "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [
            AppleSalesReportTests.currentHeader, row("11/28/2026"), row("11/29/2026"), row("11/30/2026"), row("11/29/2062", productType: "1F"),
            row("11/29/2062", units: "1.5"),
        ], rules: Self.rules)
        #expect(IngestLine.outcomes(parsed) == [
            "2 accepted", "3 accepted",
            "4 rejected: time in the future: 'Begin Date' is 11/30/2026, which starts in Los Angeles at 2026-11-30T08:00:00.000Z",
            "5 rejected: time in the future: 'Begin Date' is 11/29/2062, which starts in Los Angeles at 2062-11-29T08:00:00.000Z",
            // The clock's check is the last: a row with another defect is rejected for that one.
            #"6 rejected: a fraction of a unit in 'Units': "1.5""#,
        ])
    }

    @Test("a spend or Sales Report day before the App Store opened (2008-07-10) is rejected whatever the clock, an app row's too; the day it opened is read")
    func daysBeforeTheAppStore() {
        let spend = IngestLine.csv(.spend, [
            "date,media_source,campaign,spend,currency", "2008-07-10,Facebook Ads,c,1,USD", "2008-07-09,Facebook Ads,c,1,USD",
            "1926-11-29,Facebook Ads,c,1,USD", "1926-11-29,Facebook Ads,c,-1,USD",
        ], rules: Self.rules)
        #expect(IngestLine.outcomes(spend) == [
            "2 accepted",
            "3 rejected: time before the App Store opened: 'date' is 2008-07-09",
            "4 rejected: time before the App Store opened: 'date' is 1926-11-29",
            // Judged with the clock's check, last: a row with another defect is rejected for that one.
            "5 rejected: negative amount: 'spend' is -1",
        ])
        func row(_ date: String, productType: String = "IA1") -> String {
            AppleSalesReportTests.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", productType, "1", "0.69", date, date, "USD", "US",
                                           "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let report = IngestLine.csv(.apple, [
            AppleSalesReportTests.currentHeader, row("07/10/2008"), row("07/09/2008"), row("07/09/2008", productType: "1F"),
        ], rules: Self.rules)
        #expect(IngestLine.outcomes(report) == [
            "2 accepted",
            "3 rejected: time before the App Store opened: 'Begin Date' is 07/09/2008",
            "4 rejected: time before the App Store opened: 'Begin Date' is 07/09/2008",
        ])
    }

    @Test("near miss: a spend or Sales Report day that starts exactly a day after the run's clock is read; by a clock a millisecond earlier it is rejected")
    func dayStartingADayAfterTheClock() throws {
        // 2026-11-30 starts first at UTC+14, 2026-11-29T10:00Z, and in Los Angeles at 2026-11-30T08:00Z.
        let spend = ["date,media_source,campaign,spend,currency", "2026-11-30,Facebook Ads,c,1,USD"]
        let report = [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-30", "gems60", units: 1, country: "US")]
        for (kind, lines, startsAt, rejected) in [
            (SourceKind.spend, spend, "2026-11-29T10:00:00Z", "'date' is 2026-11-30, which starts in no zone before 2026-11-29T10:00:00.000Z"),
            (SourceKind.apple, report, "2026-11-30T08:00:00Z", "'Begin Date' is 11/30/2026, which starts in Los Angeles at 2026-11-30T08:00:00.000Z"),
        ] {
            let startMs = try #require(Timestamp.parse(startsAt))
            #expect(IngestLine.outcomes(IngestLine.csv(kind, lines, rules: LineRules(nowMs: startMs - 86_400_000))) == ["2 accepted"], "\(kind)")
            #expect(IngestLine.outcomes(IngestLine.csv(kind, lines, rules: LineRules(nowMs: startMs - 86_400_001)))
                == ["2 rejected: time in the future: " + rejected], "\(kind)")
        }
    }

    @Test("an event time before the App Store opened (2008-07-10) is rejected in every source, saying what it reads as in seconds when that is a time after it", arguments: [
        (#"{"ts":1764324902,"event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60"}"#, SourceKind.server,
         "time before the App Store opened: 'ts' is 1970-01-21T10:05:24.902Z (as seconds, 2025-11-28T10:15:02.000Z)"),
        (#"{"ts":"1999-12-31T23:59:59Z","user_id":"u_1099","method":"apple"}"#, .registrations,
         "time before the App Store opened: 'ts' is 1999-12-31T23:59:59.000Z"),
        (#"{"received_at":"0","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000}]}"#,
         .receipts, "time before the App Store opened: 'received_at' is 1970-01-01T00:00:00.000Z"),
        (#"{"notificationType":"REFUND","notificationUUID":"8a1b","signedDate":1795860905,"data":{"environment":"Production","transactionInfo":{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"revocationDate":1795860906000}}}"#,
         .notifications, "time before the App Store opened: 'signedDate' is 1970-01-21T18:51:00.905Z (as seconds, 2026-11-28T10:15:05.000Z)"),
        // Read as seconds it would lie past year 9999: no hint.
        (#"{"ts":1215647999999,"user_id":"u_1099","method":"apple"}"#, .registrations,
         "time before the App Store opened: 'ts' is 2008-07-09T23:59:59.999Z"),
    ])
    func eventTimeBeforeTheAppStore(line: String, kind: SourceKind, reason: String) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
        // The same by a clock the hint's time lies after: a stored reject keeps its words whatever the clock.
        #expect(IngestLine.reason(line, kind, rules: LineRules(nowMs: Line.ms("2010-01-01T00:00:00Z"))) == reason)
    }

    @Test("an MMP event time before the App Store opened is rejected; the App Store's first day, and a Sandbox purchase date of 1970 inside Apple's payload, are not event times and pass")
    func eventTimeBeforeTheAppStoreNearMisses() {
        let parsed = IngestLine.csv(.attribution, ["Event Time,Event Name,AppsFlyer ID", "2001-01-01 00:00:00,install,af1", "2008-07-10 00:00:00,install,af2"],
                                    rules: Self.rules)
        #expect(parsed.map(\.outcome) == [.rejected("time before the App Store opened: 'Event Time' is 2001-01-01T00:00:00.000Z"), parsed[1].outcome])
        if case .accepted = parsed[1].outcome {} else { Issue.record("the App Store's first day was rejected") }
        #expect(IngestLine.rows(#"{"ts":"2008-07-10T00:00:00Z","user_id":"u_1099","method":"apple"}"#, .registrations, rules: Self.rules) != nil)
        let receipt = #"{"received_at":"2026-11-28T10:00:00Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905,"environment":"Sandbox"}]}"#
        #expect(IngestLine.rows(receipt, .receipts, rules: Self.rules) != nil)
    }

    // MARK: - Dates inside Apple payloads

    /// A verifyReceipt answer of one `in_app` item with `item` inside its object, in `environment` (none: the key is left out).
    static func receiptWithItem(_ item: String, environment: String? = "Production") -> String {
        let answered = environment.map { #""environment":"\#($0)","# } ?? ""
        return #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","response":{"status":0,\#(answered)"receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"1","product_id":"com.example.gems60","transaction_id":"2000000812345678",\#(item)}]}}}"#
    }

    /// A decoded V2 notification of `type` whose transaction has `dates` (and `environment`, unless nil), in a `data` of `dataEnvironment`.
    static func notificationWithDates(_ type: String, _ dates: String, environment: String? = nil, dataEnvironment: String = "Production") -> String {
        let own = environment.map { #","environment":"\#($0)""# } ?? ""
        return #"{"notificationType":"\#(type)","notificationUUID":"8a1b","signedDate":1795860906000,"data":{"environment":"\#(dataEnvironment)","transactionInfo":{"transactionId":"2000000812345678","productId":"com.example.gems60",\#(dates)\#(own)}}}"#
    }

    @Test("a Production transaction's purchase or refund date before the App Store opened is rejected, naming the field, by every clock; no environment is Production", arguments: [
        (Self.receiptWithItem(#""purchase_date_ms":"0""#), SourceKind.receipts,
         "time before the App Store opened: 'response.receipt.in_app[0].purchase_date_ms' is 1970-01-01T00:00:00.000Z"),
        (Self.receiptWithItem(#""purchase_date_ms":"1795860905","original_purchase_date_ms":"1795860905000""#, environment: nil), .receipts,
         "time before the App Store opened: 'response.receipt.in_app[0].purchase_date_ms' is 1970-01-21T18:51:00.905Z (as seconds, 2026-11-28T10:15:05.000Z)"),
        (Self.receiptWithItem(#""purchase_date_ms":"1795860905000","cancellation_date_ms":"1795860906""#), .receipts,
         "time before the App Store opened: 'response.receipt.in_app[0].cancellation_date_ms' is 1970-01-21T18:51:00.906Z (as seconds, 2026-11-28T10:15:06.000Z)"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":-62167219200000}]}"#,
         .receipts, "time before the App Store opened: 'transactions[0].purchaseDate' is 0000-01-01T00:00:00.000Z"),
        (Self.notificationWithDates("REFUND", #""purchaseDate":1795860905000,"revocationDate":0"#), .notifications,
         "time before the App Store opened: 'data.transactionInfo.revocationDate' is 1970-01-01T00:00:00.000Z"),
        (Self.notificationWithDates("DID_RENEW", #""purchaseDate":-62167219200000"#, environment: "Production", dataEnvironment: "Sandbox"),
         .notifications, "time before the App Store opened: 'data.transactionInfo.purchaseDate' is 0000-01-01T00:00:00.000Z"),
        (Self.preUnifiedCancel.replacingOccurrences(of: #""cancellation_date_ms":"1551441600000""#, with: #""cancellation_date_ms":"1551441600""#), .notifications,
         "time before the App Store opened: 'cancellation_date_ms' is 1970-01-18T22:57:21.600Z (as seconds, 2019-03-01T12:00:00.000Z)"),
        (Self.preUnifiedCancel.replacingOccurrences(of: #""purchase_date_ms":"1550653200000""#, with: #""purchase_date_ms":"0""#), .notifications,
         "time before the App Store opened: 'latest_receipt_info.purchase_date_ms' is 1970-01-01T00:00:00.000Z"),
    ])
    func productionDateBeforeTheAppStore(line: String, kind: SourceKind, reason: String) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
        #expect(IngestLine.reason(line, kind, rules: LineRules(nowMs: Line.ms("2099-12-31T00:00:00Z"))) == reason)
    }

    @Test("near misses: Apple's test environments date payloads in year 0 and are accepted, as is a Production purchase on the day the App Store opened, and any original purchase date", arguments: [
        (Self.receiptWithItem(#""purchase_date_ms":"0","original_purchase_date_ms":"0""#, environment: "Sandbox"), SourceKind.receipts),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","environment":"Sandbox","response":{"status":0,"receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"1","product_id":"com.example.gems60","transaction_id":"2000000812345678","purchase_date_ms":"0"}]}}}"#, .receipts),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"0","productId":"com.example.gems60","purchaseDate":-62167219200000,"originalPurchaseDate":-62167219200000,"environment":"Xcode"}]}"#, .receipts),
        (Self.notificationWithDates("REFUND", #""purchaseDate":-62167219200000,"revocationDate":-62167219200000"#, dataEnvironment: "Xcode"), .notifications),
        (Self.notificationWithDates("REFUND", #""purchaseDate":-62167219200000,"revocationDate":-62167219200000"#, environment: "LocalTesting"), .notifications),
        (Self.receiptWithItem(#""purchase_date_ms":"1215648000000""#), .receipts),
        // An original purchase date is never used, so it costs no line, however it reads.
        (Self.receiptWithItem(#""purchase_date_ms":"1795860905000","original_purchase_date_ms":"0""#), .receipts),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"originalPurchaseDate":"soon"}]}"#, .receipts),
    ])
    func testEnvironmentDatesInYearZero(line: String, kind: SourceKind) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == nil)
        #expect(Self.transactions(IngestLine.rows(line, kind, rules: Self.rules)).count == 1)
    }

    @Test("a refund or cancellation time more than a day after the run's clock is rejected as in the future, naming the field, in any environment", arguments: [
        (Self.notificationWithDates("REFUND", #""purchaseDate":1795860905000,"revocationDate":4102444800000"#), SourceKind.notifications,
         "time in the future: 'data.transactionInfo.revocationDate' is 2100-01-01T00:00:00.000Z"),
        (Self.receiptWithItem(#""purchase_date_ms":"1795860905000","cancellation_date_ms":"4102444800000""#, environment: "Sandbox"), .receipts,
         "time in the future: 'response.receipt.in_app[0].cancellation_date_ms' is 2100-01-01T00:00:00.000Z"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"revocationDate":1796000000000}]}"#,
         .receipts, "time in the future: 'transactions[0].revocationDate' is 2026-11-30T00:53:20.000Z"),
        (Self.preUnifiedCancel.replacingOccurrences(of: #""cancellation_date_ms":"1551441600000""#, with: #""cancellation_date_ms":"4102444800000""#), .notifications,
         "time in the future: 'cancellation_date_ms' is 2100-01-01T00:00:00.000Z"),
    ])
    func futureRefundTime(line: String, kind: SourceKind, reason: String) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
    }

    @Test("near misses: an expiry in 2100 and a refund 23 hours after the run's clock are accepted")
    func refundNotFuture() {
        let expiry = Self.notificationWithDates("DID_RENEW", #""purchaseDate":1795860905000,"expiresDate":4102444800000"#)
        #expect(Self.transactions(IngestLine.rows(expiry, .notifications, rules: Self.rules)).map { $0["expires_ms"] } == [.integer(4_102_444_800_000)])
        let receiptExpiry = Self.receiptWithItem(#""purchase_date_ms":"1795860905000","expires_date_ms":"4102444800000""#)
        #expect(Self.transactions(IngestLine.rows(receiptExpiry, .receipts, rules: Self.rules)).map { $0["expires_ms"] } == [.integer(4_102_444_800_000)])
        // 2026-11-29T23:00:00Z, 23 hours after the clock.
        let soon = Self.notificationWithDates("REFUND", #""purchaseDate":1795860905000,"revocationDate":1795993200000"#)
        #expect(Self.transactions(IngestLine.rows(soon, .notifications, rules: Self.rules)).map { $0["revocation_ms"] } == [.integer(1_795_993_200_000)])
    }

    @Test("a line in the future with another defect is rejected for that one, whatever the clock, in every source", arguments: [
        (#"{"ts":"2099-01-01T00:00:00Z","event":"delivered","user_id":"u_1001","transaction_id":"2000000812345678","product_id":"com.example.gems60","quantity":0}"#,
         SourceKind.server, "quantity below 1: 'quantity' is 0"),
        (#"{"ts":"2099-01-01T00:00:00Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":"-0.99","currency":"USD"}"#,
         .server, "negative amount: 'price' is -0.99"),
        (#"{"ts":"2099-01-01T00:00:00Z","event":"delivery_revoked","transaction_id":"2000000812345678"}"#, .server, "missing required field 'user_id'"),
        (#"{"ts":"2099-01-01T00:00:00Z","method":"apple"}"#, .registrations, "missing required field 'user_id'"),
        (#"{"received_at":"2026-11-30T00:00:01Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"quantity":0}]}"#,
         .receipts, "quantity below 1: 'transactions[0].quantity' is 0"),
        (#"{"received_at":"2026-11-30T00:00:01Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":2000000000000000,"currency":"USD"}]}"#,
         .receipts, "amount out of range: 'transactions[0].price' is above 10^12"),
        (#"{"notificationType":"REFUND","notificationUUID":"8a1b","signedDate":4070908800000,"data":{"environment":"Production","transactionInfo":{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000}}}"#,
         .notifications, "REFUND without revocationDate in its transaction"),
        (#"{"notificationType":"REFUND","notificationUUID":"8a1b","signedDate":1795860905000,"data":{"environment":"Production","transactionInfo":{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"revocationDate":4102444800000,"quantity":0}}}"#,
         .notifications, "quantity below 1: 'data.transactionInfo.quantity' is 0"),
    ])
    func futureLineWithAnotherDefect(line: String, kind: SourceKind, reason: String) {
        #expect(IngestLine.reason(line, kind, rules: Self.rules) == reason)
        // The same by a clock that the line is not ahead of: its reason does not depend on the clock.
        #expect(IngestLine.reason(line, kind, rules: LineRules(nowMs: Line.ms("2099-12-31T00:00:00Z"))) == reason)
    }

    @Test("an MMP row in the future with no id is rejected for that, whatever the clock")
    func futureMMPRowWithAnotherDefect() {
        let lines = ["Event Time,Event Name,AppsFlyer ID", "2099-01-01 00:00:00,install,"]
        for rules in [Self.rules, LineRules(nowMs: Line.ms("2099-12-31T00:00:00Z"))] {
            #expect(IngestLine.csv(.attribution, lines, rules: rules).map(\.outcome)
                == [.rejected("none of 'Customer User ID', 'IDFV', 'IDFA', 'AppsFlyer ID' has a value")])
        }
    }

    @Test("near misses: 23 hours ahead, and an expiry date inside Apple's payload, are accepted")
    func notFuture() {
        let soon = #"{"ts":"2026-11-29T23:00:00Z","user_id":"u_1099","method":"apple"}"#
        #expect(IngestLine.rows(soon, .registrations, rules: Self.rules) != nil)
        // The iOS 6 receipt's expiry lies a month after the run's clock: not an event time.
        #expect(IngestLine.rows(Self.iOS6Receipt, .receipts, rules: Self.rules) != nil)
    }

    @Test("a sign-up dated 2099 is rejected and no longer moves the default as-of")
    func futureLineKeepsAsOf() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-28T10:00:00Z","user_id":"u_1001","method":"apple"}"#,
            #"{"ts":"2099-01-01T00:00:00Z","user_id":"u_1099","method":"email"}"#,
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: Line.v2("2000000812345678", "gems60", purchase: "2026-11-28T10:15:05Z")),
        ])
        var options = RunOptions(input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
                                 reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out))
        options.lineRules = Self.rules
        let result = try Pipeline.run(options, progress: nil)
        #expect(result.join.asOfMs == Line.ms("2026-11-28T10:15:08Z"))
        #expect(result.ingest.totals.rejected == 1)
        // Judged as of the purchase's own day, the undelivered purchase is not lost yet.
        #expect(try Scenario.findings(scenario.open()).isEmpty)
    }

    @Test("an MMP event time more than a day after the run's clock in --mmp-tz is rejected; one 23 hours ahead is not", arguments: [
        ("UTC", "2026-11-30 01:00:00", true), ("UTC", "2026-11-29 23:00:00", false),
        ("America/Los_Angeles", "2026-11-29 20:00:00", true), ("America/Los_Angeles", "2026-11-29 15:00:00", false),
        ("Asia/Tokyo", "2026-11-30 10:00:00", true), ("Asia/Tokyo", "2026-11-30 08:00:00", false),
    ])
    func futureMMPTimeInZone(zone: String, eventTime: String, rejected: Bool) throws {
        var rules = Self.rules
        rules.mmpZone = try #require(Zone(zone))
        let parsed = IngestLine.csv(.attribution, ["Event Time,Event Name,AppsFlyer ID", "\(eventTime),install,af1"], rules: rules)
        try #require(parsed.count == 1)
        switch parsed[0].outcome {
        case .rejected(let reason): #expect(rejected && reason.hasPrefix("time in the future: 'Event Time'"), "\(reason)")
        default: #expect(!rejected, "accepted")
        }
    }

    @Test("an MMP event time in the future is rejected; one a few hours ahead is not")
    func futureMMPTime() {
        let header = "Event Time,Event Name,AppsFlyer ID"
        let parsed = IngestLine.csv(.attribution, [header, "2099-01-01 00:00:00,install,af1", "2026-11-29 20:00:00,install,af2"], rules: Self.rules)
        #expect(parsed.map(\.outcome).count == 2)
        if case .rejected(let reason) = parsed[0].outcome { #expect(reason.hasPrefix("time in the future: 'Event Time'")) } else { Issue.record("not rejected") }
        if case .accepted = parsed[1].outcome {} else { Issue.record("a near-future MMP time was rejected") }
    }

    // MARK: - Amounts and quantities

    @Test("amounts out of range, negative prices and quantities below 1 are rejected", arguments: [
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":9223372036854775807,"currency":"USD"}]}"#, SourceKind.receipts, "amount out of range"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":123456789012345678901,"currency":"USD"}]}"#, .receipts, "amount out of range: 'transactions[0].price'"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":"99999999999999999999","currency":"USD"}]}"#, .receipts, "amount out of range: 'transactions[0].price'"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":-99999999999999999999,"currency":"USD"}]}"#, .receipts, "negative amount: 'transactions[0].price'"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":-990,"currency":"USD"}]}"#, .receipts, "negative amount"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"quantity":0}]}"#, .receipts, "quantity below 1"),
        (#"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":"1000000000000.01","currency":"USD"}"#, .server, "amount out of range"),
        (#"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":"0.1234567890123456789","currency":"USD"}"#, .server, "amount out of range"),
        (#"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":"-0.99","currency":"USD"}"#, .server, "negative amount"),
        (#"{"ts":"2026-11-28T10:15:09Z","event":"delivered","user_id":"u_1001","transaction_id":"2000000812345678","product_id":"com.example.gems60","quantity":0}"#, .server, "quantity below 1"),
        (#"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"-1","product_id":"com.example.gems60","transaction_id":"2000000812345678","purchase_date_ms":"1795860905000"}]}}}"#, .receipts, "quantity below 1"),
    ])
    func impossibleAmounts(line: String, kind: SourceKind, reason: String) throws {
        let rejected = try #require(IngestLine.reason(line, kind, rules: Self.rules))
        #expect(rejected.hasPrefix(reason))
    }

    @Test("near misses: a 10^12 KRW price, an 18-digit amount and a free item are accepted")
    func amountsInRange() {
        for price in ["1000000000000", "0.123456789012345678", "0"] {
            let line = #"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":"\#(price)","currency":"KRW"}"#
            #expect(IngestLine.rows(line, .server, rules: Self.rules) != nil, "price \(price)")
        }
        // Apple's milliunits: 10^12 KRW is 10^15 milliunits.
        let v2 = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":1000000000000000,"currency":"KRW"}]}"#
        #expect(IngestLine.rows(v2, .receipts, rules: Self.rules) != nil)
    }

    @Test("catalog and spend rows reject negative and out-of-range amounts")
    func csvAmounts() {
        let catalog = IngestLine.csv(.catalog, ["product_id,type,subscription_group,price,currency",
                                                "com.example.gems60,consumable,,-0.99,USD",
                                                "com.example.gems300,consumable,,12345678901234567890,USD",
                                                "com.example.gems600,consumable,,9.99,USD"], rules: Self.rules)
        let outcomes = catalog.map(\.outcome)
        #expect(outcomes.count == 3)
        if case .rejected(let reason) = outcomes[0] { #expect(reason.hasPrefix("negative amount")) } else { Issue.record("accepted -0.99") }
        if case .rejected(let reason) = outcomes[1] { #expect(reason.hasPrefix("amount out of range")) } else { Issue.record("accepted 20 digits") }
        if case .accepted = outcomes[2] {} else { Issue.record("rejected 9.99") }
    }

    // MARK: - Bundle

    static let foreignReceipt = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.other.app","in_app":[{"quantity":"1","product_id":"com.example.gems60","transaction_id":"2000000899990001","original_transaction_id":"2000000899990001","purchase_date_ms":"1795860905000"}]}}}"#

    @Test("with --bundle-id a receipt or V2 transaction of another app is rejected, naming the bundle")
    func foreignBundle() {
        let ours = LineRules(nowMs: Self.rules.nowMs, bundleID: "com.example.game")
        #expect(IngestLine.reason(Self.foreignReceipt, .receipts, rules: ours) == "foreign bundle com.other.app")
        let v2 = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000899990002","bundleId":"com.other.app","productId":"com.example.gems60","purchaseDate":1795860905000}]}"#
        #expect(IngestLine.reason(v2, .receipts, rules: ours) == "foreign bundle com.other.app")
        // Near misses: our own bundle, and no --bundle-id at all.
        let own = Self.foreignReceipt.replacingOccurrences(of: "com.other.app", with: "com.example.game")
        #expect(IngestLine.rows(own, .receipts, rules: ours) != nil)
        let rows = IngestLine.rows(Self.foreignReceipt, .receipts, rules: Self.rules)
        #expect(rows?.first?.byColumn["bundle_id"] == .text("com.other.app"))
    }

    /// A decoded V2 notification of `dataBundle` whose `data` holds `transaction` under `key`.
    static func notification(dataBundle: String?, key: String, transaction: String) -> String {
        let bundle = dataBundle.map { #""bundleId":"\#($0)","# } ?? ""
        return #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"5d3e1a52-0c4e-4c8e-9d2b-1f0a4f1e7c11","signedDate":1795860910000,"data":{\#(bundle)"environment":"Production","\#(key)":\#(transaction)}}"#
    }

    static func v2Transaction(bundle: String) -> String {
        #"{"transactionId":"2000000899990003","bundleId":"\#(bundle)","productId":"com.example.gems60","purchaseDate":1795860905000,"environment":"Production"}"#
    }

    static func unsignedJWS(_ payload: String) -> String {
        "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Array(payload.utf8)) + ".c2ln"
    }

    @Test("with --bundle-id a notification's V2 transaction of another app is rejected, decoded, signed or wrapped")
    func foreignBundleInNotification() {
        let ours = LineRules(nowMs: Self.rules.nowMs, bundleID: "com.example.game", signatures: .trustUnsigned)
        let decoded = Self.notification(dataBundle: nil, key: "transactionInfo", transaction: Self.v2Transaction(bundle: "com.other.app"))
        let signed = Self.notification(dataBundle: nil, key: "signedTransactionInfo",
                                       transaction: "\"" + Self.unsignedJWS(Self.v2Transaction(bundle: "com.other.app")) + "\"")
        let wrapped = #"{"signedPayload":""# + Self.unsignedJWS(signed) + #""}"#
        let foreignData = Self.notification(dataBundle: "com.other.app", key: "transactionInfo",
                                            transaction: Self.v2Transaction(bundle: "com.example.game"))
        for line in [decoded, signed, wrapped, foreignData] {
            #expect(IngestLine.reason(line, .notifications, rules: ours) == "foreign bundle com.other.app")
        }
        // Near misses: our own bundle in the notification and its transaction, and no --bundle-id at all.
        let own = Self.notification(dataBundle: "com.example.game", key: "signedTransactionInfo",
                                    transaction: "\"" + Self.unsignedJWS(Self.v2Transaction(bundle: "com.example.game")) + "\"")
        #expect(Self.transactions(IngestLine.rows(own, .notifications, rules: ours)).count == 1)
        #expect(Self.transactions(IngestLine.rows(#"{"signedPayload":""# + Self.unsignedJWS(own) + #""}"#, .notifications, rules: ours)).count == 1)
        let anyBundle = LineRules(nowMs: Self.rules.nowMs, signatures: .trustUnsigned)
        for line in [decoded, signed, wrapped, foreignData] {
            #expect(Self.transactions(IngestLine.rows(line, .notifications, rules: anyBundle)).count == 1)
        }
    }

    /// A V1 body (`DID_RENEW`) whose app is `bid`, Apple's only bundle field in V1; nil leaves it out.
    static func v1Notification(bid: String?) -> String {
        let bundle = bid.map { #""bid":"\#($0)","# } ?? ""
        return #"{"notification_type":"DID_RENEW","environment":"PROD",\#(bundle)"unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"quantity":"1","product_id":"com.example.premium.monthly","transaction_id":"2000000899990004","original_transaction_id":"2000000899990001","purchase_date_ms":"1795860905000","expires_date_ms":"1798452905000"}]}}"#
    }

    @Test("with --bundle-id a V1 notification of another app (its bid) is rejected; its own app's, or one without bid, is kept")
    func foreignBundleInV1Notification() {
        let ours = LineRules(nowMs: Self.rules.nowMs, bundleID: "com.example.game")
        #expect(IngestLine.reason(Self.v1Notification(bid: "com.other.app"), .notifications, rules: ours) == "foreign bundle com.other.app")
        // Near misses: our own bundle, no bid at all (nothing names another app), and no --bundle-id.
        #expect(Self.transactions(IngestLine.rows(Self.v1Notification(bid: "com.example.game"), .notifications, rules: ours)).count == 1)
        #expect(Self.transactions(IngestLine.rows(Self.v1Notification(bid: nil), .notifications, rules: ours)).count == 1)
        #expect(Self.transactions(IngestLine.rows(Self.v1Notification(bid: "com.other.app"), .notifications, rules: Self.rules)).count == 1)
    }

    /// A notification with no transaction names its app where Apple puts it: `summary` (renewal
    /// extension summaries, subtype `SUMMARY`), `appData` (RESCIND_CONSENT) or `externalPurchaseToken`.
    static func transactionless(_ type: String, key: String, bundle: String) -> String {
        let subtype = key == "summary" ? #""subtype":"SUMMARY","# : ""
        return #"{"notificationType":"\#(type)",\#(subtype)"notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20","signedDate":1795860910000,"\#(key)":{"appAppleId":55555,"bundleId":"\#(bundle)"}}"#
    }

    @Test("with --bundle-id a transactionless notification of another app is rejected, wherever Apple puts its bundle", arguments: [
        ("RENEWAL_EXTENSION", "summary"), ("RESCIND_CONSENT", "appData"), ("EXTERNAL_PURCHASE_TOKEN", "externalPurchaseToken"),
    ])
    func foreignBundleWithoutTransaction(type: String, key: String) {
        let ours = LineRules(nowMs: Self.rules.nowMs, bundleID: "com.example.game")
        #expect(IngestLine.reason(Self.transactionless(type, key: key, bundle: "com.other.app"), .notifications, rules: ours)
            == "foreign bundle com.other.app")
        // Near misses: our own bundle, and no --bundle-id at all: one notification row, no transaction.
        #expect(IngestLine.rows(Self.transactionless(type, key: key, bundle: "com.example.game"), .notifications, rules: ours)?.count == 1)
        #expect(IngestLine.rows(Self.transactionless(type, key: key, bundle: "com.other.app"), .notifications, rules: Self.rules)?.count == 1)
    }
}
