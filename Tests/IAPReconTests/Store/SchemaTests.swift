import Testing
@testable import IAPRecon

/// Stores in the field were migrated by the texts that shipped: a later build that edited one would
/// read those stores as if they had been built another way.
@Suite("Schema migrations")
struct SchemaTests {
    /// FNV-1a of each released migration's text. A new migration adds its line when it ships; an
    /// existing line never changes (a fix is a new migration).
    static let released: [Int: String] = [
        1: "b81d1a0a170dd84b",
        2: "a3ab6556b360d51f",
        3: "816b08ed69d86777",
        4: "d1216a1bf93f6e2b",
        5: "a0a3b661334f6f10",
        6: "c5a7a2720c0c9c1c",
        7: "e5ada51f04de3b04",
        8: "f582e078ec96d5e7",
        9: "b31f5ddfea595585",
        10: "54c58b8f34cddb57",
        11: "dbae0833123efa87",
        12: "96f8208f50dccb98",
        13: "188c9bb3489cf592",
        14: "41c8d7ce657b42b2",
        15: "89762102c49f9d20",
        16: "d7bb6297444a28fd",
        17: "363640ce96191fe7",
        18: "91ac5682104edf4d",
        19: "5875cdc9867d5a9e",
        20: "c2031d640d9db4a3",
        21: "f9284df15f2deff5",
        22: "b70cd853b0305fd1",
        23: "7e813f0461b6c03e",
        24: "1f293fdb7c7091c7",
        25: "a962a2cfc87bbf5d",
        26: "b274a0abba4f3c67",
        27: "fe44e74a6f4b3408",
        28: "8b884bcdc157079a",
        29: "ab42ff2a54e2a01a",
        30: "3e778d5d16539777",
        31: "46cbfaed45e2b598",
        32: "3b93c56d052f1458",
        33: "e1ac12d301b05eca",
        34: "7c882e5eb29440ca",
        35: "60f062f87c3557a6",
        36: "879e3c3e15a3e18b",
        37: "88300366352824ee",
        38: "9319afb91982a6c5",
        39: "5fe95f4da2d74ee0",
        40: "68cb8a9d59de4c89",
        41: "cd3cf8be28228fd5",
        42: "ebc00ad67124d8c4",
        43: "af3d519d9a25b509",
        44: "d048ddf4629e1604",
        45: "c480b3864139fa8c",
        46: "e4d08902f7738912",
        47: "4bb00ce5f8b48154",
        48: "22527ee4bc90590c",
        49: "ae81c48fc871cf6f",
        50: "6787d172fecb5282",
    ]

    @Test("a released migration's text never changes, and every migration is recorded as released")
    func frozen() {
        for migration in Schema.migrations {
            #expect(Self.released[migration.id] == StableID.hash(migration.sql), "migration \(migration.id) differs from what shipped")
        }
        #expect(Set(Schema.migrations.map(\.id)) == Set(Self.released.keys))
    }

    @Test("migrations are numbered 1, 2, 3, ... in order, with no gap")
    func numbered() {
        #expect(Schema.migrations.map(\.id) == Array(1...Schema.migrations.count))
    }

    /// A store as the release whose last migration was `version` left it: migrations 1 to `version`, their frozen texts,
    /// applied one by one as that release applied them.
    static func store(at path: String, through version: Int) throws -> Database {
        let database = try Database(path: path)
        try database.execute("CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY)")
        for migration in Schema.migrations where migration.id <= version {
            try database.transaction {
                try database.execute(migration.sql)
                try database.run("INSERT INTO schema_migrations (id) VALUES (?)", [.integer(Int64(migration.id))])
            }
        }
        return database
    }

    @Test("an upgrade stopped part-way leaves the store at the version it had, not between two, and the next upgrade takes it whole")
    func upgradeAllOrNothing() throws {
        let scenario = try Scenario()
        let database = try Self.store(at: scenario.databasePath, through: 12)
        // As a store is once its night is reconciled.
        try database.execute("DELETE FROM dirty_keys")
        // What stops the upgrade at migration 14, after 13 went through, as a kill or a full disk would: the name
        // migration 14 renames a table to is taken.
        try database.execute("CREATE TABLE raw_apple__transactions_text (x)")
        #expect(throws: SQLiteError.self) { try Schema.migrate(database) }
        #expect(try Schema.appliedVersion(database) == 12)
        // Migration 13's mark that the next join rebuilds everything went too.
        #expect(try database.scalar("SELECT count(*) FROM dirty_keys") == .integer(0))
        try database.execute("DROP TABLE raw_apple__transactions_text")
        try Schema.migrate(database)
        #expect(try Schema.appliedVersion(database) == Schema.latestVersion)
        #expect(try database.scalar("SELECT count(*) FROM dirty_keys WHERE kind = 'all'") == .integer(1))
    }

    @Test("a migration the store lacks below the latest it has is applied too: another build may have numbered it higher")
    func lackingMigrationBelowTheLatest() throws {
        let scenario = try Scenario()
        let database = try Store.open(path: scenario.databasePath)
        // Migration 36 drops what a killed rebuild left of the finding links: a store that lacks it, and has 37 on.
        try database.execute("""
            CREATE TABLE fct_finding_chains__next (x);
            DELETE FROM schema_migrations WHERE id = 36
            """)
        try Schema.migrate(database)
        #expect(try database.scalar("SELECT count(*) FROM schema_migrations WHERE id = 36") == .integer(1))
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'fct_finding_chains__next'") == .integer(0))
        // The near miss: a store that has every migration changes nothing.
        let before = try database.scalar("SELECT group_concat(id) FROM schema_migrations")
        try Schema.migrate(database)
        #expect(try database.scalar("SELECT group_concat(id) FROM schema_migrations") == before)
    }

    @Test("the store's bytes by layer add up to its pages in use, and every stage's layer has some")
    func bytesByLayer() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let layers = try #require(Store.bytesByLayer(path: scenario.databasePath))
        let pages = try database.scalar("SELECT (SELECT page_count FROM pragma_page_count) - (SELECT freelist_count FROM pragma_freelist_count)")
        let pageSize = try database.scalar("SELECT page_size FROM pragma_page_size")
        #expect(layers.map(\.bytes).reduce(0, +) == Int(pages.integerValue * pageSize.integerValue))
        #expect(Set(layers.map(\.layer)).isSuperset(of: ["ledger", "raw", "results"]))
        #expect(layers.allSatisfy { $0.bytes > 0 })
        #expect(layers.map(\.bytes) == layers.map(\.bytes).sorted(by: >))
    }

    @Test("the bench's storing floor copies every ledger and raw row and builds every raw index, and no result")
    func copyIngested() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let copyPath = scenario.root + "/copy.sqlite"
        try Store.copyIngested(from: scenario.databasePath, into: copyPath)
        // A second copy over the first starts from nothing.
        try Store.copyIngested(from: scenario.databasePath, into: copyPath)
        let copy = try Database(path: copyPath, readOnly: true)
        func objects(_ type: String, in database: Database) throws -> Set<String> {
            var names = Set<String>()
            try database.forEach("SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL", [.text(type)]) { names.insert($0.string(0)) }
            return names
        }
        let kept = try objects("table", in: database).filter { [.ledger, .raw].contains(Tables.named($0)?.layer) }
        #expect(kept.isSuperset(of: ["files", "rejects", "raw_apple__transactions", "raw_mmp__events"]))
        #expect(try objects("table", in: copy) == kept)
        // Row for row: as many rows, and none of either side missing from the other.
        try database.run("ATTACH DATABASE ? AS copied", [.text(copyPath)])
        for table in kept {
            let count = "SELECT count(*) FROM \(table)"
            #expect(try copy.scalar(count) == database.scalar(count), "\(table)")
            for (one, other) in [("main", "copied"), ("copied", "main")] {
                let missing = try database.scalar("SELECT count(*) FROM (SELECT * FROM \(one).\(table) EXCEPT SELECT * FROM \(other).\(table))")
                #expect(missing.integerValue == 0, "\(table): rows of \(one) not in \(other)")
            }
        }
        try database.execute("DETACH DATABASE copied")
        let rawIndexes = try objects("index", in: database).filter { $0.hasPrefix("raw_") }
        #expect(!rawIndexes.isEmpty)
        #expect(try objects("index", in: copy) == rawIndexes)
    }
}
