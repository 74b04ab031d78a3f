import Foundation
import Testing
@testable import IAPRecon

/// Line-level parsing of every source (CONTRACT.md §1): what is accepted, and the exact reject reason otherwise.
@Suite("Source line parsers")
struct SourceParserTests {
    // MARK: - Any JSON Lines source

    @Test("blank and whitespace-only lines are blank, not rejects", arguments: ["", " ", "\t \r", "   \t"])
    func blankLines(text: String) {
        for kind in [SourceKind.server, .receipts, .notifications, .registrations] {
            #expect(IngestLine.parse(text, kind).outcome == .blank)
        }
    }

    @Test("lines that are not a JSON object are rejected with the parser's reason and byte", arguments: [
        ("hello", "not JSON: unexpected character at byte 1"),
        ("nothing", "not JSON: invalid literal at byte 1"),
        (#"{"event":"delivered""#, "not JSON: unexpected end of input at byte 21"),
        (#"{"event":"delivered"} trailing"#, "not JSON: unexpected text after the JSON value at byte 23"),
        (#"{"event":"deli\#u{01}vered"}"#, "not JSON: control character in string at byte 15"),
        ("[1,2]", "not a JSON object"),
        // An array is rejected before it is parsed, so a broken one is no different.
        ("[0,0,0,", "not a JSON object"),
        (#""order_created""#, "not a JSON object"),
        ("null", "not a JSON object"),
        ("\u{FEFF}{}", "not JSON: unexpected character at byte 1"),
    ])
    func notJSONObject(text: String, reason: String) {
        for kind in [SourceKind.server, .receipts, .notifications, .registrations] {
            #expect(IngestLine.reason(text, kind) == reason)
        }
    }

    @Test("a reject keeps its line number and a redacted copy of the line")
    func rejectCarriesLineAndText() {
        let token = String(repeating: "QUJD", count: 50)
        let parsed = IngestLine.parse(#"{"event":"delivered","ts":"yesterday","token":""# + token + #""}"#, .server, number: 42)
        #expect(parsed.line == 42)
        #expect(parsed.outcome == .rejected(#"bad time in 'ts': "yesterday""#))
        #expect(parsed.rejectedText == #"{"event":"delivered","ts":"yesterday","token":"[200 bytes redacted]"}"#)
        #expect(IngestLine.parse("{}", .server, number: 3).rejectedText == "{}")
    }

    @Test("a line the reader flagged as too long is rejected before parsing")
    func tooLongLine() {
        let parsed = IngestLine.parse(#"{"event":"delivered"#, .server, number: 9, tooLong: true)
        #expect(parsed.outcome == .rejected("line longer than 64 MiB"))
        #expect(parsed.line == 9)
    }

    // MARK: - server/*.jsonl

    static let ts = #""ts":"2026-11-28T10:15:02.123Z""#

    @Test("server log lines: each required field, type, time, amount and quantity problem has its reason", arguments: [
        (#"{"ts":"2026-11-28T10:15:02Z"}"#, "missing required field 'event'"),
        (#"{"ts":"2026-11-28T10:15:02Z","event":5}"#, "field 'event' must be a string, not number"),
        (#"{"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, "missing required field 'ts'"),
        (#"{"ts":null,"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, "missing required field 'ts'"),
        (#"{"ts":"yesterday","event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, #"bad time in 'ts': "yesterday""#),
        (#"{"ts":true,"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, "bad time in 'ts': true"),
        (#"{"ts":"2026-11-28T10:15:02Z and then some more words after it","event":"delivery_revoked","user_id":"u1","transaction_id":"t1"}"#,
         "bad time in 'ts': a string of 54 bytes"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","product_id":"p"}"#, "missing required field 'transaction_id'"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"","product_id":"p"}"#, "missing required field 'transaction_id'"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":["t1"],"product_id":"p"}"#,
         "field 'transaction_id' must be a string, not array"),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":1001,"product_id":"p"}"#, "field 'user_id' must be a string, not number"),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":"","product_id":"p"}"#, "missing required field 'user_id'"),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","price":"0,99"}"#, #"bad amount in 'price': "0,99""#),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","price":1e5}"#, "bad amount in 'price': 1e5"),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","price":{}}"#, "bad amount in 'price': an object"),
        (#"{\#(ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","currency":1}"#,
         "field 'currency' must be a string, not number"),
        (#"{\#(ts),"event":"order_created","user_id":"u1","product_id":"p"}"#, "missing required field 'order_id'"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":"abc"}"#, #"bad number in 'quantity': "abc""#),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":1.5}"#, "bad number in 'quantity': 1.5"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":true}"#, "bad number in 'quantity': true"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":0}"#, "quantity below 1: 'quantity' is 0"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":-2}"#, "quantity below 1: 'quantity' is -2"),
        (#"{\#(ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p","quantity":1000001}"#,
         "bad number in 'quantity': 1000001"),
        (#"{\#(ts),"event":"delivery_revoked","transaction_id":"t1"}"#, "missing required field 'user_id'"),
    ])
    func serverRejects(line: String, reason: String) {
        #expect(IngestLine.reason(line, .server) == reason)
    }

    @Test("an ISO 8601 time without an offset in a JSON Lines source is rejected, naming the field: its zone is unknown", arguments: [
        (#"{"ts":"2026-11-28T17:03:12","event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, SourceKind.server, "ts",
         "2026-11-28T17:03:12"),
        (#"{"ts":"2026-11-28T17:03:12.500","event":"order_created","order_id":"o1","user_id":"u1","product_id":"p"}"#, .server, "ts",
         "2026-11-28T17:03:12.500"),
        (#"{"ts":"2026-11-28T17:03:12","user_id":"u1"}"#, .registrations, "ts", "2026-11-28T17:03:12"),
        (#"{"received_at":"2026-11-28T17:03:12","user_id":"u1","response":{"status":21002}}"#, .receipts, "received_at", "2026-11-28T17:03:12"),
        (#"{"notificationType":"REFUND","signedDate":"2026-11-28T17:03:12"}"#, .notifications, "signedDate", "2026-11-28T17:03:12"),
        // RFC 3339 lets the `T` be lowercase, as the `Z`: still no offset.
        (#"{"ts":"2026-11-28t17:03:12","user_id":"u1"}"#, .registrations, "ts", "2026-11-28t17:03:12"),
    ])
    func isoTimeWithoutOffset(line: String, kind: SourceKind, field: String, time: String) {
        #expect(IngestLine.reason(line, kind) == "bad time in '\(field)': \"\(time)\" (ISO 8601 without an offset: add Z or +hh:mm)")
    }

    @Test("near misses of an ISO 8601 time without an offset are read as the instant they name", arguments: [
        (#""2026-11-28 17:03:12""#, "2026-11-28T17:03:12Z"),
        (#""2026-11-28 17:03:12.250""#, "2026-11-28T17:03:12.250Z"),
        (#""2026-11-28T17:03:12Z""#, "2026-11-28T17:03:12Z"),
        (#""2026-11-28T17:03:12z""#, "2026-11-28T17:03:12Z"),
        (#""2026-11-28t17:03:12z""#, "2026-11-28T17:03:12Z"),
        (#""2026-11-28t17:03:12.123+09:00""#, "2026-11-28T08:03:12.123Z"),
        (#""2026-11-28T17:03:12.123+09:00""#, "2026-11-28T08:03:12.123Z"),
        (#""2026-11-28T17:03:12-0500""#, "2026-11-28T22:03:12Z"),
        (#""2026-11-28 17:03:12+09:00""#, "2026-11-28T08:03:12Z"),
        (#"1795885392000"#, "2026-11-28T17:03:12Z"),
        (#""1795885392000""#, "2026-11-28T17:03:12Z"),
        // Escapes are read as the text they spell: a `Z` written as an escape is still an offset.
        (#""2026-11-28T17:03:12\u005A""#, "2026-11-28T17:03:12Z"),
    ])
    func isoTimeNearMisses(value: String, instant: String) throws {
        let line = #"{"ts":"# + value + #","event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#
        let rows = try #require(IngestLine.rows(line, .server))
        #expect(rows.first?.byColumn["ts_ms"] == .integer(Line.ms(instant)))
    }

    @Test("an escaped ISO 8601 time without an offset is rejected as the plain one is; an MMP time without one is in --mmp-tz")
    func escapedTimeWithoutOffset() throws {
        let line = #"{"ts":"2026-11-28\u005417:03:12","event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#
        #expect(IngestLine.reason(line, .server) == #"bad time in 'ts': "2026-11-28T17:03:12" (ISO 8601 without an offset: add Z or +hh:mm)"#)
        // CONTRACT.md §1.5: MMP times carry no offset; they are in --mmp-tz, so the ISO 8601 form without one is read there.
        var rules = IngestLine.unsigned
        rules.nowMs = Line.ms("2026-11-30T00:00:00Z")
        rules.mmpZone = try #require(Zone("Asia/Tokyo"))
        let parsed = IngestLine.csv(.attribution, ["Event Time,Event Name,AppsFlyer ID", "2026-11-28T17:03:12,install,af1"], rules: rules)
        #expect(IngestLine.outcomes(parsed) == ["2 accepted"])
    }

    @Test("server log lines of the contract's three events become orders, deliveries and revocations")
    func serverAccepted() throws {
        let order = try #require(IngestLine.rows(
            #"{\#(Self.ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"gems60","price":"0.990","currency":"USD","storefront":"USA","extra":[1]}"#,
            .server))
        #expect(order.map(\.table) == [.orders])
        #expect(order[0].byColumn == [
            "ts_ms": .integer(1_795_860_902_123), "order_id": .text("o1"), "user_id": .text("u1"), "product_id": .text("gems60"),
            "price": .text("0.99"), "currency": .text("USD"), "storefront": .text("USA"),
        ])
        let numericPrice = try #require(IngestLine.rows(
            #"{\#(Self.ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"gems60","price":1100,"currency":"KRW"}"#, .server))
        #expect(numericPrice[0].byColumn["price"] == .text("1100"))

        let delivered = try #require(IngestLine.rows(
            #"{\#(Self.ts),"event":"delivered","user_id":"u1","transaction_id":2000000812345678,"product_id":"gems60","quantity":"1000000","delivery_id":88121}"#,
            .server))
        #expect(delivered[0].byColumn == [
            "ts_ms": .integer(1_795_860_902_123), "user_id": .text("u1"), "transaction_id": .text("2000000812345678"),
            "product_id": .text("gems60"), "order_id": .null, "quantity_n": .integer(1_000_000), "delivery_id": .text("88121"),
        ])
        let defaultQuantity = try #require(IngestLine.rows(
            #"{\#(Self.ts),"event":"delivered","user_id":"u1","transaction_id":"t1","product_id":"gems60","quantity":null}"#, .server))
        #expect(defaultQuantity[0].byColumn["quantity_n"] == .integer(1))

        let revoked = try #require(IngestLine.rows(
            #"{"ts":1764324902123,"event":"delivery_revoked","user_id":"u1","transaction_id":"t1","reason":"refund"}"#, .server))
        #expect(revoked[0].byColumn == [
            "ts_ms": .integer(1_764_324_902_123), "user_id": .text("u1"), "transaction_id": .text("t1"), "reason": .text("refund"),
        ])
    }

    @Test("an unknown server event is ignored, not rejected, even with fields the known events would reject")
    func serverUnknownEvent() {
        #expect(IngestLine.parse(#"{\#(Self.ts),"event":"refund_requested","user_id":"u1"}"#, .server).outcome == .ignored)
        #expect(IngestLine.parse(#"{"ts":"yesterday","event":"app_open"}"#, .server).outcome == .ignored)
        // Event names are exact: near misses are unknown events.
        #expect(IngestLine.parse(#"{\#(Self.ts),"event":"Delivered","user_id":"u1","transaction_id":"t1","product_id":"p"}"#, .server).outcome
            == .ignored)
    }

    // MARK: - receipts/*.jsonl

    static let receiptHead = #""received_at":"2026-11-28T10:15:08Z","user_id":"u_1001""#

    @Test("receipt lines: each shape problem has its reason, with the path into Apple's payload", arguments: [
        (#"{\#(receiptHead)}"#, "missing required field 'response', 'transactions' or 'signed_transactions'"),
        (#"{\#(receiptHead),"response":null,"transactions":null}"#, "missing required field 'response', 'transactions' or 'signed_transactions'"),
        (#"{"user_id":"u1","response":{"status":0}}"#, "missing required field 'received_at'"),
        (#"{"received_at":"2026-11-28T10:15:08Z","response":{"status":0}}"#, "missing required field 'user_id'"),
        (#"{\#(receiptHead),"response":"MIIT..."}"#, "field 'response' must be an object, not string"),
        (#"{\#(receiptHead),"transactions":{}}"#, "field 'transactions' must be an array, not object"),
        (#"{\#(receiptHead),"response":{}}"#, "missing required field 'response.status'"),
        (#"{\#(receiptHead),"response":{"status":"ok"}}"#, #"bad number in 'response.status': "ok""#),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":[]}}"#, "field 'response.receipt' must be an object, not array"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":"x"}}}"#, "field 'response.receipt.in_app' must be an array or an object, not string"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[1]}}}"#, "field 'response.receipt.in_app[0]' must be an object, not number"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[{"product_id":"p"},1]}}}"#, "field 'response.receipt.in_app[1]' must be an object, not number"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000"},{"product_id":"p","purchase_date_ms":"1795860905000"}]}}}"#,
         "missing required field 'response.receipt.in_app[1].transaction_id'"),
        (#"{\#(receiptHead),"response":{"status":0,"receipt":{"in_app":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"soon"}]}}}"#,
         #"bad time in 'response.receipt.in_app[0].purchase_date_ms': "soon""#),
        (#"{\#(receiptHead),"response":{"status":0,"latest_receipt_info":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000","quantity":"one"}]}}"#,
         #"bad number in 'response.latest_receipt_info[0].quantity': "one""#),
        (#"{\#(receiptHead),"signed_transactions":["abc"]}"#, "bad JWS in 'signed_transactions[0]': not three dot-separated parts"),
        (#"{\#(receiptHead),"signed_transactions":["a.eyJ0cmFuc2FjdGlvbklkIjoiMSIsInByb2R1Y3RJZCI6InAiLCJwdXJjaGFzZURhdGUiOjE3OTU4NjA5MDUwMDB9.b","a.!!!.b"]}"#, "bad JWS in 'signed_transactions[1]': payload is not base64url"),
        (#"{\#(receiptHead),"signed_transactions":["a.b29wcw.c"]}"#, "bad JWS in 'signed_transactions[0]': payload is not JSON: unexpected character at byte 1"),
        (#"{\#(receiptHead),"signed_transactions":["a.WzFd.c"]}"#, "bad JWS in 'signed_transactions[0]': payload is not a JSON object"),
        (#"{\#(receiptHead),"signed_transactions":[42]}"#, "field 'signed_transactions[0]' must be a JWS string, not number"),
        (#"{\#(receiptHead),"signed_transactions":["a.e30.b"]}"#, "missing required field 'signed_transactions[0].transactionId'"),
        (#"{\#(receiptHead),"transactions":["x"]}"#, "field 'transactions[0]' must be an object, not string"),
        (#"{\#(receiptHead),"transactions":[{"transactionId":"1","purchaseDate":1795860905000}]}"#, "missing required field 'transactions[0].productId'"),
        (#"{\#(receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"price":"9.99"}]}"#,
         #"bad number in 'transactions[0].price': "9.99""#),
        (#"{\#(receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"quantity":9223372036854775807}]}"#,
         "bad number in 'transactions[0].quantity': 9223372036854775807"),
        (#"{\#(receiptHead),"response":{"status":0,"latest_receipt_info":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000","quantity":"1000001"}]}}"#,
         "bad number in 'response.latest_receipt_info[0].quantity': 1000001"),
    ])
    func receiptRejects(line: String, reason: String) {
        #expect(IngestLine.reason(line, .receipts) == reason)
    }

    @Test("a receipt with a non-zero status is a failed verification: accepted, one verification row, no transactions")
    func failedVerification() throws {
        // The in_app item is malformed on purpose: a failed verification does not read it.
        let line = #"{\#(Self.receiptHead),"order_id":"o1","response":{"status":21007,"environment":"Sandbox","receipt":{"bundle_id":"com.example.game","in_app":[{"product_id":"p"}]}}}"#
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.count == 1)
        #expect(rows[0].table == .verifications)
        #expect(rows[0].byColumn == [
            "received_ms": .integer(1_795_860_908_000), "user_id": .text("u_1001"), "order_id": .text("o1"), "transaction_id": .null,
            "status_n": .integer(21007), "environment": .text("Sandbox"), "bundle_id": .text("com.example.game"), "shape": .text("response"),
        ])
    }

    @Test("an iOS 7 receipt: every in_app and latest_receipt_info item is a transaction row carrying the line's user and order")
    func iOS7Receipt() throws {
        func item(_ id: Int) -> String {
            #"{"quantity":"1","product_id":"p\#(id)","transaction_id":"100\#(id)","original_transaction_id":"1001","purchase_date_ms":"176432490\#(id)000"}"#
        }
        let line = #"{\#(Self.receiptHead),"order_id":"OrderID_1","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":["#
            + [1, 2, 3].map(item).joined(separator: ",") + #"]},"latest_receipt_info":["# + [4, 5].map(item).joined(separator: ",") + "]}}"
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.map(\.item) == [0, 1, 2, 3, 4, 5])
        #expect(rows.map(\.table) == [.verifications] + Array(repeating: .appleTransactions, count: 5))
        // Five transactions and no transaction_id on the line: the verification names none.
        #expect(rows[0].byColumn["transaction_id"] == .null)
        #expect(rows[0].byColumn["shape"] == .text("response"))
        for (index, row) in rows.dropFirst().enumerated() {
            let id = index + 1
            #expect(row.byColumn == IngestLine.appleTransactionRow([
                "origin": .integer(TransactionOrigin.receipt.code), "event_ms": .integer(1_795_860_908_000), "user_id": .text("u_1001"),
                "claimed_order_id": .text("OrderID_1"), "transaction_id": .text("100\(id)"), "original_transaction_id": .text("1001"),
                "product_id": .text("p\(id)"), "purchase_ms": .integer(Int64("176432490\(id)000")!), "environment": AppleEnvironment.codes.stored("Production"),
                "quantity_n": .integer(1),
            ]))
        }
    }

    @Test("receipt items carry Apple's numbers as strings (or numbers) and every contract field")
    func receiptItemFields() throws {
        let line = #"{\#(Self.receiptHead),"transaction_id":"2000000812345678","response":{"status":"0","environment":"Production","receipt":{"in_app":{"#
            + #""quantity":"2","product_id":"com.example.pro.monthly","transaction_id":"2000000812345678","original_transaction_id":2000000800000000,"#
            + #""purchase_date_ms":"1764324907000","original_purchase_date_ms":"1764324907000","expires_date_ms":"1766916907000","#
            + #""cancellation_date_ms":"1764400000000","cancellation_reason":"0","is_trial_period":"false","in_app_ownership_type":"FAMILY_SHARED","#
            + #""web_order_line_item_id":"2000000099999999","app_account_token":"OrderID_1764324902123_gems60","subscription_group_identifier":"21345678"}}}}"#
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["transaction_id"] == .text("2000000812345678"))
        #expect(rows[1].byColumn == IngestLine.appleTransactionRow([
            "origin": .integer(TransactionOrigin.receipt.code), "event_ms": .integer(1_795_860_908_000), "user_id": .text("u_1001"),
            "transaction_id": .text("2000000812345678"), "original_transaction_id": .text("2000000800000000"),
            "product_id": .text("com.example.pro.monthly"), "purchase_ms": .integer(1_764_324_907_000),
            "expires_ms": .integer(1_766_916_907_000), "revocation_ms": .integer(1_764_400_000_000), "revocation_reason": .text("0"),
            "environment": AppleEnvironment.codes.stored("Production"), "app_account_token": .text("OrderID_1764324902123_gems60"),
            "quantity_n": .integer(2), "ownership": AppleOwnership.codes.stored("FAMILY_SHARED"), "subscription_group": .text("21345678"),
        ]))
    }

    @Test("an Apple quantity of a million units is the most a transaction is read with, as a delivery's", arguments: [
        #"{\#(receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"quantity":1000000}]}"#,
        #"{\#(receiptHead),"response":{"status":0,"latest_receipt_info":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000","quantity":"1000000"}]}}"#,
    ])
    func largestAppleQuantity(line: String) throws {
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.last?.byColumn["quantity_n"] == .integer(1_000_000))
    }

    @Test("a receipt line's shape names each part it has, in one order", arguments: [
        (true, false, false, "response"), (false, true, false, "transactions"), (true, true, false, "response+transactions"),
        (true, false, true, "response+signed_transactions"), (false, true, true, "transactions+signed_transactions"),
        (true, true, true, "response+transactions+signed_transactions"),
    ])
    func receiptShape(response: Bool, decoded: Bool, signed: Bool, shape: String) throws {
        let v2 = #"{"transactionId":"7","productId":"p","purchaseDate":"2026-11-28T10:15:00Z"}"#
        let parts = [response ? #""response":{"status":21007}"# : nil, decoded ? #""transactions":[\#(v2)]"# : nil,
                     signed ? #""signed_transactions":[]"# : nil].compactMap { $0 }
        let rows = try #require(IngestLine.rows("{\(Self.receiptHead)," + parts.joined(separator: ",") + "}", .receipts))
        #expect(rows[0].byColumn["shape"] == .text(shape))
    }

    @Test("a receipt line with several shapes names them all; decoded V2 transactions default to Production")
    func combinedShapes() throws {
        let v2 = #"{"transactionId":"7","productId":"p","purchaseDate":"2026-11-28T10:15:00Z","price":990,"currency":"USD"}"#
        let line = #"{\#(Self.receiptHead),"response":{"status":0},"transactions":[\#(v2)],"signed_transactions":[]}"#
        let rows = try #require(IngestLine.rows(line, .receipts))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["shape"] == .text("response+transactions+signed_transactions"))
        #expect(rows[0].byColumn["transaction_id"] == .text("7"))
        #expect(rows[1].byColumn["environment"] == AppleEnvironment.codes.stored("Production"))
        #expect(rows[1].byColumn["price_milli_n"] == .integer(990))
        #expect(rows[1].byColumn["purchase_ms"] == .integer(1_795_860_900_000))
    }

    // MARK: - notifications/*.jsonl

    @Test("notification lines: each shape problem has its reason", arguments: [
        ("{}", "missing required field 'signedPayload', 'notificationType' or 'notification_type'"),
        (#"{"signedPayload":""}"#, "missing required field 'signedPayload', 'notificationType' or 'notification_type'"),
        (#"{"signedPayload":"abc"}"#, "bad JWS in 'signedPayload': not three dot-separated parts"),
        (#"{"signedPayload":12}"#, "field 'signedPayload' must be a string, not number"),
        (#"{"signedPayload":"a.e30.b"}"#, "missing required field 'signedPayload.notificationType'"),
        (#"{"notificationType":5}"#, "field 'notificationType' must be a string, not number"),
        (#"{"notificationType":"REFUND","signedDate":"later"}"#, #"bad time in 'signedDate': "later""#),
        (#"{"notificationType":"REFUND","data":"x"}"#, "field 'data' must be an object, not string"),
        (#"{"notificationType":"REFUND","data":{"transactionInfo":{"transactionId":"1","productId":"p"}}}"#,
         "missing required field 'data.transactionInfo.purchaseDate'"),
        (#"{"notificationType":"REFUND","data":{"signedTransactionInfo":"x.y"}}"#, "bad JWS in 'data.signedTransactionInfo': not three dot-separated parts"),
        (#"{"notification_type":"CANCEL","unified_receipt":{"latest_receipt_info":["x"]}}"#,
         "field 'unified_receipt.latest_receipt_info[0]' must be an object, not string"),
        (#"{"notification_type":"CANCEL","unified_receipt":{"latest_receipt_info":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860905000","cancellation_date_ms":"soon"}]}}"#,
         #"bad time in 'unified_receipt.latest_receipt_info[0].cancellation_date_ms': "soon""#),
        (#"{"notificationType":"ONE_TIME_CHARGE","data":{"transactionInfo":{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"quantity":4611686018427387904}}}"#,
         "bad number in 'data.transactionInfo.quantity': 4611686018427387904"),
    ])
    func notificationRejects(line: String, reason: String) {
        #expect(IngestLine.reason(line, .notifications) == reason)
    }

    @Test("a V1 CANCEL with environment PROD and cancellation_date_ms keeps PROD raw and the refund time")
    func v1Cancel() throws {
        let line = #"{"notification_type":"CANCEL","environment":"PROD","unified_receipt":{"latest_receipt_info":[{"#
            + #""transaction_id":"2000000812345678","original_transaction_id":"2000000812345678","product_id":"gems60","#
            + #""purchase_date_ms":"1764324907000","cancellation_date_ms":"1764410000000","cancellation_reason":"1","quantity":"1"}]}}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn == [
            "notification_uuid": .null, "notification_type": .text("CANCEL"), "subtype": .null, "signed_ms": .null,
            "environment": .text("PROD"), "version": .text("1"), "transaction_id": .text("2000000812345678"), "bundle_id": .null,
        ])
        #expect(rows[1].item == 1)
        #expect(rows[1].byColumn == IngestLine.appleTransactionRow([
            "origin": .integer(TransactionOrigin.notification.code), "transaction_id": .text("2000000812345678"),
            "original_transaction_id": .text("2000000812345678"), "product_id": .text("gems60"),
            "purchase_ms": .integer(1_764_324_907_000), "revocation_ms": .integer(1_764_410_000_000), "revocation_reason": .text("1"),
            "environment": AppleEnvironment.codes.stored("PROD"), "quantity_n": .integer(1), "notification_type": AppleNotificationType.codes.stored("CANCEL"),
        ]))
        #expect(AppleEnvironment.canonical("PROD") == "Production")
        #expect(AppleEnvironment.isProduction("PROD"))
    }

    @Test("a V1 notification's unified_receipt.environment wins over the top-level one")
    func v1Environment() throws {
        let line = #"{"notification_type":"DID_RENEW","environment":"PROD","unified_receipt":{"environment":"Sandbox","latest_receipt_info":[{"transaction_id":"7","product_id":"p","purchase_date_ms":"1764324907000"}]}}"#
        let rows = try #require(IngestLine.rows(line, .notifications))
        #expect(rows.count == 2)
        #expect(rows[0].byColumn["environment"] == .text("Sandbox"))
        #expect(rows[1].byColumn["environment"] == AppleEnvironment.codes.stored("Sandbox"))
    }

    // MARK: - registrations/*.jsonl

    @Test("registrations: required fields and MMP empties")
    func registrations() throws {
        #expect(IngestLine.reason(#"{"ts":"2026-11-28T10:00:00Z"}"#, .registrations) == "missing required field 'user_id'")
        #expect(IngestLine.reason(#"{"ts":"28.11.2026","user_id":"u1"}"#, .registrations) == #"bad time in 'ts': "28.11.2026""#)
        let rows = try #require(IngestLine.rows(
            #"{"ts":"2026-11-28 10:00:00","user_id":"u1","method":"apple","idfv":"null","idfa":"00000000-0000-0000-0000-000000000000","appsflyer_id":"1764324000000-1234567","country":"KR"}"#,
            .registrations))
        #expect(rows[0].byColumn == [
            "ts_ms": .integer(1_795_860_000_000), "user_id": .text("u1"), "method": .text("apple"), "idfv": .null, "idfa": .null,
            "appsflyer_id": .text("1764324000000-1234567"), "country": .text("KR"),
        ])
    }

    // MARK: - CSV

    private func outcomes(_ parsed: [ParsedLine]) -> [String] { IngestLine.outcomes(parsed) }

    private func acceptedRow(_ parsed: ParsedLine) -> [String: SQLValue]? {
        if case .accepted(let rows) = parsed.outcome, rows.count == 1 { return rows[0].byColumn }
        return nil
    }

    static let catalogHeader = "product_id,type,subscription_group,price,currency"

    @Test("the header is not a record; each row is one record, numbered by its line")
    func csvHeader() throws {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, "gems60,consumable,,0.990,USD", "", "pro.monthly,auto_renewable,premium,9.99,USD"])
        #expect(outcomes(parsed) == ["2 accepted", "3 blank", "4 accepted"])
        #expect(acceptedRow(parsed[0]) == [
            "product_id": .text("gems60"), "type": .text("consumable"), "subscription_group": .null, "price": .text("0.99"),
            "currency": .text("USD"),
        ])
        #expect(acceptedRow(parsed[2])?["subscription_group"] == .text("premium"))
        #expect(IngestLine.csv(.catalog, [Self.catalogHeader]).isEmpty)
    }

    @Test("a catalog type outside the contract's four is rejected naming it; each of the four is accepted")
    func catalogTypes() {
        let parsed = IngestLine.csv(.catalog, [
            Self.catalogHeader, "a,consumable,,0.99,USD", "b,non_consumable,,0.99,USD", "c,auto_renewable,premium,9.99,USD",
            "d,non_renewing,,9.99,USD", "e,subscription,premium,9.99,USD", "f,Auto-Renewable,premium,9.99,USD", "g,Consumable,,0.99,USD",
        ])
        #expect(outcomes(parsed) == [
            "2 accepted", "3 accepted", "4 accepted", "5 accepted",
            #"6 rejected: bad type in 'type': "subscription""#,
            #"7 rejected: bad type in 'type': "Auto-Renewable""#,
            #"8 rejected: bad type in 'type': "Consumable""#,
        ])
    }

    @Test("columns are matched by name in any order, cells trimmed, unknown columns ignored")
    func csvColumnsByName() throws {
        let parsed = IngestLine.csv(.catalog, ["currency , price,note,product_id,type", "KRW, 1100 ,hello, gems60 ,consumable"])
        #expect(acceptedRow(parsed[0]) == [
            "product_id": .text("gems60"), "type": .text("consumable"), "subscription_group": .null, "price": .text("1100"),
            "currency": .text("KRW"),
        ])
    }

    @Test("a quoted field keeps commas and doubled quotes")
    func csvQuotedField() throws {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, #""gems, ""big"" pack",consumable,"",0.99,USD"#])
        #expect(acceptedRow(parsed[0])?["product_id"] == .text(#"gems, "big" pack"#))
        #expect(acceptedRow(parsed[0])?["subscription_group"] == .null)
    }

    @Test("a quoted newline is part of its cell: the record spans both lines, numbered by the first")
    func csvQuotedNewline() throws {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, #"gems60,consumable,"group"#, #"two",0.99,USD"#, "gems300,consumable,,4.99,USD"])
        #expect(outcomes(parsed) == ["2 accepted", "4 accepted"])
        #expect(acceptedRow(parsed[0])?["subscription_group"] == .text("group\ntwo"))
        #expect(acceptedRow(parsed[1])?["product_id"] == .text("gems300"))
    }

    @Test("an unbalanced quote on the last line is rejected as unbalanced quotes")
    func csvUnbalancedLastLine() throws {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, "gems60,consumable,,0.99,USD", #"gems300,"consumable,,4.99,USD"#])
        #expect(outcomes(parsed) == ["2 accepted", "3 rejected: unbalanced quotes"])
        #expect(parsed[1].rejectedText == #"gems300,"consumable,,4.99,USD"#)
    }

    @Test("an unbalanced quote costs one line: the lines after it still parse")
    func csvUnbalancedThenMore() throws {
        let parsed = IngestLine.csv(.catalog, [
            Self.catalogHeader, "gems60,consumable,,0.99,USD", #"gems300,"consumable,,4.99,USD"#,
            "gems900,consumable,,9.99,USD", "gems2000,consumable,,19.99,USD",
        ])
        #expect(outcomes(parsed) == ["2 accepted", "3 rejected: unbalanced quotes", "4 accepted", "5 accepted"])
        #expect(acceptedRow(parsed[3])?["price"] == .text("19.99"))
    }

    @Test("a header with unbalanced quotes has no columns: every row says which required column is missing")
    func csvBrokenHeader() {
        let parsed = IngestLine.csv(.catalog, [#"product_id,"type,subscription_group,price,currency"#, "gems60,consumable,,0.99,USD"])
        #expect(outcomes(parsed) == ["2 rejected: header has no column 'product_id'"])
    }

    @Test("a row of one field says field, not fields")
    func csvOneField() {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, "gems60", "gems60,consumable"])
        #expect(outcomes(parsed) == ["2 rejected: row has 1 field, the header has 5", "3 rejected: row has 2 fields, the header has 5"])
    }

    @Test("a quote inside an unquoted field is kept as text")
    func csvQuoteInsideField() {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, #"gems"60,consumable,,0.99,USD"#])
        #expect(acceptedRow(parsed[0])?["product_id"] == .text(#"gems"60"#))
    }

    @Test("a row with the wrong number of fields is rejected with both counts")
    func csvFieldCount() {
        let parsed = IngestLine.csv(.catalog, [Self.catalogHeader, "gems60,consumable,0.99,USD", "gems60,consumable,,0.99,USD,extra"])
        #expect(outcomes(parsed) == ["2 rejected: row has 4 fields, the header has 5", "3 rejected: row has 6 fields, the header has 5"])
        #expect(parsed[0].rejectedText == "gems60,consumable,0.99,USD")
    }

    @Test("a header missing a required column rejects every row, naming the column")
    func csvMissingColumn() {
        let parsed = IngestLine.csv(.attribution, ["Event Time,AppsFlyer ID,Event Revenue", "2026-11-28 10:00:00,af1,", "2026-11-28 11:00:00,af2,0.99", ""])
        #expect(outcomes(parsed) == [
            "2 rejected: header has no column 'Event Name'", "3 rejected: header has no column 'Event Name'", "4 blank",
        ])
    }

    @Test("a header missing a required column with no line after it is itself rejected: a file of lone-CR lines is one such line")
    func csvMissingColumnNoRows() {
        let spend = "date,media_source,campaign,spend,currency\r2026-11-20,googleadwords_int,GEMS,180.00,USD\r2026-11-21,googleadwords_int,GEMS,175.50,USD"
        let parsed = IngestLine.csv(.spend, [spend])
        #expect(outcomes(parsed) == ["1 rejected: header has no column 'currency' (its lines end in a lone CR)"])
        #expect(parsed.first?.rejectedText == spend)
        #expect(outcomes(IngestLine.csv(.catalog, [#"product_id,"type,subscription_group,price,currency"#])) == [
            "1 rejected: header has no column 'product_id'",
        ])
    }

    @Test("a header with every needed column, a blank first line, or a bad header followed by a line leave the header unread", arguments: [
        ["date,media_source,campaign,spend,currency"],
        [" "],
        ["date,campaign", ""],
        ["date,campaign", "2026-11-20,GEMS"],
    ])
    func csvHeaderNotRejected(lines: [String]) {
        #expect(!outcomes(IngestLine.csv(.spend, lines)).contains { $0.hasPrefix("1 ") })
    }

    @Test("a BOM before the header is dropped by the reader, so the first column still matches")
    func csvByteOrderMark() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/iaprecon-bom-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/catalog.csv"
        try Data([0xEF, 0xBB, 0xBF] + Array((Self.catalogHeader + "\r\ngems60,consumable,,0.99,USD\r\n").utf8)).write(to: URL(fileURLWithPath: path))
        var parsed: [ParsedLine] = []
        try SourceFileParser.parse(SourceFile(relativePath: "catalog.csv", absolutePath: path, kind: .catalog), rules: IngestLine.unsigned) { parsed += $0 }
        #expect(outcomes(parsed) == ["2 accepted"])
        #expect(acceptedRow(parsed[0])?["product_id"] == .text("gems60"))
        #expect(acceptedRow(parsed[0])?["currency"] == .text("USD"))
    }

    static let mmpHeader = "Event Time,Event Name,Customer User ID,IDFV,IDFA,AppsFlyer ID,Media Source,Campaign,"
        + "Event Revenue,Event Revenue Currency,Event Revenue USD,Event Value,Is Retargeting,Install Time"

    @Test("MMP rows: null, NULL, N/A and an all-zero IDFA are empty; a row with no id at all is rejected")
    func mmpEmpties() throws {
        let zeroIDFA = "00000000-0000-0000-0000-000000000000"
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,install,null,N/A,\(zeroIDFA),,,,,,,,,",
            "2026-11-28 10:00:00,install,NULL,,\(zeroIDFA),1764324000000-1234567,null,,,,,,,",
            "2026-11-28 10:00:00,install,,,00000000-0000-0000-0000-000000000001,,Organic,,,,,,,",
        ])
        #expect(outcomes(parsed) == [
            "2 rejected: none of 'Customer User ID', 'IDFV', 'IDFA', 'AppsFlyer ID' has a value", "3 accepted", "4 accepted",
        ])
        let second = try #require(acceptedRow(parsed[1]))
        #expect(second["customer_user_id"] == .null)
        #expect(second["idfa"] == .null)
        #expect(second["appsflyer_id"] == .text("1764324000000-1234567"))
        #expect(second["media_source"] == .null)
        #expect(second["event_wall_ms"] == .integer(1_795_860_000_000))
        let third = try #require(acceptedRow(parsed[2]))
        #expect(third["idfa"] == .text("00000000-0000-0000-0000-000000000001"))
        #expect(third["media_source"] == .text("Organic"))
    }

    @Test("an MMP row other than an install keeps no device id, but one is its id when it has no other; an install keeps them beside any other")
    func mmpDeviceIDsOutsideInstalls() throws {
        let zeroIDFA = "00000000-0000-0000-0000-000000000000"
        let idfv = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,af_login,,\(idfv),,,,,,,,,,",
            "2026-11-28 10:00:00,af_login,,None,\(zeroIDFA),,,,,,,,,",
            "2026-11-28 10:00:00,af_login,,,00000000-0000-0000-0000-000000000001,,,,,,,,,",
            "2026-11-28 10:00:00,af_purchase,u_1,\(idfv),\(zeroIDFA),,,,0.99,USD,,,,",
            "2026-11-28 10:00:00,install,u_1,\(idfv),00000000-0000-0000-0000-000000000001,1764324000000-1234567,,,,,,,,",
        ])
        #expect(outcomes(parsed) == [
            "2 accepted", "3 rejected: none of 'Customer User ID', 'IDFV', 'IDFA', 'AppsFlyer ID' has a value", "4 accepted", "5 accepted",
            "6 accepted",
        ])
        for index in [0, 2, 3] {
            let row = try #require(acceptedRow(parsed[index]))
            #expect(row["idfv"] == .null)
            #expect(row["idfa"] == .null)
        }
        #expect(acceptedRow(parsed[3])?["customer_user_id"] == .text("u_1"))
        let install = try #require(acceptedRow(parsed[4]))
        #expect(install["idfv"] == .text(idfv))
        #expect(install["idfa"] == .text("00000000-0000-0000-0000-000000000001"))
        #expect(install["customer_user_id"] == .text("u_1"))
    }

    @Test("an MMP time with its own offset, Z or epoch milliseconds is that instant; --mmp-tz applies only to one without",
          arguments: ["UTC", "Asia/Tokyo", "America/Los_Angeles"])
    func mmpTimeOffsets(zoneName: String) throws {
        let zone = try #require(Zone(zoneName))
        var rules = IngestLine.unsigned
        rules.nowMs = Line.ms("2026-11-30T00:00:00Z")
        rules.mmpZone = zone
        let event = Line.ms("2026-11-28T14:30:00Z"), install = Line.ms("2026-11-28T14:00:00Z")
        let parsed = IngestLine.csv(.attribution, [
            "Event Time,Event Name,AppsFlyer ID,Install Time",
            "2026-11-28T23:30:00+09:00,install,af1,2026-11-28T23:00:00+09:00",
            "2026-11-28T14:30:00Z,install,af2,2026-11-28T14:00:00.000Z",
            "\(event),install,af3,\(install)",
            "2026-11-28 14:30:00,install,af4,2026-11-28T14:00:00",
        ], rules: rules)
        let rows = try parsed.map { try #require(acceptedRow($0)) }
        try #require(rows.count == 4)
        // The store keeps MMP times as wall clocks in --mmp-tz; the instant is what that zone makes of them.
        func instant(_ value: SQLValue?) -> Int64? {
            if case .integer(let wall)? = value { return zone.utc(fromLocal: wall) }
            return nil
        }
        for row in rows.prefix(3) {
            #expect(instant(row["event_wall_ms"]) == event)
            #expect(instant(row["install_wall_ms"]) == install)
        }
        // Near miss: a time without an offset is the MMP's wall clock, as written.
        #expect(rows[3]["event_wall_ms"] == .integer(event))
        #expect(rows[3]["install_wall_ms"] == .integer(install))
    }

    @Test("MMP empty markers match whole cells: None and a padded null are empty, their near misses are values")
    func mmpEmptyMarkerNearMisses() throws {
        let cells: [(cuid: String, idfa: String, retargeting: String)] = [
            ("None", "0000", "TRUE"), (" null ", "0-0", " true "), ("nul", "00O0", "truee"), ("Null", "-", "false"),
            ("NaN", "N/A", ""), ("NULLS", "null", "True"),
        ]
        let parsed = IngestLine.csv(.attribution, [Self.mmpHeader] + cells.map {
            "2026-11-28 10:00:00,install,\($0.cuid),,\($0.idfa),1764324000000-1234567,,,,,,,\($0.retargeting),"
        })
        let rows = try parsed.map { try #require(acceptedRow($0)) }
        #expect(rows.map { $0["customer_user_id"] } == [.null, .null, .text("nul"), .text("Null"), .text("NaN"), .text("NULLS")])
        #expect(rows.map { $0["idfa"] } == [.null, .null, .text("00O0"), .null, .null, .null])
        #expect(rows.map { $0["is_retargeting_n"] } == [.integer(1), .integer(1), .integer(0), .integer(0), .integer(0), .integer(1)])
    }

    @Test("MMP columns are found by name in any order, unknown ones skipped, a repeated name read when its cells agree")
    func mmpColumnOrder() throws {
        let names = Self.mmpHeader.split(separator: ",").map(String.init)
        // No revenue in USD, so the revenue in EUR is kept (`mmpRevenue`).
        let values = ["2026-11-28 10:00:00", "af_purchase", "u7", "V1", "A1", "af7", "Facebook Ads", "spring", "1.99", "EUR", "",
                      "", "TRUE", "2026-11-27 09:00:00"]
        let canonical = IngestLine.csv(.attribution, [Self.mmpHeader, values.joined(separator: ",")])
        // Reversed, with an unknown column in front and a second "Campaign" after the first: the same
        // campaign twice is one campaign, two are a row that means two things.
        let shuffled = IngestLine.csv(.attribution, [
            (["Region"] + names.reversed() + ["Campaign"]).joined(separator: ","),
            (["KR"] + values.reversed() + ["spring"]).joined(separator: ","),
            (["KR"] + values.reversed() + ["autumn"]).joined(separator: ","),
        ])
        #expect(outcomes(shuffled).last == "3 rejected: column 'Campaign' given twice, with different values")
        #expect(outcomes(canonical) == ["2 accepted"])
        let row = try #require(acceptedRow(canonical[0]))
        #expect(try #require(acceptedRow(shuffled[0])) == row)
        #expect(row["customer_user_id"] == .text("u7") && row["appsflyer_id"] == .text("af7"))
        #expect(row["revenue"] == .text("1.99") && row["revenue_currency"] == .text("EUR") && row["revenue_usd"] == .null)
        var withUSD = values
        withUSD[10] = "2.10"
        let usd = IngestLine.csv(.attribution, [(["Region"] + names.reversed()).joined(separator: ","), (["KR"] + withUSD.reversed()).joined(separator: ",")])
        #expect(try #require(acceptedRow(usd[0]))["revenue_usd"] == .text("2.1"))
        // A purchase's install time is not kept: only an install's is ever read.
        #expect(row["is_retargeting_n"] == .integer(1) && row["install_wall_ms"] == .null)
        let install = IngestLine.csv(.attribution, [
            Self.mmpHeader, values.joined(separator: ",").replacingOccurrences(of: "af_purchase", with: "install"),
        ])
        let installRow = try #require(acceptedRow(install[0]))
        #expect(installRow["install_wall_ms"] == .integer(1_795_770_000_000))
        #expect(installRow["campaign"] == .text("spring"))
        #expect(installRow["idfv"] == .text("V1") && installRow["idfa"] == .text("A1"))
        // So only an install's is checked (`mmpUnusedCells`).
        let badInstallTime = IngestLine.csv(.attribution, [
            Self.mmpHeader, values.joined(separator: ",").replacingOccurrences(of: "2026-11-27 09:00:00", with: "yesterday"),
            values.joined(separator: ",").replacingOccurrences(of: "2026-11-27 09:00:00", with: "yesterday")
                .replacingOccurrences(of: "af_purchase", with: "install"),
        ])
        #expect(outcomes(badInstallTime) == ["2 accepted", #"3 rejected: bad time in 'Install Time': "yesterday""#])
    }

    @Test("MMP rows keep what attribution reads of their event: an install its campaign and device ids, a purchase its revenue (in USD when it has one), both their name and event value, every row its ids and time")
    func mmpColumnsKeptByEvent() throws {
        let line = { (event: String) in
            #"2026-11-28 10:00:00,\#(event),u7,V1,A1,af7,Facebook Ads,spring,1.99,EUR,2.10,"{""level"":3}",false,2026-11-27 09:00:00"#
        }
        let parsed = IngestLine.csv(.attribution, [Self.mmpHeader, line("install"), line("af_purchase"), line("af_login"),
                                                   "2026-11-28 10:00:00,af_login,u7,V1,,,,,,,,,,"])
        #expect(outcomes(parsed) == ["2 accepted", "3 accepted", "4 accepted", "5 accepted"])
        let (install, purchase, login, bare) = try (#require(acceptedRow(parsed[0])), #require(acceptedRow(parsed[1])),
                                                    #require(acceptedRow(parsed[2])), #require(acceptedRow(parsed[3])))
        let valueKey = SQLValue.blob(StableID.bytes(#"{"level":3}"#))
        for row in [install, purchase, login] {
            #expect(row["customer_user_id"] == .text("u7") && row["appsflyer_id"] == .text("af7"))
            #expect(row["event_wall_ms"] == .integer(1_795_860_000_000))
        }
        #expect(install["event_name"] == .text("install") && install["event_value_key"] == valueKey)
        #expect(purchase["event_name"] == .text("af_purchase") && purchase["event_value_key"] == valueKey)
        // Another event is never a repeat of an install or a purchase: what a repeat is told by is not kept.
        #expect(login["event_name"] == .null && login["event_value_key"] == .null)
        #expect(install["media_source"] == .text("Facebook Ads") && install["campaign"] == .text("spring"))
        #expect(install["idfv"] == .text("V1") && install["idfa"] == .text("A1") && install["revenue"] == .null)
        #expect(purchase["media_source"] == .null && purchase["campaign"] == .null && purchase["idfv"] == .null)
        // Revenue in USD is what attribution reads; the revenue in another currency only without it.
        #expect(purchase["revenue"] == .null && purchase["revenue_currency"] == .null && purchase["revenue_usd"] == .text("2.1"))
        #expect(login["media_source"] == .null && login["idfv"] == .null && login["idfa"] == .null && login["revenue"] == .null)
        // A row whose only id is an IDFV is still accepted (the IDFV is an id the contract accepts),
        // and an empty event value has no hash.
        #expect(bare["idfv"] == .null && bare["customer_user_id"] == .text("u7"))
        let bareInstall = try #require(acceptedRow(IngestLine.csv(.attribution, [Self.mmpHeader, "2026-11-28 10:00:00,install,u7,V1,,,,,,,,,,"])[0]))
        #expect(bareInstall["event_name"] == .text("install") && bareInstall["event_value_key"] == .null)
    }

    @Test("MMP revenue: the revenue columns first, else af_revenue/af_currency from Event Value")
    func mmpRevenue() throws {
        let eventValue = #""{""af_revenue"":""4.99"",""af_currency"":""JPY""}""#
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,\(eventValue),false,2026-11-27 09:00:00",
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,0.99,EUR,1.07,\(eventValue),,",
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"{""af_revenue"":1100}",,"#,
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,0.99,EUR,,\(eventValue),,",
        ])
        #expect(outcomes(parsed) == ["2 accepted", "3 accepted", "4 accepted", "5 accepted"])
        let fallback = try #require(acceptedRow(parsed[0]))
        #expect(fallback["revenue"] == .text("4.99"))
        #expect(fallback["revenue_currency"] == .text("JPY"))
        #expect(fallback["revenue_usd"] == .null)
        #expect(fallback["install_wall_ms"] == .null)
        #expect(fallback["event_value_key"] == .blob(StableID.bytes(#"{"af_revenue":"4.99","af_currency":"JPY"}"#)))
        // With revenue in USD, the revenue in EUR is never read: not kept.
        let columns = try #require(acceptedRow(parsed[1]))
        #expect(columns["revenue"] == .null)
        #expect(columns["revenue_currency"] == .null)
        #expect(columns["revenue_usd"] == .text("1.07"))
        let numeric = try #require(acceptedRow(parsed[2]))
        #expect(numeric["revenue"] == .text("1100"))
        #expect(numeric["revenue_currency"] == .null)
        // No revenue in USD: the revenue columns are kept, and win over Event Value's.
        let converted = try #require(acceptedRow(parsed[3]))
        #expect(converted["revenue"] == .text("0.99") && converted["revenue_currency"] == .text("EUR") && converted["revenue_usd"] == .null)
    }

    @Test("MMP rejects: bad times and amounts, in the columns and in Event Value")
    func mmpRejects() {
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "yesterday,install,u1,,,,,,,,,,,",
            "2026-11-28 10:00:00,install,u1,,,,,,,,,,,soon",
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,\"0,99\",USD,,,,",
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"{""af_revenue"":""lots""}",,"#,
            ",install,u1,,,,,,,,,,,",
            "2026-11-28 10:00:00,,u1,,,,,,,,,,,",
        ])
        #expect(outcomes(parsed) == [
            #"2 rejected: bad time in 'Event Time': "yesterday""#,
            #"3 rejected: bad time in 'Install Time': "soon""#,
            #"4 rejected: bad amount in 'Event Revenue': "0,99""#,
            #"5 rejected: bad amount in 'Event Value.af_revenue': "lots""#,
            "6 rejected: missing required value 'Event Time'",
            "7 rejected: missing required value 'Event Name'",
        ])
    }

    @Test("an MMP Event Time is read from its cell unquoted and without the spaces around it, as its text would be")
    func mmpEventTimeCell() {
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,install,u1,,,,,,,,,,,",
            "\"  2026-11-28 10:00:00\t\",install,u1,,,,,,,,,,,",
            " 2026-11-28 10:00:00 ,install,u1,,,,,,,,,,,",
            "\"   \",install,u1,,,,,,,,,,,",
            "\" yesterday \",install,u1,,,,,,,,,,,",
        ])
        #expect(outcomes(parsed) == [
            "2 accepted", "3 accepted", "4 accepted", "5 rejected: missing required value 'Event Time'",
            #"6 rejected: bad time in 'Event Time': "yesterday""#,
        ])
        let plain = acceptedRow(parsed[0])?["event_wall_ms"]
        #expect(plain != nil && acceptedRow(parsed[1])?["event_wall_ms"] == plain && acceptedRow(parsed[2])?["event_wall_ms"] == plain)
    }

    @Test("a cell the row's event never uses costs it nothing: revenue on an install or a login, an Install Time on a purchase; the event's own cells still reject it")
    func mmpUnusedCells() {
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,install,u1,,,,,,\"0,99\",USD,lots,,,2026-11-28 09:59:00",
            "2026-11-28 10:00:00,af_login,u1,,,,,,1e3,,-,,,",
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,0.99,USD,,,,soon",
            "2026-11-28 10:00:00,af_complete_registration,u1,,,,,,,,,,,soon",
            // Near misses: a purchase's revenue and an install's own time are read, and checked.
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,\"0,99\",USD,,,,",
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,,,lots,,,",
            "2026-11-28 10:00:00,install,u1,,,,,,,,,,,soon",
        ])
        #expect(outcomes(parsed) == [
            "2 accepted", "3 accepted", "4 accepted", "5 accepted",
            #"6 rejected: bad amount in 'Event Revenue': "0,99""#,
            #"7 rejected: bad amount in 'Event Revenue USD': "lots""#,
            #"8 rejected: bad time in 'Install Time': "soon""#,
        ])
    }

    @Test("an Event Value that is not a JSON object is rejected when the revenue columns leave the revenue to it")
    func mmpBrokenEventValue() {
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"{""af_revenue"":""4.99"",""af_currency"":""USD""",,"#,
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"[4.99]",,"#,
            // Near misses: the revenue columns carry the revenue, an empty Event Value, and an empty marker.
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,4.99,USD,,"{""af_revenue"":""4.99""",,"#,
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,4.99,"{""af_revenue"":""4.99""",,"#,
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,,,",
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,null,,",
            // An install's or a login's Event Value is not read: whatever it holds costs the row nothing.
            #"2026-11-28 10:00:00,install,u1,,,,,,,,,"{""af_revenue"":""4.99""",,"#,
            #"2026-11-28 10:00:00,af_login,u1,,,,,,,,,"{""af_revenue"":""lots""}",,"#,
        ])
        #expect(outcomes(parsed) == [
            "2 rejected: bad JSON in 'Event Value': unexpected end of input at byte 41",
            "3 rejected: field 'Event Value' must be an object, not array",
            "4 accepted", "5 accepted", "6 accepted", "7 accepted", "8 accepted", "9 accepted",
        ])
    }

    @Test("Is Retargeting is true only for the text true, in any case", arguments: [
        ("true", 1), ("TRUE", 1), ("True", 1), ("tRuE", 1), (" true ", 1), ("false", 0), ("", 0), ("null", 0), ("yes", 0),
        ("tru", 0), ("truee", 0), ("true1", 0), ("trUe?", 0), ("t", 0), ("TRUTH", 0), ("4RUE", 0),
    ] as [(String, Int64)])
    func mmpRetargeting(cell: String, flag: Int64) throws {
        let parsed = IngestLine.csv(.attribution, [Self.mmpHeader, "2026-11-28 10:00:00,install,u1,,,,,,,,,,\(cell),"])
        #expect(acceptedRow(try #require(parsed.first))?["is_retargeting_n"] == .integer(flag))
    }

    @Test("spend and fx rows: dates, amounts and a positive rate")
    func spendAndFX() {
        let spend = IngestLine.csv(.spend, [
            "date,media_source,campaign,spend,currency", "2026-11-28,Facebook Ads,,12.50,USD", "2026-02-30,Facebook Ads,c,1,USD",
            "2026-11-28,Facebook Ads,c,,USD", "2026-11-28,Facebook Ads,c,1e3,USD",
        ])
        #expect(outcomes(spend) == [
            "2 accepted", #"3 rejected: bad date in 'date': "2026-02-30""#, "4 rejected: missing required value 'spend'",
            #"5 rejected: bad amount in 'spend': "1e3""#,
        ])
        #expect(acceptedRow(spend[0]) == [
            "day": .text("2026-11-28"), "media_source": .text("Facebook Ads"), "campaign": .null, "spend": .text("12.5"),
            "currency": .text("USD"),
        ])
        let fx = IngestLine.csv(.fx, ["date,currency,rate", "2026-11-28,KRW,0.00071", "2026-11-28,JPY,0", "2026-11-28,EUR,-1.1"])
        #expect(outcomes(fx) == [
            "2 accepted", "3 rejected: bad amount in 'rate': must be positive", "4 rejected: bad amount in 'rate': must be positive",
        ])
        #expect(acceptedRow(fx[0]) == ["day": .text("2026-11-28"), "currency": .text("KRW"), "rate": .text("0.00071")])
    }

    // MARK: - Currencies

    /// Near misses of a currency code: lower case, too short, a symbol, padded, too long, a digit, a letter beyond ASCII.
    static let badCurrencies = ["usd", "US", "US$", " USD", "USD ", "USDT", "U5D", "ÜSD"]

    @Test("an order's or Apple's V2 currency that is not three capital letters is rejected naming its field", arguments: badCurrencies)
    func badCurrencyInJSON(currency: String) {
        let order = #"{\#(Self.ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","price":"0.99","currency":"\#(currency)"}"#
        #expect(IngestLine.reason(order, .server) == #"bad currency in 'currency': "\#(currency)""#)
        let receipt = #"{\#(Self.receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"price":990,"currency":"\#(currency)"}]}"#
        #expect(IngestLine.reason(receipt, .receipts) == #"bad currency in 'transactions[0].currency': "\#(currency)""#)
        let notification = #"{"notificationType":"ONE_TIME_CHARGE","data":{"transactionInfo":{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"#
            + #""price":990,"currency":"\#(currency)"}}}"#
        #expect(IngestLine.reason(notification, .notifications) == #"bad currency in 'data.transactionInfo.currency': "\#(currency)""#)
    }

    @Test("a currency that is not three capital letters is rejected in spend, catalog and fx rows and in an MMP purchase's revenue",
          arguments: badCurrencies.filter { $0.first != " " && $0.last != " " })
    func badCurrencyInCSV(currency: String) {
        let quoted = #""\#(currency)""#
        #expect(outcomes(IngestLine.csv(.spend, ["date,media_source,campaign,spend,currency", "2026-11-28,Facebook Ads,c,12.50,\(currency)"]))
            == ["2 rejected: bad currency in 'currency': \(quoted)"])
        #expect(outcomes(IngestLine.csv(.catalog, [Self.catalogHeader, "gems60,consumable,,0.99,\(currency)"]))
            == ["2 rejected: bad currency in 'currency': \(quoted)"])
        #expect(outcomes(IngestLine.csv(.fx, ["date,currency,rate", "2026-11-28,\(currency),1.1"]))
            == ["2 rejected: bad currency in 'currency': \(quoted)"])
        #expect(outcomes(IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,0.99,\(currency),,,,",
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"{""af_revenue"":""0.99"",""af_currency"":""\#(currency)""}",,"#,
        ])) == [
            "2 rejected: bad currency in 'Event Revenue Currency': \(quoted)",
            "3 rejected: bad currency in 'Event Value.af_currency': \(quoted)",
        ])
        // AppsFlyer's API names name the column as its display name does, as every MMP reason.
        #expect(outcomes(IngestLine.csv(.attribution, [
            "event_time,event_name,customer_user_id,event_revenue,event_revenue_currency", "2026-11-28 10:00:00,af_purchase,u1,0.99,\(currency)",
        ])) == ["2 rejected: bad currency in 'Event Revenue Currency': \(quoted)"])
    }

    @Test("USD, JPY and KRW are read wherever a currency is; an absent optional currency stays absent", arguments: ["USD", "JPY", "KRW"])
    func goodCurrencies(currency: String) throws {
        let order = try #require(IngestLine.rows(
            #"{\#(Self.ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p","price":"1100","currency":"\#(currency)"}"#, .server))
        #expect(order[0].byColumn["currency"] == .text(currency))
        let receipt = try #require(IngestLine.rows(
            #"{\#(Self.receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000,"price":990,"currency":"\#(currency)"}]}"#, .receipts))
        #expect(receipt.last?.byColumn["currency"] == .text(currency))
        let spend = IngestLine.csv(.spend, ["date,media_source,campaign,spend,currency", "2026-11-28,Facebook Ads,c,12.50, \(currency) "])
        #expect(acceptedRow(spend[0])?["currency"] == .text(currency))
        let catalog = IngestLine.csv(.catalog, [Self.catalogHeader, "gems60,consumable,,1100,\(currency)"])
        #expect(acceptedRow(catalog[0])?["currency"] == .text(currency))
        let fx = IngestLine.csv(.fx, ["date,currency,rate", "2026-11-28,\(currency),0.0071"])
        #expect(acceptedRow(fx[0])?["currency"] == .text(currency))
        let mmp = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,af_purchase,u1,,,,,,1100,\(currency),,,,",
            #"2026-11-28 10:00:00,af_purchase,u1,,,,,,,,,"{""af_revenue"":""1100"",""af_currency"":""\#(currency)""}",,"#,
        ])
        #expect(mmp.map { acceptedRow($0)?["revenue_currency"] } == [.text(currency), .text(currency)])

        // Absent: no key, null, an empty string (with no price: a price needs its currency, `AppleSpellingTests`).
        for absent in ["", #","currency":null"#, #","currency":"""#] {
            let order = try #require(IngestLine.rows(
                #"{\#(Self.ts),"event":"order_created","order_id":"o1","user_id":"u1","product_id":"p"\#(absent)}"#, .server))
            #expect(order[0].byColumn["currency"] == .null)
            let receipt = try #require(IngestLine.rows(
                #"{\#(Self.receiptHead),"transactions":[{"transactionId":"1","productId":"p","purchaseDate":1795860905000\#(absent)}]}"#, .receipts))
            #expect(receipt.last?.byColumn["currency"] == .null)
        }
    }

    @Test("an MMP currency cell the row's revenue never uses costs the row nothing: an install, another event, revenue in USD, no revenue")
    func unusedMMPCurrency() throws {
        let parsed = IngestLine.csv(.attribution, [
            Self.mmpHeader,
            "2026-11-28 10:00:00,install,u1,,,af1,Facebook Ads,c,,usd,,,,",
            "2026-11-28 10:00:00,install,u1,,,af1,Facebook Ads,c,0.99,US$,,,,",
            "2026-11-28 10:00:00,af_login,u1,,,af1,,,0.99,usd,,,,",
            #"2026-11-28 10:00:00,af_login,u1,,,af1,,,,,,"{""af_revenue"":""0.99"",""af_currency"":""usd""}",,"#,
            // With revenue in USD, the revenue in another currency is not read.
            "2026-11-28 10:00:00,af_purchase,u1,,,af1,,,0.99,usd,1.07,,,",
            #"2026-11-28 10:00:00,af_purchase,u1,,,af1,,,,,1.07,"{""af_revenue"":""0.99"",""af_currency"":""usd""}",,"#,
            // No revenue: no currency of it to read.
            "2026-11-28 10:00:00,af_purchase,u1,,,af1,,,,usd,,,,",
            // The revenue columns carry the revenue: Event Value's currency is not read.
            #"2026-11-28 10:00:00,af_purchase,u1,,,af1,,,0.99,EUR,,"{""af_revenue"":""0.99"",""af_currency"":""usd""}",,"#,
            // Revenue without a currency, or with the MMP's spelling of an empty one, is kept without one, as before.
            "2026-11-28 10:00:00,af_purchase,u1,,,af1,,,0.99,,,,,",
            "2026-11-28 10:00:00,af_purchase,u1,,,af1,,,0.99,None,,,,",
        ])
        #expect(outcomes(parsed) == (2...11).map { "\($0) accepted" })
        let rows = try parsed.map { try #require(acceptedRow($0)) }
        #expect(rows.map { $0["revenue_currency"] } == [.null, .null, .null, .null, .null, .null, .null, .text("EUR"), .null, .null])
        #expect(rows[0]["media_source"] == .text("Facebook Ads") && rows[1]["media_source"] == .text("Facebook Ads"))
    }

    // MARK: - Spend media source

    @Test("spend names who was paid: the MMP's spellings of an empty media source are rejected as the empty cell is",
          arguments: ["", "None", "N/A", "null", "NULL", "   ", "\t", #"" ""#, #""None""#])
    func spendWithoutMediaSource(cell: String) {
        let parsed = IngestLine.csv(.spend, ["date,media_source,campaign,spend,currency", "2026-11-28,\(cell),c,12.50,USD"])
        #expect(outcomes(parsed) == ["2 rejected: missing required value 'media_source'"])
    }

    @Test("spend's organic (in any case), restricted and a paid source are read as they are, spaces around them dropped",
          arguments: [("organic", "organic"), ("Organic", "Organic"), ("restricted", "restricted"), ("Facebook Ads", "Facebook Ads"),
                      (" Facebook Ads ", "Facebook Ads")])
    func spendMediaSource(cell: String, stored: String) {
        let parsed = IngestLine.csv(.spend, ["date,media_source,campaign,spend,currency", "2026-11-28,\(cell),c,12.50,USD"])
        #expect(acceptedRow(parsed[0])?["media_source"] == .text(stored))
    }

    // MARK: - Redaction

    private func redact(_ text: String) -> String {
        Array(text.utf8).withUnsafeBufferPointer { Redaction.rejectText($0) }
    }

    @Test("long base64-like runs are replaced by their length; shorter ones are kept")
    func redactsTokens() throws {
        #expect(redact("abc " + String(repeating: "A", count: 200) + " def") == "abc [200 bytes redacted] def")
        let sixtyThree = String(repeating: "x", count: 63)
        #expect(redact("[" + sixtyThree + "]") == "[" + sixtyThree + "]")
        #expect(redact("[" + sixtyThree + "y]") == "[[64 bytes redacted]]")
        let jws = try AppleFixtureFile.text("testNotification")
        #expect(redact(#"{"signedPayload":""# + jws + #""}"#) == #"{"signedPayload":"[2505 bytes redacted]"}"#)
    }

    @Test("the text is cut to 300 bytes with an ellipsis; 300 bytes exactly are kept whole")
    func cutsLongLines() {
        let exactly300 = String(repeating: "a b ", count: 75)
        #expect(redact(exactly300) == exactly300)
        let longer = String(repeating: "a b ", count: 100)
        let cut = redact(longer)
        #expect(cut == String(longer.prefix(300)) + "…")
    }

    @Test("only the first 64 KiB of a huge line are scanned, and the text says it was cut")
    func scansOnlyTheStart() {
        #expect(redact(String(repeating: "A", count: 100_000)) == "[65536 bytes redacted]…")
        #expect(redact(String(repeating: "A", count: 65_536)) == "[65536 bytes redacted]")
    }

    @Test("invalid UTF-8 is shown as U+FFFD, still within 300 bytes, and marked as cut")
    func invalidUTF8() {
        let text = [UInt8](repeating: 0xFF, count: 300).withUnsafeBufferPointer { Redaction.rejectText($0) }
        #expect(text.utf8.count <= 303)
        #expect(text.hasPrefix(String(repeating: "\u{FFFD}", count: 100)))
        #expect(text.hasSuffix("…"))
    }
    @Test("a CSV cell iaprecon reads with invalid UTF-8 is rejected naming its column; valid UTF-8, or bad bytes in a column not read, are accepted")
    func invalidUTF8InCSVCells() throws {
        let scenario = try Scenario()
        func write(_ path: String, _ lines: [[UInt8]]) throws {
            try FileManager.default.createDirectory(atPath: scenario.input + "/attribution", withIntermediateDirectories: true)
            try Data(lines.joined(separator: [0x0A]) + [0x0A]).write(to: URL(fileURLWithPath: scenario.input + "/" + path))
        }
        try write("catalog.csv", [
            Array("product_id,type,subscription_group,price,currency".utf8),
            Array("gems".utf8) + [0xFF] + Array(",consumable,,0.99,USD".utf8),
            Array("gems300,consumable,,4.99,USD".utf8),
            Array("caf\u{E9},consumable,,0.99,EUR".utf8),
        ])
        try write("attribution/a.csv", [
            Array("Event Time,Event Name,Customer User ID,City".utf8),
            Array("2026-11-28 10:00:00,install,u_".utf8) + [0xE9] + Array(",Lyon".utf8),
            Array("2026-11-28 10:00:00,install,u_1,S".utf8) + [0xE3] + Array("o Paulo".utf8),
            Array("2026-11-28 10:00:00,install,\"u_\u{E9}\",Lyon".utf8),
        ])
        let result = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        let counts = Dictionary(uniqueKeysWithValues: result.ingest.files.map { ($0.path, $0.counts) })
        #expect(counts["catalog.csv"] == LineCounts(read: 3, accepted: 2, rejected: 1))
        #expect(counts["attribution/a.csv"] == LineCounts(read: 3, accepted: 2, rejected: 1))
        let rejects = try scenario.output("rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == [
            "attribution/a.csv,2,invalid UTF-8 in 'Customer User ID'",
            "catalog.csv,2,invalid UTF-8 in 'product_id'",
        ])
        let database = try scenario.open()
        var products: [String] = []
        try database.forEach("SELECT product_id FROM raw_catalog__products ORDER BY line") { products.append($0.string(0)) }
        #expect(products == ["gems300", "caf\u{E9}"])
    }
}
