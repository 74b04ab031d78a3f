import CSQLite

/// A failed SQLite call: SQLite's extended result code, its message, and the SQL that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var sql: String?

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`, ...), without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}
