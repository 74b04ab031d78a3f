import Testing
@testable import IAPRecon

/// Base64url and JWS payload decoding (RFC 4648 §5, RFC 7515): the signature is not checked (CONTRACT.md §1.2).
@Suite("Base64url and JWS")
struct Base64JWSTests {
    private func decode(_ text: String) -> [UInt8]? { Base64URL.decode(Array(text.utf8)) }

    // MARK: - Base64url

    @Test("RFC 4648 vectors decode with and without padding", arguments: [
        ("", ""), ("Zg", "f"), ("Zm8", "fo"), ("Zm9v", "foo"), ("Zm9vYg", "foob"), ("Zm9vYmE", "fooba"), ("Zm9vYmFy", "foobar"),
    ])
    func rfcVectors(encoded: String, plain: String) {
        #expect(decode(encoded) == Array(plain.utf8))
        let padded = encoded + String(repeating: "=", count: (4 - encoded.utf8.count % 4) % 4)
        #expect(decode(padded) == Array(plain.utf8))
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
    }

    @Test("the url alphabet and the standard alphabet both decode; encode writes the url one")
    func alphabets() {
        // 0xFB 0xFF = sextets 62, 63, 60.
        #expect(decode("-_8") == [0xFB, 0xFF])
        #expect(decode("+/8") == [0xFB, 0xFF])
        #expect(decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
    }

    @Test("malformed text is nil", arguments: [
        "QQ!", "Q Q", "QQ\n", "QUI*", "é", "Q.Q",
        "Q", "QUJDR",        // one leftover sextet cannot encode a byte
        "QQ=A", "Q=Q=",      // data after padding
        "QQ===", "====",     // more than two padding characters
    ])
    func malformed(text: String) {
        #expect(decode(text) == nil)
    }

    @Test("encode then decode gives back every byte value, at every length remainder")
    func roundTrip() {
        let all = (0...255).map { UInt8($0) }
        for length in [0, 1, 2, 3, 4, 5, 254, 255, 256] {
            let bytes = Array(all.prefix(length))
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(encoded.utf8.count == (length * 4 + 2) / 3)
            #expect(decode(encoded) == bytes)
        }
    }

    /// Sextet by sextet, the plain reading of RFC 4648: what `decode` must agree with on every input.
    private static func reference(_ text: [UInt8]) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: "=") { padding += 1; continue }
            guard padding == 0 else { return nil }
            let value: Int
            if let index = alphabet.firstIndex(of: byte) { value = index }
            else if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") { value = 62 }
            else if byte == UInt8(ascii: "_") || byte == UInt8(ascii: "/") { value = 63 }
            else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard bits < 6, padding <= 2 else { return nil }
        return output
    }

    @Test("a stray byte at every place of every block, and every padded and unpadded length, decode as the plain reading does")
    func strayBytesAndLengths() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/".utf8)
        // Neighbours of the alphabet's ranges, `=` out of place, high bytes and NUL.
        let strays: [UInt8] = [0x40, 0x5B, 0x60, 0x7B, 0x2A, 0x3A, 0x2C, 0x2E, 0x3D, 0x80, 0xC0, 0xFF, 0x00, 0x20]
        for length in 0...21 {
            let valid = (0..<length).map { alphabet[($0 &* 29 &+ length) % alphabet.count] }
            for padding in 0...3 {
                let text = valid + Array(repeating: UInt8(ascii: "="), count: padding)
                #expect(Base64URL.decode(text) == Self.reference(text), "\(text)")
            }
            for place in 0..<length {
                for stray in strays {
                    var text = valid
                    text[place] = stray
                    // Nil but for `=` where padding may stand.
                    let expected = Self.reference(text)
                    #expect(stray == UInt8(ascii: "=") || expected == nil)
                    #expect(Base64URL.decode(text) == expected, "\(text)")
                    var decoded = [UInt8](repeating: 7, count: 5)
                    let ok = text.withUnsafeBufferPointer { Base64URL.decode($0, into: &decoded) }
                    #expect(ok == (expected != nil) && (!ok || decoded == expected), "\(text)")
                }
            }
            // In place into storage longer and shorter than the bytes: exactly the bytes.
            for held in [0, 1, length, length * 2] {
                var decoded = [UInt8](repeating: 0xEE, count: held)
                let ok = valid.withUnsafeBufferPointer { Base64URL.decode($0, into: &decoded) }
                if let expected = Self.reference(valid) { #expect(ok && decoded == expected, "\(valid)") } else { #expect(!ok) }
            }
        }
    }

    @Test("on 20,000 random texts (mostly valid, some with a stray byte or misplaced padding) decode agrees with the plain reading")
    func agreesWithReference() {
        var random = SystemRandomNumberGenerator()
        let valid = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/".utf8)
        var accepted = 0
        for _ in 0..<20_000 {
            var text = (0..<Int.random(in: 0...40, using: &random)).map { _ in valid.randomElement(using: &random) ?? 65 }
            switch Int.random(in: 0..<6, using: &random) {
            case 0: if !text.isEmpty { text[Int.random(in: 0..<text.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            case 1: text += Array(repeating: UInt8(ascii: "="), count: Int.random(in: 1...3, using: &random))
            case 2: if !text.isEmpty { text.insert(UInt8(ascii: "="), at: Int.random(in: 0..<text.count, using: &random)) }
            default: break
            }
            let expected = Self.reference(text)
            #expect(Base64URL.decode(text) == expected, "\(String(decoding: text, as: UTF8.self))")
            if expected != nil { accepted += 1 }
        }
        #expect(accepted > 5_000 && accepted < 20_000, "both kinds were tried: \(accepted) accepted")
    }

    // MARK: - JWS

    @Test("a JWS payload decodes to its JSON object; the signature part may be anything")
    func minimalJWS() throws {
        let payload = Base64URL.encode(Array(#"{"transactionId":"1","price":990}"#.utf8))
        let object = try JWS.payload("eyJhbGciOiJub25lIn0." + payload + ".")
        #expect(JSONValue.object(object) == .object([("transactionId", .string("1")), ("price", .number("990"))]))
        #expect(try JWS.payload("x.e30.not-a-signature").members.isEmpty)
    }

    static let undecodableJWS: [(String, JWSError)] = [
        ("signed_transaction_info_value", .notThreeParts),
        ("a.e30", .notThreeParts),
        ("a.e30.b.c", .notThreeParts),
        ("a..c", .notThreeParts),
        ("a.e3!.c", .badBase64),
        ("a.e.c", .badBase64),
        ("a." + Base64URL.encode(Array("oops".utf8)) + ".c", .payload(JSONSyntaxError(message: "unexpected character", offset: 0))),
        ("a." + Base64URL.encode(Array(#"{"a":1"#.utf8)) + ".c", .payload(JSONSyntaxError(message: "unexpected end of input", offset: 6))),
        ("a." + Base64URL.encode(Array("[1]".utf8)) + ".c", .payloadNotObject),
    ]

    @Test("a JWS that cannot be decoded says why", arguments: undecodableJWS)
    func badJWS(jws: String, expected: JWSError) {
        #expect(throws: expected) { try JWS.payload(jws) }
    }

    // MARK: - Apple's JWS fixtures

    /// Every JWS fixture's payload, decoded independently (python3 `base64.urlsafe_b64decode`, `json.loads`).
    static let jwsPayloads: [(file: String, payload: JSONValue)] = [
        ("transactionInfo", .object([
            ("environment", .string("Sandbox")),
            ("bundleId", .string("com.example")),
            ("signedDate", .number("1672956154000")),
        ])),
        ("renewalInfo", .object([
            ("environment", .string("Sandbox")),
            ("signedDate", .number("1672956154000")),
        ])),
        ("testNotification", .object([
            ("data", .object([
                ("appAppleId", .number("1234")),
                ("environment", .string("Sandbox")),
                ("bundleId", .string("com.example")),
            ])),
            ("notificationUUID", .string("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")),
            ("signedDate", .number("1681314324000")),
            ("notificationType", .string("TEST")),
        ])),
        ("wrongBundleId", .object([
            ("data", .object([("bundleId", .string("com.example.wrong"))])),
            ("notificationUUID", .string("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")),
            ("notificationType", .string("TEST")),
        ])),
        ("missingX5CHeaderClaim", .object([
            ("data", .object([("bundleId", .string("com.example"))])),
            ("notificationUUID", .string("9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")),
            ("notificationType", .string("TEST")),
        ])),
        ("xcode-signed-transaction", .object([
            ("inAppOwnershipType", .string("PURCHASED")),
            ("purchaseDate", .number("1697679936049.7297")),
            ("subscriptionGroupIdentifier", .string("6F3A93AB")),
            ("signedDate", .number("1697679936056.485")),
            ("originalPurchaseDate", .number("1697679936049.7297")),
            ("isUpgraded", .bool(false)),
            ("deviceVerification", .string("sGDnpg+ozb8uwDSuCDZ2oVZo1CKrbB8ujR8VxCxhykRwyBIK6x6XCyERm8yWrzE8")),
            ("offerType", .number("1")),
            ("quantity", .number("1")),
            ("transactionId", .string("0")),
            ("type", .string("Auto-Renewable Subscription")),
            ("transactionReason", .string("PURCHASE")),
            ("productId", .string("pass.premium")),
            ("expiresDate", .number("1700358336049.7297")),
            ("environment", .string("Xcode")),
            ("storefrontId", .string("143441")),
            ("originalTransactionId", .string("0")),
            ("bundleId", .string("com.example.naturelab.backyardbirds.example")),
            ("deviceVerificationNonce", .string("7edea87d-98f0-42d0-9682-49ca81022f73")),
            ("webOrderLineItemId", .string("0")),
            ("storefront", .string("USA")),
        ])),
        ("xcode-signed-renewal-info", .object([
            ("deviceVerification", .string("u+W1oQTqvFHOQ+ZBe4Q0xPMC28kqEFvbbsEPpLKDVRFv1GJGegmrNHVoOYMOPvb2")),
            ("productId", .string("pass.premium")),
            ("deviceVerificationNonce", .string("3439919e-87c9-47b6-aeee-2823f7a9d3c3")),
            ("renewalDate", .number("1700358336049.7297")),
            ("originalTransactionId", .string("0")),
            ("recentSubscriptionStartDate", .number("1697679936049.7297")),
            ("autoRenewStatus", .number("1")),
            ("signedDate", .number("1697679936711.0747")),
            ("environment", .string("Xcode")),
            ("autoRenewProductId", .string("pass.premium")),
        ])),
        ("xcode-signed-app-transaction", .object([
            ("bundleId", .string("com.example.naturelab.backyardbirds.example")),
            ("applicationVersion", .string("1")),
            ("deviceVerificationNonce", .string("48c8b92d-ce0d-4229-bedf-e61b4f9cfc92")),
            ("receiptType", .string("Xcode")),
            ("receiptCreationDate", .number("1697680122257.447")),
            // The payload writes `\/`: the escape is decoded.
            ("deviceVerification", .string("cYUsXc53EbYc0pOeXG5d6/31LGHeVGf84sqSN0OrJi5u/j2H89WWKgS8N0hMsMlf")),
            ("requestDate", .number("1697680122257.447")),
            ("originalApplicationVersion", .string("1")),
            ("originalPurchaseDate", .number("-62135769600000")),
        ])),
    ]

    @Test("every JWS fixture's payload decodes to exactly its members, in order", arguments: jwsPayloads)
    func fixturePayload(fixture: (file: String, payload: JSONValue)) throws {
        let jws = try AppleFixtureFile.text(fixture.file)
        #expect(JSONValue.object(try JWS.payload(jws)) == fixture.payload)
    }

    @Test("the table above covers every three-part JWS file in the fixture folder")
    func everyJWSFixtureIsCovered() throws {
        var jwsFiles: [String] = []
        for name in try AppleFixtureFile.names() where !name.contains(".") {
            if try AppleFixtureFile.text(name).split(separator: ".", omittingEmptySubsequences: false).count == 3 {
                jwsFiles.append(name)
            }
        }
        #expect(jwsFiles == Self.jwsPayloads.map(\.file).sorted())
    }

    @Test("JWS headers decode too: ES256 with an x5c chain, Xcode's with escaped slashes")
    func fixtureHeaders() throws {
        func header(_ file: String) throws -> JSONValue {
            let jws = try AppleFixtureFile.text(file)
            let first = try #require(jws.split(separator: ".").first)
            return try JSONParser.parse(try #require(Base64URL.decode(Array(first.utf8))))
        }
        let signed = try header("transactionInfo")
        #expect(signed["alg"] == .string("ES256"))
        #expect(signed["typ"] == .string("JWT"))
        #expect(signed["x5c"]?.arrayValue?.count == 3)

        let missing = try header("missingX5CHeaderClaim")
        #expect(missing["x5c"] == nil)
        #expect(missing["x5cwrong"]?.arrayValue?.count == 3)

        let xcode = try header("xcode-signed-transaction")
        #expect(xcode["kid"] == .string("Apple_Xcode_Key"))
        guard case .string(let certificate)? = xcode["x5c"]?.arrayValue?.first else {
            Issue.record("no x5c certificate")
            return
        }
        #expect(certificate.contains("II3s/ufM0g9D"))  // written `II3s\/ufM0g9D` in the header
        // The certificate is standard base64 with padding; it is DER naming StoreKit Testing in Xcode.
        let der = try #require(Base64URL.decode(Array(certificate.utf8)))
        #expect(der.prefix(2) == [0x30, 0x82])
        #expect(String(decoding: der, as: UTF8.self).contains("StoreKit Testing in Xcode"))
    }

    @Test("the non-JWS base64 fixtures decode with the standard alphabet and padding")
    func standardBase64Fixtures() throws {
        let legacy = try #require(Base64URL.decode(Array(try AppleFixtureFile.text("legacyTransaction").utf8)))
        #expect(String(decoding: legacy, as: UTF8.self) == "{\n\"purchase-info\" = \"ewoidHJhbnNhY3Rpb24taWQiID0gIjMzOTkzMzk5IjsKfQo=\";\n}\n")
        let inner = try #require(decode("ewoidHJhbnNhY3Rpb24taWQiID0gIjMzOTkzMzk5IjsKfQo="))
        #expect(String(decoding: inner, as: UTF8.self) == "{\n\"transaction-id\" = \"33993399\";\n}\n")
        #expect(throws: JWSError.notThreeParts) { try JWS.payload(try AppleFixtureFile.text("legacyTransaction")) }

        // PKCS#7 signedData in BER with indefinite lengths.
        let pkcs7Prefix: [UInt8] = [0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07]
        let empty = try #require(Base64URL.decode(Array(try AppleFixtureFile.text("xcode-app-receipt-empty").utf8)))
        #expect(empty.count == 1589)
        #expect(Array(empty.prefix(12)) == pkcs7Prefix)
        let withTransaction = try #require(Base64URL.decode(Array(try AppleFixtureFile.text("xcode-app-receipt-with-transaction").utf8)))
        #expect(withTransaction.count == 1739)
        #expect(Array(withTransaction.prefix(12)) == pkcs7Prefix)
        #expect(Array(withTransaction[294..<306]) == Array("pass.premium".utf8))
    }
}
