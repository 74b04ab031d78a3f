/// Numbered schema migrations; each runs once, in order, in one transaction.
///
/// The store records applied migrations in `schema_migrations`. A store
/// written by a newer iaprecon (a migration number this build does not know)
/// is refused rather than guessed at.
public enum Schema {
    public static let migrations: [(id: Int, sql: String)] = [
        (1, """
            CREATE TABLE files (
              file_id INTEGER PRIMARY KEY,
              path TEXT NOT NULL UNIQUE,
              source TEXT NOT NULL,
              content_hash TEXT NOT NULL,
              bytes INTEGER NOT NULL,
              lines_read INTEGER NOT NULL,
              accepted INTEGER NOT NULL,
              rejected INTEGER NOT NULL,
              blank INTEGER NOT NULL,
              ignored INTEGER NOT NULL,
              ingested_ms INTEGER NOT NULL
            );
            CREATE TABLE rejects (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
              line INTEGER NOT NULL,
              reason TEXT NOT NULL,
              text TEXT NOT NULL,
              PRIMARY KEY (file_id, line)
            ) WITHOUT ROWID;
            CREATE TABLE runs (
              run_id INTEGER PRIMARY KEY,
              command TEXT NOT NULL,
              started_ms INTEGER NOT NULL,
              ended_ms INTEGER,
              status TEXT NOT NULL,
              as_of_ms INTEGER,
              lines_read INTEGER,
              findings INTEGER,
              message TEXT
            );
            """
            + RawTable.firstMigration.map(\.createSQL).joined(separator: "\n")
            + """

            CREATE INDEX raw_deliveries_by_transaction ON raw_server__deliveries(transaction_id);
            CREATE INDEX raw_deliveries_by_user ON raw_server__deliveries(user_id);
            CREATE INDEX raw_orders_by_user ON raw_server__orders(user_id);
            CREATE INDEX raw_orders_by_order ON raw_server__orders(order_id);
            CREATE INDEX raw_revocations_by_transaction ON raw_server__revocations(transaction_id);
            CREATE INDEX raw_apple_by_transaction ON raw_apple__transactions(transaction_id);
            CREATE INDEX raw_verifications_by_user ON raw_receipts__verifications(user_id);
            CREATE INDEX raw_registrations_by_user ON raw_registrations__users(user_id);
            """),
        // Normalize reads the raw tables whole, so their secondary indexes only slowed ingest;
        // lookups go to the stg/int/fct tables, which carry the indexes `history` needs.
        (2, """
            DROP INDEX raw_deliveries_by_transaction;
            DROP INDEX raw_deliveries_by_user;
            DROP INDEX raw_orders_by_user;
            DROP INDEX raw_orders_by_order;
            DROP INDEX raw_apple_by_transaction;
            DROP INDEX raw_verifications_by_user;
            CREATE INDEX raw_revocations_by_user ON raw_server__revocations(user_id);
            """),
        // Incremental nights: the keys new files touch, each file's latest event time (the as-of
        // without scanning every table) and modification time (unchanged files are not read again),
        // and the raw indexes that rebuild one key's normalized rows.
        // The first run after this migration rebuilds everything once.
        (3, """
            CREATE TABLE dirty_keys (kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID;
            INSERT INTO dirty_keys VALUES ('all', '');
            ALTER TABLE files ADD COLUMN latest_ms INTEGER;
            ALTER TABLE files ADD COLUMN latest_mmp_wall_ms INTEGER;
            ALTER TABLE files ADD COLUMN mtime_ns INTEGER;
            \(ChangedKeys.latestTimesSQL(where: "1"));
            \(RawIndexes.added3.joined(separator: ";\n"));
            """),
        // Apple's Summary Sales Reports (CONTRACT.md §1.7): read whole by the tie-out every run.
        (4, RawTable.appleSales.createSQL),
    ]

    public static var latestVersion: Int { migrations.last?.id ?? 0 }

    /// The store's schema is newer than this build understands.
    public struct NewerSchemaError: Error, CustomStringConvertible {
        public var found: Int
        public var description: String {
            "the store has schema version \(found), newer than this iaprecon (\(Schema.latestVersion)); use a newer iaprecon"
        }
    }

    /// Applies pending migrations.
    public static func migrate(_ database: Database) throws {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_migrations (id INTEGER PRIMARY KEY)")
        var applied = 0
        try database.forEach("SELECT coalesce(max(id), 0) FROM schema_migrations") { applied = Int($0.int(0)) }
        if applied > latestVersion { throw NewerSchemaError(found: applied) }
        for migration in migrations where migration.id > applied {
            try database.transaction {
                try database.execute(migration.sql)
                try database.run("INSERT INTO schema_migrations (id) VALUES (?)", [.integer(Int64(migration.id))])
            }
        }
    }
}

/// The raw tables' secondary indexes. A large ingest drops them and builds them again after its
/// last file (sorting once is several times faster than keeping them up to date row by row);
/// `restore` runs before anything reads them, so an ingest killed in between costs nothing.
enum RawIndexes {
    /// The indexes migration 3 added: what rebuilds one key's normalized rows.
    static let added3 = [
        "CREATE INDEX IF NOT EXISTS raw_apple_by_transaction ON raw_apple__transactions(transaction_id)",
        "CREATE INDEX IF NOT EXISTS raw_orders_by_order ON raw_server__orders(order_id)",
        "CREATE INDEX IF NOT EXISTS raw_deliveries_by_transaction ON raw_server__deliveries(transaction_id)",
        "CREATE INDEX IF NOT EXISTS raw_deliveries_by_delivery ON raw_server__deliveries(delivery_id) WHERE delivery_id IS NOT NULL",
        """
        CREATE INDEX IF NOT EXISTS raw_verifications_by_transaction ON raw_receipts__verifications(transaction_id)
          WHERE transaction_id IS NOT NULL AND order_id IS NOT NULL
        """,
    ]

    /// Every raw secondary index of the current schema.
    static let all = added3 + [
        "CREATE INDEX IF NOT EXISTS raw_revocations_by_transaction ON raw_server__revocations(transaction_id)",
        "CREATE INDEX IF NOT EXISTS raw_registrations_by_user ON raw_registrations__users(user_id)",
        "CREATE INDEX IF NOT EXISTS raw_revocations_by_user ON raw_server__revocations(user_id)",
    ]

    static func drop(_ database: Database) throws {
        for sql in all {
            guard let name = sql.split(separator: " ").dropFirst(5).first else { continue }
            try database.execute("DROP INDEX IF EXISTS \(name)")
        }
    }

    static func restore(_ database: Database) throws {
        try database.execute(all.joined(separator: ";\n"))
    }
}
