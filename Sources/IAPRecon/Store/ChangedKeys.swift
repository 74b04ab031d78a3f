/// What changed since the last join: the keys of every row a new or replaced file added or took away.
///
/// The only code that touches `dirty_keys`: ingest records through it, the join reads and clears
/// it, `history` asks whether anything waits.
///
/// Ingest records them in `dirty_keys` in the same transaction as the file's rows, so a run killed
/// between stages leaves them for the next one. The join recomputes only what those keys reach,
/// and clears them when it commits. The kind `all` asks for a full rebuild: a fresh
/// store, a store from before this table, or a changed product catalog (prices and types reach every
/// transaction).
public enum ChangedKeys {
    /// Records the keys of file `fileID`'s rows; called after a file's rows are inserted and before they are deleted.
    static func recordRows(of fileID: Int64, in database: Database) throws {
        if try isFullRebuildPending(database) { return }
        try database.execute(keysOfFileSQL(fileID: String(fileID)))
    }

    /// True when the next normalize and join rebuild everything.
    public static func isFullRebuildPending(_ database: Database) throws -> Bool {
        try database.scalar("SELECT count(*) FROM dirty_keys WHERE kind = 'all'").integerValue > 0
    }

    /// What a full rebuild is asked for by, kept as the key of the kind `all`: the run's log says it.
    enum FullRebuildCause: String {
        /// A migration or a fresh store, whose text (frozen) records no cause.
        case storeChange = ""
        case catalog
        case deviceIDKey = "device-id key"

        var description: String {
            switch self {
            case .storeChange: "a store migration"
            case .catalog: "a new or changed product catalog"
            case .deviceIDKey: "a new device-id key"
            }
        }
    }

    static func requestFullRebuild(_ database: Database, for cause: FullRebuildCause) throws {
        try database.run("INSERT OR IGNORE INTO dirty_keys VALUES ('all', ?)", [.text(cause.rawValue)])
    }

    /// Why the next join must rebuild everything, each cause once, said as the run's log says it;
    /// empty when it need not.
    static func fullRebuildCauses(_ database: Database) throws -> [String] {
        var causes: [String] = []
        try database.forEach("SELECT key FROM dirty_keys WHERE kind = 'all' ORDER BY key") { row in
            let key = row.string(0)
            causes.append(FullRebuildCause(rawValue: key)?.description ?? key)
        }
        return causes
    }

    /// Empties the log: the join has recomputed everything it names.
    static func clear(_ database: Database) throws {
        try database.execute("DELETE FROM dirty_keys")
    }

    /// True when nothing changed since the last join.
    static func isEmpty(_ database: Database) throws -> Bool {
        try database.scalar("SELECT count(*) FROM dirty_keys").integerValue == 0
    }

    /// Every recorded key, with its kind (keys of kinds this build does not know are left out).
    static func all(in database: Database) throws -> [(kind: KeyKind, key: String)] {
        var keys: [(KeyKind, String)] = []
        try database.forEach("SELECT kind, key FROM dirty_keys") { row in
            if let kind = KeyKind(rawValue: row.string(0)) { keys.append((kind, row.string(1))) }
        }
        return keys
    }

    /// The keys of `kind`.
    static func keys(_ kind: KeyKind, in database: Database) throws -> [String] {
        var keys: [String] = []
        try database.forEach("SELECT key FROM dirty_keys WHERE kind = ?", [.text(kind.rawValue)]) { keys.append($0.string(0)) }
        return keys
    }

    /// The keys one file's raw rows touch, and what they link to: a delivery's or an order's user,
    /// a sighting's chain, `appAccountToken` and sender. A replaced file's lines are gone before the
    /// join looks for what they linked, and no copy of them remembers it. A catalog file touches
    /// everything.
    static func keysOfFileSQL(fileID id: String) -> String {
        """
        INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_server__deliveries WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM raw_server__deliveries WHERE file_id = \(id) AND order_id IS NOT NULL;
        INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM raw_server__deliveries WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM raw_server__orders WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM raw_server__orders WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_server__revocations WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_receipts__verifications
          WHERE file_id = \(id) AND transaction_id IS NOT NULL;
        INSERT OR IGNORE INTO dirty_keys SELECT 'order', order_id FROM raw_receipts__verifications
          WHERE file_id = \(id) AND order_id IS NOT NULL;
        INSERT OR IGNORE INTO dirty_keys SELECT 'transaction', transaction_id FROM raw_apple__transactions WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'chain', coalesce(original_transaction_id, transaction_id) FROM raw_apple__transactions
          WHERE file_id = \(id);
        INSERT OR IGNORE INTO dirty_keys SELECT 'order', app_account_token FROM raw_apple__transactions
          WHERE file_id = \(id) AND app_account_token IS NOT NULL;
        INSERT OR IGNORE INTO dirty_keys SELECT 'user', user_id FROM raw_apple__transactions
          WHERE file_id = \(id) AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL);
        INSERT OR IGNORE INTO dirty_keys SELECT 'registration', '\(id)' FROM raw_registrations__users WHERE file_id = \(id) LIMIT 1;
        INSERT OR IGNORE INTO dirty_keys SELECT 'mmp_file', '\(id)' FROM raw_mmp__events WHERE file_id = \(id) LIMIT 1;
        INSERT OR IGNORE INTO dirty_keys SELECT 'sales_day', day FROM raw_apple__sales WHERE file_id = \(id) AND day IS NOT NULL;
        INSERT OR IGNORE INTO dirty_keys SELECT 'all', '\(FullRebuildCause.catalog.rawValue)' FROM raw_catalog__products
          WHERE file_id = \(id) LIMIT 1;
        """
    }

}
