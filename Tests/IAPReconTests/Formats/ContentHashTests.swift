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

    private func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/iaprecon-hash-" + UUID().uuidString
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static let sizes = [0, 1, 7, 8, 31, 32, 33, 1000, (1 << 20) - 1, 1 << 20, (1 << 20) + 37, 3 * (1 << 20) + 5]

    @Test("a hash stored by an earlier iaprecon is computed again the same way, so its unchanged file stays unchanged", arguments: sizes)
    func legacyHashes(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = try file(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let both = try ContentHash.of(path: path, oneLaneToo: true)
        #expect(both.oneLane == Self.oneLane(bytes))
        #expect(both.bytes == size)
        let current = try ContentHash.of(path: path)
        #expect(current.hash == both.hash)
        #expect(current.oneLane == nil)
        #expect(current.hash.hasPrefix(ContentHash.mark) && !ContentHash.isOneLane(current.hash) && ContentHash.isOneLane(Self.oneLane(bytes)))
    }

    @Test("one byte changed anywhere, in any lane or in the tail, or one byte more, changes the hash")
    func everyByteCounts() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<((1 << 20) + 45)).map { _ in UInt8.random(in: 0...255, using: &generator) }
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
        let longer = try file(bytes + [0])
        defer { try? FileManager.default.removeItem(atPath: longer) }
        #expect(try ContentHash.of(path: longer).hash != original)
    }

    @Test("a store holding an earlier iaprecon's hash: the file touched but unchanged is skipped and its hash renewed; rewritten, it is replaced")
    func storedLegacyHash() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let line = Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")
        _ = try scenario.write("server/a.jsonl", [line])
        _ = try scenario.run()
        let path = scenario.input + "/server/a.jsonl"
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try scenario.open().run("UPDATE files SET content_hash = ? WHERE path = 'server/a.jsonl'", [.text(Self.oneLane(bytes))])

        // A new modification time makes it hashed again, the way its stored hash was made.
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        let touched = try scenario.run()
        #expect(touched.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .unchanged)
        let renewed = try scenario.open().scalar("SELECT content_hash FROM files WHERE path = 'server/a.jsonl'")
        #expect(renewed == .text(try ContentHash.of(path: path).hash))
        try scenario.open().run("UPDATE files SET content_hash = ? WHERE path = 'server/a.jsonl'", [.text(Self.oneLane(bytes))])

        // Same length, other bytes: replaced, and the new hash is of the current kind.
        _ = try scenario.write("server/a.jsonl", [line.replacingOccurrences(of: "u_1", with: "u_2")])
        let rewritten = try scenario.run()
        #expect(rewritten.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .replaced)
        let stored = try scenario.open().scalar("SELECT content_hash FROM files WHERE path = 'server/a.jsonl'")
        guard case .text(let hash)? = stored else { Issue.record("no hash stored: \(String(describing: stored))"); return }
        #expect(hash.hasPrefix(ContentHash.mark))
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
