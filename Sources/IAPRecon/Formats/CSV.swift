/// RFC 4180 CSV: reading one record's fields, and writing cells.
public enum CSV {
    /// The fields of one record, or nil when a quoted field is still open at the end
    /// (the record's quotes are unbalanced).
    public static func fields(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        row(bytes).map { row in (0..<row.count).map { row[$0] } }
    }

    /// One record's field boundaries; each field is decoded only when read.
    public static func row(_ bytes: UnsafeBufferPointer<UInt8>) -> CSVRow? {
        var spans: [CSVRow.Span] = []
        var index = 0
        var fieldStart = 0
        var inQuotes = false
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\"") {
                        index += 2
                        continue
                    }
                    inQuotes = false
                }
            } else if byte == UInt8(ascii: ",") {
                spans.append(CSVRow.Span(start: fieldStart, end: index, quoted: quoted))
                fieldStart = index + 1
                quoted = false
            } else if byte == UInt8(ascii: "\""), index == fieldStart {
                inQuotes = true
                quoted = true
            }
            index += 1
        }
        if inQuotes { return nil }
        spans.append(CSVRow.Span(start: fieldStart, end: bytes.count, quoted: quoted))
        return CSVRow(bytes: Array(bytes), spans: spans)
    }

    public static func fields(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { fields($0) }
    }

    /// One tab-separated record's fields, split at every tab: App Store Connect's reports
    /// (CONTRACT.md §1.7) never quote, and a title may hold a lone `"`.
    public static func tabRow(_ bytes: UnsafeBufferPointer<UInt8>) -> CSVRow {
        var spans: [CSVRow.Span] = []
        var fieldStart = 0
        for index in 0..<bytes.count where bytes[index] == 0x09 {
            spans.append(CSVRow.Span(start: fieldStart, end: index, quoted: false))
            fieldStart = index + 1
        }
        spans.append(CSVRow.Span(start: fieldStart, end: bytes.count, quoted: false))
        return CSVRow(bytes: Array(bytes), spans: spans)
    }

    /// A cell for a text column: quoted when needed, and prefixed with `'` when it
    /// starts with `=`, `+`, `-`, `@`, tab or CR so a spreadsheet shows it as text
    /// rather than running it as a formula (CONTRACT.md §3).
    public static func textCell(_ value: String) -> String {
        var value = value
        if let first = value.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first) {
            value = "'" + value
        }
        return quoteIfNeeded(value)
    }

    /// A cell for a numeric column: never prefixed.
    public static func numberCell(_ value: String) -> String { quoteIfNeeded(value) }

    static func quoteIfNeeded(_ value: String) -> String {
        if value.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) {
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return value
    }
}

/// One parsed CSV record: its bytes and where each field lies.
public struct CSVRow {
    struct Span {
        var start: Int
        var end: Int
        /// The field began with a quote: its text is between the quotes, `""` standing for `"`.
        var quoted: Bool
    }

    let bytes: [UInt8]
    let spans: [Span]

    public var count: Int { spans.count }

    /// The text of field `index`, unquoted and unescaped.
    public subscript(index: Int) -> String {
        let span = spans[index]
        guard span.quoted else { return String(decoding: bytes[span.start..<span.end], as: UTF8.self) }
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
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
