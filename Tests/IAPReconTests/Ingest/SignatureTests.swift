import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// The files of `Fixtures/signatures/` (see its PROVENANCE.md).
enum SignatureFixture {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/signatures").path

    static func bytes(_ name: String) throws -> [UInt8] {
        let path = folder + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else { throw SignatureFixtureMissing(path: path) }
        return [UInt8](data)
    }

    static func text(_ name: String) throws -> String { String(decoding: try bytes(name), as: UTF8.self) }

    /// The DER of the (first) certificate in a PEM fixture.
    static func certificate(_ name: String) throws -> [UInt8] {
        try #require(PEM.certificates(try text(name)).first)
    }

    /// The base64 DER of a PEM fixture, as an `x5c` entry.
    static func x5c(_ name: String) throws -> String {
        try text(name).split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
    }

    struct SignatureFixtureMissing: Error, CustomStringConvertible {
        var path: String
        var description: String { "fixture not found: \(path)" }
    }
}

/// CONTRACT.md §1.8: every JWS is checked as Apple's server libraries check it.
@Suite("JWS signatures")
struct SignatureTests {
    /// Apple's root and Apple's own test root (what its library's tests trust).
    private func appleTestRoot() throws -> JWSVerifier {
        JWSVerifier(.verify(extraRoots: [try SignatureFixture.bytes("testCA.der")]))
    }

    /// What the payload of `jws` says: its signing time and environment.
    private func facts(_ jws: String) throws -> (signedMs: Int64?, environment: String?) {
        let payload = try JWS.payload(jws)
        let data = payload["data"]?.objectValue
        return (payload["signedDate"].flatMap(Timestamp.parse), payload["environment"]?.stringValue ?? data?["environment"]?.stringValue)
    }

    private func failure(_ verifier: JWSVerifier, _ jws: String) throws -> String? {
        let (signedMs, environment) = try facts(jws)
        return verifier.failure(jws, signedMs: signedMs, environment: environment)
    }

    /// A payload of the kind the generator signs, signed at `signed`.
    private func transactionPayload(_ transactionID: String, signed: String, environment: String = "Production") -> [UInt8] {
        Array(Line.v2(transactionID, "gems300", purchase: signed, price: 4990, environment: environment)
            .replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":1,\"signedDate\":\(Line.ms(signed))").utf8)
    }

    @Test("Apple's signed test notification, transaction and renewal info verify against Apple's test root")
    func appleTestPayloadsVerify() throws {
        let verifier = try appleTestRoot()
        for name in ["testNotification", "transactionInfo", "renewalInfo"] {
            #expect(try failure(verifier, try SignatureFixture.text(name)) == nil, "\(name)")
        }
        // Through the notification parser: the envelope is accepted.
        let line = "{\"signedPayload\":\"\(try SignatureFixture.text("testNotification"))\"}"
        guard case .accepted = try IngestLine.notification(line, rules: LineRules(verifier: verifier)) else {
            Issue.record("Apple's test notification was not accepted")
            return
        }
    }

    @Test("a chain to another root is untrusted: Apple's test payloads under Apple's root alone")
    func otherRootIsUntrusted() throws {
        let appleOnly = JWSVerifier(.appleOnly)
        for name in ["testNotification", "transactionInfo", "renewalInfo"] {
            let reason = try failure(appleOnly, try SignatureFixture.text(name))
            #expect(reason?.hasPrefix("untrusted certificate chain") == true, "\(name): \(reason ?? "accepted")")
        }
        let line = "{\"signedPayload\":\"\(try SignatureFixture.text("testNotification"))\"}"
        #expect(throws: LineReject("untrusted certificate chain (self-signed certificate in certificate chain) in 'signedPayload'")) {
            try IngestLine.notification(line, rules: LineRules(verifier: appleOnly))
        }
    }

    @Test("one byte changed in a signed payload is a bad signature, and the unchanged one still verifies")
    func oneByteChanged() throws {
        let verifier = try appleTestRoot()
        let original = try SignatureFixture.text("transactionInfo")
        let parts = original.split(separator: ".").map(String.init)
        var payload = try #require(Base64URL.decode(Array(parts[1].utf8)))
        let index = try #require(payload.firstIndex(of: UInt8(ascii: "S")))  // "Sandbox" → "Tandbox"
        payload[index] = UInt8(ascii: "T")
        let altered = parts[0] + "." + Base64URL.encode(payload) + "." + parts[2]
        #expect(try failure(verifier, altered) == "bad signature")
        // The verdicts are cached per JWS: the original, before and after, is unaffected.
        #expect(try failure(verifier, original) == nil)
        #expect(try failure(verifier, altered) == "bad signature")
        #expect(try failure(verifier, original) == nil)
    }

    @Test("an expired leaf is rejected at signing time; the same leaf inside its validity is accepted")
    func expiredLeaf() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let signer = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        let verifier = JWSVerifier(.testChain)
        let late = signer.jws(payload: transactionPayload("2000000900000001", signed: "2026-11-28T10:00:00Z"))
        #expect(try failure(verifier, late) == "certificate expired at signing time")
        let inTime = signer.jws(payload: transactionPayload("2000000900000002", signed: "2020-06-01T10:00:00Z"))
        #expect(try failure(verifier, inTime) == nil)
    }

    @Test("a leaf not yet valid at signing time is rejected as not yet valid, not as expired")
    func leafNotYetValid() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let signer = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        let verifier = JWSVerifier(.testChain)
        // The leaf is valid through 2020 only.
        let early = signer.jws(payload: transactionPayload("2000000900000003", signed: "2019-12-31T23:59:59Z"))
        #expect(try failure(verifier, early) == "certificate not yet valid at signing time")
        let first = signer.jws(payload: transactionPayload("2000000900000004", signed: "2020-01-01T00:00:00Z"))
        #expect(try failure(verifier, first) == nil)
        let late = signer.jws(payload: transactionPayload("2000000900000005", signed: "2021-01-01T00:00:01Z"))
        #expect(try failure(verifier, late) == "certificate expired at signing time")
    }

    @Test("a JWS whose alg is not ES256 is rejected as unsupported, whatever its signature")
    func unsupportedAlg() throws {
        let verifier = JWSVerifier(.testChain)
        for algorithm in ["ES384", "none", "HS256"] {
            let signer = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: TestSigningChain.x5c, algorithm: algorithm))
            let jws = signer.jws(payload: transactionPayload("2000000900000003", signed: "2026-11-28T10:00:00Z"))
            #expect(try failure(verifier, jws) == "unsupported alg \"\(algorithm)\"")
        }
    }

    @Test("a header without alg, or with one that is not a string, is not said to name \"none\"")
    func missingAlg() throws {
        let verifier = JWSVerifier(.testChain)
        let signed = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000007", signed: "2026-11-28T10:00:00Z"))
        let rest = signed.split(separator: ".").dropFirst().joined(separator: ".")
        let chain = TestSigningChain.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        func verdict(_ header: String) -> String? {
            verifier.failure(Base64URL.encode(Array(header.utf8)) + "." + rest, signedMs: nil, environment: "Production")
        }
        #expect(verdict("{\"x5c\":[\(chain)]}") == "unsupported alg (the header has none)")
        #expect(verdict("{\"alg\":256,\"x5c\":[\(chain)]}") == "unsupported alg 256")
        #expect(verdict("{\"alg\":null,\"x5c\":[\(chain)]}") == "unsupported alg null")
        #expect(verdict("{\"alg\":\"none\",\"x5c\":[\(chain)]}") == "unsupported alg \"none\"")
    }

    @Test("a header giving alg or x5c twice with two values is refused, though signed; the same value twice is one header")
    func headerFieldGivenTwice() throws {
        let verifier = JWSVerifier(.testChain)
        let payload = transactionPayload("2000000900000008", signed: "2026-11-28T10:00:00Z")
        let chain = TestSigningChain.x5c.map { "\"\($0)\"" }.joined(separator: ",")
        /// `header` and the payload, signed by the test chain's leaf as they are.
        func verdict(_ header: String) -> String? {
            let message = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
            let signature = TestSigningChain.signer.sign(Array(message.utf8), nonceSeed: [])
            return verifier.failure(message + "." + Base64URL.encode(signature), signedMs: nil, environment: "Production")
        }
        // Another JSON reader takes the last alg, `none`: the header means two things.
        #expect(verdict("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"alg\":\"none\"}") == "bad signature (the header gives 'alg' twice)")
        #expect(verdict("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"x5c\":[]}") == "bad signature (the header gives 'x5c' twice)")
        #expect(verdict("{\"alg\":\"ES256\",\"x5c\":[\(chain)],\"alg\":\"ES256\"}") == nil)
        #expect(verdict("{\"alg\":\"ES256\",\"x5c\":[\(chain)]}") == nil)
    }

    @Test("each header keeps its own verdict: headers of one length a byte apart, more of them than the verifier compares first, in turn")
    func headersKeepTheirVerdicts() throws {
        let verifier = JWSVerifier(.testChain)
        let signed = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000004", signed: "2026-11-28T10:00:00Z"))
        let (signedMs, environment) = try facts(signed)
        // Headers of the same length differing in one byte (alg A0 … A9), and the genuine one between them.
        let algorithms = (0..<(ChainVerdicts.recentCount + 3)).map { "A\($0)" }
        let parts = signed.split(separator: ".")
        for round in 0..<3 {
            for algorithm in algorithms {
                let header = Base64URL.encode(Array("{\"alg\":\"\(algorithm)\"}".utf8))
                let jws = header + "." + parts[1] + "." + parts[2]
                #expect(verifier.failure(jws, signedMs: signedMs, environment: environment) == "unsupported alg \"\(algorithm)\"",
                        "round \(round), \(algorithm)")
                #expect(verifier.failure(signed, signedMs: signedMs, environment: environment) == nil, "round \(round), after \(algorithm)")
            }
        }
        #expect(verifier.failure("." + parts[1] + "." + parts[2], signedMs: signedMs, environment: environment)
                == "bad signature (header is not base64url JSON)")
        #expect(verifier.failure(signed, signedMs: signedMs, environment: environment) == nil)
    }

    @Test("a header that Swift's strings hold equal to the genuine one but whose bytes differ keeps its own verdict, in either order")
    func canonicallyEqualHeaders() throws {
        let signed = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000009", signed: "2026-11-28T10:00:00Z"))
        let (signedMs, environment) = try facts(signed)
        let header = String(signed.prefix { $0 != "." })
        // U+212A KELVIN SIGN is canonically equivalent to "K": the two texts are == as Strings, not as bytes.
        let kelvin = try #require(header.firstIndex(of: "K"))
        let lookalike = header.replacingCharacters(in: kelvin...kelvin, with: "\u{212A}") + signed.drop { $0 != "." }
        #expect(lookalike == signed && Array(lookalike.utf8) != Array(signed.utf8))
        for order in [[lookalike, signed], [signed, lookalike]] {
            let verifier = JWSVerifier(.testChain)
            for jws in order + order {
                let expected: String? = Array(jws.utf8) == Array(signed.utf8) ? nil : "bad signature (header is not base64url JSON)"
                #expect(verifier.failure(jws, signedMs: signedMs, environment: environment) == expected)
            }
        }
        // Past the few headers compared byte for byte, through the verdicts kept by header.
        let verifier = JWSVerifier(.testChain)
        #expect(verifier.failure(lookalike, signedMs: signedMs, environment: environment) == "bad signature (header is not base64url JSON)")
        for index in 0..<ChainVerdicts.recentCount {
            _ = verifier.failure(Base64URL.encode(Array("{\"alg\":\"D\(index)\"}".utf8)) + ".e30.AA", signedMs: nil, environment: nil)
        }
        #expect(verifier.failure(signed, signedMs: signedMs, environment: environment) == nil)
    }

    @Test("one line whose header looks like the genuine one costs only itself: the genuine JWS read after it are accepted")
    func lookalikeHeaderLineCostsOnlyItself() throws {
        let genuine = (0..<3).map { TestSigningChain.signer.jws(payload: transactionPayload("200000090000006\($0)", signed: "2026-11-28T10:00:00Z")) }
        let header = String(genuine[0].prefix { $0 != "." })
        let kelvin = try #require(header.firstIndex(of: "K"))
        let lookalike = header.replacingCharacters(in: kelvin...kelvin, with: "\u{212A}") + genuine[0].drop { $0 != "." }
        let scenario = try Scenario()
        try scenario.catalog()
        // Read first: its file sorts first.
        try scenario.write("receipts/a.jsonl", ["{\"received_at\":\"2026-11-28T10:00:00Z\",\"user_id\":\"u_9\",\"signed_transactions\":[\"\(lookalike)\"]}"])
        try scenario.write("receipts/r.jsonl", genuine.enumerated().map { index, jws in
            "{\"received_at\":\"2026-11-28T10:00:0\(index)Z\",\"user_id\":\"u_\(index)\",\"signed_transactions\":[\"\(jws)\"]}"
        })
        let result = try scenario.run(asOf: "2026-11-29T12:00:00Z")
        let rejects = try scenario.output("rejects.csv").split(whereSeparator: \.isNewline).dropFirst()
        #expect(rejects.count == 1)
        #expect(rejects.first?.hasPrefix("receipts/a.jsonl,1,bad signature (header is not base64url JSON) in 'signed_transactions[0]'") == true)
        #expect(result.ingest.totals == LineCounts(read: 8, accepted: 7, rejected: 1))  // with 4 catalog rows
    }

    @Test("the verdicts of headers are kept for a bounded number of headers: input of ever new headers costs time, not memory")
    func chainVerdictsAreBounded() throws {
        let verifier = JWSVerifier(.testChain)
        let signed = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000005", signed: "2026-11-28T10:00:00Z"))
        let (signedMs, environment) = try facts(signed)
        let parts = signed.split(separator: ".")
        #expect(verifier.failure(signed, signedMs: signedMs, environment: environment) == nil)
        for index in 0..<(ChainVerdicts.limit + 10) {
            let header = Base64URL.encode(Array("{\"alg\":\"B\(index)\"}".utf8))
            #expect(verifier.failure(header + "." + parts[1] + "." + parts[2], signedMs: signedMs, environment: environment)
                    == "unsupported alg \"B\(index)\"")
        }
        #expect(verifier.rememberedChainCount <= ChainVerdicts.limit)
        // A header forgotten is judged again, the same way.
        #expect(verifier.failure(signed, signedMs: signedMs, environment: environment) == nil)
        #expect(verifier.failure(Base64URL.encode(Array("{\"alg\":\"B0\"}".utf8)) + "." + parts[1] + "." + parts[2], signedMs: signedMs,
                                 environment: environment) == "unsupported alg \"B0\"")
        // The near miss: below the bound, every header is kept.
        let few = JWSVerifier(.testChain)
        for index in 0..<10 { _ = few.failure(Base64URL.encode(Array("{\"alg\":\"C\(index)\"}".utf8)) + ".e30.AA", signedMs: nil, environment: nil) }
        #expect(few.rememberedChainCount == 10)
    }

    @Test("ES256 means P-256: a trusted leaf whose key is on another 256-bit curve verifies nothing, though its signature holds there")
    func otherCurveIsRefused() throws {
        let der = try SignatureFixture.certificate("secp256k1-self-signed.pem")
        let jws = try SignatureFixture.text("secp256k1-signed.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        // The certificate trusted as a root, and an `Xcode` payload: the chain alone would pass.
        let verifier = JWSVerifier(.verify(extraRoots: [der]))
        #expect(verifier.failure(jws, signedMs: nil, environment: "Xcode") == "bad signature (the leaf's key is not a P-256 key, which ES256 needs)")
        #expect(SigningKey(try #require(Certificate(der: der))) == nil)
        // The near miss: the test chain's leaf, a P-256 key, is taken.
        let leafDER = try #require(Base64URL.decode(Array(TestSigningChain.x5c[0].utf8)))
        let leaf = try #require(Certificate(der: leafDER))
        #expect(SigningKey(leaf) != nil)
    }

    @Test("the generator's chain verifies under its root; without it, and without Apple's markers, it is untrusted")
    func testChainAndMarkers() throws {
        let jws = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000004", signed: "2026-11-28T10:00:00Z"))
        #expect(try failure(JWSVerifier(.testChain), jws) == nil)
        #expect(try failure(JWSVerifier(.appleOnly), jws)?.hasPrefix("untrusted certificate chain") == true)
        #expect(try failure(JWSVerifier(.trustUnsigned), jws) == nil)

        let noMarker = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: [
            try SignatureFixture.x5c("no-marker-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        #expect(try failure(JWSVerifier(.testChain), noMarker.jws(payload: transactionPayload("2000000900000005", signed: "2026-11-28T10:00:00Z")))
            == "untrusted certificate chain (the leaf lacks Apple's receipt-signing marker)")

        // Shaped like Apple's, markers and all, but up to a root nobody trusts.
        let untrusted = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: [
            try SignatureFixture.x5c("untrusted-leaf.pem"), try SignatureFixture.x5c("untrusted-intermediate.pem"),
            try SignatureFixture.x5c("untrusted-root.pem"),
        ]))
        #expect(try failure(JWSVerifier(.testChain), untrusted.jws(payload: transactionPayload("2000000900000006", signed: "2026-11-28T10:00:00Z")))
            == "untrusted certificate chain (self-signed certificate in certificate chain)")
    }

    @Test("Apple's production chain verifies up to the embedded Apple Root CA - G3 while its leaf is valid")
    func appleProductionChain() throws {
        #expect(AppleRootCA.g3DER == (try SignatureFixture.certificate("apple-root-g3.pem")))
        let header = Base64URL.encode(Array("""
            {"alg":"ES256","x5c":["\(try SignatureFixture.x5c("apple-receipt-signing-leaf.pem"))",\
            "\(try SignatureFixture.x5c("apple-wwdr-g6-intermediate.pem"))","\(try SignatureFixture.x5c("apple-root-g3.pem"))"]}
            """.utf8))
        let jws = header + "." + Base64URL.encode(Array("{\"environment\":\"Production\"}".utf8)) + "." + Base64URL.encode([UInt8](repeating: 7, count: 64))
        let verifier = JWSVerifier(.appleOnly)
        // The chain and its markers pass; only the made-up signature fails.
        #expect(verifier.failure(jws, signedMs: Line.ms("2025-11-01T02:49:35Z"), environment: "Production") == "bad signature")
        #expect(verifier.failure(jws, signedMs: Line.ms("2028-01-01T00:00:00Z"), environment: "Production") == "certificate expired at signing time")
        #expect(verifier.failure(jws, signedMs: Line.ms("2010-01-01T00:00:00Z"), environment: "Production") == "certificate not yet valid at signing time")
    }

    @Test("Xcode payloads are signed locally: rejected under Apple's root, accepted with --trust-root naming their certificate")
    func xcodePayloads() throws {
        let jws = try SignatureFixture.text("xcode-signed-transaction")
        #expect(try failure(JWSVerifier(.appleOnly), jws)?.hasPrefix("untrusted certificate chain") == true)
        #expect(try failure(JWSVerifier(.testChain), jws)?.hasPrefix("untrusted certificate chain") == true)
        let header = try #require(Base64URL.decode(Array(jws.prefix { $0 != "." }.utf8)))
        guard case .object(let fields) = try JSONParser.parse(header), case .array(let chain)? = fields["x5c"],
              let xcodeCertificate = chain.first?.stringValue.flatMap({ Base64URL.decode(Array($0.utf8)) }) else {
            Issue.record("no x5c in the Xcode JWS")
            return
        }
        #expect(try failure(JWSVerifier(.verify(extraRoots: [xcodeCertificate])), jws) == nil)
        #expect(try failure(JWSVerifier(.trustUnsigned), jws) == nil)
        // A Production payload under the same local certificate is not an App Store chain.
        #expect(JWSVerifier(.verify(extraRoots: [xcodeCertificate])).failure(jws, signedMs: nil, environment: "Production")
            == "untrusted certificate chain (1 certificate, not 3)")
    }

    @Test("--trust-root reads PEM files and names a file that holds no certificate")
    func trustRootFiles() throws {
        let check = try SignatureCheck.trusting(pemFiles: [SignatureFixture.folder + "/untrusted-root.pem"])
        #expect(check == .verify(extraRoots: [try SignatureFixture.certificate("untrusted-root.pem")]))
        let notPEM = SignatureFixture.folder + "/PROVENANCE.md"
        let error = #expect(throws: InputError.self) { try SignatureCheck.trusting(pemFiles: [notPEM]) }
        #expect(error?.path == notPEM && error?.reason == "not a PEM certificate")
    }

    @Test("a forged signed_transactions line is rejected and the delivery it hid is an orphan; the genuine one is not")
    func forgedTransactionHidesNothing() throws {
        let genuine = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000010", signed: "2026-11-28T10:00:00Z"))
        // A jailbroken client edits the transaction id of a genuine JWS and keeps its signature.
        let parts = genuine.split(separator: ".").map(String.init)
        let forgedPayload = String(decoding: try #require(Base64URL.decode(Array(parts[1].utf8))), as: UTF8.self)
            .replacingOccurrences(of: "2000000900000010", with: "2000000900000011")
        let forged = parts[0] + "." + Base64URL.encode(Array(forgedPayload.utf8)) + "." + parts[2]
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            "{\"received_at\":\"2026-11-28T10:00:05Z\",\"user_id\":\"u_1\",\"signed_transactions\":[\"\(genuine)\"]}",
            "{\"received_at\":\"2026-11-28T11:00:05Z\",\"user_id\":\"u_2\",\"signed_transactions\":[\"\(forged)\"]}",
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-28T10:00:09Z", "u_1", "2000000900000010", "gems300"),
            Line.delivered("2026-11-28T11:00:09Z", "u_2", "2000000900000011", "gems300"),
        ])
        let result = try scenario.run(asOf: "2026-11-29T12:00:00Z")
        #expect(try scenario.output("rejects.csv").contains("r.jsonl,2,bad signature in 'signed_transactions[0]'"))
        #expect(result.ingest.totals == LineCounts(read: 8, accepted: 7, rejected: 1))  // with 4 catalog rows
        let orphans = try Scenario.findings(try scenario.open()).filter { $0.kind == .orphanDelivery }
        #expect(orphans.map(\.transactionID) == ["2000000900000011"])
        #expect(try scenario.output("summary.json").contains("\"mode\": \"verified\""))
    }

    @Test("--trust-unsigned accepts what a server verified upstream, and summary.json says so")
    func trustUnsigned() throws {
        let scenario = try Scenario()
        let unsignedJWS = "eyJhbGciOiJFUzI1NiJ9." + Base64URL.encode(transactionPayload("2000000900000020", signed: "2026-11-28T10:00:00Z")) + ".c2ln"
        try scenario.write("receipts/r.jsonl", ["{\"received_at\":\"2026-11-28T10:00:05Z\",\"user_id\":\"u_1\",\"signed_transactions\":[\"\(unsignedJWS)\"]}"])
        _ = try Pipeline.run(RunOptions(
            input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1, lineRules: LineRules(signatures: .trustUnsigned),
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        #expect(try scenario.output("rejects.csv").split(separator: "\n").count == 1)
        #expect(try scenario.output("summary.json").contains("\"mode\": \"trust_unsigned\""))
    }

    @Test("the JWS inside a signed envelope are covered by its signature: one changed byte in them breaks the envelope")
    func envelopeCoversInnerJWS() throws {
        let inner = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000030", signed: "2026-11-28T10:00:00Z"))
        func envelope(_ transactionJWS: String) -> String {
            "{\"notificationType\":\"ONE_TIME_CHARGE\",\"notificationUUID\":\"5f6c2a4e-1b7d-4c3a-9e8f-2d1c0b9a8e7f\",\"signedDate\":\(Line.ms("2026-11-28T12:00:00Z")),"
                + "\"data\":{\"environment\":\"Production\",\"signedTransactionInfo\":\"\(transactionJWS)\"}}"
        }
        let signed = TestSigningChain.signer.jws(payload: Array(envelope(inner).utf8))
        let verifier = JWSVerifier(.testChain)
        guard case .accepted(let rows) = try IngestLine.notification("{\"signedPayload\":\"\(signed)\"}", rules: LineRules(verifier: verifier)) else {
            Issue.record("a genuine envelope was rejected")
            return
        }
        #expect(rows.count == 2)
        // Swap in a forged transaction JWS (its payload altered) and keep the envelope's signature.
        let parts = inner.split(separator: ".").map(String.init)
        let forgedInner = parts[0] + "." + Base64URL.encode(transactionPayload("2000000900000031", signed: "2026-11-28T10:00:00Z")) + "." + parts[2]
        let outer = signed.split(separator: ".").map(String.init)
        let tampered = outer[0] + "." + Base64URL.encode(Array(envelope(forgedInner).utf8)) + "." + outer[2]
        #expect(throws: LineReject("bad signature in 'signedPayload'")) {
            try IngestLine.notification("{\"signedPayload\":\"\(tampered)\"}", rules: LineRules(verifier: verifier))
        }
        // Decoded already (no envelope), the forged transaction JWS is checked on its own.
        #expect(throws: LineReject("bad signature in 'data.signedTransactionInfo'")) {
            try IngestLine.notification(envelope(forgedInner), rules: LineRules(verifier: verifier))
        }
    }

    @Test("a locally signed envelope vouches for no App Store payload: what it carries is checked on its own")
    func localEnvelopeCarriesNothingTrusted() throws {
        // Leaf and intermediate under the test root: trusted for Xcode payloads, not Apple's three certificates.
        let local = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: Array(TestSigningChain.x5c.prefix(2))))
        func line(_ transactionJWS: String, environment: String = "Xcode", signer: ES256Signer) -> String {
            let envelope = "{\"notificationType\":\"ONE_TIME_CHARGE\",\"notificationUUID\":\"5f6c2a4e-1b7d-4c3a-9e8f-2d1c0b9a8e71\","
                + "\"signedDate\":\(Line.ms("2026-11-28T12:00:00Z")),\"data\":{\"environment\":\"\(environment)\",\"signedTransactionInfo\":\"\(transactionJWS)\"}}"
            return "{\"signedPayload\":\"\(signer.jws(payload: Array(envelope.utf8)))\"}"
        }
        let rules = LineRules(verifier: JWSVerifier(.testChain))
        // A Production transaction signed by the local chain: on its own it is untrusted, and so inside the envelope.
        let production = local.jws(payload: transactionPayload("2000000900000035", signed: "2026-11-28T10:00:00Z"))
        #expect(JWSVerifier(.testChain).failure(production, signedMs: nil, environment: "Production") == "untrusted certificate chain (2 certificates, not 3)")
        #expect(throws: LineReject("untrusted certificate chain (2 certificates, not 3) in 'signedPayload.data.signedTransactionInfo'")) {
            try IngestLine.notification(line(production, signer: local), rules: rules)
        }
        // A Production one under an App Store chain holds, but the notification about it (its type, its signedDate) is the
        // local chain's word alone: a REFUND_REVERSED so signed would undo its refunds.
        let appStore = TestSigningChain.signer.jws(payload: transactionPayload("2000000900000037", signed: "2026-11-28T10:00:00Z"))
        #expect(throws: LineReject("untrusted certificate chain (locally signed, yet its transaction is a Production one) in 'signedPayload.data.signedTransactionInfo'")) {
            try IngestLine.notification(line(appStore, signer: local), rules: rules)
        }
        // The near miss: an Xcode transaction under the local chain.
        let xcode = local.jws(payload: transactionPayload("2000000900000036", signed: "2026-11-28T10:00:00Z", environment: "Xcode"))
        guard case .accepted = try IngestLine.notification(line(xcode, signer: local), rules: rules) else {
            Issue.record("a local transaction in a local envelope was rejected")
            return
        }
        // An App Store envelope still vouches for what it carries, as its signature covers it.
        let appStoreLine = line(production, environment: "Production", signer: TestSigningChain.signer)
        guard case .accepted = try IngestLine.notification(appStoreLine, rules: rules) else {
            Issue.record("an App Store envelope's transaction was checked on its own")
            return
        }
    }

    @Test("an x5c entry with bytes after its certificate is no certificate: its own validity cannot be left unchecked")
    func bytesAfterACertificate() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let leaf = try #require(Base64URL.decode(Array(try SignatureFixture.x5c("expired-leaf.pem").utf8)))
        let verifier = JWSVerifier(.testChain)
        for (trailing, expected) in [([UInt8](), "certificate expired at signing time"), ([0, 0], "untrusted certificate chain (an x5c entry is not a certificate)"),
                                     ([0x30, 0x00], "untrusted certificate chain (an x5c entry is not a certificate)")] {
            let signer = try #require(ES256Signer(privateKey: key, x5c: [
                Base64URL.encode(leaf + trailing), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
            ]))
            // Signed after the leaf expired, by a payload of each kind.
            for environment in ["Production", "Xcode"] {
                let jws = signer.jws(payload: transactionPayload("2000000900000045", signed: "2026-11-28T10:00:00Z", environment: environment))
                #expect(try failure(verifier, jws) == expected, "\(trailing) after the leaf, \(environment)")
            }
        }
        #expect(Certificate(der: leaf + [0]) == nil)
        #expect(Certificate(der: leaf) != nil)
    }

    @Test("the markers are read on the chain that verified: x5c[1] must be the leaf's issuer, itself issued by a trusted root")
    func markersOnTheVerifiedChain() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("path-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let verifier = JWSVerifier(.verify(extraRoots: [try SignatureFixture.certificate("path-root.pem")]))
        func verdict(_ x5c: [String], _ transactionID: String) throws -> String? {
            let signer = try #require(ES256Signer(privateKey: key, x5c: x5c))
            return try failure(verifier, signer.jws(payload: transactionPayload(transactionID, signed: "2026-11-28T10:00:00Z")))
        }
        // The near miss: leaf, marked intermediate, root.
        #expect(try verdict([try SignatureFixture.x5c("path-leaf.pem"), try SignatureFixture.x5c("path-intermediate.pem"),
                             try SignatureFixture.x5c("path-root.pem")], "2000000900000040") == nil)
        // The leaf's issuer lacks the WWDR marker; a marked certificate that issued nothing of it sits at x5c[1].
        #expect(try verdict([try SignatureFixture.x5c("path-leaf-under-unmarked.pem"), TestSigningChain.x5c[1],
                             try SignatureFixture.x5c("path-unmarked-intermediate.pem")], "2000000900000041")
                == "untrusted certificate chain (the second x5c certificate did not issue the leaf)")
        // Three x5c certificates, both intermediates marked, but four up to the root.
        #expect(try verdict([try SignatureFixture.x5c("path-leaf-under-second.pem"), try SignatureFixture.x5c("path-second-intermediate.pem"),
                             try SignatureFixture.x5c("path-intermediate.pem")], "2000000900000042")
                == "untrusted certificate chain (4 certificates up to the trusted root, not 3)")
        // The trusted root itself as the leaf: a path of one certificate.
        #expect(try verdict([try SignatureFixture.x5c("path-root.pem"), try SignatureFixture.x5c("path-intermediate.pem"),
                             try SignatureFixture.x5c("path-root.pem")], "2000000900000043")
                == "untrusted certificate chain (1 certificate up to the trusted root, not 3)")
        #expect(try verdict([try SignatureFixture.x5c("path-leaf.pem"), try SignatureFixture.x5c("path-intermediate.pem")], "2000000900000044")
                == "untrusted certificate chain (2 certificates, not 3)")
    }

    @Test("a payload without signedDate is judged at the run's clock, as Apple's library judges it at the current time")
    func noSignedDateMeansNow() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let signer = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        let notification = "{\"notificationType\":\"ONE_TIME_CHARGE\",\"notificationUUID\":\"0b7a3c1e-2d4f-4e6a-8b9c-1d2e3f4a5b6c\","
            + "\"data\":{\"environment\":\"Production\",\"signedTransactionInfo\":\"\(TestSigningChain.signer.jws(payload: transactionPayload("2000000900000050", signed: "2026-11-28T10:00:00Z")))\"}}"
        let signed = signer.jws(payload: Array(notification.utf8))
        var rules = LineRules(verifier: JWSVerifier(.testChain))
        rules.nowMs = Line.ms("2026-11-29T00:00:00Z")
        #expect(throws: LineReject("certificate expired at signing time in 'signedPayload'")) {
            try IngestLine.notification("{\"signedPayload\":\"\(signed)\"}", rules: rules)
        }
        // Decoded already, with no signedDate anywhere: the transaction JWS of the expired leaf, judged now.
        let inner = signer.jws(payload: Array(#"{"transactionId":"2000000900000051","productId":"gems300","environment":"Production"}"#.utf8))
        let decoded = "{\"notificationType\":\"ONE_TIME_CHARGE\",\"data\":{\"environment\":\"Production\",\"signedTransactionInfo\":\"\(inner)\"}}"
        #expect(throws: LineReject("certificate expired at signing time in 'data.signedTransactionInfo'")) {
            try IngestLine.notification(decoded, rules: rules)
        }
        // The same leaf while it was valid.
        rules.nowMs = Line.ms("2020-06-01T00:00:00Z")
        guard case .accepted = try IngestLine.notification("{\"signedPayload\":\"\(signed)\"}", rules: rules) else {
            Issue.record("a notification signed inside its leaf's validity was rejected")
            return
        }
    }

    @Test("a chain judged at the run's clock records the clocks that judge it alike: its validity, or every clock before or after it; one judged at a signedDate records none")
    func clockJudgedSpan() throws {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let signer = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        func notification(signed: String?) -> String {
            let date = signed.map { ",\"signedDate\":\(Line.ms($0))" } ?? ""
            let payload = "{\"notificationType\":\"ONE_TIME_CHARGE\"\(date),\"data\":{\"environment\":\"Production\","
                + "\"transactionInfo\":\(Line.v2("2000000900000060", "gems300", purchase: "2020-06-01T10:00:00Z"))}}"
            return "{\"signedPayload\":\"\(signer.jws(payload: Array(payload.utf8)))\"}"
        }
        let (notBefore, notAfter) = (Line.ms("2020-01-01T00:00:00Z"), Line.ms("2021-01-01T00:00:00Z"))
        /// The verdict by the clock `nowMs`, and the clocks recorded as judging it alike.
        func judged(_ line: String, nowMs: Int64) throws -> (accepted: Bool, span: ClosedRange<Int64>?) {
            var rules = LineRules(verifier: JWSVerifier(.testChain))
            rules.nowMs = nowMs
            let recorded = ClockJudgedChains()
            rules.clockJudged = recorded
            do {
                _ = try IngestLine.notification(line, rules: rules)
                return (true, recorded.take())
            } catch {
                return (false, recorded.take())
            }
        }
        let undated = notification(signed: nil)
        #expect(try judged(undated, nowMs: notBefore) == (true, notBefore...notAfter))
        #expect(try judged(undated, nowMs: notAfter) == (true, notBefore...notAfter))
        #expect(try judged(undated, nowMs: notAfter + 1) == (false, (notAfter + 1)...Int64.max))
        #expect(try judged(undated, nowMs: notBefore - 1) == (false, Int64.min...(notBefore - 1)))
        // Judged at its signedDate, whatever the clock.
        #expect(try judged(notification(signed: "2020-06-01T10:00:00Z"), nowMs: notAfter + 1) == (true, nil))
    }

    @Test("the test root committed in sample-data is the generator's")
    func sampleDataRoot() throws {
        let committed = try String(contentsOfFile: SampleDataTests.sampleData + "/trust/test-root.pem", encoding: .utf8)
        #expect(committed == TestSigningChain.rootPEM)
    }
}
