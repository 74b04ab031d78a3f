import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// CONTRACT.md §1.8 from an attacker's side: JWS a client or a hostile file could bring, each
/// rejected with its reason, never accepted silently, and judged alike by libcrypto's verify and
/// by a key's table (`PrecomputedVerifyKey`).
@Suite("JWS signatures under attack")
struct SignatureAttackTests {
    /// A payload of the kind the generator signs, signed at `signed`.
    private static func transactionPayload(_ transactionID: String, signed: String = "2026-11-28T10:00:00Z",
                                           environment: String = "Production") -> [UInt8] {
        Array(Line.v2(transactionID, "gems300", purchase: signed, price: 4990, environment: environment)
            .replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":1,\"signedDate\":\(Line.ms(signed))").utf8)
    }

    /// The verdict of `jws` by a verifier of `check` that checks through libcrypto, and by one that checks
    /// through the key's table from the first signature: the two must agree, and the agreed one is returned.
    private static func verdict(_ check: SignatureCheck, _ jws: String, signedMs: Int64? = Line.ms("2026-11-28T10:00:00Z"),
                                environment: String? = "Production", sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        let plain = JWSVerifier(check, keyTableAfter: .max).failure(jws, signedMs: signedMs, environment: environment)
        let tabled = JWSVerifier(check, keyTableAfter: 0).failure(jws, signedMs: signedMs, environment: environment)
        #expect(plain == tabled, "libcrypto and the key's table disagree", sourceLocation: sourceLocation)
        return plain
    }

    /// The `ca-` fixtures' root, trusted.
    private static func caRoot() throws -> SignatureCheck {
        .verify(extraRoots: [try SignatureFixture.certificate("ca-root.pem")])
    }

    private static func caLeafKey() throws -> [UInt8] {
        TestSigningChain.hex(try SignatureFixture.text("ca-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// A JWS of a Production transaction signed by the `ca-` leaf key under the chain of `names` (fixture files).
    private static func caSigned(_ names: [String], signed: String = "2026-11-28T10:00:00Z", environment: String = "Production") throws -> String {
        let signer = try #require(ES256Signer(privateKey: try caLeafKey(), x5c: try names.map(SignatureFixture.x5c)))
        return signer.jws(payload: transactionPayload("2000000950000001", signed: signed, environment: environment))
    }

    @Test("x5c of 1, 2 or 4 certificates, or in another order, is no App Store chain; leaf, intermediate, root is")
    func chainLengthAndOrder() throws {
        let check = try Self.caRoot()
        let (leaf, intermediate, root) = ("ca-leaf.pem", "ca-intermediate.pem", "ca-root.pem")
        #expect(Self.verdict(check, try Self.caSigned([leaf, intermediate, root])) == nil)
        #expect(Self.verdict(check, try Self.caSigned([leaf])) == "untrusted certificate chain (unable to get local issuer certificate)")
        #expect(Self.verdict(check, try Self.caSigned([leaf, intermediate])) == "untrusted certificate chain (2 certificates, not 3)")
        #expect(Self.verdict(check, try Self.caSigned([leaf, intermediate, root, root])) == "untrusted certificate chain (4 certificates, not 3)")
        #expect(Self.verdict(check, try Self.caSigned([leaf, root, intermediate]))
                == "untrusted certificate chain (the second x5c certificate did not issue the leaf)")
        // The intermediate first: its path is two certificates, and its key did not sign.
        #expect(Self.verdict(check, try Self.caSigned([intermediate, leaf, root]))
                == "untrusted certificate chain (2 certificates up to the trusted root, not 3)")
    }

    @Test("a self-signed leaf, a leaf its x5c intermediate did not issue, and a chain to another root are untrusted")
    func leafNotUnderTheRoot() throws {
        let check = try Self.caRoot()
        #expect(Self.verdict(check, try Self.caSigned(["ca-self-signed-leaf.pem", "ca-intermediate.pem", "ca-root.pem"]))
                == "untrusted certificate chain (self-signed certificate)")
        // The leaf's own issuer is not given; the one given issued another leaf.
        #expect(Self.verdict(check, try Self.caSigned(["ca-leaf.pem", "ca-intermediate-2020.pem", "ca-root.pem"]))
                == "untrusted certificate chain (unable to get local issuer certificate)")
        // The same chain, trusted only with its root: under the generator's test root alone it is untrusted.
        #expect(Self.verdict(.testChain, try Self.caSigned(["ca-leaf.pem", "ca-intermediate.pem", "ca-root.pem"]))
                == "untrusted certificate chain (self-signed certificate in certificate chain)")
        // Locally signed payloads are held to the chain too.
        #expect(Self.verdict(check, try Self.caSigned(["ca-self-signed-leaf.pem"], environment: "Xcode"), environment: "Xcode")
                == "untrusted certificate chain (self-signed certificate)")
    }

    @Test("an intermediate that is no CA (basic constraints absent or CA:FALSE) issues nothing, even with the WWDR marker")
    func intermediateMustBeACA() throws {
        let check = try Self.caRoot()
        for (leaf, intermediate) in [("ca-leaf-under-no-basic-constraints.pem", "ca-intermediate-no-basic-constraints.pem"),
                                     ("ca-leaf-under-not-ca.pem", "ca-intermediate-not-ca.pem")] {
            for environment in ["Production", "Xcode"] {
                #expect(Self.verdict(check, try Self.caSigned([leaf, intermediate, "ca-root.pem"], environment: environment), environment: environment)
                        == "untrusted certificate chain (invalid CA certificate)", "\(intermediate), \(environment)")
            }
        }
    }

    @Test("an intermediate expired or not yet valid at signedDate fails the chain, though the leaf is valid")
    func intermediateValidity() throws {
        let check = try Self.caRoot()
        let old = ["ca-leaf-under-2020.pem", "ca-intermediate-2020.pem", "ca-root.pem"]
        #expect(Self.verdict(check, try Self.caSigned(old)) == "certificate expired at signing time")
        #expect(Self.verdict(check, try Self.caSigned(old, signed: "2020-06-01T00:00:00Z"), signedMs: Line.ms("2020-06-01T00:00:00Z")) == nil)
        let new = ["ca-leaf-under-from-2030.pem", "ca-intermediate-from-2030.pem", "ca-root.pem"]
        #expect(Self.verdict(check, try Self.caSigned(new)) == "certificate not yet valid at signing time")
        #expect(Self.verdict(check, try Self.caSigned(new, signed: "2031-01-01T00:00:00Z"), signedMs: Line.ms("2031-01-01T00:00:00Z")) == nil)
    }

    /// A genuine JWS of the test chain, and its parts.
    private static func genuine(_ transactionID: String = "2000000950000010") -> (jws: String, signingInput: String, signature: [UInt8]) {
        let jws = TestSigningChain.signer.jws(payload: transactionPayload(transactionID))
        let parts = jws.split(separator: ".").map(String.init)
        return (jws, parts[0] + "." + parts[1], Base64URL.decode(Array(parts[2].utf8)) ?? [])
    }

    @Test("a signature that is DER, zero, n or more, or of the wrong length is a bad signature; high s holds, as for Apple's library")
    func signatureValues() throws {
        let (jws, input, signature) = Self.genuine()
        #expect(signature.count == 64)
        #expect(Self.verdict(.testChain, jws) == nil)
        func with(_ raw: [UInt8]) -> String { input + "." + Base64URL.encode(raw) }
        let r = Array(signature[..<32]), s = Array(signature[32...])
        let order = KeyTableTests.order
        let zero = [UInt8](repeating: 0, count: 32)
        /// DER's INTEGER of a 32-byte big-endian number.
        func integer(_ bytes: [UInt8]) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(r) + integer(s)
        for (raw, what) in [([0x30, UInt8(body.count)] + body, "DER"), (zero + s, "r = 0"), (r + zero, "s = 0"), (order + s, "r = n"),
                            (r + order, "s = n"), (zero + zero, "both 0"), (Array(signature.prefix(63)), "63 bytes"), (signature + [0], "65 bytes"),
                            ([], "empty"), ([UInt8](repeating: 0xFF, count: 64), "r, s = 2^256 - 1")] {
            #expect(Self.verdict(.testChain, with(raw)) == "bad signature", "\(what)")
        }
        // n - s signs as s does: ECDSA and ES256 allow both, and so does Apple's library.
        let highS = Self.subtract(order, s)
        #expect(Self.verdict(.testChain, with(r + highS)) == nil)
    }

    /// a − b for 32-byte big-endian numbers, a ≥ b.
    private static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            result[index] = UInt8(difference < 0 ? difference + 256 : difference)
        }
        return result
    }

    @Test("a header or payload changed after signing is a bad signature, however little it changes what it says")
    func changedAfterSigning() throws {
        let (jws, _, _) = Self.genuine("2000000950000011")
        let parts = jws.split(separator: ".").map(String.init)
        let header = String(decoding: try #require(Base64URL.decode(Array(parts[0].utf8))), as: UTF8.self)
        let payload = String(decoding: try #require(Base64URL.decode(Array(parts[1].utf8))), as: UTF8.self)
        let headers = [header.replacingOccurrences(of: "{\"alg\"", with: "{ \"alg\""), header.replacingOccurrences(of: "}", with: ",\"kid\":\"x\"}")]
        for changed in headers {
            #expect(Self.verdict(.testChain, Base64URL.encode(Array(changed.utf8)) + "." + parts[1] + "." + parts[2]) == "bad signature", "\(changed.prefix(30))")
        }
        for changed in [payload.replacingOccurrences(of: "4990", with: "49900"), payload + " ", " " + payload] {
            #expect(Self.verdict(.testChain, parts[0] + "." + Base64URL.encode(Array(changed.utf8)) + "." + parts[2]) == "bad signature")
        }
        // The same bytes re-encoded with padding or the standard alphabet are other bytes to sign.
        let padded = parts[1] + String(repeating: "=", count: (4 - parts[1].count % 4) % 4)
        if padded != parts[1] {
            #expect(Self.verdict(.testChain, parts[0] + "." + padded + "." + parts[2]) == "bad signature")
        }
    }

    @Test("whitespace, a stray dot or a fourth part in a JWS is no JWS")
    func malformedCompactForm() throws {
        let (jws, _, _) = Self.genuine("2000000950000012")
        let parts = jws.split(separator: ".").map(String.init)
        for (text, what) in [(jws + ".", "trailing dot"), (jws + ".AA", "four parts"), (parts[0] + "." + parts[1] + ". " + parts[2], "space"),
                             (parts[0] + "." + parts[1] + ".\n" + parts[2], "newline"), (parts[0] + " ." + parts[1] + "." + parts[2], "space in header"),
                             (parts[0] + "." + parts[1], "two parts")] {
            #expect(Self.verdict(.testChain, text)?.hasPrefix("bad signature") == true, "\(what)")
        }
    }

    @Test("a header naming alg again under an escaped name is one given twice; extra header members are no harm")
    func headerMembers() throws {
        let payload = Self.transactionPayload("2000000950000013")
        let chain = TestSigningChain.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        func signed(_ header: String) -> String {
            let message = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
            return message + "." + Base64URL.encode(TestSigningChain.signer.sign(Array(message.utf8), nonceSeed: []))
        }
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"\\u0061lg\":\"none\"}")) == "bad signature (the header gives 'alg' twice)")
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"kid\":\"k\",\"typ\":\"JWT\"}")) == nil)
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"RS256\",\"x5c\":[\(chain)]}")) == "unsupported alg \"RS256\"")
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"es256\",\"x5c\":[\(chain)]}")) == "unsupported alg \"es256\"")
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"ES256\",\"x5c\":\"\(TestSigningChain.x5c[0])\"}")) == "untrusted certificate chain (no x5c header)")
        let nested = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(Self.verdict(.testChain, signed("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"deep\":\(nested)}")) == "bad signature (header is not base64url JSON)")
    }

    @Test("an x5c of more certificates than any chain has is refused before one is read; one of ten is still judged")
    func tooManyCertificates() throws {
        let payload = Self.transactionPayload("2000000950000030")
        func jws(_ count: Int) throws -> String {
            let x5c = [TestSigningChain.x5c[0]] + Array(repeating: TestSigningChain.x5c[1], count: count - 2) + [TestSigningChain.x5c[2]]
            return try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: x5c)).jws(payload: payload)
        }
        let limit = ChainVerdict.longestChain
        #expect(Self.verdict(.testChain, try jws(limit)) == "untrusted certificate chain (\(limit) certificates, not 3)")
        #expect(Self.verdict(.testChain, try jws(limit + 1)) == "untrusted certificate chain (\(limit + 1) certificates, more than \(limit))")
        #expect(Self.verdict(.testChain, try jws(5_000)) == "untrusted certificate chain (5000 certificates, more than \(limit))")
        // A locally signed payload is held to the same bound.
        #expect(Self.verdict(.testChain, try jws(limit + 1), environment: "Xcode") == "untrusted certificate chain (\(limit + 1) certificates, more than \(limit))")
    }

    @Test("a huge header is judged and its verdict kept, but its bytes are not kept to compare")
    func hugeHeaderNotKept() throws {
        let payload = Base64URL.encode(Self.transactionPayload("2000000950000031"))
        let chain = TestSigningChain.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        func signed(_ padding: Int) -> String {
            let header = "{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"kid\":\"\(String(repeating: "k", count: padding))\"}"
            let message = Base64URL.encode(Array(header.utf8)) + "." + payload
            return message + "." + Base64URL.encode(TestSigningChain.signer.sign(Array(message.utf8), nonceSeed: []))
        }
        let verifier = JWSVerifier(.testChain)
        let huge = signed(1 << 20)
        for _ in 0..<2 {
            #expect(verifier.failure(huge, signedMs: nil, environment: "Production") == nil)
        }
        #expect(verifier.rememberedHeaderBytes == 0)
        #expect(verifier.rememberedChainCount == 1)
        // The near miss: a header of the usual size is kept to compare.
        let usual = signed(10)
        #expect(verifier.failure(usual, signedMs: nil, environment: "Production") == nil)
        #expect(verifier.rememberedHeaderBytes == usual.prefix { $0 != "." }.utf8.count)
        #expect(verifier.rememberedHeaderBytes <= ChainVerdicts.recentHeaderLimit)
    }

    /// A `signedPayload` line whose envelope (`environment` in its `data`) `signer` signs, `data` holding `transaction`
    /// (a member of `data`: `"transactionInfo":{…}` or `"signedTransactionInfo":"…"`).
    private static func envelopeLine(_ signer: ES256Signer, type: String = "ONE_TIME_CHARGE", environment: String, transaction: String,
                                     uuid: Int) -> String {
        let envelope = "{\"notificationType\":\"\(type)\",\"notificationUUID\":\"5f6c2a4e-1b7d-4c3a-9e8f-2d1c0b9a8e\(uuid)\","
            + "\"signedDate\":\(Line.ms("2026-11-28T12:00:00Z")),\"data\":{\"environment\":\"\(environment)\",\(transaction)}}"
        return "{\"signedPayload\":\"\(signer.jws(payload: Array(envelope.utf8)))\"}"
    }

    @Test("a locally signed envelope vouches for no App Store transaction, decoded inside it or signed")
    func localEnvelopeDecodedTransaction() throws {
        // Leaf and intermediate under the test root: trusted for Xcode payloads, not as Apple's three certificates.
        let local = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: Array(TestSigningChain.x5c.prefix(2))))
        let rules = LineRules(verifier: JWSVerifier(.testChain))
        for environment in ["Production", "Sandbox"] {
            let decoded = "\"transactionInfo\":" + Line.v2("2000000950000020", "gems300", purchase: "2026-11-28T10:00:00Z", environment: environment)
            #expect(IngestLine.reason(Self.envelopeLine(local, environment: "Xcode", transaction: decoded, uuid: 10), .notifications, rules: rules)
                    == "untrusted certificate chain (locally signed, yet its transaction is a \(environment) one) in 'signedPayload.data.transactionInfo'")
        }
        // The near misses: the transaction of the local envelope is an Xcode one, said or not; an App Store envelope vouches for its own.
        let xcode = "\"transactionInfo\":" + Line.v2("2000000950000021", "gems300", purchase: "2026-11-28T10:00:00Z", environment: "Xcode")
        let unsaid = "\"transactionInfo\":" + Line.v2("2000000950000022", "gems300", purchase: "2026-11-28T10:00:00Z")
            .replacingOccurrences(of: ",\"environment\":\"Production\"", with: "")
        let production = "\"transactionInfo\":" + Line.v2("2000000950000023", "gems300", purchase: "2026-11-28T10:00:00Z")
        for (line, environment) in [(Self.envelopeLine(local, environment: "Xcode", transaction: xcode, uuid: 11), "Xcode"),
                                    (Self.envelopeLine(local, environment: "LocalTesting", transaction: unsaid, uuid: 12), "LocalTesting"),
                                    (Self.envelopeLine(TestSigningChain.signer, environment: "Production", transaction: production, uuid: 13), "Production")] {
            let rows = IngestLine.rows(line, .notifications, rules: rules)
            #expect(rows?.count == 2, "\(environment)")
            // The notification's row takes its transaction's environment.
            #expect(rows?.first?.values.contains(.text(environment)) == true, "\(environment)")
        }
    }

    @Test("a locally signed REFUND_REVERSED undoes no refund of an App Store transaction, though that transaction's own JWS holds")
    func localReversalOfAnAppStoreRefund() throws {
        let local = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: Array(TestSigningChain.x5c.prefix(2))))
        let rules = LineRules(verifier: JWSVerifier(.testChain))
        // A refunded transaction as the App Store signs it (a client or a log may hold a copy).
        let refunded = Array(Line.v2("2000000950000040", "gems300", purchase: "2026-11-20T10:00:00Z", price: 4990, revocation: "2026-11-22T10:00:00Z").utf8)
        let transaction = "\"signedTransactionInfo\":\"\(TestSigningChain.signer.jws(payload: refunded))\""
        func reversal(_ signer: ES256Signer, environment: String) -> String {
            Self.envelopeLine(signer, type: "REFUND_REVERSED", environment: environment, transaction: transaction, uuid: 20)
        }
        #expect(IngestLine.reason(reversal(local, environment: "Xcode"), .notifications, rules: rules)
                == "untrusted certificate chain (locally signed, yet its transaction is a Production one) in 'signedPayload.data.signedTransactionInfo'")
        // The near miss: the App Store's own reversal of it.
        #expect(IngestLine.rows(reversal(TestSigningChain.signer, environment: "Production"), .notifications, rules: rules)?.count == 2)
    }
}
