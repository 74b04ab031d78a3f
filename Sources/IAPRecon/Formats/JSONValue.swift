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
    /// One member: its name, its value, and its name's digest (`JSONObject.nameDigest`).
    public struct Member: Sendable {
        public let key: String
        public let value: JSONValue
        /// Held beside the value, where the member's storage has room for it anyway, so a lookup
        /// passes over a member of another name on one integer comparison and no string's.
        let nameDigest: UInt32

        init(key: String, value: JSONValue, nameDigest: UInt32) {
            self.key = key
            self.value = value
            self.nameDigest = nameDigest
        }
    }

    public private(set) var members: [Member]

    public init(members: [(key: String, value: JSONValue)]) {
        self.members = members.map { Member(key: $0.key, value: $0.value, nameDigest: Self.nameDigest($0.key)) }
    }

    /// Members whose digests the parser took from the names' bytes as it read them.
    init(parsed members: [Member]) {
        self.members = members
    }

    /// A name's length and its first, middle and last bytes in one integer: two names of one
    /// digest may still differ, but two of different digests always do. Most names a lookup meets
    /// are not the one it wants, and comparing two strings costs far more than two integers.
    static func nameDigest(_ name: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let first = name.first, let last = name.last else { return 0 }
        let length = UInt32(truncatingIfNeeded: min(name.count, 0xFF))
        return length << 24 | UInt32(first) << 16 | UInt32(name[name.count / 2]) << 8 | UInt32(last)
    }

    static func nameDigest(_ name: String) -> UInt32 {
        name.utf8.withContiguousStorageIfAvailable { nameDigest($0) } ?? Array(name.utf8).withUnsafeBufferPointer { nameDigest($0) }
    }

    /// The first member named `key`.
    public subscript(key: String) -> JSONValue? {
        let digest = Self.nameDigest(key)
        for member in members where member.nameDigest == digest && member.key == key { return member.value }
        return nil
    }

    /// The first member named `key`, and whether a later member of that name holds another value.
    ///
    /// JSON readers differ on a name given twice (Python's and JavaScript's keep the last), so a
    /// reader that must not take one value where another tool takes the other asks this. It passes
    /// over names as `subscript` does, and goes on past the first to the end of the members.
    public func firstMember(_ key: String) -> (value: JSONValue, repeatedOtherwise: Bool)? {
        let digest = Self.nameDigest(key)
        var first: JSONValue?
        for member in members where member.nameDigest == digest && member.key == key {
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
