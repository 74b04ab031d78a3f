/// Two independent 64-bit FNV-style hashes of a row's identity: 128 bits, so distinct rows never meet in practice.
struct RowFingerprint: Hashable {
    var first: UInt64 = 0xCBF2_9CE4_8422_2325
    var second: UInt64 = 0x8422_2325_CBF2_9CE4

    init(_ text: String) {
        for byte in text.utf8 { add(byte) }
    }

    /// A fingerprint is a hash already: the dictionaries keyed by it (millions of ids in the
    /// join's components, the MMP repeats, attribution's install index) take one multiply and
    /// shift of it, with the process's seed, instead of running SipHash over its 16 bytes.
    /// Both halves go in, so ids made to collide in one hash still spread.
    func _rawHashValue(seed: Int) -> Int {
        Self.hashValue(first, second, seed: seed)
    }

    /// One multiply and shift of two words and the process's seed: the hash of a fingerprint, and
    /// of the small keys made of fingerprints or numbers that reports look up once per row.
    static func hashValue(_ first: UInt64, _ second: UInt64, seed: Int) -> Int {
        var mixed = (first ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
        mixed ^= second
        mixed = (mixed ^ (mixed >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 32))
    }

    /// Two optional fingerprints as two words for `hashValue`: a missing one is none of a fingerprint's values in practice.
    static func words(_ a: RowFingerprint?, _ b: RowFingerprint?) -> (UInt64, UInt64) {
        let (a, b) = (a ?? RowFingerprint(missing: ()), b ?? RowFingerprint(missing: ()))
        return (a.first ^ (b.second &* 0x9E37_79B9_7F4A_7C15), a.second ^ (b.first >> 7 | b.first << 57))
    }

    /// Stands for a missing fingerprint in `words`.
    private init(missing: Void) {
        (first, second) = (0, 0)
    }

    /// The fingerprint of `prefix`, a unit separator, then `bytes`: the same as of that string.
    init(_ prefix: String, _ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in prefix.utf8 { add(byte) }
        add(0x1F)
        for byte in bytes { add(byte) }
    }

    /// The fingerprint of no bytes, to be fed with `add`.
    init() {}

    /// The fingerprint of `bytes`: the same as of the text they spell.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        add(bytes)
    }

    mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// Adds `value` as `String(value)` spells it.
    mutating func add(decimal value: Int64) {
        if value < 0 { add(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, most significant last
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { add(buffer[index]) }
        }
    }

    mutating func add(_ byte: UInt8) {
        first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        second = (second &+ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
        second ^= second >> 29
    }
}
