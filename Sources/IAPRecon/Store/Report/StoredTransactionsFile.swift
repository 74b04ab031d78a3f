/// What a night's report reads to patch `transactions.csv` instead of writing it whole: the joins'
/// changes since the file it wrote before (`int_transaction_changes`), each changed transaction by
/// its id, and the report's own record of that file (`fct_transactions_file`).
enum StoredTransactionsFile {
    typealias Kind = StoredTransactionChanges.Kind

    /// The number of the last join that listed changes (0 for none), and what the joins after
    /// `joinNumber` changed; nil changes when one of them may have changed every row.
    static func changes(after joinNumber: Int64, in database: Database) throws -> (latest: Int64, changes: TransactionChanges?) {
        let latest = try database.scalar("SELECT coalesce(max(join_number), 0) FROM int_transaction_changes").integerValue
        var changes: TransactionChanges? = TransactionChanges()
        try database.forEach("SELECT kind, id FROM int_transaction_changes WHERE join_number > ?", [.integer(joinNumber)]) { row in
            switch row.string(0) {
            case Kind.transaction: changes?.transactions.insert(row.string(1))
            case Kind.chain: changes?.chains.insert(row.string(1))
            default: changes = nil
            }
        }
        return (latest, changes)
    }

    /// `transactionID`'s resolved row in `ReportTransactionColumn`'s columns, if it has one.
    static func transaction(_ transactionID: String, in database: Database, _ body: (Row) throws -> Void) throws -> Bool {
        var found = false
        try database.forEach(transactionByID, [.text(transactionID)]) { row in
            found = true
            try body(row)
        }
        return found
    }

    /// Made once: a night looks up thousands of transactions by it.
    private static let transactionByID = "SELECT \(ReportTransactionColumn.selectList) FROM int_transactions_resolved WHERE transaction_id = ?"

    /// The file the last report recorded, if any.
    static func record(_ database: Database) throws -> TransactionsFileRecord? {
        var record: TransactionsFileRecord?
        try database.forEach("SELECT join_number, settings, path, device, inode, bytes, modified_ns FROM fct_transactions_file") { row in
            record = TransactionsFileRecord(joinNumber: row.int(0), settings: row.string(1), path: row.string(2),
                                            file: FileIdentity(device: row.int(3), inode: row.int(4), bytes: row.int(5), modifiedNs: row.int(6)))
        }
        return record
    }

    /// Keeps `record` in place of the last one.
    static func save(_ record: TransactionsFileRecord, in database: Database) throws {
        try database.transaction {
            try database.run("DELETE FROM fct_transactions_file")
            try database.run("INSERT INTO fct_transactions_file VALUES (?, ?, ?, ?, ?, ?, ?)", [
                .integer(record.joinNumber), .text(record.settings), .text(record.path), .integer(record.file.device), .integer(record.file.inode),
                .integer(record.file.bytes), .integer(record.file.modifiedNs),
            ])
        }
    }
}
