/// Each user's first registration: the earliest by time, then by file order and line. Who signed
/// up when, with which device ids.
///
/// Not staged: attribution reads every user's first registration anyway, in user id order, and a
/// consumption answer looks up one user's. Both take it from the raw rows as they read them, so a
/// night's new sign-ups cost nothing before the report.
enum FirstRegistrations {
    typealias Column = FirstRegistrationColumn

    /// Every registration by user id (bytes, as SQLite orders text), then by the order that decides
    /// which comes first. Read file by file in the table's own order and sorted once: SQLite would
    /// rather walk the user id index, looking each row up in the table out of order, which costs
    /// several times the sort. `CROSS JOIN` keeps the files as the outer loop.
    static let inUserOrder = """
        SELECT \(Column.selectList)
        FROM files f CROSS JOIN raw_registrations__users r ON r.file_id = f.file_id
        ORDER BY r.user_id, r.ts_ms, f.path, r.line
        """

    /// Steps through the users in user id order, stopping once per user at their first registration.
    final class Cursor: StoredCursor {
        private let statement: Statement
        private var users = KeyRuns()

        init(_ database: Database) throws {
            statement = try database.cached(FirstRegistrations.inUserOrder)
            statement.reset()
        }

        /// The current user's first registration, after `step()` returned true (`Column`).
        var row: Row { statement.row }

        /// Moves to the next user's first registration: false when no user is left.
        func step() throws -> Bool {
            while try statement.step() {
                if statement.withText(Column.userID, { users.starts($0) }) { return true }
            }
            return false
        }

        /// Starts again from the first user (and lets the statement's read go).
        func reset() {
            statement.reset()
            users.reset()
        }
    }

    /// `user`'s first registration: its time and whether it named an IDFV; nil when they never registered.
    static func first(of user: String, in database: Database) throws -> (ms: Int64, hasIDFV: Bool)? {
        var first: (ms: Int64, hasIDFV: Bool)?
        try database.forEach("""
            SELECT r.ts_ms, r.idfv FROM raw_registrations__users r JOIN files f USING (file_id)
            WHERE r.user_id = ? ORDER BY r.ts_ms, f.path, r.line LIMIT 1
            """, [.text(user)]) { first = ($0.int(0), !$0.isNull(1)) }
        return first
    }
}

extension FirstRegistrationColumn: SelectedColumn {
    var sql: String { ["r.user_id", "r.ts_ms", "r.idfv", "r.idfa", "r.appsflyer_id"][rawValue] }
}
