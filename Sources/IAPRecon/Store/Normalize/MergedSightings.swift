/// The stored sightings, merged as they are read (`AppleTransactions`' rules): one transaction by
/// id, or every transaction a condition selects, in id order.
extension AppleTransactions {
    /// `transactionID` merged from its sightings; nil when Apple never showed it. The statement is
    /// compiled once per connection: the report asks this of every transaction whose product the
    /// catalog lacks, and of every consumption request, and compiling the query costs more than
    /// running it.
    static func merged(_ transactionID: String, in database: Database) throws -> Merged? {
        let statement = try database.cached(StoredSightings.selection(where: "a.transaction_id = ?1"))
        defer { statement.reset() }
        try statement.bind([.text(transactionID)])
        return try Cursor(bound: statement).next()
    }

    /// Steps through the transactions of the sightings a condition selects, in transaction id order
    /// (bytes, as SQLite orders text), one merged transaction at a time.
    final class Cursor: MergedTransactionCursor {
        private let statement: Statement
        private var hasRow: Bool

        /// A cursor before the first transaction. `condition` is on the sightings as `a` and must
        /// take a transaction's sightings all or none (`a.transaction_id IN ...`).
        convenience init(_ database: Database, where condition: String, _ arguments: [SQLValue] = []) throws {
            let statement = try Statement(database: database, sql: StoredSightings.selection(where: condition), persistent: false)
            try statement.bind(arguments)
            try self.init(bound: statement)
        }

        /// A cursor before the first transaction of a statement of `selection`, its arguments bound.
        fileprivate init(bound statement: Statement) throws {
            self.statement = statement
            hasRow = try statement.step()
        }

        /// The next transaction, merged from all its sightings; nil when none is left.
        func next() throws -> Merged? {
            guard hasRow else { return nil }
            var merging = try Merging(first: AppleTransaction(statement.row), at: StoredLine(statement.row))
            while try statement.step() {
                guard statement.withText(StoredSightings.Column.transactionID, { $0.elementsEqual(merging.merged.transactionID.utf8) }) else { return merging.finished() }
                merging.add(try AppleTransaction(statement.row), at: StoredLine(statement.row))
            }
            hasRow = false
            return merging.finished()
        }
    }
}
