import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// Ingest reads each line where it lies, on a tape (`JSONTape`), and a JWS's payload from the
/// line's bytes: what it accepts and rejects is what the whole parsed value would give, down to the
/// values no parser reads, the names written with escapes and the JWS written with them.
@Suite("Lines read in place")
struct InPlaceReadingTests {
    static let order = #"{"ts":"2026-11-28T10:15:02.123Z","event":"order_created","order_id":"o1","product_id":"gems60","price":"0.99","currency":"USD""#
    static let receiptHead = #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001""#

    private func column(_ name: String, _ rows: [RawRow]?, item: Int = 0) -> SQLValue? {
        rows.flatMap { $0.count > item ? $0[item].byColumn[name] : nil }
    }

    /// A receipts line carrying `jws` (its JSON text, escapes and all) in `signed_transactions`.
    private func receipt(jwsText: String) -> String {
        Self.receiptHead + #","signed_transactions":[""# + jwsText + #""]}"#
    }

    private func payload(_ transactionID: String, extra: String = "") -> String {
        "{" + #""transactionId":"\#(transactionID)","productId":"gems60","purchaseDate":1795860902000,"signedDate":1795860902000"# + extra + "}"
    }

    // MARK: - Names

    @Test("a name written with an escape is the name it spells: read, and a second of it with another value rejects")
    func escapedNames() throws {
        let rows = try #require(IngestLine.rows(Self.order + #","us\u0065r_id":"u1","pr\u0069ce":"0.99"}"#, .server))
        #expect(column("user_id", rows) == .text("u1"))
        #expect(column("price", rows) == .text("0.99"))
        #expect(IngestLine.reason(Self.order + #","user_id":"u1","price":"0.99","pr\u0069ce":"99.00"}"#, .server)
            == "field 'price' given twice, with different values")
        // A backslash escaped is a backslash: `user\_id` is another name, and `user_id` is missing.
        #expect(IngestLine.reason(Self.order + #","user\\_id":"u1"}"#, .server) == "missing required field 'user_id'")
    }

    @Test("a name given twice with one value, written two ways, is one value; with two values, rejected")
    func repeatedNames() throws {
        let same = try #require(IngestLine.rows(Self.order + #","user_id":"u1","user_id":"\u00751"}"#, .server))
        #expect(column("user_id", same) == .text("u1"))
        // The same object twice, spaced otherwise.
        let response = try #require(IngestLine.rows(Self.receiptHead + #","response":{"status":21004},"response":{ "status" : 21004 }}"#, .receipts))
        #expect(column("status_n", response) == .integer(21004))
        // As JSON values, 21004 and 21004.0 are two.
        #expect(IngestLine.reason(Self.receiptHead + #","response":{"status":21004},"response":{"status":21004.0}}"#, .receipts)
            == "field 'response' given twice, with different values")
        #expect(IngestLine.reason(Self.order + #","user_id":"u1","user_id":"u2"}"#, .server) == "field 'user_id' given twice, with different values")
    }

    // MARK: - Values no parser reads

    @Test("a string no parser reads is still checked: bad UTF-8 in it, or in a name, rejects the line where it ends", arguments: [
        [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], Array(#"\n"#.utf8) + [0xC3, 0x28],
    ] as [[UInt8]])
    func unreadInvalidUTF8(bad: [UInt8]) {
        let value = Array((Self.order + #","user_id":"u1","note":""#).utf8) + bad + Array(#""}"#.utf8)
        // The offset is the closing quote's, 1-based: the string is checked whole when it ends.
        #expect(reason(value) == "not JSON: invalid UTF-8 in string at byte \(value.count)")
        let name = Array((Self.order + #","user_id":"u1",""#).utf8) + bad + Array(#"":1}"#.utf8)
        #expect(reason(name) == "not JSON: invalid UTF-8 in string at byte \(name.count - 2)")
        // Near miss: well-formed UTF-8 there is read past.
        let good = Array((Self.order + #","user_id":"u1","note":""#).utf8) + [0xF0, 0x9F, 0x98, 0x80] + Array(#""}"#.utf8)
        #expect(reason(good) == nil)
    }

    private func reason(_ bytes: [UInt8], _ kind: SourceKind = .server) -> String? {
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            SourceFileParser.parseJSONLine(LineReader.Line(number: 1, bytes: buffer, tooLong: false), kind: kind, rules: IngestLine.unsigned)
        }
        if case .rejected(let reason) = parsed.outcome { return reason }
        return nil
    }

    @Test("bad UTF-8 in a JWS payload's member no parser reads rejects the line, naming the JWS")
    func unreadInvalidUTF8InPayload() {
        let text = Array(payload("1", extra: #","note":"x"#).utf8) + [0xFF] + Array(#""}"#.utf8)
        let jws = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(text) + ".c2ln"
        #expect(IngestLine.reason(receipt(jwsText: jws), .receipts)
            == "bad JWS in 'signed_transactions[0]': payload is not JSON: invalid UTF-8 in string at byte \(text.count)")
    }

    // MARK: - JWS written with escapes

    @Test("a JWS written with escapes is read by its text: the payload decoded, the line accepted as the plain one is")
    func escapedJWS() throws {
        let encoded = Base64URL.encode(Array(payload("2000000900000041").utf8))
        let plain = "eyJhbGciOiJFUzI1NiJ9." + encoded + ".c2/ln"
        // A payload's base64 begins `eyJ` (`{"`): its first letter, the dots and the slash are written escaped.
        #expect(encoded.hasPrefix("e"))
        let escaped = #"eyJhbGciOiJFUzI1NiJ9\u002e\u0065"# + encoded.dropFirst() + #"\u002Ec2\/ln"#
        let plainRows = try #require(IngestLine.rows(receipt(jwsText: plain), .receipts))
        let escapedRows = try #require(IngestLine.rows(receipt(jwsText: escaped), .receipts))
        #expect(column("transaction_id", escapedRows, item: 1) == .text("2000000900000041"))
        #expect(escapedRows.map(\.byColumn) == plainRows.map(\.byColumn))
        // Through a V2 notification's signedPayload too, with its transaction's JWS escaped inside the payload.
        let notification = #"{"notificationType":"ONE_TIME_CHARGE","signedDate":1795860903000,"data":{"signedTransactionInfo":"\#(escaped)"}}"#
        let envelope = #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9\u002e\#(Base64URL.encode(Array(notification.utf8)))\u002ec2ln"}"#
        let rows = try #require(IngestLine.rows(envelope, .notifications))
        #expect(column("transaction_id", rows, item: 1) == .text("2000000900000041"))
    }

    @Test("a signed JWS written with an escape verifies on its text; one changed byte still breaks it")
    func escapedSignedJWS() throws {
        let jws = TestSigningChain.signer.jws(payload: Array(payload("2000000900000042").utf8))
        let rules = LineRules(verifier: JWSVerifier(.testChain))
        let escaped = jws.replacingOccurrences(of: ".", with: #"\u002e"#)
        let rows = try #require(IngestLine.rows(receipt(jwsText: escaped), .receipts, rules: rules))
        #expect(column("transaction_id", rows, item: 1) == .text("2000000900000042"))
        let parts = jws.split(separator: ".")
        let altered = parts[0] + #"\u002e"# + Base64URL.encode(Array(payload("2000000900000043").utf8)) + #"\u002e"# + parts[2]
        #expect(IngestLine.reason(receipt(jwsText: String(altered)), .receipts, rules: rules) == "bad signature in 'signed_transactions[0]'")
    }

    @Test("non-ASCII in a JWS is no base64, written raw or escaped; bad UTF-8 in it is no JSON")
    func nonASCIIJWS() {
        let expected = "bad JWS in 'signed_transactions[0]': payload is not base64url"
        #expect(IngestLine.reason(receipt(jwsText: "eyJ9.e30é.c2ln"), .receipts) == expected)
        #expect(IngestLine.reason(receipt(jwsText: #"eyJ9.e30\u00e9.c2ln"#), .receipts) == expected)
        let line = Array(receipt(jwsText: "eyJ9.e30").utf8)
        let bad = Array(line.dropLast(3)) + [0xE9] + Array(line.suffix(3))
        #expect(reason(bad, .receipts) == "not JSON: invalid UTF-8 in string at byte \(bad.count - 1)")
    }

    // MARK: - One tape for many lines

    @Test("one tape for a file's lines: each line reads as it would on its own, after longer, shorter or broken ones")
    func tapeAcrossLines() throws {
        let jws = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(Array(payload("2000000900000044").utf8)) + ".c2ln"
        let longReceipt = Self.receiptHead
            + #","response":{"status":0,"receipt":{"bundle_id":"b","in_app":[{"transaction_id":"1","product_id":"p","purchase_date_ms":"1795860902000"},"#
            + #"{"transaction_id":"2","product_id":"p","purchase_date_ms":"1795860903000"}]}},"signed_transactions":[""# + jws + #"",""# + jws + #""]}"#
        let shortReceipt = receipt(jwsText: jws)
        let lines: [(String, SourceKind)] = [
            (longReceipt, .receipts), (Self.order + #","user_id":"u1"}"#, .server), (longReceipt, .receipts),
            (longReceipt.replacingOccurrences(of: "\"in_app\":[", with: "\"in_app\":[[,"), .receipts),
            (shortReceipt, .receipts), (#"{"ts":"2026-11-28T10:15:02Z","event":"delivered"}"#, .server), (shortReceipt, .receipts),
        ]
        let tape = JSONTape()
        for (number, (text, kind)) in lines.enumerated() {
            let bytes = Array(text.utf8)
            let (shared, fresh) = bytes.withUnsafeBufferPointer { buffer in
                let line = LineReader.Line(number: number + 1, bytes: buffer, tooLong: false)
                return (SourceFileParser.parseJSONLine(line, kind: kind, rules: IngestLine.unsigned, tape: tape),
                        SourceFileParser.parseJSONLine(line, kind: kind, rules: IngestLine.unsigned))
            }
            #expect(shared == fresh, "line \(number + 1)")
        }
        #expect(IngestLine.rows(longReceipt, .receipts)?.count == 5)
    }
}
