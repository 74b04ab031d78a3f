import Foundation

/// A fast 64-bit fingerprint of a file's bytes, to tell a re-delivered
/// unchanged file (skipped) from a changed one (replaced).
///
/// Not cryptographic: it guards against re-ingesting, not against an attacker.
enum ContentHash {
    /// What marks the current kind of hash: four independent lanes over 32-byte blocks, which the
    /// processor works on at once, where one chain of multiplies waits on each step. Stores written
    /// before hold one-lane hashes, without the mark.
    static let mark = "4:"

    /// A hash of the kind stores written before this one hold.
    static func isOneLane(_ hash: String) -> Bool { !hash.hasPrefix(mark) }

    /// The hash of the file at `path`, and with `oneLaneToo` its one-lane hash as well (to compare
    /// with what an older store holds), from one read.
    static func of(path: String, oneLaneToo: Bool = false) throws(InputError) -> (hash: String, oneLane: String?, bytes: Int) {
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63)
        var single: UInt64 = 0x9E37_79B9_7F4A_7C15
        let total = try readBlocks(path) { buffer, count in
            var offset = 0
            while offset + 32 <= count {
                lanes.0 = mix(lanes.0 ^ buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                lanes.1 = mix(lanes.1 ^ buffer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                lanes.2 = mix(lanes.2 ^ buffer.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                lanes.3 = mix(lanes.3 ^ buffer.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
                offset += 32
            }
            while offset + 8 <= count {
                lanes.0 = mix(lanes.0 ^ buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            for index in offset..<count { lanes.0 = mix(lanes.0 ^ UInt64(buffer.load(fromByteOffset: index, as: UInt8.self))) }
            guard oneLaneToo else { return }
            // Each block as 8-byte words, then its odd bytes.
            let words = count / 8
            for index in 0..<words { single = mix(single ^ buffer.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
            for index in (words * 8)..<count { single = mix(single ^ UInt64(buffer.load(fromByteOffset: index, as: UInt8.self))) }
        }
        let combined = mix(mix(mix(mix(lanes.0) ^ lanes.1) ^ lanes.2) ^ lanes.3)
        let oneLane = oneLaneToo ? String(mix(single ^ UInt64(total)), radix: 16) : nil
        return (mark + String(mix(combined ^ UInt64(total)), radix: 16), oneLane, total)
    }

    /// Reads the file in blocks of 1 MiB (the last shorter; each but the last a multiple of 32
    /// bytes) and returns its length.
    private static func readBlocks(_ path: String, _ block: (UnsafeMutableRawPointer, Int) -> Void) throws(InputError) -> Int {
        // O_NONBLOCK: opening a FIFO that replaced the file since it was listed must not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { throw InputError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        // A folder goes on to fail reading with the system's "Is a directory".
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG || status.st_mode & S_IFMT == S_IFDIR else {
            throw InputError(path: path, reason: "not a regular file")
        }
        let blockSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 8)
        defer { buffer.deallocate() }
        var total = 0
        var filled = 0
        while true {
            let count = read(descriptor, buffer + filled, blockSize - filled)
            if count < 0 {
                if errno == EINTR { continue }
                throw InputError(path: path, reason: String(cString: strerror(errno)))
            }
            filled += count
            // A short read is not the end: hash only whole blocks until the file is done, so
            // the result never depends on how the kernel cut the reads.
            if count > 0, filled < blockSize { continue }
            if filled > 0 { block(buffer, filled) }
            total += filled
            if count == 0 { return total }
            filled = 0
        }
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
        let state = value(text)
        // 16 lower-case hex digits, written in place (as `String(state, radix: 16)` zero-padded).
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[index] = digits.utf8Start[Int(truncatingIfNeeded: state >> UInt64(60 - 4 * index)) & 0xF]
            }
            return 16
        }
    }

    /// The hash's eight bytes, most significant first: the bytes `hash` spells in hex.
    public static func bytes(_ text: String) -> [UInt8] {
        withUnsafeBytes(of: value(text).bigEndian) { Array($0) }
    }

    private static func value(_ text: String) -> UInt64 {
        var state: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01B3
        }
        return state
    }
}
