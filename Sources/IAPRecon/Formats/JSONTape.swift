import Foundation

/// One value of a parsed JSON text, or one member's name, on a `JSONTape`.
///
/// An object's tokens are its own, then each member's name and value in source order; an array's
/// are its own, then its elements'. A token says where its bytes lie in the text, and where the
/// next value's token is, so a lookup steps over a whole value, however large, in one move.
struct JSONToken {
    enum Kind: UInt8 {
        case null, `true`, `false`, number, string, array, object
    }

    /// A string's bytes between its quotes; any other value's from its first byte past its last.
    var start: Int
    var end: Int
    /// The index of the first token after this value's own and its contents'.
    var next: Int32
    /// A container's members or elements.
    var count: Int32 = 0
    /// A member name's digest (`JSONObject.nameDigest`) of its text; an object's, the union of its
    /// names' bits (`nameBit`), so a lookup of a name whose bit is clear is answered without a scan;
    /// 0 for any other token.
    var digest: UInt32 = 0
    var kind: Kind
    /// Whether a string holds an escape, so that its text differs from its bytes.
    var hasEscape = false
    /// Whether each of a container's values is a single token (a scalar or an empty container): an
    /// object's names are then every other token, and a lookup steps from one to the next without
    /// reading the value between.
    var isFlat = false
    /// Whether two of an object's member names may be one text: set when two share a digest. An
    /// object without it names each member once, so a lookup stops at its first match, where one
    /// with it goes on to the end to catch a name given twice with another value.
    var mayRepeatName = false

    /// The one bit of 32 that stands for names of `digest` in an object's `digest`.
    static func nameBit(_ digest: UInt32) -> UInt32 {
        1 << ((digest &* 0x9E37_79B1) >> 27)
    }

    init(kind: Kind, start: Int, end: Int, next: Int) {
        self.kind = kind
        self.start = start
        self.end = end
        self.next = Int32(truncatingIfNeeded: next)
    }
}

/// The parsed form of one JSON text at a time: a flat array of `JSONToken`s over the text's bytes.
///
/// Ingest reads each line through one (`JSONElement`), so a value becomes a `String` only when a
/// parser asks for it, and a JWS's payload is decoded from the line's bytes as they lie. A worker
/// keeps one tape for all its lines: each reuses the storage of the last, and the JWS payloads of
/// a line are read into the tapes behind it (`inner`). A tape is one worker's own: it is not
/// `Sendable`, and is never shared.
final class JSONTape {
    private var tokens: [JSONToken] = []
    /// Where the parser decodes escaped strings, kept for its storage.
    private var scratch: [UInt8] = []
    /// The bytes of the JWS payload this tape read last (`readJWSPayload`).
    private var payload: [UInt8] = []
    /// The text of a JWS whose string held an escape, decoded (`JSONElement.withJWSPayload`).
    fileprivate var jwsText: [UInt8] = []
    /// The tape for the JWS payloads inside this tape's text, made when one is first read.
    private var inner: JSONTape?

    init() {}

    /// Parses `text`, a complete JSON text, into this tape, in place of what it held.
    func read(_ text: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) {
        var parser = JSONParser(bytes: text, tokens: tokens, scratch: scratch)
        tokens = []
        scratch = []
        defer {
            tokens = parser.tokens
            scratch = parser.scratch
        }
        try parser.parseText()
    }

    /// Calls `body` with the value of the text this tape read last, which is `text`.
    func withRoot<Result, Failure: Error>(
        in text: UnsafeBufferPointer<UInt8>, _ body: (JSONElement) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try tokens.withUnsafeBufferPointer { tokens throws(Failure) in
            try body(JSONElement(source: text, tokens: tokens, index: 0, tape: self))
        }
    }

    /// Decodes the payload of the JWS compact string `jws` and parses it into this tape; it must be an object.
    func readJWSPayload(_ jws: UnsafeBufferPointer<UInt8>) throws(JWSError) {
        // The middle of exactly three dot-separated parts.
        guard let (first, second) = JWS.dots(in: jws), second > first + 1 else { throw .notThreeParts }
        guard Base64URL.decode(UnsafeBufferPointer(rebasing: jws[(first + 1)..<second]), into: &payload) else { throw .badBase64 }
        let isObject = try payload.withUnsafeBufferPointer { text throws(JWSError) in
            do throws(JSONSyntaxError) { try read(text) } catch { throw .payload(error) }
            return tokens.first?.kind == .object
        }
        guard isObject else { throw .payloadNotObject }
    }

    /// Calls `body` with the JWS payload this tape read last (`readJWSPayload`).
    func withPayloadRoot<Result, Failure: Error>(_ body: (JSONElement) throws(Failure) -> Result) throws(Failure) -> Result {
        try payload.withUnsafeBufferPointer { text throws(Failure) in try withRoot(in: text, body) }
    }

    /// The tape for the JWS payloads inside this one's text.
    fileprivate var innerTape: JSONTape {
        if let inner { return inner }
        let made = JSONTape()
        inner = made
        return made
    }
}

/// One value on a `JSONTape`, read in place: a lookup compares names' bytes, and a value's text
/// is made only when asked for.
///
/// It points into the text and the tape, so it lives only inside the `withRoot` (or
/// `withJWSPayload`) call that handed it out.
struct JSONElement {
    /// The JSON text the tape was read from.
    let source: UnsafeBufferPointer<UInt8>
    let tokens: UnsafeBufferPointer<JSONToken>
    let index: Int
    /// The tape `tokens` belong to, for the JWS payloads inside the text; it outlives the element,
    /// as `tokens` do.
    unowned(unsafe) let tape: JSONTape

    private var token: JSONToken { tokens[index] }

    var kind: JSONToken.Kind { token.kind }

    /// The value's bytes: a string's between its quotes (escapes not decoded), a number's text.
    var bytes: UnsafeBufferPointer<UInt8> {
        let token = token
        return UnsafeBufferPointer(rebasing: source[token.start..<token.end])
    }

    /// Whether this is a string that holds an escape, so that its text differs from `bytes`.
    var hasEscape: Bool { token.hasEscape }

    /// Whether this is the empty string.
    var isEmptyString: Bool { kind == .string && token.start == token.end }

    /// A short name of the value's type, as `JSONValue.typeName`.
    var typeName: String {
        switch kind {
        case .null: "null"
        case .true, .false: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The text of a string or a number, escapes decoded; nil for any other value.
    var text: String? {
        let token = token
        switch token.kind {
        case .number:
            return String(decoding: bytes, as: UTF8.self)
        case .string:
            return token.hasEscape ? JSONParser.decodedString(source, quote: token.start - 1) : String(decoding: bytes, as: UTF8.self)
        default:
            return nil
        }
    }

    /// The value in its materialized form.
    var value: JSONValue {
        switch kind {
        case .null: .null
        case .true: .bool(true)
        case .false: .bool(false)
        case .number: .number(text ?? "")
        case .string: .string(text ?? "")
        case .array: .array(elements.map(\.value))
        case .object: .object(JSONObject(parsed: memberValues))
        }
    }

    private var memberValues: [JSONObject.Member] {
        var members: [JSONObject.Member] = []
        members.reserveCapacity(Int(token.count))
        var name = index + 1
        while name < Int(token.next) {
            let value = element(at: name + 1)
            members.append(JSONObject.Member(key: element(at: name).text ?? "", value: value.value, nameDigest: tokens[name].digest))
            name = Int(tokens[name + 1].next)
        }
        return members
    }

    private func element(at index: Int) -> JSONElement {
        JSONElement(source: source, tokens: tokens, index: index, tape: tape)
    }

    /// An array's elements in order; none for any other value.
    var elements: Elements { Elements(array: self) }

    struct Elements: Sequence, IteratorProtocol {
        private let array: JSONElement
        private var position: Int
        private let end: Int

        fileprivate init(array: JSONElement) {
            self.array = array
            position = array.index + 1
            end = array.kind == .array ? Int(array.tokens[array.index].next) : position
        }

        mutating func next() -> JSONElement? {
            guard position < end else { return nil }
            let element = array.element(at: position)
            position = Int(array.tokens[position].next)
            return element
        }
    }

    /// The first member named `key` when this is an object, and whether a later member of that
    /// name holds another value (`JSONObject.firstMember`).
    ///
    /// Names are compared as bytes, after their digests; a name with an escape by its text. Two
    /// members of one name are compared as materialized values, which JSON texts seldom need. In an
    /// object whose names are all different (`JSONToken.mayRepeatName`) the first match is the only one.
    func firstMember(_ key: String) -> (value: JSONElement, repeatedOtherwise: Bool)? {
        guard kind == .object else { return nil }
        let digest = JSONObject.nameDigest(key)
        guard token.digest & JSONToken.nameBit(digest) != 0 else { return nil }
        let end = Int(token.next)
        let isFlat = token.isFlat
        let mayRepeatName = token.mayRepeatName
        var first: JSONElement?
        var name = index + 1
        while name < end {
            let value = name + 1
            if tokens[name].digest == digest, nameMatches(at: name, key) {
                if let first {
                    if element(at: value).value != first.value { return (first, true) }
                } else {
                    first = element(at: value)
                    if !mayRepeatName { break }
                }
            }
            name = isFlat ? value + 1 : Int(tokens[value].next)
        }
        return first.map { ($0, false) }
    }

    private func nameMatches(at name: Int, _ key: String) -> Bool {
        let name = element(at: name)
        if name.hasEscape { return name.text == key }
        let bytes = name.bytes
        // The key's bytes are borrowed where they lie: a copy to call `withUTF8` on would retain and
        // release the key for every name compared.
        return key.utf8.withContiguousStorageIfAvailable { key in
            guard key.count == bytes.count else { return false }
            guard let keyBase = key.baseAddress, let nameBase = bytes.baseAddress else { return true }
            return memcmp(keyBase, nameBase, key.count) == 0
        } ?? key.utf8.elementsEqual(bytes)
    }

    /// Calls `body` with the text of the JWS compact string this string holds and its payload,
    /// decoded from this text's bytes as they lie (or, for a string with an escape, from its text)
    /// into the tape behind this one; a JWS that cannot be read is `failure`'s to word.
    func withJWSPayload<Result, Failure: Error>(
        failure: (JWSError) -> Failure,
        _ body: (_ jws: UnsafeBufferPointer<UInt8>, _ payload: JSONElement) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let inner = tape.innerTape
        func read(_ jws: UnsafeBufferPointer<UInt8>) throws(Failure) -> Result {
            do { try inner.readJWSPayload(jws) } catch { throw failure(error) }
            return try inner.withPayloadRoot { payload throws(Failure) in try body(jws, payload) }
        }
        guard hasEscape else { return try read(bytes) }
        JSONParser.decodeString(source, quote: token.start - 1, into: &inner.jwsText)
        return try inner.jwsText.withUnsafeBufferPointer { jws throws(Failure) in try read(jws) }
    }
}
