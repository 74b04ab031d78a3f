import Foundation
import Testing
@testable import IAPRecon

/// A field a parser reads, given twice in one JSON object or one CSV header: other readers (Python's
/// `json`, the peers compared with) take the last value where a first-match lookup takes the first, so
/// two values mean two records. Two different values reject the line; the same value twice, or a field
/// no parser reads, does not.
@Suite("Fields given twice")
struct RepeatedFieldTests {
    static let ts = #""ts":"2026-11-28T10:15:02.123Z""#
    static let order = #"{\#(ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"gems60","currency":"USD""#
    static let receiptHead = #""received_at":"2026-11-28T10:15:08Z","user_id":"u_1001""#

    private func price(_ rows: [RawRow]?) -> SQLValue? { rows?.first?.byColumn["price"] }

    // MARK: - JSON

    @Test("a server order with two different prices is rejected naming the field; either order of the two")
    func serverPriceTwice() {
        #expect(IngestLine.reason(Self.order + #","price":"0.99","storefront":"USA","price":"99.00"}"#, .server)
            == "field 'price' given twice, with different values")
        #expect(IngestLine.reason(Self.order + #","price":"99.00","price":"0.99"}"#, .server)
            == "field 'price' given twice, with different values")
        // A null is no value for iaprecon, but the last value for another reader.
        #expect(IngestLine.reason(Self.order + #","price":null,"price":"0.99"}"#, .server)
            == "field 'price' given twice, with different values")
        // Required fields too, and a field only read to tell the event.
        #expect(IngestLine.reason(Self.order + #","user_id":"u2"}"#, .server) == "field 'user_id' given twice, with different values")
        #expect(IngestLine.reason(#"{\#(Self.ts),"event":"app_open","event":"delivered"}"#, .server)
            == "field 'event' given twice, with different values")
    }

    @Test("the same value twice is one value: the order is accepted at it")
    func serverPriceTwiceEqual() throws {
        let rows = try #require(IngestLine.rows(Self.order + #","price":"0.99","price":"0.99"}"#, .server))
        #expect(price(rows) == .text("0.99"))
        // Without its currency: an order's price comes with one, or neither comes.
        let withoutCurrency = Self.order.replacingOccurrences(of: #","currency":"USD""#, with: "")
        #expect(price(IngestLine.rows(withoutCurrency + #","price":null,"price":null}"#, .server)) == .null)
    }

    @Test("a key no parser reads stays ignored, given twice with different values or not")
    func unreadKeyTwice() throws {
        let rows = try #require(IngestLine.rows(Self.order + #","price":"0.99","note":"a","note":{"b":1}}"#, .server))
        #expect(price(rows) == .text("0.99"))
        // An unknown event reads nothing but its name: its other keys may repeat.
        #expect(IngestLine.parse(#"{\#(Self.ts),"event":"app_open","price":"1","price":"2"}"#, .server).outcome == .ignored)
    }

    @Test("inside Apple's payloads the reason names the field by its path", arguments: [
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[{"transaction_id":"1","product_id":"gems60","purchase_date_ms":"1795860902000","product_id":"gems6000"}]}}}"#,
         "field 'response.receipt.in_app[0].product_id' given twice, with different values"),
        (#"{\#(receiptHead),"response":{"status":0,"latest_receipt_info":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000"},{"transaction_id":"2","product_id":"p","purchase_date_ms":"1795860905000","quantity":"1","quantity":"10"}]}}"#,
         "field 'response.latest_receipt_info[1].quantity' given twice, with different values"),
        (#"{\#(receiptHead),"response":{"status":0,"status":21004,"receipt":{"in_app":[]}}}"#,
         "field 'response.status' given twice, with different values"),
        (#"{\#(receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860902000,"price":990,"currency":"USD","price":99000}]}"#,
         "field 'transactions[0].price' given twice, with different values"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[]}},"response":{"status":21004}}"#,
         "field 'response' given twice, with different values"),
    ])
    func applePayloadTwice(line: String, reason: String) {
        #expect(IngestLine.reason(line, .receipts) == reason)
    }

    @Test("a JWS payload's keys are read as a decoded payload's: a price given twice rejects the line")
    func jwsPayloadTwice() throws {
        func jws(_ payload: String) -> String { "a." + Base64URL.encode(Array(payload.utf8)) + ".b" }
        let transaction = #"{"transactionId":"1","productId":"p","purchaseDate":1795860902000,"price":990,"currency":"USD""#
        #expect(IngestLine.reason(#"{\#(Self.receiptHead),"signed_transactions":["\#(jws(transaction + #","price":99000}"#))"]}"#, .receipts)
            == "field 'signed_transactions[0].price' given twice, with different values")
        #expect(IngestLine.reason(#"{"signedPayload":"\#(jws(#"{"notificationType":"REFUND","notificationType":"DID_RENEW"}"#))"}"#, .notifications)
            == "field 'signedPayload.notificationType' given twice, with different values")
        // The same price twice is one price.
        #expect(IngestLine.rows(#"{\#(Self.receiptHead),"signed_transactions":["\#(jws(transaction + #","price":990}"#))"]}"#, .receipts) != nil)
    }

    @Test("a field given twice is rejected wherever the second stands: after the first's match, past nested values, escaped, in a JWS payload")
    func repeatAfterFirstMatch() {
        func jws(_ payload: String) -> String { "a." + Base64URL.encode(Array(payload.utf8)) + ".b" }
        #expect(IngestLine.reason(#"{"price":"0.99",\#(Self.order.dropFirst()),"storefront":"USA","price":"99.00"}"#, .server)
            == "field 'price' given twice, with different values")
        #expect(IngestLine.reason(Self.order + #","price":"0.99","extra":{"price":[1,{"a":2}]},"\u0070rice":"99.00"}"#, .server)
            == "field 'price' given twice, with different values")
        #expect(IngestLine.reason(#"{\#(Self.receiptHead),"response":{"status":0,"receipt":{"bundle_id":"b","in_app":[{"transaction_id":"1","product_id":"gems60","purchase_date_ms":"1795860902000","x":{"product_id":"y"},"product_id":"gems6000"}]}}}"#, .receipts)
            == "field 'response.receipt.in_app[0].product_id' given twice, with different values")
        let transaction = #"{"transactionId":"1","productId":"p","purchaseDate":1795860902000,"price":990,"currency":"USD","x":{"a":[1]}"#
        #expect(IngestLine.reason(#"{\#(Self.receiptHead),"signed_transactions":["\#(jws(transaction + #","pr\u0069ce":99000}"#))"]}"#, .receipts)
            == "field 'signed_transactions[0].price' given twice, with different values")
        // The name twice in an object nested in the one read is not the read object's.
        #expect(IngestLine.rows(Self.order + #","price":"0.99","extra":{"price":"1","price":"2"}}"#, .server) != nil)
    }

    @Test("a decoded V2 notification's transaction: a revocation date given twice rejects the line, the same one twice does not")
    func notificationTransactionTwice() {
        let head = #"{"notificationType":"REFUND","signedDate":1795860902000,"data":{"transactionInfo":{"transactionId":"1","productId":"p","purchaseDate":1795000000000,"revocationDate":1795860000000"#
        #expect(IngestLine.reason(head + #","revocationDate":1795869999999}}}"#, .notifications)
            == "field 'data.transactionInfo.revocationDate' given twice, with different values")
        #expect(IngestLine.rows(head + #","revocationDate":1795860000000}}}"#, .notifications) != nil)
    }

    @Test("an MMP purchase's Event Value: af_revenue or af_currency given twice differently rejects the row")
    func mmpEventValueTwice() {
        let header = "Event Time,Event Name,AppsFlyer ID,Event Value"
        func row(_ eventValue: String) -> String { #"2026-11-28 10:00:00,af_purchase,af7,"\#(eventValue.replacingOccurrences(of: "\"", with: "\"\""))""# }
        let parsed = IngestLine.csv(.attribution, [
            header,
            row(#"{"af_revenue":"1.99","af_currency":"EUR","af_currency":"USD"}"#),
            row(#"{"af_revenue":"1.99","af_revenue":"19.90","af_currency":"EUR"}"#),
            row(#"{"af_revenue":"1.99","af_currency":"EUR","af_currency":"EUR"}"#),
        ])
        #expect(parsed.prefix(2).map(\.outcome) == [
            .rejected("field 'Event Value.af_currency' given twice, with different values"),
            .rejected("field 'Event Value.af_revenue' given twice, with different values"),
        ])
        guard parsed.count == 3, case .accepted(let rows) = parsed[2].outcome else {
            Issue.record("the same currency twice was not accepted: \(parsed[2].outcome)")
            return
        }
        #expect(rows[0].byColumn["revenue_currency"] == .text("EUR"))
    }

    // MARK: - CSV and TSV

    @Test("a spend header naming a column twice: a row whose two cells differ is rejected, one whose cells agree is read")
    func spendColumnTwice() throws {
        let parsed = IngestLine.csv(.spend, [
            "date,media_source,campaign,spend,currency,spend",
            "2026-11-20,googleadwords_int,GEMS,180.00,USD,18000",
            "2026-11-21,googleadwords_int,GEMS,175.50,USD,175.50",
            "2026-11-22,googleadwords_int,GEMS,175.50,USD, 175.50 ",
            "2026-11-23,googleadwords_int,GEMS,175.50,USD,",
        ])
        try #require(parsed.map(\.line) == [2, 3, 4, 5])
        #expect(parsed[0].outcome == .rejected("column 'spend' given twice, with different values"))
        #expect(parsed[3].outcome == .rejected("column 'spend' given twice, with different values"))
        for equal in parsed[1...2] {
            guard case .accepted(let rows) = equal.outcome else {
                Issue.record("line \(equal.line) not accepted: \(equal.outcome)")
                continue
            }
            #expect(rows.first?.byColumn["spend"] == .text("175.5"))
        }
    }

    static let csvSourceCases: [(kind: SourceKind, header: String, row: String, reason: String?)] = [
        (.spend, "note,date,media_source,campaign,spend,currency,note", "a,2026-11-20,fb,GEMS,1.00,USD,b", nil),
        (.catalog, "product_id,type,price,currency,currency", "gems60,consumable,0.99,USD,EUR", "column 'currency' given twice, with different values"),
        (.catalog, "product_id,type,subscription_group,price,currency,subscription_group", "pro,auto_renewable,premium,9.99,USD,basic",
         "column 'subscription_group' given twice, with different values"),
        (.fx, "date,currency,rate,rate", "2026-11-20,EUR,1.05,1.10", "column 'rate' given twice, with different values"),
        (.fx, "date,currency,rate,rate", "2026-11-20,EUR,1.05,1.05", nil),
    ]

    @Test("a column no parser reads may be named twice; every source's read columns are checked", arguments: csvSourceCases.indices)
    func csvSourcesColumnTwice(index: Int) {
        let (kind, header, row, reason) = Self.csvSourceCases[index]
        let parsed = IngestLine.csv(kind, [header, row])
        if let reason {
            #expect(parsed.map(\.outcome) == [.rejected(reason)])
        } else if parsed.count != 1 || !isAccepted(parsed[0]) {
            Issue.record("\(header): not accepted: \(parsed.map(\.outcome))")
        }
    }

    private func isAccepted(_ parsed: ParsedLine) -> Bool {
        if case .accepted = parsed.outcome { return true }
        return false
    }

    @Test("an MMP column named twice, once by its API name: the two cells must agree")
    func mmpAliasTwice() {
        let header = "Event Time,Event Name,AppsFlyer ID,event_time"
        let parsed = IngestLine.csv(.attribution, [
            header, "2026-11-28 10:00:00,install,af7,2026-11-29 10:00:00", "2026-11-28 10:00:00,install,af7,2026-11-28 10:00:00",
        ])
        #expect(parsed.count == 2 && parsed[0].outcome == .rejected("column 'Event Time' given twice, with different values"))
        #expect(parsed.count == 2 && isAccepted(parsed[1]), "the same time twice is one time")
    }

    @Test("a Sales Report header naming a column twice: an in-app row whose cells differ is rejected, one whose cells agree is read")
    func salesReportColumnTwice() {
        let header = AppleSalesReportTests.currentHeader + "\tCustomer Currency"
        let purchase = AppleSalesReportTests.currentReport[2]
        let parsed = IngestLine.csv(.apple, [header, purchase + "\tEUR", purchase + "\tUSD"])
        #expect(parsed.first?.outcome == .rejected("column 'Customer Currency' given twice, with different values"))
        #expect(AppleSalesReportTests.values(parsed[1])?["customer_currency"] == .text("USD"))
    }
}
