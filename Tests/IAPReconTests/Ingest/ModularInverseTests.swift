import COpenSSL
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// s⁻¹ mod n for each signature an ES256 key checks through its table (`ModularInverse`): it must
/// be libcrypto's inverse for every number, or refuse what has none.
@Suite("Inverses modulo a 256-bit odd number")
struct ModularInverseTests {
    typealias Number = ModularInverse.Number

    static let order = number("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")
    static let prime = number("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")

    static func number(_ hex: String) -> Number {
        let bytes = TestSigningChain.hex(hex)
        return bytes.withUnsafeBytes { Number(bigEndian: $0) } ?? Number(0)
    }

    /// libcrypto's inverse of `a` modulo `modulus`, nil when it has none.
    private func libcryptoInverse(_ a: Number, modulo modulus: Number) -> Number? {
        guard let context = BN_CTX_new(), let value = BN_new(), let divisor = BN_new(), let result = BN_new() else { return nil }
        defer {
            [value, divisor, result].forEach { BN_free($0) }
            BN_CTX_free(context)
        }
        a.withBigEndianBytes { _ = BN_bin2bn($0.baseAddress, 32, value) }
        modulus.withBigEndianBytes { _ = BN_bin2bn($0.baseAddress, 32, divisor) }
        guard BN_mod_inverse(result, value, divisor, context) != nil else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(result, &bytes, 32) == 32 else { return nil }
        return bytes.withUnsafeBytes { Number(bigEndian: $0) }
    }

    /// Numbers below `modulus` that walk every path: small ones, each power of two, the top of the
    /// range, and a fixed pseudo-random spread.
    private func samples(below modulus: Number) -> [Number] {
        // The modulus less 1 and 2 (the lowest words of n and p are far above 2), and about half of it.
        var numbers = [Number(1), Number(2), Number(3), Number(modulus.w0 - 1, modulus.w1, modulus.w2, modulus.w3),
                       Number(modulus.w0 - 2, modulus.w1, modulus.w2, modulus.w3),
                       Number(modulus.w0 >> 1 | modulus.w1 << 63, modulus.w1 >> 1 | modulus.w2 << 63, modulus.w2 >> 1 | modulus.w3 << 63, modulus.w3 >> 1)]
        for bit in 0..<256 {
            var words: [UInt64] = [0, 0, 0, 0]
            words[bit / 64] = 1 << UInt64(bit % 64)
            numbers.append(Number(words[0], words[1], words[2], words[3]))
        }
        var random = SeededRandom(seed: 1, stream: 0)
        for _ in 0..<2_000 { numbers.append(Number(random.next(), random.next(), random.next(), random.next())) }
        return numbers.filter { !$0.isZero && $0.isBelow(modulus) }
    }

    @Test("the inverse is libcrypto's for every sample, modulo P-256's order and its prime")
    func matchesLibcrypto() throws {
        for modulus in [Self.order, Self.prime] {
            let inverses = try #require(ModularInverse(modulus: modulus))
            let numbers = samples(below: modulus)
            #expect(numbers.count > 2_000)
            for a in numbers {
                let expected = try #require(libcryptoInverse(a, modulo: modulus))
                #expect(inverses.inverse(of: a) == expected, "\(a.bigEndianHex) modulo \(modulus.bigEndianHex)")
            }
        }
    }

    @Test("a number with a factor of a composite modulus has no inverse; its coprime neighbour has")
    func compositeModulus() throws {
        let inverses = try #require(ModularInverse(modulus: Number(15)))
        #expect(inverses.inverse(of: Number(5)) == nil)
        #expect(inverses.inverse(of: Number(6)) == nil)
        #expect(inverses.inverse(of: Number(7)) == Number(13))
        #expect(inverses.inverse(of: Number(14)) == Number(14))
    }

    @Test("zero, the modulus and above have no inverse, and an even modulus is refused")
    func outOfRange() throws {
        let inverses = try #require(ModularInverse(modulus: Self.order))
        #expect(inverses.inverse(of: Number(0)) == nil)
        #expect(inverses.inverse(of: Self.order) == nil)
        #expect(inverses.inverse(of: Number(Self.order.w0 + 1, Self.order.w1, Self.order.w2, Self.order.w3)) == nil)
        #expect(inverses.inverse(of: Number(.max, .max, .max, .max)) == nil)
        #expect(ModularInverse(modulus: Number(16)) == nil)
    }

    @Test("numbers read from and written as 32 big-endian bytes")
    func bytes() throws {
        let hex = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20"
        let number = Self.number(hex)
        #expect(number == Number(0x191a_1b1c_1d1e_1f20, 0x1112_1314_1516_1718, 0x090a_0b0c_0d0e_0f10, 0x0102_0304_0506_0708))
        #expect(number.bigEndianHex == hex)
        #expect([UInt8](repeating: 0, count: 31).withUnsafeBytes { Number(bigEndian: $0) } == nil)
    }
}

private extension ModularInverse.Number {
    var bigEndianHex: String {
        withBigEndianBytes { bytes in bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
    }
}
