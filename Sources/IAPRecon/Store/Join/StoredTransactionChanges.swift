/// What each join changed of the rows `transactions.csv` shows (`int_transaction_changes`), so a
/// night's report rewrites those rows and copies the others from the file it wrote before.
///
/// Joins are numbered in the order they commit, each in the transaction that writes its results.
/// An incremental join lists what `ScopeRows` found changed: transactions, and chains whose own
/// findings changed; one that changed nothing takes no number. A full rebuild lists `all`. Only
/// the last `kept` numbers stay listed one by one: older ones become an `all` at the newest
/// number dropped, so a report that missed more joins than that writes its file whole again.
enum StoredTransactionChanges {
    static let kept: Int64 = 8

    /// Lists an incremental join's changes under the next number.
    static func record(_ changes: TransactionChanges, in database: Database) throws {
        guard !changes.isEmpty else { return }
        let number = try next(database)
        let insert = try database.cached("INSERT INTO int_transaction_changes (join_number, kind, id) VALUES (?, ?, ?)")
        for id in changes.transactions.sorted() { try insert.insert([.integer(number), .text(Kind.transaction), .text(id)]) }
        for id in changes.chains.sorted() { try insert.insert([.integer(number), .text(Kind.chain), .text(id)]) }
        let dropped = number - kept
        try database.run("""
            DELETE FROM int_transaction_changes WHERE join_number <= ?1 AND NOT (join_number = ?1 AND kind = '\(Kind.all)')
            """, [.integer(dropped)])
        guard database.changes > 0 else { return }
        try database.run("INSERT OR IGNORE INTO int_transaction_changes (join_number, kind, id) VALUES (?, '\(Kind.all)', '')", [.integer(dropped)])
    }

    /// Lists a full rebuild: everything may have changed, and nothing before it is needed.
    static func recordAll(in database: Database) throws {
        let number = try next(database)
        try database.run("DELETE FROM int_transaction_changes")
        try database.run("INSERT INTO int_transaction_changes (join_number, kind, id) VALUES (?, '\(Kind.all)', '')", [.integer(number)])
    }

    private static func next(_ database: Database) throws -> Int64 {
        try database.scalar("SELECT coalesce(max(join_number), 0) + 1 FROM int_transaction_changes").integerValue
    }

    /// The kinds of listed ids.
    enum Kind {
        static let transaction = "transaction", chain = "chain", all = "all"
    }
}
