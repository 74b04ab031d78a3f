import Foundation

/// Why one input line was rejected; becomes a `rejects` row and a line of `rejects.csv`.
public struct LineReject: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }

    static func missing(_ field: String) -> LineReject { LineReject("missing required field '\(field)'") }

    static func wrongType(_ field: String, expected: String, got value: JSONElement) -> LineReject {
        LineReject("field '\(field)' must be \(expected), not \(value.typeName)")
    }

    static func badTime(_ field: String, _ value: JSONValue) -> LineReject {
        LineReject("bad time in '\(field)': \(Redaction.quoted(value))")
    }

    /// An ISO 8601 time (`2026-11-28T17:03:12`) without an offset: its zone is nowhere said, and
    /// reading it as UTC would move it by the writer's offset, unseen.
    static func timeWithoutOffset(_ field: String, _ value: JSONValue) -> LineReject {
        LineReject("bad time in '\(field)': \(Redaction.quoted(value)) (ISO 8601 without an offset: add Z or +hh:mm)")
    }

    static func badAmount(_ field: String, _ value: JSONValue) -> LineReject {
        LineReject("bad amount in '\(field)': \(Redaction.quoted(value))")
    }

    /// A key given twice in one JSON object with two values: other JSON readers take the last where
    /// `Fields` would take the first, so the line means two things.
    static func givenTwice(_ field: String) -> LineReject { LineReject("field '\(field)' given twice, with different values") }

    /// A column a CSV or Sales Report header names twice, whose two cells in a row differ: as a JSON key given twice.
    static func columnGivenTwice(_ column: String) -> LineReject { LineReject("column '\(column)' given twice, with different values") }
}

/// Typed field access on a JSON object, throwing the contract's reject reasons.
///
/// `path` prefixes field names in reasons (`response.receipt.in_app[2].`), so
/// a reject inside a nested Apple payload says where it is. It reads the object in place on
/// its text's tape (`JSONElement`), a value becoming text only when asked for, so it is good only
/// inside the call that handed the element out.
///
/// The path is kept in parts (the enclosing object's path, the key and the index) and spelled out
/// only when asked for: nearly every line is accepted, and only a reject's reason names a field.
struct Fields {
    let object: JSONElement
    /// The path of the object this one lies in (`response.receipt.`), or the whole path when `key`
    /// is empty and there is no `index`.
    private let parentPath: String
    private let key: String
    private let index: Int?

    init(_ object: JSONElement, path: String = "") {
        self.object = object
        parentPath = path
        key = ""
        index = nil
    }

    /// The object under `key` (element `index` of its array, when given) of the object whose path is `parentPath`.
    init(_ object: JSONElement, in parentPath: String, key: String, index: Int? = nil) {
        self.object = object
        self.parentPath = parentPath
        self.key = key
        self.index = index
    }

    /// Where the object lies, as field names in reasons are prefixed: `response.receipt.in_app[2].`.
    var path: String {
        if key.isEmpty, index == nil { return parentPath }
        return name + "."
    }

    /// The object's own name, its path without the last dot (`signed_transactions[0]`).
    var name: String { Self.name(in: parentPath, key: key, index: index) }

    /// The name of the value of `key` (element `index` of it, when given) in the object whose path is `parentPath`.
    static func name(in parentPath: String, key: String, index: Int?) -> String {
        guard let index else { return parentPath + key }
        return "\(parentPath)\(key)[\(index)]"
    }

    private func name(_ key: String) -> String { path + key }

    /// A present, non-null value. A key given twice with different values (`{"price":"0.99","price":"99.00"}`)
    /// is rejected: other JSON readers take its last value, iaprecon would take its first. Only keys a
    /// parser reads are looked up, so unknown keys stay ignored, repeated or not.
    func element(_ key: String) throws(LineReject) -> JSONElement? {
        guard let member = object.firstMember(key) else { return nil }
        if member.repeatedOtherwise { throw .givenTwice(name(key)) }
        if member.value.kind == .null { return nil }
        return member.value
    }

    /// `element`, materialized.
    func value(_ key: String) throws(LineReject) -> JSONValue? {
        try element(key)?.value
    }

    /// A present string that is not empty: a value of another type is rejected.
    func stringElement(_ key: String) throws(LineReject) -> JSONElement? {
        guard let element = try element(key) else { return nil }
        guard element.kind == .string else { throw .wrongType(name(key), expected: "a string", got: element) }
        return element.isEmptyString ? nil : element
    }

    func string(_ key: String) throws(LineReject) -> String? {
        try stringElement(key)?.text
    }

    func requiredString(_ key: String) throws(LineReject) -> String {
        guard let text = try string(key) else { throw .missing(name(key)) }
        return text
    }

    /// Apple's identifiers and enums: a string, or a number sent where a string is documented.
    func appleString(_ key: String) throws(LineReject) -> String? {
        guard let element = try element(key) else { return nil }
        switch element.kind {
        case .string: return element.isEmptyString ? nil : element.text
        case .number: return element.text
        default: throw .wrongType(name(key), expected: "a string", got: element)
        }
    }

    func requiredAppleString(_ key: String) throws(LineReject) -> String {
        guard let text = try appleString(key) else { throw .missing(name(key)) }
        return text
    }

    /// A time in any of the contract's forms. The zone-less `yyyy-MM-dd HH:mm:ss` is UTC (CONTRACT.md,
    /// "Times"); an ISO 8601 time, with its `T`, must carry its offset: one without is rejected.
    func time(_ key: String) throws(LineReject) -> Int64? {
        guard let element = try element(key) else { return nil }
        if element.isEmptyString { return nil }
        var zoneless = false
        guard let ms = Self.time(element, zoneless: &zoneless) else { throw .badTime(name(key), element.value) }
        if zoneless { throw .timeWithoutOffset(name(key), element.value) }
        return ms
    }

    /// `Timestamp.parse` of the element's value, read from its bytes unless an escape makes its text
    /// otherwise; `zoneless` is set for an ISO 8601 time (`T` or `t` between day and time) with no offset.
    private static func time(_ element: JSONElement, zoneless: inout Bool) -> Int64? {
        switch element.kind {
        case .number:
            return Timestamp.epochMilliseconds(bytes: element.bytes)
        case .string where !element.hasEscape:
            var noOffset = false
            let ms = Timestamp.parse(bytes: element.bytes, localOffsetMs: { _ in
                noOffset = true
                return 0
            })
            zoneless = noOffset && element.bytes.count > 10 && Timestamp.isISOSeparator(element.bytes[10])
            return ms
        default:
            guard case .string(let text) = element.value else { return Timestamp.parse(element.value) }
            var noOffset = false
            let ms = Timestamp.parse(text, localOffsetMs: { _ in
                noOffset = true
                return 0
            })
            zoneless = noOffset && Timestamp.isISOSeparator(text.utf8.dropFirst(10).first)
            return ms
        }
    }

    func requiredTime(_ key: String) throws(LineReject) -> Int64 {
        guard let ms = try time(key) else { throw .missing(name(key)) }
        return ms
    }

    /// A price: an exact decimal, not negative, within range (CONTRACT.md §1).
    func amount(_ key: String) throws(LineReject) -> Amount? {
        guard let value = try value(key) else { return nil }
        return try AmountRange.amount(value, field: name(key))
    }

    /// Apple's milliunits (V2 `price`): a whole number, within range and not negative (CONTRACT.md §1).
    func milliunits(_ key: String) throws(LineReject) -> Int64? {
        guard let value = try value(key) else { return nil }
        switch value {
        case .number(let text), .string(let text):
            if let milliunits = try AmountRange.milliunits(text, field: name(key)) { return milliunits }
        default: break
        }
        throw LineReject("bad number in '\(name(key))': \(Redaction.quoted(value))")
    }

    /// A whole number sent as a JSON number or a numeric string.
    func integer(_ key: String) throws(LineReject) -> Int64? {
        guard let value = try value(key) else { return nil }
        switch value {
        case .number(let text), .string(let text):
            if let integer = Int64(text) { return integer }
        default: break
        }
        throw LineReject("bad number in '\(name(key))': \(Redaction.quoted(value))")
    }

    /// The fields of the object under `key`, named under it (`response.`).
    func object(_ key: String) throws(LineReject) -> Fields? {
        guard let element = try element(key) else { return nil }
        guard element.kind == .object else { throw .wrongType(name(key), expected: "an object", got: element) }
        return Fields(element, in: path, key: key)
    }

    func array(_ key: String) throws(LineReject) -> JSONElement.Elements? {
        guard let element = try element(key) else { return nil }
        guard element.kind == .array else { throw .wrongType(name(key), expected: "an array", got: element) }
        return element.elements
    }
}
