/// Serializes `JSONValue`s: keys in the order given, numbers as their exact text.
public enum JSONWriter {
    /// Pretty-printed with two-space indents and a final newline.
    public static func pretty(_ value: JSONValue) -> String {
        var output = ""
        write(value, indent: 0, into: &output)
        output += "\n"
        return output
    }

    private static func write(_ value: JSONValue, indent: Int, into output: inout String) {
        switch value {
        case .null: output += "null"
        case .bool(let bool): output += bool ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): output += quote(text)
        case .array(let elements):
            if elements.isEmpty { output += "[]"; return }
            output += "[\n"
            for (index, element) in elements.enumerated() {
                output += String(repeating: "  ", count: indent + 1)
                write(element, indent: indent + 1, into: &output)
                output += index + 1 < elements.count ? ",\n" : "\n"
            }
            output += String(repeating: "  ", count: indent) + "]"
        case .object(let object):
            if object.members.isEmpty { output += "{}"; return }
            output += "{\n"
            for (index, member) in object.members.enumerated() {
                output += String(repeating: "  ", count: indent + 1) + quote(member.key) + ": "
                write(member.value, indent: indent + 1, into: &output)
                output += index + 1 < object.members.count ? ",\n" : "\n"
            }
            output += String(repeating: "  ", count: indent) + "}"
        }
    }

    /// A JSON string literal.
    public static func quote(_ text: String) -> String {
        var output = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
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
