/// Inverses modulo an odd number below 2²⁵⁶, by Bernstein and Yang's division steps ("Fast
/// constant-time gcd computation and modular inversion", 2019), in their variable-time form.
///
/// An ES256 verification needs s⁻¹ mod n for each signature. libcrypto offers it only through
/// its general big numbers, as Fermat's s^(n−2) or its general inverse, either a good part of
/// the verification's cost; these steps work on machine words. A signature is public, so they
/// need not take the same time for every s.
///
/// A division step looks only at the lowest bit of g: it halves g, or first adds f to it or
/// swaps the two and subtracts. 62 steps are worked out on the low words alone, as a 2×2 matrix of
/// 64-bit integers, which is then applied once to the whole numbers (and to the coefficients that
/// follow them modulo the modulus); the steps reach g = 0 with f = ±1 for a number that has an
/// inverse. Numbers are held as five signed 62-bit limbs, so that products fit Int128.
struct ModularInverse: Sendable {
    /// A number below 2²⁵⁶ as four 64-bit words, least significant first.
    struct Number: Equatable, Sendable {
        var w0, w1, w2, w3: UInt64

        init(_ w0: UInt64, _ w1: UInt64 = 0, _ w2: UInt64 = 0, _ w3: UInt64 = 0) {
            (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
        }

        /// From 32 big-endian bytes.
        init?(bigEndian bytes: UnsafeRawBufferPointer) {
            guard bytes.count == 32 else { return nil }
            func word(_ index: Int) -> UInt64 { UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 24 - 8 * index, as: UInt64.self)) }
            self.init(word(0), word(1), word(2), word(3))
        }

        /// Calls `body` with the number as 32 big-endian bytes.
        func withBigEndianBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            var bigEndian = (w3.bigEndian, w2.bigEndian, w1.bigEndian, w0.bigEndian)
            return withUnsafeBytes(of: &bigEndian, body)
        }

        var isZero: Bool { (w0 | w1 | w2 | w3) == 0 }

        /// Whether self < other.
        func isBelow(_ other: Number) -> Bool {
            if w3 != other.w3 { return w3 < other.w3 }
            if w2 != other.w2 { return w2 < other.w2 }
            if w1 != other.w1 { return w1 < other.w1 }
            return w0 < other.w0
        }
    }

    /// A signed number as l0 + l1·2⁶² + l2·2¹²⁴ + l3·2¹⁸⁶ + l4·2²⁴⁸, l0…l3 in [0, 2⁶²) and l4 of any sign.
    private struct Limbs: Equatable {
        var l0, l1, l2, l3, l4: Int64

        static let mask: Int64 = (1 << 62) - 1
        static let zero = Limbs(l0: 0, l1: 0, l2: 0, l3: 0, l4: 0)
        static let one = Limbs(l0: 1, l1: 0, l2: 0, l3: 0, l4: 0)
        static let minusOne = Limbs(l0: mask, l1: mask, l2: mask, l3: mask, l4: -1)

        init(l0: Int64, l1: Int64, l2: Int64, l3: Int64, l4: Int64) {
            (self.l0, self.l1, self.l2, self.l3, self.l4) = (l0, l1, l2, l3, l4)
        }

        init(_ number: Number) {
            let mask = UInt64(Self.mask)
            l0 = Int64(number.w0 & mask)
            l1 = Int64((number.w0 >> 62 | number.w1 << 2) & mask)
            l2 = Int64((number.w1 >> 60 | number.w2 << 4) & mask)
            l3 = Int64((number.w2 >> 58 | number.w3 << 6) & mask)
            l4 = Int64(number.w3 >> 56)
        }

        /// For a number in [0, 2²⁵⁶).
        var number: Number {
            let (u0, u1, u2, u3, u4) = (UInt64(l0), UInt64(l1), UInt64(l2), UInt64(l3), UInt64(bitPattern: l4))
            return Number(u0 | u1 << 62, u1 >> 2 | u2 << 60, u2 >> 4 | u3 << 58, u3 >> 6 | u4 << 56)
        }

        /// The number modulo 2⁶⁴, all the division steps look at.
        var lowWord: UInt64 { UInt64(l0) | UInt64(bitPattern: l1) << 62 }

        var isNegative: Bool { l4 < 0 }

        /// Whether self ≥ other.
        func isAtLeast(_ other: Limbs) -> Bool {
            if l4 != other.l4 { return l4 > other.l4 }
            if l3 != other.l3 { return l3 > other.l3 }
            if l2 != other.l2 { return l2 > other.l2 }
            if l1 != other.l1 { return l1 > other.l1 }
            return l0 >= other.l0
        }

        /// self + sign·other, sign ±1, carried back into the limbs' ranges.
        func adding(_ other: Limbs, times sign: Int64) -> Limbs {
            var sum = l0 + sign * other.l0
            let r0 = sum & Self.mask
            sum = (sum >> 62) + l1 + sign * other.l1
            let r1 = sum & Self.mask
            sum = (sum >> 62) + l2 + sign * other.l2
            let r2 = sum & Self.mask
            sum = (sum >> 62) + l3 + sign * other.l3
            let r3 = sum & Self.mask
            return Limbs(l0: r0, l1: r1, l2: r2, l3: r3, l4: (sum >> 62) + l4 + sign * other.l4)
        }

        /// (a·x + b·y + m·z) / 2⁶², for a sum whose lowest 62 bits are 0.
        static func combined(_ a: Int64, _ x: Limbs, _ b: Int64, _ y: Limbs, plus m: Int64 = 0, times z: Limbs = .zero) -> Limbs {
            @inline(__always) func term(_ xLimb: Int64, _ yLimb: Int64, _ zLimb: Int64) -> Int128 {
                Int128(a) * Int128(xLimb) + Int128(b) * Int128(yLimb) + Int128(m) * Int128(zLimb)
            }
            var sum = term(x.l0, y.l0, z.l0) >> 62
            sum += term(x.l1, y.l1, z.l1)
            let r0 = Int64(truncatingIfNeeded: sum) & mask
            sum = (sum >> 62) + term(x.l2, y.l2, z.l2)
            let r1 = Int64(truncatingIfNeeded: sum) & mask
            sum = (sum >> 62) + term(x.l3, y.l3, z.l3)
            let r2 = Int64(truncatingIfNeeded: sum) & mask
            sum = (sum >> 62) + term(x.l4, y.l4, z.l4)
            let r3 = Int64(truncatingIfNeeded: sum) & mask
            return Limbs(l0: r0, l1: r1, l2: r2, l3: r3, l4: Int64(truncatingIfNeeded: sum >> 62))
        }
    }

    /// The 2×2 matrix of 62 division steps: 2⁶²·(f′, g′) = (u·f + v·g, q·f + r·g).
    private struct Transition {
        var u: Int64 = 1, v: Int64 = 0, q: Int64 = 0, r: Int64 = 1
    }

    /// The modulus; odd.
    let modulus: Number
    private let modulusLimbs: Limbs
    /// modulus⁻¹ mod 2⁶²: what makes a coefficient's sum divisible by 2⁶² when a multiple of the modulus is added.
    private let inverseOfModulusLow: Int64

    /// nil when `modulus` is even: the steps need an odd one.
    init?(modulus: Number) {
        guard modulus.w0 & 1 == 1 else { return nil }
        self.modulus = modulus
        modulusLimbs = Limbs(modulus)
        // Newton's iteration doubles the correct low bits of the inverse each time: 1 → 64 in six.
        var inverse: UInt64 = 1
        for _ in 0..<6 { inverse = inverse &* (2 &- modulus.w0 &* inverse) }
        inverseOfModulusLow = Int64(inverse & UInt64(Limbs.mask))
    }

    /// a⁻¹ mod the modulus, for 0 < a < modulus; nil when a is out of that range or shares a
    /// factor with the modulus (then there is no inverse).
    func inverse(of a: Number) -> Number? {
        guard !a.isZero, a.isBelow(modulus) else { return nil }
        // Invariants: d·a ≡ f and e·a ≡ g (mod modulus), d and e in [0, modulus).
        var f = modulusLimbs, g = Limbs(a)
        var d = Limbs.zero, e = Limbs.one
        var delta = 1
        // For numbers below 2²⁵⁶, at most ⌊(49·256 + 57) / 17⌋ = 741 steps reach g = 0: 12 rounds of 62.
        for _ in 0..<12 {
            let t = Self.divisionSteps(&delta, f: f.lowWord, g: g.lowWord)
            (f, g) = (Limbs.combined(t.u, f, t.v, g), Limbs.combined(t.q, f, t.r, g))
            (d, e) = (coefficient(t.u, d, t.v, e), coefficient(t.q, d, t.r, e))
            if g == .zero { break }
        }
        guard g == .zero else { return nil }
        if f == .one { return d.number }
        // d·a ≡ −1: the inverse is −d.
        if f == .minusOne { return modulusLimbs.adding(d, times: -1).number }
        return nil
    }

    /// (a·x + b·y) / 2⁶² mod the modulus, in [0, modulus), for x and y in [0, modulus): the
    /// multiple of the modulus that clears the sum's lowest 62 bits is added first.
    private func coefficient(_ a: Int64, _ x: Limbs, _ b: Int64, _ y: Limbs) -> Limbs {
        let low = (a &* x.l0 &+ b &* y.l0) & Limbs.mask
        let m = (0 &- low) &* inverseOfModulusLow & Limbs.mask
        // |a| + |b| ≤ 2⁶² and m < 2⁶²: the quotient lies in (−2·modulus, 2·modulus).
        var result = Limbs.combined(a, x, b, y, plus: m, times: modulusLimbs)
        while result.isNegative { result = result.adding(modulusLimbs, times: 1) }
        while result.isAtLeast(modulusLimbs) { result = result.adding(modulusLimbs, times: -1) }
        return result
    }

    /// 62 division steps on the low words of f and g, starting at `delta`: the matrix that makes
    /// 2⁶²·(f′, g′) of (f, g). A step with g even halves g; with g odd and delta > 0 it makes
    /// (f, g) = (g, (g − f)/2), else g = (g + f)/2. A run of zero bits of g is halved at once.
    private static func divisionSteps(_ delta: inout Int, f: UInt64, g: UInt64) -> Transition {
        var (f, g) = (f, g)
        var t = Transition()
        var remaining = 62
        while true {
            let zeros = (g | 1 << UInt64(remaining)).trailingZeroBitCount
            g >>= UInt64(zeros)
            t.u = t.u &<< Int64(zeros)
            t.v = t.v &<< Int64(zeros)
            delta += zeros
            remaining -= zeros
            if remaining == 0 { return t }
            // g is odd.
            if delta > 0 {
                delta = 1 - delta
                (f, g) = (g, (g &- f) >> 1)
                (t.u, t.v, t.q, t.r) = (t.q &<< 1, t.r &<< 1, t.q &- t.u, t.r &- t.v)
            } else {
                delta += 1
                g = (g &+ f) >> 1
                (t.u, t.v, t.q, t.r) = (t.u &<< 1, t.v &<< 1, t.q &+ t.u, t.r &+ t.v)
            }
            remaining -= 1
            if remaining == 0 { return t }
        }
    }
}
