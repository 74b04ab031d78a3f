import COpenSSL
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// Our own ES256 arithmetic (`PrecomputedVerifyKey`, with `ModularInverse` inside) against
/// libcrypto's `EVP_PKEY_verify` called directly: for many keys, digests and signatures, valid
/// and corrupted, and the edge values where a hand-written verify goes wrong, both must give
/// the same verdict on every case.
@Suite("ES256 against libcrypto, case by case")
struct ES256DifferentialTests {
    /// P-256's order n, big-endian.
    static let order = TestSigningChain.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    /// Big numbers for the cases: a context and the curve, freed with it.
    final class Arithmetic {
        let context: OpaquePointer
        let group: OpaquePointer
        let n: OpaquePointer

        init() throws {
            context = try #require(BN_CTX_new())
            group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
            n = try #require(BN_bin2bn(ES256DifferentialTests.order, 32, nil))
        }

        deinit {
            BN_free(n)
            EC_GROUP_free(group)
            BN_CTX_free(context)
        }

        func number(_ bytes: [UInt8]) -> OpaquePointer? { BN_bin2bn(bytes, Int32(bytes.count), nil) }

        func bytes(_ number: OpaquePointer) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            _ = BN_bn2binpad(number, &bytes, 32)
            return bytes
        }

        /// a·b mod n, or a + b mod n, or −a mod n, as 32 bytes.
        func mulMod(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] { binary(a, b) { BN_mod_mul($0, $1, $2, self.n, self.context) } }
        func addMod(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] { binary(a, b) { BN_mod_add($0, $1, $2, self.n, self.context) } }
        func negMod(_ a: [UInt8]) -> [UInt8] { binary([0], a) { BN_mod_sub($0, $1, $2, self.n, self.context) } }
        func inverse(_ a: [UInt8]) -> [UInt8] { binary(a, [0]) { result, a, _ in BN_mod_inverse(result, a, self.n, self.context) == nil ? 0 : 1 } }

        private func binary(_ a: [UInt8], _ b: [UInt8], _ operation: (OpaquePointer, OpaquePointer, OpaquePointer) -> Int32) -> [UInt8] {
            guard let x = number(a), let y = number(b), let result = BN_new() else { return [] }
            defer { [x, y, result].forEach { BN_free($0) } }
            guard operation(result, x, y) == 1 else { return [] }
            return bytes(result)
        }

        /// a + b without reduction, as 32 bytes (for sums below 2^256).
        func plain(_ a: [UInt8], plus b: [UInt8]) -> [UInt8] { binary(a, b) { BN_add($0, $1, $2) } }

        /// The uncompressed point d·G.
        func publicPoint(_ d: [UInt8]) -> [UInt8] {
            guard let scalar = number(d), let point = EC_POINT_new(group) else { return [] }
            defer {
                BN_free(scalar)
                EC_POINT_free(point)
            }
            guard EC_POINT_mul(group, point, scalar, nil, nil, context) == 1 else { return [] }
            var encoded = [UInt8](repeating: 0, count: 65)
            guard EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, context) == 65 else { return [] }
            return encoded
        }

        /// x(k·G) mod n.
        func rOf(_ k: [UInt8]) -> [UInt8] {
            let point = publicPoint(k)
            guard point.count == 65 else { return [] }
            guard let x = number(Array(point[1..<33])), let result = BN_new() else { return [] }
            defer { [x, result].forEach { BN_free($0) } }
            _ = BN_nnmod(result, x, n, context)
            return bytes(result)
        }

        /// The ES256 signature R||S of the digest `e` by the key `d` with nonce `k`.
        func sign(e: [UInt8], d: [UInt8], k: [UInt8]) -> [UInt8] {
            let r = rOf(k)
            let s = mulMod(inverse(k), addMod(e, mulMod(r, d)))
            return r + s
        }
    }

    /// libcrypto's verdict on `signature` (R||S, DER-encoded here by libcrypto) over `digest` under `point`.
    static func libcryptoVerifies(point: [UInt8], digest: [UInt8], signature: [UInt8]) -> Bool {
        // SubjectPublicKeyInfo of a P-256 key: id-ecPublicKey, prime256v1, then the point.
        let info = TestSigningChain.hex("3059301306072a8648ce3d020106082a8648ce3d030107034200") + point
        let key: OpaquePointer? = info.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key, let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil), let sig = ECDSA_SIG_new(),
              let r = BN_bin2bn(signature, 32, nil), let s = BN_bin2bn(Array(signature[32...]), 32, nil) else { return false }
        defer {
            ECDSA_SIG_free(sig)
            EVP_PKEY_CTX_free(context)
            EVP_PKEY_free(key)
        }
        _ = ECDSA_SIG_set0(sig, r, s)
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(sig, &der)
        guard length > 0, let der else { return false }
        defer { CRYPTO_free(der, #fileID, #line) }
        guard EVP_PKEY_verify_init(context) == 1 else { return false }
        return EVP_PKEY_verify(context, der, Int(length), digest, digest.count) == 1
    }

    /// 32 bytes of `random`.
    static func bytes(_ random: inout SeededRandom) -> [UInt8] {
        (0..<4).flatMap { _ in withUnsafeBytes(of: random.next().bigEndian, Array.init) }
    }

    static func small(_ value: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 31) + [value] }

    /// The cases for one key `d`: signatures valid, high-s, corrupted, out of range, and the
    /// digests and nonces where R is the sum of two equal points, or infinity.
    static func cases(d: [UInt8], random: inout SeededRandom, arithmetic: Arithmetic) -> [(what: String, digest: [UInt8], signature: [UInt8])] {
        var cases: [(String, [UInt8], [UInt8])] = []
        let n = order
        let ones = [UInt8](repeating: 0xFF, count: 32)
        let zero = [UInt8](repeating: 0, count: 32)
        for index in 0..<12 {
            let e = bytes(&random)
            let k = arithmetic.addMod(bytes(&random), small(1))
            let signature = arithmetic.sign(e: e, d: d, k: k)
            let (r, s) = (Array(signature[..<32]), Array(signature[32...]))
            cases.append(("valid \(index)", e, signature))
            cases.append(("high/low s twin \(index)", e, r + arithmetic.negMod(s)))
            var flipped = signature
            flipped[Int(random.next() % 64)] ^= UInt8(1) << UInt8(random.next() % 8)
            cases.append(("one bit of R||S flipped \(index)", e, flipped))
            var otherDigest = e
            otherDigest[Int(random.next() % 32)] ^= 1
            cases.append(("one bit of the digest flipped \(index)", otherDigest, signature))
            cases.append(("r = 0 \(index)", e, zero + s))
            cases.append(("s = 0 \(index)", e, r + zero))
            cases.append(("r = n \(index)", e, n + s))
            cases.append(("s = n \(index)", e, r + n))
            cases.append(("r = 2^256 - 1 \(index)", e, ones + s))
            cases.append(("s = 2^256 - 1 \(index)", e, r + ones))
            cases.append(("s = 1 \(index)", e, r + small(1)))
            cases.append(("r = 1 \(index)", e, small(1) + s))
            cases.append(("s = n - 1 \(index)", e, r + arithmetic.negMod(small(1))))
            cases.append(("r and s swapped \(index)", e, s + r))
            cases.append(("random R||S \(index)", e, bytes(&random) + bytes(&random)))
        }
        // Digests at and past the order: e = 0, e = n (≡ 0), e = n + 1, e = 2^256 − 1.
        let nPlus1 = TestSigningChain.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632552")
        for (name, e) in [("e = 0", zero), ("e = n", n), ("e = n + 1", nPlus1), ("e = 2^256 - 1", ones), ("e = 1", small(1))] {
            let k = arithmetic.addMod(bytes(&random), small(1))
            // The signer reduces e mod n, as ECDSA does for a 256-bit digest of a 256-bit order.
            let reduced = arithmetic.addMod(e, zero)
            let signature = arithmetic.sign(e: reduced, d: d, k: k)
            cases.append(("valid, \(name)", e, signature))
            cases.append(("high s, \(name)", e, Array(signature[..<32]) + arithmetic.negMod(Array(signature[32...]))))
            var flipped = signature
            flipped[63] ^= 1
            cases.append(("altered, \(name)", e, flipped))
        }
        for value in [UInt8(1), 2, 0x7F] {
            // A valid signature with a small s (e = s·k − r·d), so that s + n still fits 32 bytes: s + n must be refused.
            let k = arithmetic.addMod(bytes(&random), small(1))
            let r = arithmetic.rOf(k)
            let e = arithmetic.addMod(arithmetic.mulMod(small(value), k), arithmetic.negMod(arithmetic.mulMod(r, d)))
            cases.append(("valid, s = \(value)", e, r + small(value)))
            cases.append(("s = \(value) + n", e, r + arithmetic.plain(small(value), plus: n)))
        }
        for index in 0..<4 {
            // u1·G = u2·Q (the sum doubles a point): e = r·d. Then s = k⁻¹·2rd signs it with R = k·G.
            let k = arithmetic.addMod(bytes(&random), small(1))
            let r = arithmetic.rOf(k)
            let e = arithmetic.mulMod(r, d)
            cases.append(("u1·G = u2·Q \(index)", e, arithmetic.sign(e: e, d: d, k: k)))
            // u1·G = −u2·Q (the sum is infinity): e = −r·d, any s.
            let negative = arithmetic.negMod(arithmetic.mulMod(r, d))
            let s = arithmetic.addMod(bytes(&random), small(1))
            cases.append(("u1·G + u2·Q = infinity \(index)", negative, r + s))
        }
        return cases
    }

    /// Whether a case of `cases` was made to verify.
    static func builtValid(_ what: String) -> Bool {
        what.hasPrefix("valid") || what.hasPrefix("high") || what.hasPrefix("u1·G = u2·Q")
    }

    @Test("our verify and libcrypto's agree on every case, for random keys and for d = 1, 2, n - 1")
    func agreesWithLibcrypto() throws {
        let arithmetic = try Arithmetic()
        var random = SeededRandom(seed: 2026, stream: 7)
        var keys: [[UInt8]] = [Self.small(1), Self.small(2), arithmetic.negMod(Self.small(1))]
        for _ in 0..<24 { keys.append(arithmetic.addMod(Self.bytes(&random), Self.small(1))) }
        var (checked, valid) = (0, 0)
        for (keyIndex, d) in keys.enumerated() {
            let point = arithmetic.publicPoint(d)
            let ours = try #require(PrecomputedVerifyKey(point: point), "key \(keyIndex)")
            for (what, digest, signature) in Self.cases(d: d, random: &random, arithmetic: arithmetic) {
                let expected = Self.libcryptoVerifies(point: point, digest: digest, signature: signature)
                #expect(ours.verify(digest: digest, signature: signature) == expected, "key \(keyIndex): \(what)")
                // The cases built to verify do, by libcrypto: the edge cases are reached, not missed.
                if Self.builtValid(what) { #expect(expected, "libcrypto refused key \(keyIndex): \(what)") }
                checked += 1
                if expected { valid += 1 }
            }
        }
        // The cases hold both verdicts in numbers: a reference that said no to everything would prove nothing.
        #expect(checked > 5_000)
        #expect(valid > checked / 6)
    }

    @Test("the signing key as the verifier holds it agrees with libcrypto, before and after its table")
    func signingKeyAgrees() throws {
        let arithmetic = try Arithmetic()
        var random = SeededRandom(seed: 2027, stream: 3)
        let der = try #require(Base64URL.decode(Array(TestSigningChain.x5c[0].utf8)))
        let certificate = try #require(Certificate(der: der))
        let (plain, tabled) = (try #require(SigningKey(certificate, tableAfter: .max)), try #require(SigningKey(certificate, tableAfter: 0)))
        let d = TestSigningChain.leafPrivateKey
        let point = arithmetic.publicPoint(d)
        for (what, digest, signature) in Self.cases(d: d, random: &random, arithmetic: arithmetic) {
            let expected = Self.libcryptoVerifies(point: point, digest: digest, signature: signature)
            #expect(plain.verify(digest: digest, signature: signature) == expected, "libcrypto through SigningKey: \(what)")
            #expect(tabled.verify(digest: digest, signature: signature) == expected, "table through SigningKey: \(what)")
        }
        #expect(tabled.hasTable)
    }
}
