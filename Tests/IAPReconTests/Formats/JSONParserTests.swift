import Testing
@testable import IAPRecon

/// The strict byte-level JSON parser behind every JSON Lines source (CONTRACT.md §1).
@Suite("JSON parser")
struct JSONParserTests {
    /// The reject text a malformed line gets: the parser's message and the 1-based byte where it stopped.
    private func failure(_ bytes: [UInt8]) -> String? {
        do {
            _ = try JSONParser.parse(bytes)
            return nil
        } catch {
            return error.description
        }
    }

    private func failure(_ text: String) -> String? { failure(Array(text.utf8)) }

    // MARK: - Values

    @Test("objects keep members in source order, with nested arrays, literals and objects")
    func nestedValues() throws {
        let value = try JSONParser.parse(#" {"a": 1, "b" :[true,false, null ], "c":{"d":"e"}, "f":{}, "g":[]}"# + "\r\n\t")
        let expected = JSONValue.object([
            ("a", .number("1")),
            ("b", .array([.bool(true), .bool(false), .null])),
            ("c", .object([("d", .string("e"))])),
            ("f", .object([])),
            ("g", .array([])),
        ])
        #expect(value == expected)
        #expect(value.objectValue?.members.map(\.key) == ["a", "b", "c", "f", "g"])
        #expect(value["c"]?["d"] == .string("e"))
        #expect(value["b"]?.arrayValue?.count == 3)
    }

    @Test("a top-level scalar is a JSON text too")
    func topLevelScalars() throws {
        #expect(try JSONParser.parse("\"x\"") == .string("x"))
        #expect(try JSONParser.parse(" 42 ") == .number("42"))
        #expect(try JSONParser.parse("null") == .null)
        #expect(try JSONParser.parse("[]") == .array([]))
    }

    @Test("every escape decodes to its character")
    func simpleEscapes() throws {
        let value = try JSONParser.parse(#""q\" b\\ s\/ \b\f\n\r\t end""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t end"))
    }

    @Test("\\u escapes, upper and lower case hex, including surrogate pairs", arguments: [
        (#""\u0041""#, "A"),
        (#""\u00e9\u00E9""#, "éé"),
        (#""\u20AC""#, "€"),
        (#""\u0000""#, "\u{0}"),
        (#""\uD83D\uDE00""#, "😀"),
        (#""\ud83d\ude00""#, "😀"),
        (#""x\uD834\uDD1Ey""#, "x𝄞y"),
    ])
    func unicodeEscapes(json: String, expected: String) throws {
        #expect(try JSONParser.parse(json) == .string(expected))
    }

    @Test("raw UTF-8 passes through, before and after an escape")
    func rawUTF8() throws {
        #expect(try JSONParser.parse("\"héllo 日本\"") == .string("héllo 日本"))
        #expect(try JSONParser.parse("\"€\\n😀\"") == .string("€\n😀"))
    }

    @Test("numbers are kept as their exact source text", arguments: [
        "1697679936049.7297", "-0.5e3", "0", "-0", "10990", "1E+10", "2.5e-3", "123456789012345678901234567890",
    ])
    func numbersAsText(text: String) throws {
        #expect(try JSONParser.parse(text) == .number(text))
        #expect(try JSONParser.parse("{\"n\":\(text)}")["n"] == .number(text))
    }

    @Test("a duplicate key keeps both members; lookup returns the first")
    func duplicateKeys() throws {
        let value = try JSONParser.parse(#"{"k":"first","other":0,"k":"second"}"#)
        #expect(value["k"] == .string("first"))
        #expect(value.objectValue?.members.count == 3)
        #expect(value.objectValue?.members.last?.value == .string("second"))
    }

    @Test("firstMember gives the first value of a key and whether a later member of that name holds another")
    func firstMemberOfRepeatedKey() throws {
        let object = try #require(try JSONParser.parse(#"{"k":"first","kk":1,"other":0,"k":"second","j":[1],"j":[1],"m":null,"m":{}}"#).objectValue)
        #expect(object.firstMember("k")?.value == .string("first") && object.firstMember("k")?.repeatedOtherwise == true)
        #expect(object.firstMember("j")?.value == .array([.number("1")]) && object.firstMember("j")?.repeatedOtherwise == false)
        #expect(object.firstMember("m")?.value == .null && object.firstMember("m")?.repeatedOtherwise == true)
        #expect(object.firstMember("kk")?.repeatedOtherwise == false && object.firstMember("other")?.value == .number("0"))
        #expect(object.firstMember("x") == nil)
    }

    @Test("names alike in length and in their first, middle and last bytes are still two names, escaped or not")
    func namesOfOneDigest() throws {
        guard case .object(let object) = try JSONParser.parse(#"{"aXbc":1,"aYbc":2,"a\u0058bc":1,"aZbc":3,"aZbc":4}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object["aXbc"] == .number("1") && object["aYbc"] == .number("2"))
        // The escaped name is "aXbc" again, with the same value: no other value is given for it.
        #expect(object.firstMember("aXbc")?.value == .number("1") && object.firstMember("aXbc")?.repeatedOtherwise == false)
        #expect(object.firstMember("aYbc")?.value == .number("2") && object.firstMember("aYbc")?.repeatedOtherwise == false)
        #expect(object.firstMember("aZbc")?.value == .number("3") && object.firstMember("aZbc")?.repeatedOtherwise == true)
        #expect(object["aWbc"] == nil && object.firstMember("aWbc") == nil)
    }

    @Test("type names used in reject reasons")
    func typeNames() throws {
        let value = try JSONParser.parse(#"[null,true,1,"s",[],{}]"#)
        #expect(value.arrayValue?.map(\.typeName) == ["null", "boolean", "number", "string", "array", "object"])
        #expect(value["key"] == nil)
        #expect(JSONValue.string("x").objectValue == nil)
        #expect(JSONValue.string("x").arrayValue == nil)
    }

    // MARK: - Nesting

    @Test("64 levels of nesting parse; 65 are rejected at the 65th bracket")
    func nestingLimit() throws {
        let sixtyFour = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        var value = try JSONParser.parse(sixtyFour)
        var depth = 0
        while case .array(let elements) = value {
            depth += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(depth == 64)

        let sixtyFive = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(failure(sixtyFive) == "nesting deeper than 64 at byte 65")
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(failure(objects) == "nesting deeper than 64 at byte 321")
        let objectsOK = String(repeating: #"{"a":"#, count: 64) + "1" + String(repeating: "}", count: 64)
        #expect(failure(objectsOK) == nil)
    }

    // MARK: - Errors

    @Test("malformed text is rejected with the message and the byte where parsing stopped", arguments: [
        (#"{"a":1"#, "unexpected end of input at byte 7"),
        (#"{"a":"#, "unexpected end of input at byte 6"),
        (#"[1,2"#, "unexpected end of input at byte 5"),
        (#""abc"#, "unterminated string at byte 5"),
        (#""ab\"#, "unterminated string at byte 5"),
        ("", "unexpected end of input at byte 1"),
        ("   ", "unexpected end of input at byte 4"),
        (#"{"a":1} x"#, "unexpected text after the JSON value at byte 9"),
        (#"{"a":1}{"#, "unexpected text after the JSON value at byte 8"),
        ("01", "unexpected text after the JSON value at byte 2"),
        ("-01", "unexpected text after the JSON value at byte 3"),
        ("NaN", "unexpected character at byte 1"),
        ("Infinity", "unexpected character at byte 1"),
        ("-Infinity", "invalid number at byte 2"),
        ("+1", "unexpected character at byte 1"),
        (".5", "unexpected character at byte 1"),
        ("1.", "invalid number at byte 3"),
        ("1e", "invalid number at byte 3"),
        ("1e+", "invalid number at byte 4"),
        ("-", "invalid number at byte 2"),
        ("tru", "unexpected end of input at byte 1"),
        ("nul1", "invalid literal at byte 1"),
        ("[1,]", "unexpected character at byte 4"),
        ("[1 2]", "expected ',' or ']' at byte 4"),
        (#"{"a":1,}"#, "expected a member name at byte 8"),
        (#"{"a" 1}"#, "expected ':' at byte 6"),
        (#"{"a":1 "b":2}"#, "expected ',' or '}' at byte 8"),
        ("{1:2}", "expected a member name at byte 2"),
        ("{'a':1}", "expected a member name at byte 2"),
        (#""\x""#, "invalid escape at byte 4"),
        (#""\u12G4""#, "invalid \\u escape at byte 6"),
        (#""\u12"#, "invalid \\u escape at byte 4"),
        (#""\ud800""#, "unpaired surrogate at byte 8"),
        (#""\udc00""#, "unpaired surrogate at byte 8"),
        (#""\ud800\u0041""#, "unpaired surrogate at byte 14"),
        (#""\ud800x""#, "unpaired surrogate at byte 8"),
        ("\"a\u{01}b\"", "control character in string at byte 3"),
        ("\"a\nb\"", "control character in string at byte 3"),
        ("\"\\n\tb\"", "control character in string at byte 4"),
    ])
    func malformed(text: String, reason: String) {
        #expect(failure(text) == reason)
    }

    @Test("invalid UTF-8 inside a string is rejected, on the fast path and after an escape")
    func invalidUTF8() {
        // 0xC3 starts a two-byte sequence; 0x28 '(' is no continuation byte.
        #expect(failure([0x22, 0xC3, 0x28, 0x22]) == "invalid UTF-8 in string at byte 5")
        #expect(failure([0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22]) == "invalid UTF-8 in string at byte 7")
        // A lone continuation byte and a truncated sequence at the end of the string.
        #expect(failure([0x22, 0x80, 0x22]) == "invalid UTF-8 in string at byte 4")
        #expect(failure([0x7B, 0x22, 0x6B, 0xE2, 0x82, 0x22, 0x3A, 0x31, 0x7D]) == "invalid UTF-8 in string at byte 7")
        // The same bytes completed are valid: near miss.
        #expect(failure([0x22, 0xC3, 0xA9, 0x22]) == nil)
    }

    @Test("the error carries the 0-based offset and renders it 1-based")
    func errorShape() {
        do {
            _ = try JSONParser.parse(#"{"a":1} x"#)
            Issue.record("expected a syntax error")
        } catch {
            #expect(error == JSONSyntaxError(message: "unexpected text after the JSON value", offset: 8))
            #expect(error.description == "unexpected text after the JSON value at byte 9")
        }
    }

    @Test("a text denser in values than any record is refused before it is built; a long receipt-like array of objects is not")
    func valueBudget() throws {
        // 2,000 zeros in 4,010 bytes: more than one value per eight bytes (plus 1,024).
        let zeros = #"{"a":["# + Array(repeating: "0", count: 2_000).joined(separator: ",") + "]}"
        #expect(failure(Array(zeros.utf8)) == "more than 1524 values in 4007 bytes at byte 3051")
        // Its near miss: 2,000 in_app entries of three values each, far longer per value.
        let entries = Array(repeating: #"{"quantity":"1","product_id":"gems60"}"#, count: 2_000).joined(separator: ",")
        let receipt = try JSONParser.parse(#"{"in_app":["# + entries + "]}")
        #expect(receipt["in_app"]?.arrayValue?.count == 2_000)
        #expect(JSONParser.maximumValues(byteCount: 100 << 20) == 1 << 20)
    }
}
