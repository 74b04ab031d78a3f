/// RFC 4180 CSV: reading one record's fields, and writing cells.
public enum CSV {
    /// The fields of one record, or nil when a quoted field is still open at the end
    /// (the record continues on the next line, or its quotes are unbalanced).
    public static func fields(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        var fields: [String] = []
        var field: [UInt8] = []
        var index = 0
        var inQuotes = false
        var fieldWasQuoted = false
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
                field.removeAll(keepingCapacity: true)
                fieldWasQuoted = false
            } else if byte == UInt8(ascii: "\""), field.isEmpty, !fieldWasQuoted {
                inQuotes = true
                fieldWasQuoted = true
            } else {
                field.append(byte)
            }
            index += 1
        }
        if inQuotes { return nil }
        fields.append(String(decoding: field, as: UTF8.self))
        return fields
    }

    public static func fields(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { fields($0) }
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

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
