import Testing
@testable import IAPRecon

/// JSON outputs (`findings.json`, `summary.json`, `history --json`): exact escaping, exact layout.
@Suite("JSON writer")
struct JSONWriterTests {
    @Test("quotes, backslashes and control characters are escaped; other text, non-ASCII included, is written as is")
    func escaping() throws {
        let text = "a\"b\\c\nd\re\tf\u{01}g\u{1F}h é 🎮 /"
        #expect(JSONWriter.quote(text) == #""a\"b\\c\nd\re\tf\u0001g\u001fh é 🎮 /""#)
        #expect(try JSONParser.parse(JSONWriter.quote(text)) == .string(text))
    }

    /// Valid JSON either way, but Python's `str.splitlines()` (and JavaScript before ES2019, for
    /// the last two) end a line at them: a `consumption_requests.jsonl` line split in two is two broken records.
    @Test("next line U+0085 and the line and paragraph separators U+2028 and U+2029 are escaped; their neighbours in UTF-8 are not")
    func lineSeparators() throws {
        let text = "a\u{2028}b\u{2029}c\u{2027}\u{202A}\u{85}\u{84}\u{86}"
        #expect(JSONWriter.quote(text) == "\"a\\u2028b\\u2029c\u{2027}\u{202A}\\u0085\u{84}\u{86}\"")
        #expect(try JSONParser.parse(JSONWriter.quote(text)) == .string(text))
        #expect(JSONWriter.quote("\u{2028}") == "\"\\u2028\"")
    }

    @Test("escapes at the start, the end, side by side and alone are written as byte by byte; a text with none is copied whole",
          arguments: ["", "plain", "\"", "\\\\", "\"x", "x\"", "\n\r\t", "a\u{0}b\u{7F}c", "é\"🎮\\", "\u{1B}[0m", String(repeating: "ab\"", count: 40)])
    func quotedRuns(text: String) {
        var expected: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): expected += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): expected += Array("\\\\".utf8)
            case 0x0A: expected += Array("\\n".utf8)
            case 0x0D: expected += Array("\\r".utf8)
            case 0x09: expected += Array("\\t".utf8)
            case ..<0x20: expected += Array(("\\u00" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)).utf8)
            default: expected.append(byte)
            }
        }
        expected.append(UInt8(ascii: "\""))
        #expect(Array(JSONWriter.quote(text).utf8) == expected)
    }

    @Test("pretty layout: two-space indents, keys in the order given, empty containers inline, a final newline")
    func layout() {
        let value = JSONValue.object([
            ("b", .array([.int(1), .null, .bool(true)])), ("a", .object([("x", .string("y"))])), ("e", .array([])), ("o", .object([])),
        ])
        #expect(JSONWriter.pretty(value) == """
            {
              "b": [
                1,
                null,
                true
              ],
              "a": {
                "x": "y"
              },
              "e": [],
              "o": {}
            }

            """)
    }
}
