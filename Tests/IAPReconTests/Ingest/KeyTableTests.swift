import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// A key that has checked many signatures checks the rest through a table of its multiples
/// (`PrecomputedVerifyKey`): it must accept and refuse exactly what libcrypto's own verify does.
@Suite("ES256 through a key's table")
struct KeyTableTests {
    /// P-256's order n, big-endian.
    static let order = TestSigningChain.hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")

    /// The test chain's leaf key twice: through its table from the first signature, and through libcrypto alone.
    private func keys(certificate index: Int = 0) throws -> (tabled: SigningKey, plain: SigningKey) {
        let der = try #require(Base64URL.decode(Array(TestSigningChain.x5c[index].utf8)))
        let certificate = try #require(Certificate(der: der))
        return (try #require(SigningKey(certificate, tableAfter: 0)), try #require(SigningKey(certificate, tableAfter: .max)))
    }

    /// A message the leaf signs, its digest and its R||S signature.
    private func signed(_ number: Int) -> (digest: [UInt8], signature: [UInt8]) {
        let message = Array("header.payload-\(number)".utf8)
        return (SHA256.hash(message), TestSigningChain.signer.sign(message, nonceSeed: Array("seed \(number)".utf8)))
    }

    /// a − b for 32-byte big-endian numbers, a ≥ b.
    private func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var difference = Int(a[index]) - Int(b[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            result[index] = UInt8(difference)
        }
        return result
    }

    /// Both ways give `expected`, and the tabled key did use its table.
    private func expectBoth(_ keys: (tabled: SigningKey, plain: SigningKey), _ digest: [UInt8], _ signature: [UInt8],
                            _ expected: Bool, _ what: String) {
        #expect(keys.plain.verify(digest: digest, signature: signature) == expected, "libcrypto: \(what)")
        #expect(keys.tabled.verify(digest: digest, signature: signature) == expected, "table: \(what)")
        #expect(keys.tabled.hasTable, "the table was not used: \(what)")
    }

    @Test("valid signatures verify, and so does each one's twin with s replaced by n - s")
    func validSignaturesVerify() throws {
        let keys = try keys()
        for number in 0..<100 {
            let (digest, signature) = signed(number)
            expectBoth(keys, digest, signature, true, "signature \(number)")
            let twin = Array(signature[..<32]) + subtract(Self.order, Array(signature[32...]))
            expectBoth(keys, digest, twin, true, "signature \(number) with n - s")
        }
    }

    @Test("a signature with any one bit of r, s or the digest flipped is refused")
    func alteredSignaturesAreRefused() throws {
        let keys = try keys()
        for number in 0..<4 {
            let (digest, signature) = signed(number)
            for bit in 0..<(64 * 8) {
                var altered = signature
                altered[bit / 8] ^= 1 << UInt8(bit % 8)
                expectBoth(keys, digest, altered, false, "signature \(number), bit \(bit) of R||S")
            }
            for bit in 0..<(32 * 8) {
                var altered = digest
                altered[bit / 8] ^= 1 << UInt8(bit % 8)
                expectBoth(keys, altered, signature, false, "signature \(number), bit \(bit) of the digest")
            }
        }
    }

    @Test("r or s out of [1, n-1] is refused, even where r mod n or s mod n would verify")
    func outOfRangeIsRefused() throws {
        let keys = try keys()
        let (digest, signature) = signed(7)
        let (r, s) = (Array(signature[..<32]), Array(signature[32...]))
        let zero = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xFF, count: 32)
        expectBoth(keys, digest, zero + s, false, "r = 0")
        expectBoth(keys, digest, r + zero, false, "s = 0")
        expectBoth(keys, digest, Self.order + s, false, "r = n")
        expectBoth(keys, digest, r + Self.order, false, "s = n")
        expectBoth(keys, digest, ones + s, false, "r = 2^256 - 1")
        expectBoth(keys, digest, r + ones, false, "s = 2^256 - 1")
        // s + n fits in 32 bytes only when s < 2^256 - n; n - s is then the one to push past n.
        let smallS = subtract(Self.order, s)
        if smallS.first == 0 {
            var pastN = [UInt8](repeating: 0, count: 32)
            var carry = 0
            for index in stride(from: 31, through: 0, by: -1) {
                let sum = Int(smallS[index]) + Int(Self.order[index]) + carry
                pastN[index] = UInt8(sum & 0xFF)
                carry = sum >> 8
            }
            expectBoth(keys, digest, r + pastN, false, "s = (n - s) + n")
        }
        #expect(!keys.tabled.verify(digest: Array(digest.dropLast()), signature: signature), "a 31-byte digest")
        #expect(!keys.tabled.verify(digest: digest, signature: Array(signature.dropLast())), "a 63-byte signature")
    }

    @Test("R's x is compared with r without its affine form: x = r, or x = r + n below p, and nothing else")
    func jacobianComparison() throws {
        // P-256's generator as a key: the comparison does not depend on which key it is.
        let generator = TestSigningChain.hex("04"
            + "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
            + "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
        let key = try #require(PrecomputedVerifyKey(point: generator))
        let z = TestSigningChain.hex("5a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9")
        func number(_ value: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 31) + [value] }
        // X = x·Z² mod p for x = 5, n + 5, p (which is 0) and p − 1.
        let xIs5 = TestSigningChain.hex("28fbeda4c298d826bee44497afd2b652bec9d2d6db4aedcf587fd924e6212df9")
        let xIsNPlus5 = TestSigningChain.hex("74b5ca8db13640a4a7fa753562eb96c9f16b383bad66bd67fc540ce47dca047a")
        let xIsP = [UInt8](repeating: 0, count: 32)
        let xIsPMinus1 = TestSigningChain.hex("f7cd9d4472ae3b2c736bf24810090ebc403e09093a8a9d3cee4cd492385fc39a")
        // p − n, and p − n − 1.
        let pMinusN = TestSigningChain.hex("000000000000000000000000000000004319055358e8617b0c46353d039cdaae")
        let pMinusNMinus1 = TestSigningChain.hex("000000000000000000000000000000004319055358e8617b0c46353d039cdaad")
        #expect(key.xMatches(r: number(5), jacobianX: xIs5, z: z), "x = r")
        #expect(key.xMatches(r: number(5), jacobianX: xIsNPlus5, z: z), "x = r + n, below p")
        #expect(key.xMatches(r: pMinusNMinus1, jacobianX: xIsPMinus1, z: z), "x = r + n = p − 1")
        #expect(!key.xMatches(r: number(6), jacobianX: xIsNPlus5, z: z), "x = n + 5 is not r = 6")
        #expect(!key.xMatches(r: number(6), jacobianX: xIs5, z: z), "x = 5 is not r = 6")
        #expect(!key.xMatches(r: pMinusN, jacobianX: xIsP, z: z), "r + n = p is no x")
    }

    @Test("another key refuses the leaf's signatures")
    func anotherKeyRefuses() throws {
        let intermediate = try keys(certificate: 1)
        for number in 0..<10 {
            let (digest, signature) = signed(number)
            expectBoth(intermediate, digest, signature, false, "signature \(number) under the intermediate's key")
        }
    }

    @Test("Apple's signed test payloads verify through their key's table, and refuse a signature moved to another payload")
    func appleTestPayloadsThroughTable() throws {
        let verifier = JWSVerifier(.verify(extraRoots: [try SignatureFixture.bytes("testCA.der")]), keyTableAfter: 0)
        var signatures: [Substring] = []
        var headers: Set<Substring> = []
        for name in ["testNotification", "transactionInfo", "renewalInfo"] {
            let jws = try SignatureFixture.text(name).trimmingCharacters(in: .whitespacesAndNewlines)
            let payload = try JWS.payload(jws)
            let environment = payload["environment"]?.stringValue ?? payload["data"]?.objectValue?["environment"]?.stringValue
            #expect(verifier.failure(jws, signedMs: nil, environment: environment) == nil, "\(name)")
            signatures.append(jws.split(separator: ".")[2])
            headers.insert(jws.split(separator: ".")[0])
            if signatures.count > 1 {
                let parts = jws.split(separator: ".")
                let moved = parts[0] + "." + parts[1] + "." + signatures[0]
                #expect(verifier.failure(String(moved), signedMs: nil, environment: environment) == "bad signature", "\(name)")
            }
        }
        // One key per chain, each checked through its table.
        #expect(verifier.tabledKeys == headers.count)
    }

    @Test("a verifier past a key's threshold still accepts good JWS and refuses altered ones")
    func verifierPastThreshold() throws {
        let verifier = JWSVerifier(.testChain, keyTableAfter: 3)
        for number in 0..<8 {
            let jws = TestSigningChain.signer.jws(payload: Array("{\"n\":\(number)}".utf8), nonceSeed: [UInt8(number)])
            #expect(verifier.failure(jws, signedMs: nil, environment: "Production") == nil, "JWS \(number)")
            // The payload swapped for another's: the signature no longer holds.
            let other = TestSigningChain.signer.jws(payload: Array("{\"n\":\(number + 100)}".utf8), nonceSeed: [UInt8(number)])
            let parts = jws.split(separator: ".")
            let swapped = parts[0] + "." + other.split(separator: ".")[1] + "." + parts[2]
            #expect(verifier.failure(String(swapped), signedMs: nil, environment: "Production") == "bad signature", "JWS \(number) altered")
        }
        #expect(verifier.tabledKeys == 1)
    }
}
