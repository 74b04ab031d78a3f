import CSQLite
import Foundation

/// A failed SQLite call: SQLite's extended result code, its message, the SQL that failed, and
/// the operating system's error behind it (a full disk, a file too large), when there is one.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var message: String
    public var sql: String?
    public var systemErrno: Int32

    public init(code: Int32, message: String, sql: String?, systemErrno: Int32 = 0) {
        self.code = code
        self.message = message
        self.sql = sql
        self.systemErrno = systemErrno
    }

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_FULL`, ...), without the extended bits.
    public var primaryCode: Int32 { code & 0xFF }

    /// SQLite found the file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`) while it read it.
    public var isDamage: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if systemErrno != 0, primaryCode == SQLITE_IOERR || primaryCode == SQLITE_FULL || primaryCode == SQLITE_CANTOPEN {
            text += " (\(String(cString: strerror(systemErrno))))"
        }
        if let sql {
            // One line, whatever the statement's layout: cron mails and logs read it that way.
            let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            text += " - while executing `\(flat.count > 160 ? flat.prefix(160) + "…" : flat)`"
        }
        return text
    }
}
