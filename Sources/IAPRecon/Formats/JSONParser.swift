/// Why a line is not JSON, with the byte offset where parsing stopped.
public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public var offset: Int

    public var description: String { "\(message) at byte \(offset + 1)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// It works on a byte buffer (no `Character` iteration, no `JSONDecoder`),
/// rejects invalid UTF-8, control characters in strings, trailing garbage,
/// nesting deeper than `maximumDepth`, and more values than `maximumValues`
/// allows for the text's length, so hostile input costs one rejected line
/// and never a crash, a stack overflow or memory out of proportion to it.
public struct JSONParser {
    public static let maximumDepth = 64

    /// How many values a text of `byteCount` bytes may hold.
    ///
    /// A parsed value takes a few dozen bytes, its text as little as two (`0,`): one line
    /// of `[0,0,…]` would take over ten times its size. The contract's records spend a dozen
    /// bytes or more on each value (`"quantity":"1",`), so one value per eight bytes leaves
    /// them room, and no text may hold more than a million values (Apple's largest receipts
    /// hold tens of thousands), which bounds a huge line's cost by its buffer.
    public static func maximumValues(byteCount: Int) -> Int { min(1 << 20, 1024 + byteCount / 8) }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private var valuesLeft: Int
    /// The members of the objects being parsed, innermost last: each object takes its own off the
    /// top into an array sized once, instead of growing one array per object a member at a time.
    private var openMembers: [JSONObject.Member] = []
    /// The same for the elements of the arrays being parsed.
    private var openElements: [JSONValue] = []
    /// Whether the last string read held an escape, so that its text differs from its bytes.
    private var stringHadEscape = false

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        valuesLeft = JSONParser.maximumValues(byteCount: bytes.count)
    }

    /// Parses one complete JSON text.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index != bytes.count {
            throw parser.error("unexpected text after the JSON value")
        }
        return value
    }

    /// Parses a JSON text held in `bytes`.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        let result: Result<JSONValue, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONSyntaxError) { return .success(try parse(buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses a JSON text held in `text`.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    // MARK: - Values

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, offset: index)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        valuesLeft -= 1
        if valuesLeft < 0 {
            throw error("more than \(JSONParser.maximumValues(byteCount: bytes.count)) values in \(bytes.count) bytes")
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    private mutating func enterContainer() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONParser.maximumDepth { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject(parsed: []))
        }
        // Room for a record's members in one small allocation; it grows only for a larger or deeper object.
        if openMembers.capacity == 0 { openMembers.reserveCapacity(24) }
        let first = openMembers.count
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let nameStart = index + 1
            let key = try parseString()
            // The digest is of the name's text: its bytes between the quotes, unless an escape made the text otherwise.
            let nameDigest = stringHadEscape
                ? JSONObject.nameDigest(key) : JSONObject.nameDigest(UnsafeBufferPointer(rebasing: bytes[nameStart..<(index - 1)]))
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            openMembers.append(JSONObject.Member(key: key, value: value, nameDigest: nameDigest))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw error("expected ',' or '}'")
        }
        depth -= 1
        return .object(JSONObject(parsed: Self.takeTop(of: &openMembers, from: first, leaving: JSONObject.Member(key: "", value: .null, nameDigest: 0))))
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        if openElements.capacity == 0 { openElements.reserveCapacity(16) }
        let first = openElements.count
        while true {
            skipWhitespace()
            let element = try parseValue()
            openElements.append(element)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw error("expected ',' or ']'")
        }
        depth -= 1
        return .array(Self.takeTop(of: &openElements, from: first, leaving: .null))
    }

    /// Moves the entries of `stack` from `first` on into an array of their own and drops them
    /// from `stack`. They are moved, not copied: `placeholder` (which holds no reference) takes
    /// their places, so dropping them releases nothing a value still uses.
    private static func takeTop<Element>(of stack: inout [Element], from first: Int, leaving placeholder: Element) -> [Element] {
        let count = stack.count - first
        let taken = stack.withUnsafeMutableBufferPointer { stack in
            [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let target = buffer.baseAddress, let source = stack.baseAddress else { return }
                target.moveInitialize(from: source + first, count: count)
                (source + first).initialize(repeating: placeholder, count: count)
                initialized = count
            }
        }
        for _ in 0..<count { stack.removeLast() }
        return taken
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        stringHadEscape = false
        let start = index
        skipPlainASCII()
        // Fast path: no escapes, plain bytes up to the closing quote. ASCII needs no UTF-8 check.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return highBits < 0x80 ? String(decoding: slice, as: UTF8.self) : try makeString(slice)
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        guard index < bytes.count else { throw error("unterminated string") }
        stringHadEscape = true
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try makeString(buffer) }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &scratch)
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in string") }
                scratch.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    /// Moves `index` past whole 8-byte words that hold neither a quote, a backslash, a control
    /// character nor a non-ASCII byte: most of a string's bytes (all but a few of a JWS) need no
    /// look of their own. A word holding one is left to the byte-by-byte scan.
    private mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* UInt64(UInt8(ascii: "\""))
        let backslashes = ones &* UInt64(UInt8(ascii: "\\"))
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if word & highBits != 0 { return }
            // Every byte is below 0x80, so a byte's subtraction sets its high bit only by going below
            // zero: a byte under 0x20, or one that the xor made 0 (a quote or a backslash).
            let special = (word &- ones &* 0x20) | ((word ^ quotes) &- ones) | ((word ^ backslashes) &- ones)
            if special & highBits != 0 { return }
            index += 8
        }
    }

    private func makeString(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> String {
        guard let string = String(validating: bytes, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
        return string
    }

    private mutating func readHex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to scratch: inout [UInt8]) throws(JSONSyntaxError) {
        var scalarValue = try readHex4()
        if (0xD800...0xDBFF).contains(scalarValue) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("unpaired surrogate")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error("unpaired surrogate") }
        scratch.append(contentsOf: Array(String(Character(scalar)).utf8))
    }
}
