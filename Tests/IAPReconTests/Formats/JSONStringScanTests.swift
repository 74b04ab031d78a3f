import Testing
@testable import IAPRecon

/// The parser passes over plain ASCII in strings sixteen, then eight bytes at a time: whatever ends
/// that (a quote, an escape, a control character, a byte of UTF-8 or a bad one) is still found
/// wherever in the block or the word it lies, with the same value or the same error as byte by byte.
@Suite("JSON string scanning")
struct JSONStringScanTests {
    /// A 32-byte string body of `a`s with `bytes` in place of the `a` at `position`, quoted.
    private static func quoted(_ bytes: [UInt8], at position: Int, length: Int = 32) -> [UInt8] {
        let before = [UInt8](repeating: UInt8(ascii: "a"), count: position)
        let after = [UInt8](repeating: UInt8(ascii: "a"), count: length - position - 1)
        return [UInt8(ascii: "\"")] + before + bytes + after + [UInt8(ascii: "\"")]
    }

    private static func parse(_ bytes: [UInt8]) -> Result<JSONValue, JSONSyntaxError> {
        do throws(JSONSyntaxError) { return .success(try JSONParser.parse(bytes)) } catch { return .failure(error) }
    }

    private static func plain(_ count: Int) -> String { String(repeating: "a", count: count) }

    @Test("the closing quote ends the string at every length", arguments: 0..<40)
    func closingQuote(length: Int) {
        let text = [UInt8(ascii: "\"")] + Array(Self.plain(length).utf8) + [UInt8(ascii: "\""), UInt8(ascii: " ")]
        #expect(Self.parse(text) == .success(.string(Self.plain(length))))
    }

    @Test("an escape at any place in a word decodes", arguments: 0..<24)
    func escapeAnywhere(position: Int) {
        let text = Self.quoted(Array(#"\""#.utf8), at: position)
        #expect(Self.parse(text) == .success(.string(Self.plain(position) + "\"" + Self.plain(31 - position))))
        let newline = Self.quoted(Array(#"\n"#.utf8), at: position)
        #expect(Self.parse(newline) == .success(.string(Self.plain(position) + "\n" + Self.plain(31 - position))))
    }

    @Test("a raw control character at any place is rejected where it stands; DEL and space are not control characters",
          arguments: 0..<24)
    func controlAnywhere(position: Int) {
        for control: UInt8 in [0x00, 0x09, 0x0A, 0x1F] {
            #expect(Self.parse(Self.quoted([control], at: position))
                == .failure(JSONSyntaxError(message: "control character in string", offset: position + 1)))
        }
        for allowed: UInt8 in [0x20, 0x21, 0x7F] {
            let expected = Self.plain(position) + String(decoding: [allowed], as: UTF8.self) + Self.plain(31 - position)
            #expect(Self.parse(Self.quoted([allowed], at: position)) == .success(.string(expected)))
        }
    }

    @Test("UTF-8 at any place passes through; a bad byte at any place is rejected", arguments: 0..<24)
    func utf8Anywhere(position: Int) {
        let accented = Self.quoted(Array("é".utf8), at: position)
        #expect(Self.parse(accented) == .success(.string(Self.plain(position) + "é" + Self.plain(31 - position))))
        // The error is reported after the closing quote, as on the byte-by-byte path.
        #expect(Self.parse(Self.quoted([0xFF], at: position))
            == .failure(JSONSyntaxError(message: "invalid UTF-8 in string", offset: 34)))
    }

    @Test("past whole blocks and words, whatever ends the plain bytes is found where it stands", arguments: 0..<48)
    func anywhereInThreeBlocks(position: Int) {
        let length = 48
        func expected(_ text: String) -> Result<JSONValue, JSONSyntaxError> {
            .success(.string(Self.plain(position) + text + Self.plain(length - 1 - position)))
        }
        #expect(Self.parse(Self.quoted(Array(#"\""#.utf8), at: position, length: length)) == expected("\""))
        #expect(Self.parse(Self.quoted(Array(#"\u00e9"#.utf8), at: position, length: length)) == expected("é"))
        #expect(Self.parse(Self.quoted(Array("é".utf8), at: position, length: length)) == expected("é"))
        #expect(Self.parse(Self.quoted([0x7F], at: position, length: length)) == expected("\u{7F}"))
        for control: UInt8 in [0x00, 0x1F] {
            #expect(Self.parse(Self.quoted([control], at: position, length: length))
                == .failure(JSONSyntaxError(message: "control character in string", offset: position + 1)))
        }
        #expect(Self.parse(Self.quoted([0xFF], at: position, length: length))
            == .failure(JSONSyntaxError(message: "invalid UTF-8 in string", offset: length + 2)))
        // The string's own closing quote, after `position` plain bytes, then more text.
        let closed = [UInt8(ascii: "\"")] + Array(Self.plain(position).utf8) + Array(#"",""#.utf8) + Array(Self.plain(length).utf8) + [UInt8(ascii: "\"")]
        #expect(Self.parse([UInt8(ascii: "[")] + closed + [UInt8(ascii: "]")]) == .success(.array([.string(Self.plain(position)), .string(Self.plain(length))])))
    }

    @Test("an unterminated long string is an error, not a read past its end")
    func unterminated() {
        let text = [UInt8(ascii: "\"")] + Array(Self.plain(37).utf8)
        #expect(Self.parse(text) == .failure(JSONSyntaxError(message: "unterminated string", offset: 38)))
    }

    @Test("objects and arrays nested in each other keep their own members and elements")
    func nestedContainers() throws {
        let text = #"{"a":[{"b":1,"c":[1,2,{"d":"e"}]},{"f":{}}],"g":[],"h":{"i":[[],[3]]},"j":"k"}"#
        let expected = JSONValue.object([
            ("a", .array([
                .object([("b", .number("1")), ("c", .array([.number("1"), .number("2"), .object([("d", .string("e"))])]))]),
                .object([("f", .object([]))]),
            ])),
            ("g", .array([])),
            ("h", .object([("i", .array([.array([]), .array([.number("3")])]))])),
            ("j", .string("k")),
        ])
        #expect(try JSONParser.parse(text) == expected)
    }
}
