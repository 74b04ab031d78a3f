import Testing
@testable import IAPRecon

/// Reading CSV records (CONTRACT.md §1.5, §1.6): what a hostile line may cost.
@Suite("CSV records")
struct CSVTests {
    static func row(_ text: String, maximumFields: Int) -> CSVRow? {
        Array(text.utf8).withUnsafeBufferPointer { CSV.row($0, maximumFields: maximumFields) }
    }

    @Test("a record with more fields than its header keeps only their count; one with as many keeps its fields")
    func excessFields() throws {
        let commas = try #require(Self.row(String(repeating: ",", count: 100_000), maximumFields: 4))
        #expect(commas.excessFieldCount == 100_001)
        #expect(commas.count == 0)
        let quotedCommas = try #require(Self.row(#""a,b",c,d,e,f"#, maximumFields: 4))
        #expect(quotedCommas.excessFieldCount == 5)
        let exact = try #require(Self.row(#""a,b",c,,e"#, maximumFields: 4))
        #expect(exact.excessFieldCount == nil)
        #expect((0..<exact.count).map { exact[$0] } == ["a,b", "c", "", "e"])
    }

    @Test("an attribution line of 100,000 commas is one reject with the field count, and the lines around it are read")
    func commaLine() throws {
        let scenario = try Scenario()
        try scenario.write("attribution/a.csv", [
            "Event Time,Event Name,Media Source,AppsFlyer ID",
            "2026-11-20 09:00:00,install,Facebook Ads,1795167600000-4782824",
            String(repeating: ",", count: 100_000),
            "2026-11-20 10:00:00,install,Facebook Ads,1795167600000-4782825",
        ])
        let result = try scenario.run(asOf: "2026-12-01T00:00:00Z")
        #expect(result.ingest.files.first?.counts == LineCounts(read: 3, accepted: 2, rejected: 1))
        let rejects = try #require(OutputFormatTests.records(try scenario.output("rejects.csv")))
        #expect(rejects.count == 2)
        #expect(rejects.last?[2] == "row has 100001 fields, the header has 4")
        #expect(rejects.last?[3] == String(repeating: ",", count: 300) + "…")
    }

    @Test("an output cell is the value itself unless a spreadsheet or terminal would misread it", arguments: [
        ("2000000812345678", "2000000812345678", "2000000812345678"),
        ("com.example.gems60", "com.example.gems60", "com.example.gems60"),
        ("2026-11-28T10:15:02.000Z", "2026-11-28T10:15:02.000Z", "2026-11-28T10:15:02.000Z"),
        ("Café", "Café", "Café"),
        ("-4.99", "'-4.99", "-4.99"),
        ("=HYPERLINK(1)", "'=HYPERLINK(1)", "=HYPERLINK(1)"),
        ("@sum", "'@sum", "@sum"),
        ("a-b", "a-b", "a-b"),
        ("a,b", "\"a,b\"", "\"a,b\""),
        ("say \"hi\"", "\"say \"\"hi\"\"\"", "\"say \"\"hi\"\"\""),
        ("line\nbreak", "line\\nbreak", "line\\nbreak"),
        ("esc\u{1B}[2J", "esc\\u001B[2J", "esc\\u001B[2J"),
        ("del\u{7F}", "del\\u007F", "del\\u007F"),
        ("", "", ""),
        // Excel where the list separator is `;` (most of Europe) splits a comma file's line at every `;`
        // it opens: what follows one starts a cell there, and is guarded as a cell's start is.
        ("x;=WEBSERVICE(A2);", "x;'=WEBSERVICE(A2);", "x;=WEBSERVICE(A2);"),
        ("a;+cmd|' /C calc'!A0", "a;'+cmd|' /C calc'!A0", "a;+cmd|' /C calc'!A0"),
        ("a;-1;@sum", "a;'-1;'@sum", "a;-1;@sum"),
        ("=a;=b,c", "\"'=a;'=b,c\"", "\"=a;=b,c\""),
        // Near misses: a `;` before any other character, and a sign after anything but a `;`, are kept.
        ("server/a.jsonl:3;server/b.jsonl:5", "server/a.jsonl:3;server/b.jsonl:5", "server/a.jsonl:3;server/b.jsonl:5"),
        ("a; =b", "a; =b", "a; =b"),
        ("a=;b-", "a=;b-", "a=;b-"),
    ])
    func outputCells(value: String, text: String, number: String) {
        #expect(CSV.textCell(value) == text)
        #expect(CSV.numberCell(value) == number)
    }

    @Test("a quote that a combining mark follows is doubled like any other: the cell stays one field")
    func quoteBeforeCombiningMark() throws {
        // `"` and U+0301 make one Character: a cell quoted by Characters kept this quote single,
        // so a reader took it for the cell's end.
        let value = "say \"\u{301}hi\", ok"
        let cell = CSV.textCell(value)
        #expect(cell == "\"say \"\"\u{301}hi\"\", ok\"")
        let row = try #require(Self.row(cell + ",next", maximumFields: 10))
        #expect(row.count == 2 && row[0] == value)
    }

    @Test("an output cell is what the scalar-by-scalar rules give, for random text of controls, quotes, commas, signs and UTF-8")
    func outputCellsByTheRules() {
        let alphabet: [String] = ["a", "Z", "0", " ", ",", ";", "\"", "'", "=", "+", "-", "@", "\t", "\r", "\n", "\u{0}", "\u{1B}",
                                  "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{C2}", "é", "€", "😀", "\\", "u"]
        var generator = SplitMix64(state: 0xCE11)
        for _ in 0..<20_000 {
            let value = (0..<Int.random(in: 0...10, using: &generator)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }.joined()
            #expect(CSV.textCell(value) == Self.cellByScalars(value, text: true), "\(Array(value.unicodeScalars))")
            #expect(CSV.numberCell(value) == Self.cellByScalars(value, text: false), "\(Array(value.unicodeScalars))")
        }
    }

    /// The cell rules of CONTRACT.md §3 applied one Unicode scalar at a time: the reference for `CSV.textCell`
    /// and `CSV.numberCell`, which work on bytes.
    static func cellByScalars(_ value: String, text: Bool) -> String {
        let guarded = text && value.unicodeScalars.first.map { ["=", "+", "-", "@", "\t", "\r"].contains($0) } == true
        var signsGuarded = ""
        var previous: Unicode.Scalar?
        for scalar in value.unicodeScalars {
            if text, previous == ";", ["=", "+", "-", "@"].contains(scalar) { signsGuarded += "'" }
            signsGuarded.unicodeScalars.append(scalar)
            previous = scalar
        }
        let escaped = (guarded ? "'" : "") + escapingControls(signsGuarded)
        guard escaped.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" }) else { return escaped }
        var quoted = "\""
        for scalar in escaped.unicodeScalars {
            quoted.unicodeScalars.append(scalar)
            if scalar == "\"" { quoted.unicodeScalars.append(scalar) }
        }
        return quoted + "\""
    }

    /// `value` with every control character written as an output cell shows it: `\t`, `\n`, `\r`, else `\u001B`.
    static func escapingControls(_ value: String) -> String {
        var output = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\t": output += "\\t"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case _ where isControl(scalar):
                let hex = String(scalar.value, radix: 16, uppercase: true)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// Unicode's `Cc` category: U+0000–U+001F, U+007F and U+0080–U+009F.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    @Test("a cell trimmed as bytes is the cell trimmed as text: quoted, padded, blank or with broken UTF-8")
    func trimmedCells() throws {
        let row = try #require(Self.row(" a ,\"  b  \", \t,,  \"c\" ,\"d\"\"e\" ,x\ty\t,\"  \"\"  \"", maximumFields: 100))
        #expect((0..<row.count).map { row.trimmedField($0) } == ["a", "b", "", "", "\"c\"", "d\"e", "x\ty", "\""])
        // The same on random rows of spaces, tabs, quotes, commas, letters and UTF-8 (whole, cut or invalid).
        var generator = SplitMix64(state: 0x7E1D)
        let alphabet: [UInt8] = [0x20, 0x09, 0x22, 0x2C, 0x61, 0xC3, 0xA9, 0xFF]
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            guard let row = bytes.withUnsafeBufferPointer({ CSV.row($0) }) else { continue }
            for index in 0..<row.count {
                #expect(row.trimmedField(index) == trimmedSpaces(row[index]), "\(bytes) field \(index)")
            }
        }
    }

    /// RFC 4180 read the plainest way, building each field as it goes: the reference `CSV.row` and
    /// `CSVRow`'s spans must agree with.
    static func plainFields(_ bytes: [UInt8]) -> [String]? {
        var fields: [String] = []
        var field: [UInt8] = []
        var index = 0
        var fieldStart = true
        var inQuotes = false
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 2
                        continue
                    }
                    inQuotes = false
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: ",") {
                fields.append(String(decoding: field, as: UTF8.self))
                field = []
                fieldStart = true
                index += 1
                continue
            } else if byte == UInt8(ascii: "\""), fieldStart {
                inQuotes = true
            } else {
                field.append(byte)
            }
            fieldStart = false
            index += 1
        }
        if inQuotes { return nil }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    @Test("on 20,000 random rows (commas, quotes, doubled quotes, UTF-8, long runs) fields agree with the plain reading")
    func randomRows() {
        var generator = SplitMix64(state: 0xC5F)
        let pieces: [[UInt8]] = [[0x2C], [0x22], [0x22, 0x22], [0x61], Array("abcdefghijk".utf8), [0x20], [0xC3, 0xA9], [0xFF], [0x0D]]
        for _ in 0..<20_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...30, using: &generator) { bytes += pieces[Int.random(in: 0..<pieces.count, using: &generator)] }
            let fields = bytes.withUnsafeBufferPointer { CSV.fields($0) }
            #expect(fields == Self.plainFields(bytes), "\(bytes)")
        }
    }
    @Test("commas, quotes and doubled quotes at every pair of offsets across word boundaries split as the plain reading does")
    func specialsAcrossWords() {
        // Near misses of ',' and '"' fill the rest: one bit off, or the high-bit twin.
        let fillers: [UInt8] = [0x2D, 0x23, 0xAC, 0xA2, 0x0C, 0x61, 0x00, 0xFF]
        let specials: [[UInt8]] = [[0x2C], [0x22], [0x22, 0x22], [0x2C, 0x22], [0x22, 0x2C]]
        for length in 0...19 {
            for first in 0...length {
                for second in first...length {
                    for (a, b) in [(0, 0), (1, 0), (0, 1), (1, 1), (2, 1), (1, 2), (3, 4), (4, 3), (2, 0)] {
                        var bytes = (0..<length).map { fillers[($0 &* 5 &+ length) % fillers.count] }
                        bytes.insert(contentsOf: specials[b], at: second)
                        bytes.insert(contentsOf: specials[a], at: first)
                        let plain = Self.plainFields(bytes)
                        let fields = bytes.withUnsafeBufferPointer { CSV.fields($0) }
                        #expect(fields == plain, "\(bytes)")
                        // One field fewer allowed than the row has: only the count is kept, and it is exact.
                        guard let plain, plain.count > 1 else { continue }
                        let narrower = bytes.withUnsafeBufferPointer { CSV.row($0, maximumFields: plain.count - 1) }
                        #expect(narrower?.excessFieldCount == plain.count, "\(bytes)")
                        #expect(narrower?.count == 0, "\(bytes)")
                    }
                }
            }
        }
    }

    @Test("the word-at-a-time search finds the first comma or quote from every offset, past near misses and zero bytes")
    func firstSpecialByte() {
        // One bit from ',' (0x2C) or '"' (0x22), their high-bit twins, and bytes whose borrow marks the byte above.
        let nearMisses: [UInt8] = [0x2D, 0x2E, 0x28, 0x0C, 0x6C, 0xAC, 0x23, 0x20, 0x26, 0x2A, 0x02, 0xA2, 0x00, 0x01, 0xFF, 0x80]
        for length in 0...24 {
            for target in [nil] + (0..<length).map(Optional.some) {
                for special in [UInt8(ascii: ","), UInt8(ascii: "\"")] {
                    var bytes = (0..<length).map { nearMisses[($0 &* 7 &+ length) % nearMisses.count] }
                    if let target { bytes[target] = special }
                    // A later match must not be found first.
                    if let target, target + 3 < length { bytes[target + 3] = UInt8(ascii: ",") }
                    bytes.withUnsafeBufferPointer { buffer in
                        for start in 0...length {
                            let either = bytes.indices.first { $0 >= start && (bytes[$0] == 0x2C || bytes[$0] == 0x22) }
                            #expect(CSV.firstIndex(of: 0x2C, or: 0x22, in: buffer, from: start) == either, "\(bytes) from \(start)")
                            let quote = bytes.indices.first { $0 >= start && bytes[$0] == 0x22 }
                            #expect(CSV.firstIndex(of: 0x22, or: 0x22, in: buffer, from: start) == quote, "\(bytes) from \(start)")
                        }
                    }
                }
            }
        }
    }
}
