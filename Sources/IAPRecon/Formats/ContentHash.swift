import Foundation

/// A fast 64-bit fingerprint of a file's bytes, to tell a re-delivered
/// unchanged file (skipped) from a changed one (replaced).
///
/// Not cryptographic: it guards against re-ingesting, not against an attacker.
enum ContentHash {
    static func of(path: String) throws(InputError) -> (hash: String, bytes: Int) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw InputError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var total = 0
        let blockSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, blockSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw InputError(path: path, reason: String(cString: strerror(errno)))
            }
            if count == 0 { break }
            let words = count / 8
            for index in 0..<words {
                state = mix(state ^ buffer.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
            }
            for index in (words * 8)..<count {
                state = mix(state ^ UInt64(buffer.load(fromByteOffset: index, as: UInt8.self)))
            }
            total += count
        }
        state = mix(state ^ UInt64(total))
        return (String(state, radix: 16), total)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 31)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 29)
    }
}

/// FNV-1a over text, for stable ids.
public enum StableID {
    public static func hash(_ text: String) -> String {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01B3
        }
        let hex = String(state, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
