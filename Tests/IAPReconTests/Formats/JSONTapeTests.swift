import Testing
@testable import IAPRecon

/// The tape the JSON parser writes and the in-place reading of it (`JSONElement`): a lookup finds what
/// the materialized `JSONObject` finds, and one tape read line after line reads each as a fresh one would.
@Suite("JSON tape")
struct JSONTapeTests {
    /// `body` with the value of `text`, read onto `tape`.
    private func withRoot<Result>(_ text: String, tape: JSONTape = JSONTape(), _ body: (JSONElement) throws -> Result) throws -> Result {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            try tape.read(buffer)
            return try tape.withRoot(in: buffer, body)
        }
    }

    /// What `firstMember` finds for `key` in `text`, materialized, beside what `JSONObject.firstMember` finds.
    private func lookups(_ text: String, _ key: String) throws -> (tape: (JSONValue, Bool)?, object: (JSONValue, Bool)?) {
        let tape = try withRoot(text) { root in root.firstMember(key).map { ($0.value.value, $0.repeatedOtherwise) } }
        let object = try JSONParser.parse(text).objectValue?.firstMember(key).map { ($0.value, $0.repeatedOtherwise) }
        return (tape, object)
    }

    @Test("a lookup steps over nested values, empty or not, to the member it names", arguments: [
        (#"{"a":{"x":1,"b":0},"b":2}"#, "b", JSONValue.number("2")),
        (#"{"a":[{"b":1}],"b":2}"#, "b", .number("2")),
        (#"{"a":{},"b":[],"c":3}"#, "c", .number("3")),
        (#"{"a":[],"b":{"c":[1,[2,{"d":3}]]},"d":"x"}"#, "d", .string("x")),
        (#"{"a":1,"b":"2","c":null}"#, "c", .null),
        (#"{"a":1,"b":{"c":true}}"#, "b", .object(JSONObject(members: [("c", .bool(true))]))),
    ] as [(String, String, JSONValue)])
    func lookupSkipsNestedValues(text: String, key: String, expected: JSONValue) throws {
        let found = try lookups(text, key)
        #expect(found.tape?.0 == expected)
        #expect(found.tape?.1 == false)
        #expect(found.object?.0 == expected)
    }

    @Test("a name is matched by its text: an escape in it is decoded; bytes that only look alike do not match")
    func escapedNames() throws {
        #expect(try lookups(#"{"us\u0065r_id":"u1"}"#, "user_id").tape?.0 == .string("u1"))
        #expect(try lookups(#"{"user\/id":"u1"}"#, "user/id").tape?.0 == .string("u1"))
        #expect(try lookups(#"{"\u00e9t\u00e9":1}"#, "été").tape?.0 == .number("1"))
        // Its bytes are `user\_id`, its text too (an escaped backslash): not `user_id`.
        #expect(try lookups(#"{"user\\_id":"u1"}"#, "user_id").tape == nil)
        #expect(try lookups(#"{"user\\_id":"u1"}"#, #"user\_id"#).tape?.0 == .string("u1"))
    }

    @Test("a name given twice: the first value, and whether a later one differs as JSON values differ", arguments: [
        (#"{"a":"x","a":"x"}"#, false),
        (#"{"a":"x","a":"\u0078"}"#, false),
        (#"{"a":{"b":[1, 2]},"b":0,"a":{ "b" : [1,2] }}"#, false),
        (#"{"a":"x","a":"y"}"#, true),
        (#"{"a":1,"a":1.0}"#, true),
        (#"{"a":{"b":1},"a":{"b":1,"c":2}}"#, true),
        (#"{"a":null,"a":"x"}"#, true),
        (#"{"a":"x","\u0061":"y"}"#, true),
    ])
    func repeatedNames(text: String, differs: Bool) throws {
        let found = try lookups(text, "a")
        #expect(found.tape?.1 == differs)
        #expect(found.object?.1 == differs)
        #expect(found.tape?.0 == found.object?.0)
    }

    /// An object of `count` members `n0`…, for a name given twice among many.
    private static func members(_ count: Int) -> String { (0..<count).map { #""n\#($0)":\#($0)"# }.joined(separator: ",") }

    @Test("a name given twice is caught wherever the second stands: after the first match, past nested values, among many names, escaped", arguments: [
        (#"{"a":"x","b":1,"c":2,"a":"y"}"#, true),
        (#"{"b":1,"a":"x","a":"y"}"#, true),
        (#"{"b":1,"a":"x","c":{"a":"z"},"a":"y"}"#, true),
        (#"{"a":"x","c":{"d":[1,{"e":2}]},"f":[],"a":"y"}"#, true),
        (#"{"c":{"d":[1,{"a":2}]},"a":"x","g":{"h":1},"a":"y"}"#, true),
        (#"{"a":"x",\#(members(100)),"a":"y"}"#, true),
        (#"{\#(members(100)),"a":"x","n50":0,"a":"y"}"#, true),
        (#"{"b":1,"a":"x","c":2,"\u0061":"y"}"#, true),
        (#"{"b":1,"\u0061":"x","c":2,"a":"y"}"#, true),
        (#"{"b":1,"a":"x","c":{"a":"z","a":"w"},"d":2}"#, false),
        (#"{"c":{"a":"z"},"a":"x",\#(members(100))}"#, false),
    ])
    func repeatedNamesAnywhere(text: String, differs: Bool) throws {
        let found = try lookups(text, "a")
        #expect(found.tape?.1 == differs)
        #expect(found.object?.1 == differs)
        #expect(found.tape?.0 == found.object?.0)
    }

    @Test("a name given twice inside a nested object is caught there, whatever the objects around it hold", arguments: [
        #"{"o":{"a":"x","b":1,"a":"y"}}"#,
        #"{"a":"x","o":{"a":"x","c":[{"a":1}],"a":"y"},"b":2}"#,
        #"{"o":{"b":1,"a":"x","p":{"q":0},"\u0061":"y"},"a":"x"}"#,
        #"[{"b":0},{"o":{"a":"x","b":1,"a":"y"}}]"#,
    ])
    func repeatedNamesNested(text: String) throws {
        func object(_ element: JSONElement) -> JSONElement? {
            if let o = element.firstMember("o")?.value { return o }
            return element.elements.lazy.compactMap { $0.firstMember("o")?.value }.first
        }
        let differs = try withRoot(text) { root in object(root)?.firstMember("a")?.repeatedOtherwise }
        #expect(differs == true)
    }

    @Test("the materialized value of every kind of text equals the parsed one, escapes decoded")
    func materialized() throws {
        let text = #"{"a":[1,-2.5e3,true,false,null,"x\ny\u00e9\ud83d\ude00"],"\u0062":{"c":{}},"d":[],"é":"é"}"#
        let value = try withRoot(text) { $0.value }
        #expect(value == .object(JSONObject(members: [
            ("a", .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null, .string("x\nyé😀")])),
            ("b", .object(JSONObject(members: [("c", .object(JSONObject(members: [])))]))), ("d", .array([])), ("é", .string("é")),
        ])))
        #expect(value.objectValue?["b"] != nil)
    }

    /// The value `read` gives, or the error it throws, as text.
    private func outcome(_ read: () throws -> JSONValue) -> String {
        do { return "\(try read())" } catch { return "\(error)" }
    }

    @Test("one tape read again: a short text after a long one, or after a failed one, reads as it would on a fresh tape")
    func reusedTape() throws {
        let tape = JSONTape()
        let long = #"{"a":[1,2,3,{"b":"c\n","d":[4,5,6]}],"e":"f","g":{"h":{"i":"j"}},"k":"\u00e9"}"#
        let short = #"{"e":"x"}"#
        for text in [long, short, long, #"[1,2,3,{"a":"b"},"#, short, "7", short] {
            #expect(outcome { try withRoot(text, tape: tape) { $0.value } } == outcome { try JSONParser.parse(text) }, "\(text)")
        }
        try withRoot(long, tape: tape) { _ in }
        #expect(try withRoot(short, tape: tape) { $0.firstMember("a") } == nil)
        #expect(try withRoot(short, tape: tape) { $0.firstMember("e")?.value.value } == .string("x"))
    }

    @Test("the UTF-8 check judges every sequence of up to four bytes as String(validating:) does")
    func utf8Check() {
        // Each boundary of the lead and continuation ranges (Unicode table 3-7), and bytes outside them.
        let bytes: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
                              0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var sequences: [[UInt8]] = [[]]
        var mismatches: [[UInt8]] = []
        for _ in 1...4 {
            sequences = sequences.flatMap { sequence in bytes.map { sequence + [$0] } }
            for sequence in sequences {
                let valid = sequence.withUnsafeBufferPointer { JSONParser.isValidUTF8($0) }
                if valid != (String(validating: sequence, as: UTF8.self) != nil) { mismatches.append(sequence) }
            }
        }
        #expect(mismatches.isEmpty)
    }
}
