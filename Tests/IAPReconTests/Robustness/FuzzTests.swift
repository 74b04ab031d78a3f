import Foundation
import Testing
@testable import IAPRecon

/// A deterministic pseudo-random generator for reproducible fuzz cases.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Hostile input: mutated `sample-data/` lines never crash or hang the parsers, every
/// bad line is rejected with a reason, every untouched line keeps its outcome, and
/// the accounting identity holds for every file.
///
/// `FUZZ_CASES` sets the number of cases (CI runs the default; `jobs/fuzz` runs 100,000);
/// `FUZZ_SEED` picks another sequence.
@Suite("Hostile input (fuzz)")
struct FuzzTests {
    static let cases = Int(ProcessInfo.processInfo.environment["FUZZ_CASES"] ?? "") ?? 400
    static let seed = UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"] ?? "") ?? 20_261_130

    /// One seed file: its kind, CSV header, and data lines with their outcome when unmutated.
    struct SeedFile {
        var kind: SourceKind
        var header: [UInt8]?
        var lines: [[UInt8]]
    }

    static func seedFiles() throws -> [SeedFile] {
        try SourceFile.list(in: SampleDataTests.sampleData).map { file in
            var lines: [[UInt8]] = []
            try LineReader.forEachLine(path: file.absolutePath) { lines.append(Array($0.bytes)) }
            if file.kind.isCSV {
                let header = lines.removeFirst()
                return SeedFile(kind: file.kind, header: header, lines: lines)
            }
            return SeedFile(kind: file.kind, header: nil, lines: lines)
        }
    }

    /// Parses `lines` as one file of `kind` (after `header` for CSV), as ingest does.
    static func parse(kind: SourceKind, header: [UInt8]?, lines: [[UInt8]]) -> [ParsedLine] {
        func line(_ bytes: [UInt8], _ number: Int, _ body: (LineReader.Line) -> [ParsedLine]) -> [ParsedLine] {
            bytes.withUnsafeBufferPointer { body(LineReader.Line(number: number, bytes: $0, tooLong: false)) }
        }
        if kind.isCSV {
            var assembler = CSVRecordAssembler(kind: kind)
            var results = line(header ?? [], 1) { assembler.feed($0) }
            for (index, bytes) in lines.enumerated() {
                results += line(bytes, index + 2) { assembler.feed($0) }
            }
            return results
        }
        return lines.enumerated().flatMap { index, bytes in
            line(bytes, index + 1) { [SourceFileParser.parseJSONLine($0, kind: kind, rules: IngestLine.unsigned)] }
        }
    }

    static func mutate(_ line: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = line
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: bytes = Array(bytes.prefix(position))                                   // truncated
        case 1: if !bytes.isEmpty { bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng) } // bit flip
        case 2: bytes.insert(contentsOf: [0xC3, 0x28, 0xFF], at: position)               // invalid UTF-8
        case 3: bytes = Array("[".utf8).repeated(Int.random(in: 60...5000, using: &rng)) + bytes // deep nesting
        case 4: bytes = replaceNumber(bytes, with: ["1e400", "-99999999999999999999999999", "NaN", "-Infinity", "-1", "0.000000000000000000001"]
                                        .randomElement(using: &rng) ?? "NaN")
        case 5: bytes.insert(contentsOf: (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: position) // garbage
        case 6: bytes.removeAll { $0 == UInt8(ascii: "\"") && Bool.random(using: &rng) }  // quotes lost
        case 7: bytes.insert(UInt8(ascii: "\""), at: position)                            // stray quote
        case 8: bytes = Array("\u{FEFF}".utf8) + bytes                                    // BOM mid-file
        case 9: bytes = bytes.map { $0 == UInt8(ascii: ":") && Bool.random(using: &rng) ? UInt8(ascii: ",") : $0 }
        case 10: bytes = Array(repeating: UInt8(ascii: " "), count: position % 5)        // blank
        default: bytes += bytes                                                           // doubled
        }
        return bytes
    }

    /// Replaces the first run of digits with `text`.
    static func replaceNumber(_ bytes: [UInt8], with text: String) -> [UInt8] {
        guard let start = bytes.firstIndex(where: { $0 >= 0x30 && $0 <= 0x39 }) else { return bytes }
        var end = start
        while end < bytes.count, bytes[end] >= 0x30, bytes[end] <= 0x39 { end += 1 }
        return Array(bytes[..<start]) + Array(text.utf8) + Array(bytes[end...])
    }

    @Test("mutated lines: no crash, bad lines rejected with a reason, untouched lines keep their outcome, accounting holds")
    func mutatedLines() throws {
        let seeds = try Self.seedFiles()
        var rng = SplitMix64(state: Self.seed)
        var rejected = 0
        for _ in 0..<Self.cases {
            guard let seed = seeds.randomElement(using: &rng), !seed.lines.isEmpty else { continue }
            let count = Int.random(in: 1...min(8, seed.lines.count), using: &rng)
            let start = Int.random(in: 0...(seed.lines.count - count), using: &rng)
            var lines = Array(seed.lines[start..<(start + count)])
            let original = Self.parse(kind: seed.kind, header: seed.header, lines: lines)
            var mutated = Set<Int>()
            for _ in 0..<Int.random(in: 1...max(1, count / 2), using: &rng) {
                let index = Int.random(in: 0..<count, using: &rng)
                lines[index] = Self.mutate(lines[index], &rng)
                mutated.insert(index)
            }
            let parsed = Self.parse(kind: seed.kind, header: seed.header, lines: lines)
            var counts = LineCounts()
            for line in parsed { counts.count(line.outcome) }
            // One outcome per line, in order: read = accepted + rejected + blank + ignored.
            #expect(parsed.count == count)
            #expect(counts.read == counts.accepted + counts.rejected + counts.blank + counts.ignored)
            let firstLine = seed.kind.isCSV ? 2 : 1
            #expect(parsed.map(\.line) == Array(firstLine..<(firstLine + count)))
            for (index, line) in parsed.enumerated() {
                if case .rejected(let reason) = line.outcome {
                    rejected += 1
                    #expect(!reason.isEmpty)
                    #expect((line.rejectedText ?? "").utf8.count <= Redaction.maximumBytes + 3)
                }
                if !mutated.contains(index) { #expect(line.outcome == original[index].outcome, "untouched line changed") }
            }
        }
        #expect(rejected > 0)
    }

    @Test("hostile files: empty, binary, a 20 MB line, deep nesting, BOM and duplicated CSV headers, a folder named like a file")
    func hostileFiles() throws {
        let scenario = try Scenario()
        let input = scenario.input
        let manager = FileManager.default
        try manager.createDirectory(atPath: input + "/server", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: input + "/attribution", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: input + "/receipts/folder.jsonl", withIntermediateDirectories: true)
        _ = manager.createFile(atPath: input + "/server/empty.jsonl", contents: Data())
        var rng = SplitMix64(state: 7)
        _ = manager.createFile(atPath: input + "/server/binary.jsonl", contents: Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        let huge = "{\"ts\":\"2026-11-28T10:00:00Z\",\"event\":\"order_created\",\"user_id\":\"u1\",\"product_id\":\"gems60\",\"order_id\":\"" + String(repeating: "x", count: 20 << 20) + "\"}\n"
        let good = Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60") + "\n"
        try (good + huge + "{\"a\":" + String(repeating: "[", count: 100_000) + "\n" + good).write(toFile: input + "/server/huge.jsonl", atomically: false, encoding: .utf8)
        let header = "Event Time,Event Name,Customer User ID"
        try ("\u{FEFF}" + header + "\n2026-11-28 10:00:00,install,u1\n" + header + "\n\"unbalanced,install,u2\n2026-11-28 10:00:00,install,u3\n")
            .write(toFile: input + "/attribution/af.csv", atomically: false, encoding: .utf8)
        let database = try scenario.open()
        let report = try IngestStage.run(files: try SourceFile.list(in: input), store: SQLiteIngestStore(database), jobs: 2, rules: LineRules(signatures: .testChain))
        let counts = Dictionary(uniqueKeysWithValues: report.files.map { ($0.path, $0.counts) })
        #expect(counts["server/empty.jsonl"] == LineCounts())
        #expect(counts["server/huge.jsonl"] == LineCounts(read: 4, accepted: 3, rejected: 1))
        #expect(counts["attribution/af.csv"] == LineCounts(read: 4, accepted: 2, rejected: 2))
        let binary = try #require(counts["server/binary.jsonl"])
        #expect(binary.read > 0 && binary.read == binary.rejected + binary.blank)
        #expect(report.unreadable.map { $0.path.hasSuffix("receipts/folder.jsonl") } == [true])
        var reasons: [String] = []
        try database.forEach("SELECT reason FROM rejects r JOIN files f USING (file_id) WHERE f.path != 'server/binary.jsonl' ORDER BY f.path, line") {
            reasons.append($0.string(0))
        }
        #expect(reasons == [
            "bad time in 'Event Time': \"Event Time\"", "unbalanced quotes", "not JSON: nesting deeper than 64 at byte 69",
        ])
        // The 20 MB order is stored whole; a 20 MB line is data, not an attack.
        #expect(try database.scalar("SELECT length(order_id) FROM raw_server__orders WHERE order_id LIKE 'xxx%'") == .integer(20 << 20))
    }
}

extension Array {
    fileprivate func repeated(_ times: Int) -> [Element] { Array((0..<times).map { _ in self }.joined()) }
}
