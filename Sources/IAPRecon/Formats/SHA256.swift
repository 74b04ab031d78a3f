/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for keyed pseudonyms of device ids.
///
/// The toolchain offers no SHA-256 on Linux without a package (CryptoKit is Apple-only).
/// Ingest hashes a few ids of a few dozen bytes for every MMP row, so the state and the
/// pending block are inline values: hashing allocates nothing but its 32-byte result.
public struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19
    )
    /// The block being filled: 64 bytes.
    private var block: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var blockCount = 0
    private var length: UInt64 = 0

    public init() {}

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { append(byte) }
    }

    private mutating func append(_ byte: UInt8) {
        let index = blockCount
        withUnsafeMutableBytes(of: &block) { $0[index] = byte }
        blockCount += 1
        length &+= 1
        if blockCount == 64 {
            compressBlock()
            blockCount = 0
        }
    }

    public func finalize() -> [UInt8] {
        var copy = self
        let bits = length &* 8
        copy.append(0x80)
        while copy.blockCount != 56 { copy.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { copy.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        let words = [copy.state.0, copy.state.1, copy.state.2, copy.state.3, copy.state.4, copy.state.5, copy.state.6, copy.state.7]
        var digest: [UInt8] = []
        digest.reserveCapacity(32)
        for word in words {
            for shift in stride(from: 24, through: 0, by: -8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift))) }
        }
        return digest
    }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    private static let roundConstants: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    private mutating func compressBlock() {
        var (a, b, c, d, e, f, g, h) = state
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            withUnsafeBytes(of: block) { bytes in
                for index in 0..<16 {
                    schedule[index] = UInt32(bytes[index * 4]) << 24 | UInt32(bytes[index * 4 + 1]) << 16
                        | UInt32(bytes[index * 4 + 2]) << 8 | UInt32(bytes[index * 4 + 3])
                }
            }
            func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value >> count | value << (32 - count) }
            for index in 16..<64 {
                let s0 = rotate(schedule[index - 15], 7) ^ rotate(schedule[index - 15], 18) ^ (schedule[index - 15] >> 3)
                let s1 = rotate(schedule[index - 2], 17) ^ rotate(schedule[index - 2], 19) ^ (schedule[index - 2] >> 10)
                schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
            }
            Self.roundConstants.withUnsafeBufferPointer { constants in
                for index in 0..<64 {
                    let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ constants[index] &+ schedule[index]
                    let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ s0 &+ majority)
                }
            }
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }
}

/// HMAC-SHA256 with one key: the padded key's two hash states are computed once, so each
/// message costs its own blocks only.
public struct HMACSHA256: Sendable {
    private let inner: SHA256
    private let outer: SHA256

    public init(key: [UInt8]) {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5C })
        self.inner = inner
        self.outer = outer
    }

    public func authenticationCode(_ message: some Sequence<UInt8>) -> [UInt8] {
        var inner = self.inner
        inner.update(message)
        var outer = self.outer
        outer.update(inner.finalize())
        return outer.finalize()
    }
}
