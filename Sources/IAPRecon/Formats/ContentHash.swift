import Foundation

/// A fast 64-bit fingerprint of a file's bytes, to tell a re-delivered
/// unchanged file (skipped) from a changed one (replaced).
///
/// Not cryptographic: it guards against re-ingesting, not against an attacker.
///
/// The current kind is a polynomial over the file's 8-byte words modulo the prime 2^61 − 1,
/// evaluated at a fixed point: the bytes of any range add up on their own, wherever the range
/// starts and ends, so the jobs that parse a file's chunks hash the bytes they read, each its own,
/// and the writer joins them in order into the hash of the whole file (`Pieces`). `of(path:)`
/// reads a file whole and gives the same value. Stores written before hold the kinds before
/// (`Kind`), which `of(path:alsoAs:)` computes too, from the same read.
enum ContentHash {
    /// The kinds of hash a store may hold.
    enum Kind: Sendable {
        /// The current kind, marked `mark`.
        case polynomial
        /// Four independent lanes of multiplies over 32-byte blocks, one after the other; marked "4:".
        case fourLanes
        /// One chain of multiplies over 8-byte words, in 1 MiB blocks; no mark.
        case oneLane
    }

    /// What marks the current kind of hash.
    static let mark = "p:"
    static let fourLaneMark = "4:"

    /// The kind of a stored hash; nil for what no file's hash is (a migration's note that its
    /// files must be read again).
    static func kind(of stored: String) -> Kind? {
        if stored.hasPrefix(mark) { return .polynomial }
        if stored.hasPrefix(fourLaneMark) { return .fourLanes }
        let isHex = !stored.isEmpty && stored.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return isHex ? .oneLane : nil
    }

    /// The hash of the file at `path`, and with `alsoAs` of an older kind its hash of that kind
    /// as well (to compare with what an older store holds), from one read.
    /// With `prefix`, also the hash its first `prefix` bytes would have as a file of their own (nil when it is
    /// shorter): a file only appended to since it was stored begins with the bytes stored, and so with their hash.
    static func of(path: String, alsoAs older: Kind? = nil,
                   prefix: Int? = nil) throws(InputError) -> (hash: String, older: String?, bytes: Int, prefixHash: String?) {
        var stream = Stream(start: 0)
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63)
        var single: UInt64 = 0x9E37_79B9_7F4A_7C15
        var prefixHash: String? = prefix == 0 ? finished(0, bytes: 0) : nil
        let total = try readBlocks(path) { buffer, count in
            if let prefix, prefixHash == nil, stream.end + count >= prefix {
                // The block that reaches the prefix's end is hashed in two: up to it, then the rest.
                let head = prefix - stream.end
                stream.add(UnsafeRawPointer(buffer), count: head)
                prefixHash = finished(stream.piece.value, bytes: prefix)
                stream.add(UnsafeRawPointer(buffer + head), count: count - head)
            } else {
                stream.add(UnsafeRawPointer(buffer), count: count)
            }
            switch older {
            case .fourLanes?:
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
            case .oneLane?:
                // Each block as 8-byte words, then its odd bytes.
                let words = count / 8
                for index in 0..<words { single = mix(single ^ buffer.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) }
                for index in (words * 8)..<count { single = mix(single ^ UInt64(buffer.load(fromByteOffset: index, as: UInt8.self))) }
            case .polynomial?, nil:
                break
            }
        }
        let olderHash: String? = switch older {
        case .fourLanes?: fourLaneMark + String(mix(mix(mix(mix(mix(lanes.0) ^ lanes.1) ^ lanes.2) ^ lanes.3) ^ UInt64(total)), radix: 16)
        case .oneLane?: String(mix(single ^ UInt64(total)), radix: 16)
        case .polynomial?, nil: nil
        }
        return (finished(stream.piece.value, bytes: total), olderHash, total, prefixHash)
    }

    /// The bytes of one range of a file, hashed: `value` is the polynomial over the words they
    /// fall in (a word the range shares with the next holds only the range's own bytes) with the
    /// last of them at power 0. Ranges that follow one another join in `Pieces`.
    struct Piece: Sendable, Equatable {
        var start: Int
        /// The offset after its last byte.
        var end: Int
        var value: UInt64
    }

    /// The pieces of one file, joined in order into its hash.
    struct Pieces: Sendable {
        private var value: UInt64 = 0
        /// The offset after the last byte joined.
        private(set) var end = 0
        private var isWhole = true

        /// Joins the piece that follows: one that starts elsewhere than where the last ended (the
        /// jobs found the line between their chunks in different places, or one found the file
        /// ending before its chunk did: it was cut or rewritten while being read) leaves the hash
        /// of no file.
        mutating func add(_ piece: Piece) {
            guard isWhole, piece.start == end else {
                isWhole = false
                return
            }
            guard piece.end > piece.start else { return }
            if end > 0 {
                // The words before move up by the words the piece ends past them.
                value = multiply(value, power((piece.end - 1) / 8 - (end - 1) / 8))
            }
            value = fold(value &+ piece.value)
            end = piece.end
        }

        /// The hash of the bytes joined, or nil when they are not one file's bytes read in order.
        var hash: String? { isWhole ? finished(value, bytes: end) : nil }
    }

    /// Hashes the bytes of a file from `start` on, given in order in blocks of any length.
    struct Stream {
        let start: Int
        /// The offset after the last byte added.
        private(set) var end: Int
        /// Four interleaved polynomials over the words of 32-byte groups (each at the fourth power
        /// of the point), which the processor computes at once.
        private var lanes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        /// The group being filled, from the start of its first word, and how many of its bytes are.
        private var staged: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var stagedBytes: Int

        init(start: Int) {
            self.start = start
            end = start
            // Words are the file's 8-byte words: a start inside one leaves its first bytes zero.
            stagedBytes = start % 8
        }

        mutating func add(_ bytes: UnsafeRawPointer, count: Int) {
            guard count > 0 else { return }
            end += count
            var next = bytes
            var left = count
            if stagedBytes > 0 {
                let taken = min(32 - stagedBytes, left)
                let at = stagedBytes
                withUnsafeMutableBytes(of: &staged) { group in
                    guard let base = group.baseAddress else { return }
                    (base + at).copyMemory(from: next, byteCount: taken)
                }
                stagedBytes += taken
                next += taken
                left -= taken
                guard stagedBytes == 32 else { return }
                absorb(staged.0, staged.1, staged.2, staged.3)
                staged = (0, 0, 0, 0)
                stagedBytes = 0
            }
            while left >= 32 {
                absorb(next.loadUnaligned(as: UInt64.self), next.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                       next.loadUnaligned(fromByteOffset: 16, as: UInt64.self), next.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
                next += 32
                left -= 32
            }
            if left > 0 {
                let taken = left
                withUnsafeMutableBytes(of: &staged) { group in
                    guard let base = group.baseAddress else { return }
                    base.copyMemory(from: next, byteCount: taken)
                }
                stagedBytes = left
            }
        }

        /// The bytes added so far, as one piece.
        var piece: Piece {
            var value = multiply(fold(lanes.0), point3)
            value = fold(value &+ multiply(fold(lanes.1), point2))
            value = fold(value &+ multiply(fold(lanes.2), point))
            value = fold(value &+ fold(lanes.3))
            // The staged words, zeros past the last byte.
            let words = (stagedBytes + 7) / 8
            withUnsafeBytes(of: staged) { group in
                for index in 0..<words { value = fold(multiply(value, point) &+ fold(group.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))) }
            }
            return Piece(start: start, end: end, value: value)
        }

        @inline(__always)
        private mutating func absorb(_ word0: UInt64, _ word1: UInt64, _ word2: UInt64, _ word3: UInt64) {
            lanes.0 = multiplyAdding(lanes.0, point4, word0)
            lanes.1 = multiplyAdding(lanes.1, point4, word1)
            lanes.2 = multiplyAdding(lanes.2, point4, word2)
            lanes.3 = multiplyAdding(lanes.3, point4, word3)
        }
    }

    /// The bytes a reader hands on, hashed as it goes (`LineReader`, `GzipReader`): one job's
    /// piece of its file.
    final class Reading {
        private var stream: Stream?

        /// Hashing begins at `offset` of the file; once begun, it goes on from where it is.
        func start(at offset: Int) {
            if stream == nil { stream = Stream(start: offset) }
        }

        /// The bytes that follow those hashed, once hashing has begun.
        func add(_ bytes: UnsafeRawPointer, count: Int) {
            stream?.add(bytes, count: count)
        }

        /// The offset after the last byte hashed; nil before hashing began.
        var end: Int? { stream?.end }

        /// The bytes hashed; nil when hashing never began.
        var piece: Piece? { stream?.piece }
    }

    /// The prime 2^61 − 1, and the point the polynomial is taken at: a generator of its
    /// multiplicative group (no power of it short of the group's order is 1, so no shift of words
    /// by fewer places cancels), with a fourth power below 2^59 (`multiplyAdding`).
    private static let prime: UInt64 = (1 << 61) - 1
    private static let point: UInt64 = 0x1F0A_7C3B_92D5_E863
    private static let point2: UInt64 = 0x1BCA_0992_67B9_EF1C
    private static let point3: UInt64 = 0x1B7F_396F_FB3D_E7BC
    private static let point4: UInt64 = 0x053D_C523_E811_9227

    /// `value` reduced below 2^61 + 8, equal to it modulo the prime (2^61 is 1).
    @inline(__always)
    private static func fold(_ value: UInt64) -> UInt64 { (value & prime) &+ (value >> 61) }

    /// `a` × `b` + `c` modulo the prime, below 2^63, for any `a` and `c` and `b` below 2^59 (the
    /// fourth power of the point is): the sum is taken on all 128 bits of the product, then folded
    /// once, its high half at most 2^59.
    @inline(__always)
    private static func multiplyAdding(_ a: UInt64, _ b: UInt64, _ c: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        let (sum, carried) = low.addingReportingOverflow(c)
        // The 128 bits past the 61st, below 2^62 + 8, plus the low 61.
        return (sum & prime) &+ ((high &+ (carried ? 1 : 0)) << 3 | sum >> 61)
    }

    /// The product modulo the prime, below 2^61 + 8, of two values below 2^62.
    private static func multiply(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return fold((low & prime) &+ (low >> 61) &+ (high << 3))
    }

    /// The point to the power `exponent`.
    private static func power(_ exponent: Int) -> UInt64 {
        var result: UInt64 = 1
        var base = point
        var left = exponent
        while left > 0 {
            if left & 1 == 1 { result = multiply(result, base) }
            base = multiply(base, base)
            left >>= 1
        }
        return result
    }

    /// The hash of a whole file's polynomial and length: the value reduced to one representative
    /// first, since pieces joined differently reduce it differently.
    private static func finished(_ value: UInt64, bytes: Int) -> String {
        let reduced = fold(value) >= prime ? fold(value) - prime : fold(value)
        return mark + String(mix(mix(reduced ^ 0x9E37_79B9_7F4A_7C15) ^ UInt64(bytes)), radix: 16)
    }

    /// The hash, and length, of the bytes a gzip file holds once inflated: what the plain file it was made from
    /// hashes to, so a file compressed in place (`x.jsonl` to `x.jsonl.gz`) is known for the stored one.
    static func ofInflated(gzip path: String) throws(InputError) -> (hash: String, bytes: Int) {
        let file = try InputFile(path: path)
        var stream = Stream(start: 0)
        let total = try blocks(reading: file.read(into:count:)) { buffer, count in stream.add(UnsafeRawPointer(buffer), count: count) }
        return (finished(stream.piece.value, bytes: total), total)
    }

    /// Reads the file in blocks of 1 MiB (the last shorter; each but the last a multiple of 32
    /// bytes) and returns its length.
    private static func readBlocks(_ path: String, _ block: (UnsafeMutableRawPointer, Int) -> Void) throws(InputError) -> Int {
        // A folder is named as reading it says.
        let descriptor = try InputFile.openRegularFile(path, folderReason: InputFile.folderRead)
        defer { close(descriptor) }
        return try blocks(reading: { buffer, count throws(InputError) in try InputFile.read(descriptor, into: buffer, count: count, path: path) },
                          block)
    }

    /// Hands on what `read` gives (up to the count asked, 0 at the end) in blocks of 1 MiB, the last
    /// shorter, and returns its length.
    private static func blocks(reading read: (UnsafeMutableRawPointer, Int) throws(InputError) -> Int,
                               _ block: (UnsafeMutableRawPointer, Int) -> Void) throws(InputError) -> Int {
        let blockSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: blockSize, alignment: 8)
        defer { buffer.deallocate() }
        var total = 0
        var filled = 0
        while true {
            let count = try read(buffer + filled, blockSize - filled)
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
