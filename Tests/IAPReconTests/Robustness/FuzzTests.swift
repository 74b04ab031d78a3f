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

/// Hostile input: mutated `sample-data/` lines (of every source, their CSV headers, numbers nested
/// anywhere, and the payloads inside JWS) never crash or hang the parsers, every bad line is rejected
/// with a reason, every untouched line keeps its outcome, and the accounting identity holds for every
/// file. With signatures checked, a changed JWS is never trusted. Whole mutated files give one store
/// whole, in chunks and with two workers, and a damaged gzip is unreadable or reads its lines unchanged.
///
/// `FUZZ_CASES` sets the number of cases (CI runs the default; `jobs/fuzz` runs 100,000), a
/// hundredth of them whole files; `FUZZ_SEED` picks another sequence.
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
            var results: [ParsedLine] = []
            for (index, bytes) in ([header ?? []] + lines).enumerated() {
                bytes.withUnsafeBufferPointer { buffer in
                    assembler.feed(LineReader.Line(number: index + 1, bytes: buffer, tooLong: false)) { results.append($0) }
                }
            }
            assembler.finish { results.append($0) }
            return results
        }
        return lines.enumerated().flatMap { index, bytes in
            line(bytes, index + 1) { [SourceFileParser.parseJSONLine($0, kind: kind, rules: IngestLine.unsigned)] }
        }
    }

    /// Numbers a line should never take for another: beyond `Int64`, signed, exponents, fractions of a count.
    static let hostileNumbers = [
        "1e400", "-99999999999999999999999999", "NaN", "-Infinity", "-1", "0.000000000000000000001",
        "9223372036854775808", "-0", "1E2", "+1", "0.5", "1000001", "0",
    ]

    /// `line` with one hostile change. `header` is its file's CSV header, which may come back as a row
    /// (two reports joined into one file). A JWS inside may have its payload changed and signed
    /// again by no one, so the parsers of Apple's nested payloads see damage the text around them hides.
    static func mutate(_ line: [UInt8], header: [UInt8]? = nil, _ rng: inout SplitMix64) -> [UInt8] {
        var bytes = line
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
        switch Int.random(in: 0..<15, using: &rng) {
        case 0: bytes = Array(bytes.prefix(position))                                   // truncated
        case 1: if !bytes.isEmpty { bytes[position] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng) } // bit flip
        case 2: bytes.insert(contentsOf: [0xC3, 0x28, 0xFF], at: position)               // invalid UTF-8
        case 3: bytes = Array("[".utf8).repeated(Int.random(in: 60...5000, using: &rng)) + bytes // deep nesting
        case 4: bytes = replaceNumber(bytes, with: hostileNumbers.randomElement(using: &rng) ?? "NaN")
        case 5: bytes.insert(contentsOf: (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, at: position) // garbage
        case 6: bytes.removeAll { $0 == UInt8(ascii: "\"") && Bool.random(using: &rng) }  // quotes lost
        case 7: bytes.insert(UInt8(ascii: "\""), at: position)                            // stray quote
        case 8: bytes = Array("\u{FEFF}".utf8) + bytes                                    // BOM mid-file
        case 9: bytes = bytes.map { $0 == UInt8(ascii: ":") && Bool.random(using: &rng) ? UInt8(ascii: ",") : $0 }
        case 10: bytes = Array(repeating: UInt8(ascii: " "), count: position % 5)        // blank
        case 12: bytes = replaceNumber(bytes, with: hostileNumbers.randomElement(using: &rng) ?? "NaN", at: position) // any number, nested ones too
        case 13: bytes = mutateJWSPayload(bytes, &rng)
        case 14: bytes = header ?? bytes + bytes                                          // the header again
        default: bytes += bytes                                                           // doubled
        }
        return bytes
    }

    /// Replaces the first run of digits from `position` (else the line's first) with `text`.
    static func replaceNumber(_ bytes: [UInt8], with text: String, at position: Int = 0) -> [UInt8] {
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        guard var start = bytes[min(position, bytes.count)...].firstIndex(where: isDigit) ?? bytes.firstIndex(where: isDigit) else { return bytes }
        while start > 0, isDigit(bytes[start - 1]) { start -= 1 }
        var end = start
        while end < bytes.count, isDigit(bytes[end]) { end += 1 }
        return Array(bytes[..<start]) + Array(text.utf8) + Array(bytes[end...])
    }

    /// The JWS strings in `bytes` (three base64url parts between quotes), as the ranges of their payloads.
    static func jwsPayloads(in bytes: [UInt8]) -> [Range<Int>] {
        func isBase64URL(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
        }
        var payloads: [Range<Int>] = []
        let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\"") }
        for (open, close) in zip(quotes, quotes.dropFirst()) where close - open > 100 {
            let text = bytes[(open + 1)..<close]
            let dots = text.indices.filter { text[$0] == UInt8(ascii: ".") }
            guard dots.count == 2, text.allSatisfy({ isBase64URL($0) || $0 == UInt8(ascii: ".") }),
                  dots[0] > open + 1, dots[1] > dots[0] + 1, dots[1] < close - 1 else { continue }
            payloads.append((dots[0] + 1)..<dots[1])
        }
        return payloads
    }

    /// `bytes` with the payload of one JWS in it mutated (a signedPayload's payload may have its own
    /// JWS mutated in turn), then encoded again; unchanged when it holds no JWS.
    static func mutateJWSPayload(_ bytes: [UInt8], _ rng: inout SplitMix64) -> [UInt8] {
        guard let range = jwsPayloads(in: bytes).randomElement(using: &rng), let payload = Base64URL.decode(bytes[range]) else { return bytes }
        let mutated = Array(Base64URL.encode(mutate(payload, &rng)).utf8)
        return Array(bytes[..<range.lowerBound]) + mutated + Array(bytes[range.upperBound...])
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
                lines[index] = Self.mutate(lines[index], header: seed.header, &rng)
                mutated.insert(index)
            }
            // Now and then the header itself: then no line is untouched.
            var header = seed.header
            if let seedHeader = header, Int.random(in: 0..<16, using: &rng) == 0 {
                header = Self.mutate(seedHeader, &rng)
                mutated = Set(0..<count)
            }
            let parsed = Self.parse(kind: seed.kind, header: header, lines: lines)
            var counts = LineCounts()
            for line in parsed { counts.count(line.outcome) }
            // One outcome per record, in line order: read = accepted + rejected + blank + ignored. A record is
            // one line, unless a mutation opened a quoted cell that a later quote closed (RFC 4180): the lines
            // up to that quote are then its text, and the record is numbered by its first line.
            #expect(counts.read == counts.accepted + counts.rejected + counts.blank + counts.ignored)
            let firstLine = seed.kind.isCSV ? 2 : 1
            let numbers = parsed.map(\.line)
            #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 })
            #expect(numbers.allSatisfy { (firstLine..<(firstLine + count)).contains($0) })
            // Only a header read over several lines (a mutated one) leaves the first line no record of its own.
            #expect(numbers.first == firstLine || header != seed.header)
            for (index, number) in numbers.enumerated() {
                let next = index + 1 < numbers.count ? numbers[index + 1] : firstLine + count
                if next - number > 1 { #expect(mutated.contains(number - firstLine), "a record over lines starts at an untouched line") }
            }
            if !seed.kind.isCSV { #expect(parsed.count == count) }
            for line in parsed {
                if case .rejected(let reason) = line.outcome {
                    rejected += 1
                    #expect(!reason.isEmpty)
                    #expect((line.rejectedText ?? "").utf8.count <= Redaction.maximumBytes + 3)
                }
                let index = line.line - firstLine
                if !mutated.contains(index), original.indices.contains(index) {
                    #expect(line.outcome == original[index].outcome, "untouched line changed")
                }
            }
        }
        #expect(rejected > 0)
    }

    /// The signing inputs (`header.payload`) of the JWS a line holds where a parser reads one: a
    /// notification's `signedPayload`, its `data`'s `signedTransactionInfo` and `signedRenewalInfo`, a
    /// receipt's `signed_transactions` (a JWS under a key no parser reads is never checked, nor used).
    static func signingInputs(_ line: [UInt8]) -> [String] {
        guard case .object(let object)? = try? JSONParser.parse(line) else { return [] }
        func values(_ object: JSONObject, _ key: String) -> [JSONValue] { object.members.filter { $0.key == key }.map(\.value) }
        var strings = values(object, "signedPayload") + values(object, "signed_transactions").flatMap { $0.arrayValue ?? [] }
        for case .object(let data) in values(object, "data") {
            strings += values(data, "signedTransactionInfo") + values(data, "signedRenewalInfo")
        }
        return strings.compactMap { value in
            guard case .string(let text) = value else { return nil }
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 3 ? parts[0] + "." + parts[1] : nil
        }
    }

    @Test("mutated signed lines: a JWS whose signed bytes changed is never trusted, and checking signatures only ever rejects more")
    func mutatedSignedLines() throws {
        let seeds = try Self.seedFiles().filter { $0.kind == .receipts || $0.kind == .notifications }
        let signedLines = seeds.flatMap { seed in seed.lines.filter { !Self.signingInputs($0).isEmpty }.map { (seed.kind, $0) } }
        let signed = Set(signedLines.flatMap { Self.signingInputs($0.1) })
        #expect(signedLines.count > 10)
        let rules = LineRules(signatures: .testChain)
        var rng = SplitMix64(state: Self.seed ^ 0x5167_6E65_6400_0000)
        var (trusted, untrusted) = (0, 0)
        for _ in 0..<Self.cases {
            guard let (kind, seedLine) = signedLines.randomElement(using: &rng) else { continue }
            var line = seedLine
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                line = Int.random(in: 0..<2, using: &rng) == 0 ? Self.mutateJWSPayload(line, &rng) : Self.mutate(line, &rng)
            }
            let checked = line.withUnsafeBufferPointer {
                SourceFileParser.parseJSONLine(LineReader.Line(number: 1, bytes: $0, tooLong: false), kind: kind, rules: rules)
            }
            guard case .accepted(let rows) = checked.outcome else {
                untrusted += 1
                continue
            }
            trusted += 1
            for input in Self.signingInputs(line) { #expect(signed.contains(input), "a changed JWS was trusted") }
            let unchecked = line.withUnsafeBufferPointer {
                SourceFileParser.parseJSONLine(LineReader.Line(number: 1, bytes: $0, tooLong: false), kind: kind, rules: IngestLine.unsigned)
            }
            #expect(unchecked.outcome == .accepted(rows), "checking signatures changed what a line says")
        }
        #expect(trusted > 0 && untrusted > 0)
    }

    /// How many whole files `mutatedFiles` ingests: each costs a few stores, so a hundredth of the line cases.
    static let fileCases = max(8, cases / 100)

    /// Ingests the one file of `scenario` as a run does (its parallelism and chunk size given), and dumps its store.
    static func ingestedStore(_ scenario: Scenario, jobs: Int, chunkBytes: Int = IngestStage.chunkBytes) throws -> (IngestReport, [String]) {
        try scenario.fixDeviceIDKey()
        let database = try scenario.open()
        let report = try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: SQLiteIngestStore(database), jobs: jobs,
                                         chunkBytes: chunkBytes, rules: LineRules(signatures: .testChain))
        return (report, try IngestStageTests.dump(database))
    }

    @Test("mutated files: whole, in chunks and with two workers give one store; a damaged gzip is unreadable or reads its lines unchanged")
    func mutatedFiles() throws {
        let seeds = try Self.seedFiles()
        var rng = SplitMix64(state: Self.seed ^ 0x4669_6C65_7300_0000)
        var unreadable = 0
        for _ in 0..<Self.fileCases {
            guard let seed = seeds.randomElement(using: &rng) else { continue }
            var lines = Array(repeating: seed.lines, count: Int.random(in: 1...3, using: &rng)).flatMap { $0 }
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let index = Int.random(in: 0..<lines.count, using: &rng)
                lines[index] = Self.mutate(lines[index], header: seed.header, &rng)
            }
            // A line with a newline inside is two lines: the file is what counts.
            let text = ((seed.header.map { [$0] } ?? []) + lines).map { $0 + [0x0A] }.flatMap { $0 }
            let path = "\(seed.kind == .catalog || seed.kind == .fx ? "" : seed.kind.rawValue + "/")fuzz.\(seed.kind.isCSV ? (seed.kind == .apple ? "txt" : "csv") : "jsonl")"
            let name = seed.kind == .catalog ? "catalog.csv" : seed.kind == .fx ? "fx.csv" : path

            let whole = try Scenario(), chunked = try Scenario()
            for scenario in [whole, chunked] {
                try FileManager.default.createDirectory(atPath: (scenario.input + "/" + name as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                #expect(FileManager.default.createFile(atPath: scenario.input + "/" + name, contents: Data(text)))
            }
            let (wholeReport, wholeStore) = try Self.ingestedStore(whole, jobs: 1)
            let (chunkedReport, chunkedStore) = try Self.ingestedStore(chunked, jobs: 2, chunkBytes: Int.random(in: 64...4096, using: &rng))
            #expect(wholeReport.unreadable.isEmpty && chunkedReport.unreadable.isEmpty)
            #expect(chunkedReport.totals == wholeReport.totals, "\(name): chunks and whole differ")
            #expect(chunkedStore == wholeStore, "\(name): chunks and whole differ")
            let counts = wholeReport.totals
            #expect(counts.read == counts.accepted + counts.rejected + counts.blank + counts.ignored)

            // The same file gzipped, then damaged: unreadable, or exactly the lines it held.
            let zipped = try Scenario()
            let plain = zipped.root + "/plain"
            #expect(FileManager.default.createFile(atPath: plain, contents: Data(text)))
            let gzip = Process()
            gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
            gzip.arguments = ["-n", plain]
            try gzip.run()
            gzip.waitUntilExit()
            var compressed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: plain + ".gz")))
            // Not at 0: an empty .gz reads as an empty file, as gzip.open reads one.
            let at = Int.random(in: 1..<compressed.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: compressed[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)   // bit flip
            case 1: compressed = Array(compressed.prefix(at))                           // truncated
            case 2: compressed += Array(repeating: 0, count: Int.random(in: 1...600, using: &rng)) // padded
            default: compressed += (0..<Int.random(in: 1...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) } // garbage after
            }
            try FileManager.default.createDirectory(atPath: (zipped.input + "/" + name as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: zipped.input + "/" + name + ".gz", contents: Data(compressed)))
            let (zippedReport, zippedStore) = try Self.ingestedStore(zipped, jobs: 1)
            if zippedReport.unreadable.isEmpty {
                #expect(zippedReport.totals == wholeReport.totals, "\(name).gz: damaged and read otherwise")
                #expect(zippedStore.filter { !$0.hasPrefix("files|") } == wholeStore.filter { !$0.hasPrefix("files|") }, "\(name).gz: damaged and read otherwise")
            } else {
                unreadable += 1
                #expect(zippedReport.files.isEmpty)
            }
        }
        #expect(unreadable > 0)
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
