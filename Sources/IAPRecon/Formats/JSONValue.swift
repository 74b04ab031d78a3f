/// A parsed JSON value that keeps numbers as their source text.
///
/// Numbers stay text so that money (`"0.99"`, Apple's milliunit `price`) and
/// epoch milliseconds with a fraction (`1697679936049.7297`) convert exactly,
/// never through `Double`. Objects keep their keys in source order; lookups
/// are linear, which beats hashing for the ten-odd keys a log line carries.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// A short name of the value's type, for reject reasons.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object's members in source order.
public struct JSONObject: Sendable, Equatable {
    public var members: [(key: String, value: JSONValue)]

    public init(members: [(key: String, value: JSONValue)]) {
        self.members = members
    }

    /// The first member named `key`.
    ///
    /// Names of another length are passed over on their byte count, which a string holds: most
    /// names a lookup meets are not the one it wants, and a full comparison of two different
    /// strings costs far more than that.
    public subscript(key: String) -> JSONValue? {
        let length = key.utf8.count
        for member in members where member.key.utf8.count == length && member.key == key { return member.value }
        return nil
    }

    /// The first member named `key`, and whether a later member of that name holds another value.
    ///
    /// JSON readers differ on a name given twice (Python's and JavaScript's keep the last), so a
    /// reader that must not take one value where another tool takes the other asks this. It passes
    /// over names as `subscript` does, and goes on past the first to the end of the members.
    public func firstMember(_ key: String) -> (value: JSONValue, repeatedOtherwise: Bool)? {
        let length = key.utf8.count
        var first: JSONValue?
        for member in members where member.key.utf8.count == length && member.key == key {
            guard let first else {
                first = member.value
                continue
            }
            if member.value != first { return (first, true) }
        }
        return first.map { ($0, false) }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
