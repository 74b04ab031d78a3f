/// A stored column's value: what the stages hand the store in a row and what a backend binds
/// and reads (SQLite's four storage classes less the float, which the store never keeps).
public enum SQLValue: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    /// Bytes kept as they are: what the store keeps of a device id (`DeviceIDPseudonyms`) and of an MMP
    /// row's event value, where text would spell each byte in two characters.
    case blob([UInt8])

    public init(_ text: String?) { self = text.map { .text($0) } ?? .null }
    public init(_ integer: Int64?) { self = integer.map { .integer($0) } ?? .null }
    public init(_ integer: Int?) { self = integer.map { .integer(Int64($0)) } ?? .null }

    /// Texts (ids, paths) as one JSON array parameter, which a query reads with `json_each` into an
    /// indexed `IN`: one statement whatever their number.
    static func textList(_ texts: [String]) -> SQLValue {
        .text("[" + texts.map(JSONWriter.quote).joined(separator: ",") + "]")
    }
}

extension Optional where Wrapped == SQLValue {
    /// A scalar query's integer (`Database.scalar`): 0 for no row, NULL or another type.
    var integerValue: Int64 {
        if case .integer(let value)? = self { return value }
        return 0
    }
}
