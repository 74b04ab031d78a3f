/// Serializes `JSONValue`s: keys in the order given, numbers as their exact text.
public enum JSONWriter {
    /// Pretty-printed with two-space indents and a final newline.
    public static func pretty(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        write(value, indent: 0, into: &output)
        output.append(0x0A)
        return String(decoding: output, as: UTF8.self)
    }

    /// Pretty-printed as a member or element `indent` levels deep prints, without a final newline: a
    /// long document written a part at a time reads as `pretty` writes it whole.
    public static func pretty(_ value: JSONValue, nestedAt indent: Int) -> String {
        var output: [UInt8] = []
        write(value, indent: indent, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// On one line, no spaces: one record of a JSON Lines file.
    public static func compact(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        writeCompact(value, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private static func writeCompact(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null, .bool, .number, .string: write(value, indent: 0, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeCompact(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                appendQuoted(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                writeCompact(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func write(_ value: JSONValue, indent: Int, into output: inout [UInt8]) {
        switch value {
        case .null: output += "null".utf8
        case .bool(let bool): output += (bool ? "true" : "false").utf8
        case .number(let text): output += text.utf8
        case .string(let text): appendQuoted(text, to: &output)
        case .array(let elements):
            if elements.isEmpty { output += "[]".utf8; return }
            output += "[\n".utf8
            for (index, element) in elements.enumerated() {
                appendIndent(indent + 1, to: &output)
                write(element, indent: indent + 1, into: &output)
                output += (index + 1 < elements.count ? ",\n" : "\n").utf8
            }
            appendIndent(indent, to: &output)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.members.isEmpty { output += "{}".utf8; return }
            output += "{\n".utf8
            for (index, member) in object.members.enumerated() {
                appendIndent(indent + 1, to: &output)
                appendQuoted(member.key, to: &output)
                output += ": ".utf8
                write(member.value, indent: indent + 1, into: &output)
                output += (index + 1 < object.members.count ? ",\n" : "\n").utf8
            }
            appendIndent(indent, to: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func appendIndent(_ indent: Int, to output: inout [UInt8]) {
        for _ in 0..<indent * 2 { output.append(0x20) }
    }

    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        var output: [UInt8] = []
        appendQuoted(text, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// `"`, `\`, and control characters are escaped, and so are U+0085, U+2028 and U+2029, which
    /// JSON allows as they are but line splitters (Python's `splitlines`) break a JSON line at.
    /// Every other byte is copied as it is, a run between two escapes at a time (most texts need
    /// none: copied whole).
    private static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var run = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if let separator = lineSeparator(bytes, at: index) {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                    output += separator.escape.utf8
                    index += separator.length
                    run = index
                    continue
                }
                index += 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<(index - 1)]))
                run = index
                switch byte {
                case UInt8(ascii: "\""): output += "\\\"".utf8
                case UInt8(ascii: "\\"): output += "\\\\".utf8
                case 0x0A: output += "\\n".utf8
                case 0x0D: output += "\\r".utf8
                case 0x09: output += "\\t".utf8
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    output += "\\u00".utf8
                    output.append(hex[Int(byte >> 4)])
                    output.append(hex[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// U+0085 (`C2 85`), U+2028 (`E2 80 A8`) or U+2029 (`E2 80 A9`) starting at `index`: its escape and length in bytes.
    private static func lineSeparator(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (escape: String, length: Int)? {
        switch bytes[index] {
        case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0x85:
            return ("\\u0085", 2)
        case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
            return (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029", 3)
        default:
            return nil
        }
    }
}

extension JSONValue {
    /// An object from key-value pairs in the given order.
    public static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        .object(JSONObject(members: members.map { (key: $0.0, value: $0.1) }))
    }

    /// A string, or null for nil.
    public static func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }

    public static func int<I: BinaryInteger>(_ value: I) -> JSONValue { .number(String(value)) }
}
