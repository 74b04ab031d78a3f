import Foundation
import Testing
@testable import IAPRecon

/// A full rebuild writes its tables beside the current ones and switches them in at the end:
/// a reader meanwhile (support's `history`) sees the previous tables whole, and a rebuild that
/// fails half-way leaves them as they were.
@Suite("Full rebuilds switch their tables in whole")
struct RebuiltTablesTests {
    static let tables = NormalizeStage.tables.tables.map(\.name) + JoinStage.tables.tables.map(\.name)

    /// Every row of every rebuilt table, and u_1005's history: what a reader sees.
    private func snapshot(_ database: Database) throws -> [String] {
        var rows: [String] = []
        for table in Self.tables {
            let columns = Int(try database.scalar("SELECT count(*) FROM pragma_table_info('\(table)')").integerValue)
            try database.forEach("SELECT * FROM \(table) ORDER BY 1") { row in
                rows.append(([table] + (0..<columns).map { "\(row.value($0))" }).joined(separator: "|"))
            }
        }
        let history = try UserHistory.load(database, .user("u_1005"))
        rows += history.events.map { "\($0.ms) \($0.event) \($0.id) \($0.detail)" }
        return rows
    }

    private func leftovers(_ database: Database) throws -> Int64 {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE '%\\_\\_next' ESCAPE '\\'").integerValue
    }

    @Test("a full normalize that fails half-way leaves every stg table and history as they were; the next run completes it")
    func normalizeFailure() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let before = try snapshot(database)
        #expect(before.count > 100)

        // A full rebuild whose transactions builder fails: a column it reads is gone.
        try database.run("INSERT INTO dirty_keys VALUES ('all', '')")
        try database.execute("ALTER TABLE raw_apple__transactions RENAME COLUMN offer TO offer_away")
        #expect(throws: SQLiteError.self) { try NormalizeStage.run(database: database, workers: WorkerPool(width: 2)) }
        try database.execute("ALTER TABLE raw_apple__transactions RENAME COLUMN offer_away TO offer")
        #expect(try snapshot(database) == before)
        #expect(try leftovers(database) > 0, "the half-built tables stay beside the whole ones")

        try NormalizeStage.run(database: database, workers: WorkerPool(width: 2))
        _ = try JoinStage.run(database: database, settings: ReconcileSettings())
        #expect(try leftovers(database) == 0)
        #expect(try snapshot(database) == before, "the same inputs rebuilt give the same tables")
    }

    @Test("a full join that fails leaves int tables, findings and history as they were; the next run completes it")
    func joinFailure() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let before = try snapshot(database)

        // A new grace asks for a full rebuild; the join fails when it reads the receipts' senders.
        try database.execute("ALTER TABLE stg_receipts__senders RENAME TO stg_receipts__away")
        #expect(throws: SQLiteError.self) {
            try JoinStage.run(database: database, settings: ReconcileSettings(graceMs: 2 * 86_400_000), batchTransactions: 5)
        }
        try database.execute("ALTER TABLE stg_receipts__away RENAME TO stg_receipts__senders")
        #expect(try snapshot(database) == before)

        _ = try JoinStage.run(database: database, settings: ReconcileSettings(), batchTransactions: 5)
        #expect(try leftovers(database) == 0)
        #expect(try snapshot(database) == before)
    }

    @Test("a full join keys each int table by a unique index built after its rows: a second row for a key is refused, lookups by key use it")
    func joinKeys() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let keys = [("int_transactions_resolved", "transaction_id"), ("int_orders_matched", "order_id"), ("fct_findings", "finding_id")]
        for (table, key) in keys {
            let rows = try database.scalar("SELECT count(*) FROM \(table)").integerValue
            #expect(rows > 0)
            #expect(try database.scalar("SELECT count(DISTINCT \(key)) FROM \(table)").integerValue == rows)
            // Copying any row back in breaks the key.
            #expect(throws: SQLiteError.self) { try database.execute("INSERT INTO \(table) SELECT * FROM \(table) LIMIT 1") }
            var plan: [String] = []
            try database.forEach("EXPLAIN QUERY PLAN SELECT * FROM \(table) WHERE \(key) = 'x'") { plan.append($0.string(3)) }
            #expect(plan.contains { $0.contains("USING INDEX") && $0.contains("(\(key)=?)") }, "\(table): \(plan)")
        }
    }

    /// Each index of the store's stg tables: its table and its SQL without the name, then the name.
    private func stgIndexes(_ database: Database) throws -> [(table: String, definition: String, name: String)] {
        var indexes: [(String, String, String)] = []
        try database.forEach("""
            SELECT tbl_name, sql, name FROM sqlite_master WHERE type = 'index' AND tbl_name LIKE 'stg\\_%' ESCAPE '\\' AND sql IS NOT NULL
            ORDER BY tbl_name, sql
            """) { row in
            // The switch's RENAME quotes the table name in the index's SQL.
            let sql = row.string(1).replacingOccurrences(of: "\"", with: "")
            let definition = String(sql[(sql.range(of: " ON ")?.lowerBound ?? sql.startIndex)...])
            indexes.append((row.string(0), definition, row.string(2)))
        }
        return indexes.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }

    @Test("a full normalize builds each table's indexes beside the current ones, which stay until the switch; names alternate, definitions never change")
    func indexesAlternate() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let expected = NormalizeStage.tables.indexes.map { ($0.table, " ON \($0.table)\($0.definition)") }.sorted { $0 < $1 }
        let first = try stgIndexes(database)
        #expect(first.map { [$0.table, $0.definition] } == expected.map { [$0.0, $0.1] })
        #expect(Set(first.map(\.name)) == Set(NormalizeStage.tables.indexes.map(\.name)))

        // A failed rebuild leaves the current tables' indexes as they were.
        try database.run("INSERT INTO dirty_keys VALUES ('all', '')")
        try database.execute("ALTER TABLE raw_apple__transactions RENAME COLUMN offer TO offer_away")
        #expect(throws: SQLiteError.self) { try NormalizeStage.run(database: database, workers: WorkerPool(width: 2)) }
        try database.execute("ALTER TABLE raw_apple__transactions RENAME COLUMN offer_away TO offer")
        #expect(try stgIndexes(database).filter { !$0.table.hasSuffix(RebuiltTables.suffix) }.map(\.name) == first.map(\.name))

        try NormalizeStage.run(database: database, workers: WorkerPool(width: 2))
        let second = try stgIndexes(database)
        #expect(second.map { [$0.table, $0.definition] } == expected.map { [$0.0, $0.1] }, "no __next table or index is left")
        #expect(second.map(\.name) == first.map { $0.name + RebuiltTables.indexTwinSuffix })

        try database.run("INSERT OR IGNORE INTO dirty_keys VALUES ('all', '')")
        try NormalizeStage.run(database: database, workers: WorkerPool(width: 1))
        #expect(try stgIndexes(database).map(\.name) == first.map(\.name))
        _ = try JoinStage.run(database: database, settings: ReconcileSettings())
        #expect(try UserHistory.load(database, .user("u_1005")).events.count > 5)
    }

    @Test("after a bulk ingest drops the raw indexes, a full normalize builds every one of them again")
    func rawIndexesRestored() throws {
        let scenario = try Scenario()
        let database = try Store.open(path: scenario.databasePath)
        _ = try Pipeline.ingest(input: SampleDataTests.sampleData, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
        let names = RawIndexes.all.compactMap { $0.split(separator: " ").dropFirst(5).first.map(String.init) }
        #expect(names.count == RawIndexes.all.count)
        let count = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN (\(names.map { "'\($0)'" }.joined(separator: ", ")))"
        #expect(try database.scalar(count).integerValue == 0, "a first ingest is a bulk one")
        try NormalizeStage.run(database: database, workers: WorkerPool(width: 2))
        #expect(try database.scalar(count).integerValue == Int64(names.count))
    }
}
