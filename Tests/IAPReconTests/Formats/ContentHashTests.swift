import Foundation
import Testing
@testable import IAPRecon

/// A file's content hash tells a re-delivered unchanged file (skipped) from a changed one
/// (replaced), in stores written by this iaprecon and by earlier ones.
@Suite("Content hashes")
struct ContentHashTests {
    /// The one-lane hash stores written before the four-lane one hold: 1 MiB blocks, each as
    /// 8-byte words then its odd bytes, then the length.
    static func oneLane(_ bytes: [UInt8]) -> String {
        func mix(_ value: UInt64) -> UInt64 {
            var x = value &* 0xBF58_476D_1CE4_E5B9
            x = (x ^ (x >> 31)) &* 0x94D0_49BB_1331_11EB
            return x ^ (x >> 29)
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var start = 0
        while start < bytes.count {
            let block = bytes[start..<min(start + (1 << 20), bytes.count)]
            var offset = block.startIndex
            while offset + 8 <= block.endIndex {
                var word: UInt64 = 0
                for index in 0..<8 { word |= UInt64(block[offset + index]) << (8 * index) }
                state = mix(state ^ word)
                offset += 8
            }
            while offset < block.endIndex {
                state = mix(state ^ UInt64(block[offset]))
                offset += 1
            }
            start += 1 << 20
        }
        return String(mix(state ^ UInt64(bytes.count)), radix: 16)
    }

    /// The four-lane hash (marked "4:") stores written before the polynomial one hold: 1 MiB
    /// blocks, each as 32-byte groups over four lanes, then its words and odd bytes on the first.
    static func fourLanes(_ bytes: [UInt8]) -> String {
        var lanes: [UInt64] = [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F, 0x1656_67B1_9E37_79F9, 0x85EB_CA77_C2B2_AE63]
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        var start = 0
        while start < bytes.count {
            let end = min(start + (1 << 20), bytes.count)
            var offset = start
            while offset + 32 <= end {
                for lane in 0..<4 { lanes[lane] = mix(lanes[lane] ^ word(offset + 8 * lane)) }
                offset += 32
            }
            while offset + 8 <= end {
                lanes[0] = mix(lanes[0] ^ word(offset))
                offset += 8
            }
            while offset < end {
                lanes[0] = mix(lanes[0] ^ UInt64(bytes[offset]))
                offset += 1
            }
            start = end
        }
        let combined = mix(mix(mix(mix(lanes[0]) ^ lanes[1]) ^ lanes[2]) ^ lanes[3])
        return "4:" + String(mix(combined ^ UInt64(bytes.count)), radix: 16)
    }

    /// The current hash as its definition reads: the file's little-endian 8-byte words (the last
    /// padded with zeros) as a polynomial modulo 2^61 − 1 at the point, the first word at the
    /// highest power, then mixed with the length.
    static func polynomial(_ bytes: [UInt8]) -> String {
        let prime: UInt128 = (1 << 61) - 1
        var value: UInt128 = 0
        var offset = 0
        while offset < bytes.count {
            var word: UInt128 = 0
            for index in 0..<8 where offset + index < bytes.count { word |= UInt128(bytes[offset + index]) << (8 * index) }
            value = (value * 0x1F0A_7C3B_92D5_E863 + word % prime) % prime
            offset += 8
        }
        return "p:" + String(mix(mix(UInt64(value) ^ 0x9E37_79B9_7F4A_7C15) ^ UInt64(bytes.count)), radix: 16)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 31)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 29)
    }

    private func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/iaprecon-hash-" + UUID().uuidString
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func random(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static let sizes = [0, 1, 7, 8, 31, 32, 33, 1000, (1 << 20) - 1, 1 << 20, (1 << 20) + 37, 3 * (1 << 20) + 5]

    @Test("a file's hash is the polynomial of its words and its length, and the hash of an older kind is computed the same way as before, from the same read", arguments: sizes)
    func kinds(size: Int) throws {
        let bytes = Self.random(size)
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let current = try ContentHash.of(path: path)
        #expect(current.hash == Self.polynomial(bytes))
        #expect(current.bytes == size)
        #expect(current.older == nil)
        let oneLane = try ContentHash.of(path: path, alsoAs: .oneLane)
        #expect(oneLane.older == Self.oneLane(bytes))
        #expect(oneLane.hash == current.hash)
        let fourLanes = try ContentHash.of(path: path, alsoAs: .fourLanes)
        #expect(fourLanes.older == Self.fourLanes(bytes))
        #expect(fourLanes.hash == current.hash)
        #expect(ContentHash.kind(of: current.hash) == .polynomial)
        #expect(ContentHash.kind(of: Self.fourLanes(bytes)) == .fourLanes)
        #expect(ContentHash.kind(of: Self.oneLane(bytes)) == .oneLane)
        #expect(ContentHash.kind(of: "read again for quantities") == nil)
    }

    @Test("a gzip file's bytes once inflated hash as the plain file it was made of, whatever their length", arguments: sizes)
    func inflatedHash(size: Int) throws {
        let bytes = Self.random(size)
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path + ".gz") }
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-n", path]
        try gzip.run()
        gzip.waitUntilExit()
        let inflated = try ContentHash.ofInflated(gzip: path + ".gz")
        #expect(inflated.hash == Self.polynomial(bytes))
        #expect(inflated.bytes == size)
        // Near miss: the gzip file's own bytes hash otherwise.
        #expect(try ContentHash.of(path: path + ".gz").hash != inflated.hash)
    }

    @Test("one byte changed anywhere, in any lane or in the tail, or one byte more, changes the hash")
    func everyByteCounts() throws {
        let bytes = Self.random((1 << 20) + 45)
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let original = try ContentHash.of(path: path).hash
        for position in [0, 9, 17, 25, 31, 32, (1 << 20) - 1, 1 << 20, (1 << 20) + 40, bytes.count - 1] {
            var changed = bytes
            changed[position] ^= 0x01
            let other = try file(changed)
            defer { try? FileManager.default.removeItem(atPath: other) }
            #expect(try ContentHash.of(path: other).hash != original, "byte \(position)")
        }
        for longer in [bytes + [0], bytes + [0, 0, 0]] {
            let other = try file(longer)
            defer { try? FileManager.default.removeItem(atPath: other) }
            #expect(try ContentHash.of(path: other).hash != original)
        }
    }

    /// Lines of the lengths given in turn (a newline each, the last one too when `endsWithNewline`),
    /// cut or padded to `size` bytes.
    static func lines(size: Int, lengths: [Int], endsWithNewline: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        var next = 0
        var generator = SystemRandomNumberGenerator()
        while bytes.count < size {
            let length = lengths[next % lengths.count]
            next += 1
            bytes += (0..<length).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) } + [0x0A]
        }
        bytes = Array(bytes.prefix(size))
        if !endsWithNewline, let last = bytes.indices.last, bytes[last] == 0x0A { bytes[last] = 0x41 }
        return bytes
    }

    /// The hash the jobs parsing `path` in chunks of `chunkBytes` join from the bytes they read,
    /// each job run by `read` (so a test may change the file between them); nil when they do not join.
    static func chunkedHash(_ path: String, chunkBytes: Int, read: (Int, () throws -> ContentHash.Piece?) throws -> ContentHash.Piece? = { try $1() })
        throws -> (hash: String?, bytes: Int, jobs: Int) {
        let size = Int((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0)
        let source = SourceFile(relativePath: "server/a.jsonl", absolutePath: path, kind: .server)
        let jobs = IngestStage.jobs(for: source, fileIndex: 0, bytes: size, chunkBytes: chunkBytes)
        var pieces = ContentHash.Pieces()
        for (index, job) in jobs.enumerated() {
            let piece = try read(index) {
                let reading = ContentHash.Reading()
                try LineReader.forEachLine(path: path, range: job.range, hashing: reading) { _ in }
                return reading.piece
            }
            if let piece { pieces.add(piece) }
        }
        return (pieces.hash, pieces.end, jobs.count)
    }

    static let chunkSizes = [0, 1, 7, 8, 9, 31, 32, 33, 99, 100, 101, 199, 200, 201, 1000, 4001]

    @Test("a file read in chunks, each chunk's bytes hashed by its own job and joined in order, has the hash of the file read whole", arguments: chunkSizes)
    func chunksJoin(size: Int) throws {
        // Lines shorter and longer than a chunk, so some chunks start none of their own.
        for (lengths, endsWithNewline) in [([5, 40, 0, 130, 17], true), ([5, 40, 0, 130, 17], false), ([250], true), ([3], false)] {
            let bytes = Self.lines(size: size, lengths: lengths, endsWithNewline: endsWithNewline)
            let path = try file(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let whole = try ContentHash.of(path: path)
            for chunkBytes in [8, 32, 33, 100, 1000] {
                let chunked = try Self.chunkedHash(path, chunkBytes: chunkBytes)
                #expect(chunked.hash == whole.hash, "\(lengths) chunks of \(chunkBytes), \(chunked.jobs) jobs")
                #expect(chunked.bytes == size)
            }
        }
    }

    @Test("a large file read in chunks across read blocks, with a line longer than a block, has the hash of the file read whole", arguments: [
        (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 5,
    ])
    func largeChunksJoin(size: Int) throws {
        let bytes = Self.lines(size: size, lengths: [70, 300, (1 << 20) + 3000, 11])
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let whole = try ContentHash.of(path: path).hash
        for chunkBytes in [1 << 19, 1 << 20, (1 << 20) + 7] {
            #expect(try Self.chunkedHash(path, chunkBytes: chunkBytes).hash == whole, "chunks of \(chunkBytes)")
        }
    }

    @Test("one byte changed in the middle of a chunk changes the hash its jobs join, to the hash of the changed file")
    func chunkNearMiss() throws {
        let bytes = Self.lines(size: 5000, lengths: [5, 40, 0, 130, 17])
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let original = try Self.chunkedHash(path, chunkBytes: 1000).hash
        #expect(original == (try ContentHash.of(path: path).hash))
        for position in [1500, 2497, 4999] where bytes[position] != 0x0A {
            var changed = bytes
            changed[position] = changed[position] == 0x41 ? 0x42 : 0x41
            try Data(changed).write(to: URL(fileURLWithPath: path))
            let chunked = try Self.chunkedHash(path, chunkBytes: 1000).hash
            #expect(chunked != original, "byte \(position)")
            #expect(chunked == (try ContentHash.of(path: path).hash), "byte \(position)")
        }
    }

    @Test("a file changed between its chunks' reads: grown, its hash is of every byte parsed; cut short, or rewritten with its lines elsewhere, it is no file's hash")
    func changedWhileRead() throws {
        let bytes = Self.lines(size: 5000, lengths: [5, 40, 0, 130, 17])
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let more = Self.lines(size: 700, lengths: [20])
        let grown = try Self.chunkedHash(path, chunkBytes: 1000) { job, read in
            // The last job reads to the end, whatever the file's length when planned.
            if job == 4 { try Data(bytes + more).write(to: URL(fileURLWithPath: path)) }
            return try read()
        }
        #expect(grown.hash == (try ContentHash.of(path: path).hash))
        #expect(grown.bytes == 5700)

        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let cut = try Self.chunkedHash(path, chunkBytes: 1000) { job, read in
            if job == 2 { try Data(bytes.prefix(2500)).write(to: URL(fileURLWithPath: path)) }
            return try read()
        }
        #expect(cut.hash == nil)

        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let moved = try Self.chunkedHash(path, chunkBytes: 1000) { job, read in
            if job == 2 { try Data([0x41] + bytes.dropLast()).write(to: URL(fileURLWithPath: path)) }
            return try read()
        }
        #expect(moved.hash == nil)
    }

    @Test("a store holding an earlier iaprecon's hash: the file touched but unchanged is skipped and its hash renewed; rewritten, it is replaced",
          arguments: [ContentHash.Kind.oneLane, .fourLanes])
    func storedOlderHash(kind: ContentHash.Kind) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let line = Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")
        _ = try scenario.write("server/a.jsonl", [line])
        _ = try scenario.run()
        let path = scenario.input + "/server/a.jsonl"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let older = kind == .oneLane ? Self.oneLane(bytes) : Self.fourLanes(bytes)
        try scenario.open().run("UPDATE files SET content_hash = ? WHERE path = 'server/a.jsonl'", [.text(older)])

        // A new modification time makes it hashed again, the way its stored hash was made.
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        let touched = try scenario.run()
        #expect(touched.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .unchanged)
        let renewed = try scenario.open().scalar("SELECT content_hash FROM files WHERE path = 'server/a.jsonl'")
        #expect(renewed == .text(try ContentHash.of(path: path).hash))
        try scenario.open().run("UPDATE files SET content_hash = ? WHERE path = 'server/a.jsonl'", [.text(older)])

        // Same length, other bytes: replaced, and the new hash is of the current kind.
        _ = try scenario.write("server/a.jsonl", [line.replacingOccurrences(of: "u_1", with: "u_2")])
        let rewritten = try scenario.run()
        #expect(rewritten.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .replaced)
        let stored = try scenario.open().scalar("SELECT content_hash FROM files WHERE path = 'server/a.jsonl'")
        #expect(stored == .text(try ContentHash.of(path: path).hash))
    }

    @Test("a file stored as changed while being read is read again by the next run, though its bytes are what they were")
    func storedChangedWhileRead() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        _ = try scenario.write("server/a.jsonl", [Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")])
        _ = try scenario.run()
        let path = scenario.input + "/server/a.jsonl"
        // As a run that found the file changing under it leaves it: the write moved its time.
        try scenario.open().run("UPDATE files SET content_hash = ? WHERE path = 'server/a.jsonl'", [.text(IngestStage.changedWhileRead)])
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        let next = try scenario.run()
        #expect(next.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .replaced)
        #expect(try scenario.open().scalar("SELECT content_hash FROM files WHERE path = 'server/a.jsonl'") == .text(try ContentHash.of(path: path).hash))
    }

    @Test("a stable id is FNV-1a's 64 bits as 16 lower-case hex digits, leading zeros kept", arguments: [
        ("", "cbf29ce484222325"),
        (#"{"af_revenue":"4.99"}"#, "e5da87e883c24e37"),
        ("ev95300", "000962cd7d35f225"),
    ])
    func stableIDs(text: String, id: String) {
        #expect(StableID.hash(text) == id)
    }
}
