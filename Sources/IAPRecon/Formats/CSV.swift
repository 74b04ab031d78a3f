/// RFC 4180 CSV: reading one record's fields, and writing cells.
public enum CSV {
    /// The fields of one record, or nil when a quoted field is still open at the end
    /// (the record's quotes are unbalanced).
    public static func fields(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        row(bytes).map { row in (0..<row.count).map { row[$0] } }
    }

    /// A header may have this many columns (an AppsFlyer export has about 90).
    public static let maximumHeaderFields = 4096

    /// One record's field boundaries; each field is decoded only when read.
    ///
    /// A record with more than `maximumFields` fields keeps only its field count
    /// (`excessFieldCount`), so a line of commas costs no more than its own bytes.
    public static func row(_ bytes: UnsafeBufferPointer<UInt8>, maximumFields: Int = .max) -> CSVRow? {
        let (comma, quote) = (UInt8(ascii: ","), UInt8(ascii: "\""))
        var fieldCount = 1
        var balanced = true
        // Sized once: a field takes at least its comma, and no more than `maximumFields` are kept; each
        // span is stored in its place, without an append's checks for room and sharing.
        let spans = [CSVRow.Span](unsafeUninitializedCapacity: min(maximumFields, bytes.count + 1)) { spans, kept in
            var fieldStart = 0
            var quoted = false
            var index = 0
            // Only commas and quotes matter outside a quoted field: each word of eight bytes is searched
            // once, and every comma or quote it holds is taken from its marks in turn, so a run of empty
            // fields costs a word per eight of them rather than a search per field.
            scan: while index < bytes.count {
                var marks = specialMarks(in: bytes, at: index)
                while marks != 0 {
                    let special = index + marks.trailingZeroBitCount / 8
                    marks &= marks &- 1
                    if bytes[special] == comma {
                        fieldCount += 1
                        if fieldCount <= maximumFields {
                            spans.initializeElement(at: kept, to: CSVRow.Span(start: fieldStart, end: special, quoted: quoted))
                            kept += 1
                        }
                        fieldStart = special + 1
                        quoted = false
                    } else if special == fieldStart {
                        // A quoted field runs to its closing quote; `""` inside it is a quote of its text.
                        // The search resumes after it, at whatever offset that is.
                        quoted = true
                        var closing = special + 1
                        while true {
                            guard let next = firstIndex(of: quote, or: quote, in: bytes, from: closing) else {
                                balanced = false
                                return
                            }
                            if next + 1 < bytes.count, bytes[next + 1] == quote {
                                closing = next + 2
                                continue
                            }
                            index = next + 1
                            continue scan
                        }
                    }
                    // A quote inside an unquoted field is part of its text.
                }
                index += 8
            }
            if fieldCount <= maximumFields {
                spans.initializeElement(at: kept, to: CSVRow.Span(start: fieldStart, end: bytes.count, quoted: quoted))
                kept += 1
            }
        }
        if !balanced { return nil }
        if fieldCount > maximumFields { return CSVRow(bytes: [], spans: [], excessFieldCount: fieldCount) }
        return CSVRow(bytes: Array(bytes), spans: spans, excessFieldCount: nil)
    }

    /// Whether a quoted cell is open at the end of `bytes`, the next line of a record whose quoted cell
    /// was open at the end of the line before: RFC 4180 lets a quoted cell hold line breaks. Read as
    /// `row` reads the record: `""` in a quoted cell is a quote of its text, a quote opens a cell only
    /// where the cell starts, and elsewhere it is text.
    static func quotedCellStaysOpen(continuing bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let (comma, quote) = (UInt8(ascii: ","), UInt8(ascii: "\""))
        var inside = true
        // The line starts inside a cell: no quote of it starts one until a comma has.
        var fieldStart = -1
        var index = 0
        while true {
            if inside {
                guard let next = firstIndex(of: quote, or: quote, in: bytes, from: index) else { return true }
                if next + 1 < bytes.count, bytes[next + 1] == quote {
                    index = next + 2
                    continue
                }
                inside = false
                index = next + 1
            } else {
                guard let next = firstIndex(of: comma, or: quote, in: bytes, from: index) else { return false }
                if bytes[next] == comma {
                    fieldStart = next + 1
                } else if next == fieldStart {
                    inside = true
                }
                index = next + 1
            }
        }
    }

    /// A high bit set for exactly each comma or quote among the eight bytes of `bytes` from `start`
    /// (fewer at the end, the missing ones read as zero), little-endian: the lowest mark is the first.
    ///
    /// `(x & 0x7F…7F) + 0x7F…7F` sets a byte's high bit when its low seven bits are not all zero,
    /// and never carries into the next byte; with `x`'s own high bit, a byte of `x` is zero exactly
    /// when neither is set. Unlike `firstIndex`'s test no borrow marks a byte above a match, so
    /// every mark may be taken, not only the lowest.
    @inline(__always)
    private static func specialMarks(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> UInt64 {
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let word: UInt64
        if start + 8 <= bytes.count, let base = UnsafeRawPointer(bytes.baseAddress) {
            word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt64.self))
        } else {
            var partial: UInt64 = 0
            for offset in 0..<min(8, bytes.count - start) { partial |= UInt64(bytes[start + offset]) << (8 * offset) }
            word = partial
        }
        let xa = word ^ 0x2C2C_2C2C_2C2C_2C2C, xb = word ^ 0x2222_2222_2222_2222
        return ~(((xa & lows) &+ lows | xa) & ((xb & lows) &+ lows | xb)) & ~lows
    }

    /// The position of the first `a` or `b` in `bytes` from `start`, eight bytes at a time.
    ///
    /// A byte equal to `a` is a zero byte of `word ^ a…a`, and `(x - 0x01…01) & ~x & 0x80…80`
    /// marks every zero byte of `x`; it may also mark a byte above a zero one (a borrow from it),
    /// never one below. Read little-endian, the word's lowest mark of either test is its first match.
    static func firstIndex(of a: UInt8, or b: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        if let base = UnsafeRawPointer(bytes.baseAddress) {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            let (patternA, patternB) = (ones &* UInt64(a), ones &* UInt64(b))
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let (xa, xb) = (word ^ patternA, word ^ patternB)
                let marks = ((xa &- ones) & ~xa | (xb &- ones) & ~xb) & highs
                if marks != 0 { return index + marks.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < bytes.count {
            if bytes[index] == a || bytes[index] == b { return index }
            index += 1
        }
        return nil
    }

    public static func fields(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { fields($0) }
    }

    /// One tab-separated record's fields, split at every tab: App Store Connect's reports
    /// (CONTRACT.md §1.7) never quote, and a title may hold a lone `"`.
    public static func tabRow(_ bytes: UnsafeBufferPointer<UInt8>, maximumFields: Int = .max) -> CSVRow {
        var spans: [CSVRow.Span] = []
        var fieldStart = 0
        var fieldCount = 0
        for index in 0..<bytes.count where bytes[index] == 0x09 {
            fieldCount += 1
            if fieldCount <= maximumFields { spans.append(CSVRow.Span(start: fieldStart, end: index, quoted: false)) }
            fieldStart = index + 1
        }
        fieldCount += 1
        // As `row`: a record wider than its header keeps only its field count.
        if fieldCount > maximumFields { return CSVRow(bytes: [], spans: [], excessFieldCount: fieldCount) }
        spans.append(CSVRow.Span(start: fieldStart, end: bytes.count, quoted: false))
        return CSVRow(bytes: Array(bytes), spans: spans, excessFieldCount: nil)
    }

    /// A cell for a text column: prefixed with `'` when it starts with `=`, `+`, `-`, `@`,
    /// tab or CR so a spreadsheet shows it as text rather than running it as a formula
    /// (CONTRACT.md §3), and so is each `=`, `+`, `-` or `@` right after a `;`; control characters
    /// escaped, and quoted when needed.
    ///
    /// Excel opens a `.csv` split at the system's list separator, which is `;` in most of Europe: a
    /// comma file's line is then cut at every `;`, quoted or not, and what follows one starts a cell
    /// of its own. A value such as `x;=WEBSERVICE(…)` would run there, past the guard at its start.
    public static func textCell(_ value: String) -> String {
        isPlain(value, text: true) ? value : cell(value, guardingFormula: true)
    }

    /// A cell for a numeric column: never prefixed.
    public static func numberCell(_ value: String) -> String {
        isPlain(value, text: false) ? value : cell(value, guardingFormula: false)
    }

    /// Whether UTF-8 `bytes` are their own cell, as `textCell` (`text`) or `numberCell` would
    /// write them: a writer holding bytes (a store's row) skips making a `String` of nearly every cell.
    static func isPlain(bytes: UnsafeBufferPointer<UInt8>, text: Bool) -> Bool {
        isPlain(bytes, text: text)
    }

    /// Printable ASCII with no comma or quote (and, for a text cell, no leading formula sign): the
    /// cell is the value itself, as nearly every id, code and time is. One pass over the bytes.
    private static func isPlain(_ value: String, text: Bool) -> Bool {
        isPlain(value.utf8, text: text)
    }

    private static func isPlain<Bytes: Sequence<UInt8>>(_ bytes: Bytes, text: Bool) -> Bool {
        // Where a spreadsheet may start a cell: the value's start, and (text) after a `;`.
        var cellStart = text
        for byte in bytes {
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") { return false }
            if cellStart, byte == UInt8(ascii: "=") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "@") {
                return false
            }
            cellStart = text && byte == UInt8(ascii: ";")
        }
        return true
    }

    /// The cell of a value that is not its own: `'` first when it starts with a formula sign, a tab
    /// or a CR, and `'` before a formula sign right after a `;` (`guardingFormula`), its control
    /// characters escaped, and quoted, each quote doubled, when it holds a comma or a quote (a line
    /// break is escaped by then). Made in one pass over the UTF-8 bytes: every character it changes
    /// or looks for is ASCII, or a C1 control (`C2 80` to `C2 9F`).
    private static func cell(_ value: String, guardingFormula: Bool) -> String {
        var value = value
        return value.withUTF8 { bytes in
            var output: [UInt8] = [UInt8(ascii: "\"")]
            output.reserveCapacity(bytes.count + 8)
            if guardingFormula, let first = bytes.first, formulaStarts.contains(first) { output.append(UInt8(ascii: "'")) }
            guard appendEscaping(bytes, guardingAfterSemicolons: guardingFormula, to: &output) else {
                return String(decoding: output.dropFirst(), as: UTF8.self)
            }
            output.append(UInt8(ascii: "\""))
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// The signs a spreadsheet runs a cell that starts with as a formula.
    private static let formulaSigns: [UInt8] = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@")]

    /// What a text cell's first character must not be, lest a spreadsheet run the cell (CONTRACT.md §3).
    private static let formulaStarts: [UInt8] = formulaSigns + [0x09, 0x0D]

    /// Appends `bytes` with every control character (Unicode's `Cc`: C0, DEL, C1) written as a visible
    /// escape, `\t`, `\n`, `\r`, else `\u001B`, each quote twice, and (`guardingAfterSemicolons`) `'`
    /// before a formula sign that follows a `;`; returns whether they hold a comma or a quote. An input
    /// line's escape sequences, NULs or line breaks would otherwise reach a spreadsheet or a terminal
    /// that `cat`s the file, where they can hide or fake text; a record never spans lines either.
    private static func appendEscaping(_ bytes: UnsafeBufferPointer<UInt8>, guardingAfterSemicolons: Bool, to output: inout [UInt8]) -> Bool {
        var holdsCommaOrQuote = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if guardingAfterSemicolons, index > 0, bytes[index - 1] == UInt8(ascii: ";"), formulaSigns.contains(byte) {
                output.append(UInt8(ascii: "'"))
            }
            if byte < 0x20 || byte == 0x7F {
                appendEscape(of: byte, to: &output)
            } else if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) {
                index += 1
                appendEscape(of: bytes[index], to: &output)
            } else {
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") {
                    holdsCommaOrQuote = true
                    if byte == UInt8(ascii: "\"") { output.append(byte) }
                }
                output.append(byte)
            }
            index += 1
        }
        return holdsCommaOrQuote
    }

    /// The escape of control character U+00`control`: `\t`, `\n`, `\r`, else `\u` and four hex digits.
    private static func appendEscape(of control: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch control {
        case 0x09: output.append(UInt8(ascii: "t"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        default:
            let digits = Array("0123456789ABCDEF".utf8)
            output += [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), digits[Int(control >> 4)], digits[Int(control & 0x0F)]]
        }
    }
}

/// One parsed CSV record: its bytes and where each field lies.
public struct CSVRow {
    /// A field's place in 8 bytes, so an export row's ninety-odd spans fit one small allocation.
    /// Offsets are below 2^31: `LineReader` hands over no line longer than `maximumLineBytes`, and
    /// `CSVRecordAssembler` joins no record of several lines longer than that.
    struct Span {
        private let startAndQuote: UInt32
        private let endOffset: UInt32

        init(start: Int, end: Int, quoted: Bool) {
            startAndQuote = UInt32(truncatingIfNeeded: start) & 0x7FFF_FFFF | (quoted ? 0x8000_0000 : 0)
            endOffset = UInt32(truncatingIfNeeded: end)
        }

        var start: Int { Int(startAndQuote & 0x7FFF_FFFF) }
        var end: Int { Int(endOffset) }
        /// The field began with a quote: its text is between the quotes, `""` standing for `"`.
        var quoted: Bool { startAndQuote & 0x8000_0000 != 0 }
    }

    let bytes: [UInt8]
    let spans: [Span]
    /// Set when the record had more fields than its reader allowed: how many. It then holds none.
    public let excessFieldCount: Int?

    public var count: Int { spans.count }

    /// The text of field `index`, unquoted and unescaped.
    public subscript(index: Int) -> String { field(index, trimmingSpaces: false) }

    /// Whether every byte of the record is ASCII: then every field is valid UTF-8, and none needs
    /// a look of its own.
    var isASCII: Bool {
        bytes.withUnsafeBytes { ASCIIBytes.only($0) }
    }

    /// Whether field `index` is valid UTF-8 (its quotes are ASCII, so its raw bytes tell); false
    /// when text made of it would have a replacement character for what it held.
    func isValidUTF8(_ index: Int) -> Bool {
        let span = spans[index]
        return bytes.withUnsafeBufferPointer { row in
            let cell = UnsafeBufferPointer(rebasing: row[span.start..<span.end])
            if cell.allSatisfy({ $0 < 0x80 }) { return true }
            var iterator = cell.makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }

    /// The text of field `index`, unquoted and unescaped, without leading and trailing spaces
    /// and tabs: trimmed as bytes, before its string is made.
    func trimmedField(_ index: Int) -> String { field(index, trimmingSpaces: true) }

    /// Calls `body` with the bytes `trimmedField` makes its text of (unquoted, unescaped, without
    /// the spaces and tabs at either end), where no text is needed: a time read from them.
    func withTrimmedField<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        withField(index) { body(Self.trimmed($0, trimmingSpaces: true)) }
    }

    private func field(_ index: Int, trimmingSpaces: Bool) -> String {
        withField(index) { Self.text($0, trimmingSpaces: trimmingSpaces) }
    }

    /// Calls `body` with the bytes of field `index`, unquoted and unescaped.
    private func withField<Result>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let span = spans[index]
        guard span.quoted else {
            return bytes.withUnsafeBufferPointer { row in body(UnsafeBufferPointer(rebasing: row[span.start..<span.end])) }
        }
        var output: [UInt8] = []
        output.reserveCapacity(span.end - span.start)
        var position = span.start + 1
        var inQuotes = true
        while position < span.end {
            let byte = bytes[position]
            if inQuotes, byte == UInt8(ascii: "\"") {
                if position + 1 < span.end, bytes[position + 1] == UInt8(ascii: "\"") {
                    output.append(byte)
                    position += 2
                    continue
                }
                inQuotes = false
            } else {
                output.append(byte)
            }
            position += 1
        }
        return output.withUnsafeBufferPointer { body($0) }
    }

    /// UTF-8 `bytes` as text (invalid sequences repaired), optionally without the spaces and tabs
    /// at either end. Trimming the bytes first gives the same text: a space or tab is never part
    /// of a sequence that repair replaces.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, trimmingSpaces: Bool) -> String {
        let bytes = trimmed(bytes, trimmingSpaces: trimmingSpaces)
        if bytes.isEmpty { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `bytes`, without the spaces and tabs at either end when `trimmingSpaces`.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, trimmingSpaces: Bool) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        if trimmingSpaces {
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }
}
