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
