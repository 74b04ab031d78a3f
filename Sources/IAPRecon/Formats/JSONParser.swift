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
///
/// It writes a `JSONTape`: a token per value, which ingest reads in place. Every
/// string is checked whole as it is read, whether or not anyone reads it later,
/// so a text is accepted or refused alike however it is read. `parse` makes the
/// tape's `JSONValue`, for the readers that want the whole value.
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
    /// The tape being written: a token per value and per member name, in source order.
    private(set) var tokens: [JSONToken]
    /// The decoded bytes of the last string read that held an escape.
    private(set) var scratch: [UInt8]
    /// Whether the last string read held an escape, so that its text differs from its bytes.
    private var stringHadEscape = false

    /// A parser of `bytes` writing into `tokens` and decoding escapes into `scratch`, whose
    /// storage it reuses: a worker hands the same arrays to the parser of each of its lines.
    init(bytes: UnsafeBufferPointer<UInt8>, tokens: [JSONToken] = [], scratch: [UInt8] = []) {
        self.bytes = bytes
        self.tokens = tokens
        self.scratch = scratch
        valuesLeft = JSONParser.maximumValues(byteCount: bytes.count)
    }

    /// Parses one complete JSON text into a tape; its first token is the text's value.
    mutating func parseText() throws(JSONSyntaxError) {
        // Here, not in `init`: by now the tape has let go of the array, so its storage is kept, not copied.
        tokens.removeAll(keepingCapacity: true)
        skipWhitespace()
        try parseValue()
        skipWhitespace()
        if index != bytes.count {
            throw error("unexpected text after the JSON value")
        }
    }

    /// Parses one complete JSON text.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let tape = JSONTape()
        try tape.read(bytes)
        return tape.withRoot(in: bytes) { $0.value }
    }

    /// Parses a JSON text held in `bytes`.
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try parse(buffer) }
    }

    /// Parses a JSON text held in `text`.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The text of the string whose opening quote is at `quote` in `bytes`, which a parser has read
    /// before: escapes are decoded by the same code that checked them.
    static func decodedString(_ bytes: UnsafeBufferPointer<UInt8>, quote: Int) -> String {
        var text: [UInt8] = []
        decodeString(bytes, quote: quote, into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// The decoded bytes of the string whose opening quote is at `quote` in `bytes` (a string a parser
    /// has read before), into `output`, whose storage is reused.
    static func decodeString(_ bytes: UnsafeBufferPointer<UInt8>, quote: Int, into output: inout [UInt8]) {
        var parser = JSONParser(bytes: bytes, scratch: output)
        output = []
        parser.index = quote
        guard let (start, end) = try? parser.readString() else { return }
        output = parser.scratch
        if !parser.stringHadEscape {
            output.removeAll(keepingCapacity: true)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
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

    private mutating func parseValue() throws(JSONSyntaxError) {
        guard index < bytes.count else { throw error("unexpected end of input") }
        valuesLeft -= 1
        if valuesLeft < 0 {
            throw error("more than \(JSONParser.maximumValues(byteCount: bytes.count)) values in \(bytes.count) bytes")
        }
        let start = index
        switch bytes[index] {
        case UInt8(ascii: "{"): try parseObject()
        case UInt8(ascii: "["): try parseArray()
        case UInt8(ascii: "\""): try appendString(nameDigest: false)
        case UInt8(ascii: "t"): try expectLiteral("true"); appendScalar(.true, from: start)
        case UInt8(ascii: "f"): try expectLiteral("false"); appendScalar(.false, from: start)
        case UInt8(ascii: "n"): try expectLiteral("null"); appendScalar(.null, from: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber(); appendScalar(.number, from: start)
        default: throw error("unexpected character")
        }
    }

    /// Appends the token of a value without contents, which ends at `index`.
    private mutating func appendScalar(_ kind: JSONToken.Kind, from start: Int) {
        tokens.append(JSONToken(kind: kind, start: start, end: index, next: tokens.count + 1))
    }

    /// Reads a string and appends its token; a member name's carries the digest of its text, which is returned.
    @discardableResult
    private mutating func appendString(nameDigest: Bool) throws(JSONSyntaxError) -> UInt32 {
        let (start, end) = try readString()
        var token = JSONToken(kind: .string, start: start, end: end, next: tokens.count + 1)
        token.hasEscape = stringHadEscape
        if nameDigest {
            // The digest is of the name's text: its bytes between the quotes, unless an escape made the text otherwise.
            token.digest = stringHadEscape
                ? scratch.withUnsafeBufferPointer { JSONObject.nameDigest($0) }
                : JSONObject.nameDigest(UnsafeBufferPointer(rebasing: bytes[start..<end]))
        }
        tokens.append(token)
        return token.digest
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

    /// Appends a container's token before its contents', to be completed by `closeContainer`.
    private mutating func openContainer(_ kind: JSONToken.Kind) -> Int {
        tokens.append(JSONToken(kind: kind, start: index, end: index, next: 0))
        return tokens.count - 1
    }

    /// Completes the token at `position` of a container holding `count` members or elements, which ends at `index`.
    private mutating func closeContainer(at position: Int, count: Int) {
        depth -= 1
        tokens[position].isFlat = tokens.count - position - 1 == (tokens[position].kind == .object ? 2 * count : count)
        tokens[position].end = index
        tokens[position].next = Int32(truncatingIfNeeded: tokens.count)
        tokens[position].count = Int32(truncatingIfNeeded: count)
    }

    private mutating func parseObject() throws(JSONSyntaxError) {
        try enterContainer()
        let position = openContainer(.object)
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            closeContainer(at: position, count: 0)
            return
        }
        var count = 0
        // The token's `digest` and `mayRepeatName`, kept here until the object is closed.
        var nameBits: UInt32 = 0
        var mayRepeatName = false
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let digest = try appendString(nameDigest: true)
            let bit = JSONToken.nameBit(digest)
            if nameBits & bit != 0, !mayRepeatName { mayRepeatName = nameDigestRepeats(digest, inObjectAt: position) }
            nameBits |= bit
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            try parseValue()
            count += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw error("expected ',' or '}'")
        }
        tokens[position].digest = nameBits
        tokens[position].mayRepeatName = mayRepeatName
        closeContainer(at: position, count: count)
    }

    /// Whether a name before the last, just read, of the object whose token is at `position` has
    /// its `digest`: asked only when the digest's bit (`JSONToken.nameBit`) was already set. Digests
    /// are of names' texts, so a name given twice, however escaped, always shares one; two names
    /// that share one by chance only cost lookups their shortcut.
    private func nameDigestRepeats(_ digest: UInt32, inObjectAt position: Int) -> Bool {
        let last = tokens.count - 1
        var name = position + 1
        while name < last {
            if tokens[name].digest == digest { return true }
            name = Int(tokens[name + 1].next)
        }
        return false
    }

    private mutating func parseArray() throws(JSONSyntaxError) {
        try enterContainer()
        let position = openContainer(.array)
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            closeContainer(at: position, count: 0)
            return
        }
        var count = 0
        while true {
            skipWhitespace()
            try parseValue()
            count += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw error("expected ',' or ']'")
        }
        closeContainer(at: position, count: count)
    }

    private mutating func parseNumber() throws(JSONSyntaxError) {
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
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    /// Reads the string whose opening quote is at `index`, checking every byte of it (escapes,
    /// control characters, UTF-8) whether or not anyone reads its text, and returns the range of its
    /// bytes between the quotes. When it held an escape (`stringHadEscape`), `scratch` holds its text.
    private mutating func readString() throws(JSONSyntaxError) -> (start: Int, end: Int) {
        index += 1
        stringHadEscape = false
        let start = index
        skipPlainASCII()
        // Fast path: no escapes, plain bytes up to the closing quote. ASCII needs no UTF-8 check.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = index
                index += 1
                if highBits >= 0x80 { try checkUTF8(UnsafeBufferPointer(rebasing: bytes[start..<end])) }
                return (start, end)
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        guard index < bytes.count else { throw error("unterminated string") }
        stringHadEscape = true
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let end = index
                index += 1
                try scratch.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try checkUTF8(buffer) }
                return (start, end)
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
                case UInt8(ascii: "u"): try appendUnicodeEscape()
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

    /// Moves `index` past whole 16-byte blocks, then 8-byte words, that hold neither a quote, a
    /// backslash, a control character nor a non-ASCII byte: most of a string's bytes (all but a few
    /// of a JWS) need no look of their own. In a word that holds one, it stops at the first such
    /// byte; the last few bytes of the text are left to the byte-by-byte scan.
    @inline(__always)
    private mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        var position = index
        defer { index = position }
        // A block is tested in a few vector instructions, where a word takes a dozen: a JWS is
        // thousands of bytes.
        let quote = SIMD16<UInt8>(repeating: UInt8(ascii: "\""))
        let backslash = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
        let printableStart = SIMD16<UInt8>(repeating: 0x20)
        let printableCount = SIMD16<UInt8>(repeating: 0x80 - 0x20)
        while position + 16 <= bytes.count {
            let block = UnsafeRawPointer(base + position).loadUnaligned(as: SIMD16<UInt8>.self)
            // Bytes from 0x20 to 0x7F move to 0 to 0x5F; a control character or a non-ASCII byte lands above.
            if any((block .== quote) .| (block .== backslash) .| ((block &- printableStart) .>= printableCount)) { break }
            position += 16
        }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* UInt64(UInt8(ascii: "\""))
        let backslashes = ones &* UInt64(UInt8(ascii: "\\"))
        while position + 8 <= bytes.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            // A byte's subtraction sets its high bit when it goes below zero (a byte under 0x20, or one
            // the xor made 0: a quote or a backslash), or when the byte's own is set (non-ASCII). A byte
            // borrows from the one above it only by going below zero itself, so the lowest mark is
            // the first such byte (read little-endian).
            let special = (word | (word &- ones &* 0x20) | ((word ^ quotes) &- ones) | ((word ^ backslashes) &- ones)) & highBits
            if special != 0 {
                position += special.trailingZeroBitCount / 8
                return
            }
            position += 8
        }
    }

    private func checkUTF8(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) {
        guard Self.isValidUTF8(bytes) else { throw error("invalid UTF-8 in string") }
    }

    /// Whether `bytes` are well-formed UTF-8 (Unicode 3.9, table 3-7), as `String(validating:)` judges
    /// them, without making a string: no overlong form, no surrogate, nothing above U+10FFFF.
    static func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        func isContinuation(_ offset: Int) -> Bool { bytes[index + offset] & 0xC0 == 0x80 }
        while index < count {
            let lead = bytes[index]
            switch lead {
            case 0x00..<0x80:
                index += 1
            case 0xC2...0xDF:
                guard index + 1 < count, isContinuation(1) else { return false }
                index += 2
            case 0xE0...0xEF:
                guard index + 2 < count else { return false }
                let second = bytes[index + 1]
                let lowest: UInt8 = lead == 0xE0 ? 0xA0 : 0x80, highest: UInt8 = lead == 0xED ? 0x9F : 0xBF
                guard second >= lowest, second <= highest, isContinuation(2) else { return false }
                index += 3
            case 0xF0...0xF4:
                guard index + 3 < count else { return false }
                let second = bytes[index + 1]
                let lowest: UInt8 = lead == 0xF0 ? 0x90 : 0x80, highest: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
                guard second >= lowest, second <= highest, isContinuation(2), isContinuation(3) else { return false }
                index += 4
            default:
                return false
            }
        }
        return true
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

    private mutating func appendUnicodeEscape() throws(JSONSyntaxError) {
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
        UTF8.encode(scalar) { scratch.append($0) }
    }
}
