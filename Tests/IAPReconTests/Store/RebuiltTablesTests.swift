import Foundation
import Testing
@testable import IAPRecon

/// A full rebuild writes its tables beside the current ones and switches them in at the end:
/// a reader meanwhile (support's `history`) sees the previous tables whole, and a rebuild that
/// fails half-way leaves them as they were.
@Suite("Full rebuilds switch their tables in whole")
struct RebuiltTablesTests {
    static let tables = StoredJoinResults.tables.tables.map(\.name)

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

    @Test("a full join that fails leaves int tables, findings and history as they were; the next run completes it")
    func joinFailure() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let before = try snapshot(database)

        // A new grace asks for a full rebuild; the join fails when it reads the revocations.
        try database.execute("ALTER TABLE raw_server__revocations RENAME COLUMN ts_ms TO ts_away")
        #expect(throws: SQLiteError.self) {
            try Pipeline.join(database: database, settings: ReconcileSettings(graceMs: 2 * 86_400_000), batchTransactions: 5)
        }
        try database.execute("ALTER TABLE raw_server__revocations RENAME COLUMN ts_away TO ts_ms")
        #expect(try snapshot(database) == before)

        _ = try Pipeline.join(database: database, settings: ReconcileSettings(), batchTransactions: 5)
        #expect(try leftovers(database) == 0)
        #expect(try snapshot(database) == before)
    }

    @Test("a full join keys each int table by a unique index built after its rows: a second row for a key is refused, lookups by key use it")
    func joinKeys() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let keys = [("int_transactions_resolved", "transaction_id"), ("fct_findings", "finding_id")]
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
        // A finding's links to its chains: keyed by both, found by the chain.
        #expect(try database.scalar("SELECT count(*) FROM fct_finding_chains").integerValue >= 3, "the sample's shared and multi findings")
        #expect(throws: SQLiteError.self) { try database.execute("INSERT INTO fct_finding_chains SELECT * FROM fct_finding_chains LIMIT 1") }
        var plan: [String] = []
        try database.forEach("EXPLAIN QUERY PLAN SELECT finding_id FROM fct_finding_chains WHERE original_transaction_id = 'x'") { plan.append($0.string(3)) }
        #expect(plan.contains { $0.contains("INDEX") && $0.contains("(original_transaction_id=?)") }, "\(plan)")
    }

    @Test("a full join builds its results' indexes beside them before the switch: each rebuild takes the names the current results' indexes do not hold")
    func indexesBuiltBeside() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        func names() throws -> Set<String> {
            var names = Set<String>()
            try database.forEach("""
                SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('int_transactions_resolved', 'fct_findings', 'fct_finding_chains')
                """) {
                names.insert($0.string(0))
            }
            return names
        }
        let declared = Set(StoredJoinResults.tables.indexes.map(\.name))
        let twins = Set(declared.map { $0 + RebuiltTables.indexTwinSuffix })
        let first = try names()
        #expect(first == declared || first == twins)
        let before = try snapshot(database)
        // Each new grace asks for a full rebuild.
        for days: Int64 in [2, 3] {
            let current = try names()
            #expect(try Pipeline.join(database: database, settings: ReconcileSettings(graceMs: days * 86_400_000), batchTransactions: 5)
                .recomputedTransactions == nil)
            #expect(try names() == (current == declared ? twins : declared))
            #expect(try leftovers(database) == 0)
        }
        _ = try Pipeline.join(database: database, settings: ReconcileSettings(), batchTransactions: 5)
        #expect(try snapshot(database) == before)
    }

    @Test("after a bulk ingest drops the raw indexes, normalize builds every one of them again, and only those missing")
    func rawIndexesRestored() throws {
        let scenario = try Scenario()
        let database = try Store.open(path: scenario.databasePath)
        _ = try Pipeline.ingest(input: SampleDataTests.sampleData, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
        let names = RawIndexes.all.map(\.name)
        #expect(Set(names).count == names.count && RawIndexes.all.allSatisfy { $0.sql.contains(" \($0.name) ON ") })
        let count = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN (\(names.map { "'\($0)'" }.joined(separator: ", ")))"
        #expect(try database.scalar(count).integerValue == 0, "a first ingest is a bulk one")
        #expect(try !NormalizeStage.isDone(SQLiteRawIndexStore(database)))
        try Pipeline.normalize(database: database)
        #expect(try database.scalar(count).integerValue == Int64(names.count))
        #expect(try NormalizeStage.isDone(SQLiteRawIndexStore(database)))
        // A normalize killed half-way kept the indexes it built; the next one builds the rest.
        try database.execute("DROP INDEX raw_apple_by_user; DROP INDEX raw_orders_by_user")
        #expect(try !NormalizeStage.isDone(SQLiteRawIndexStore(database)))
        try Pipeline.normalize(database: database)
        #expect(try database.scalar(count).integerValue == Int64(names.count))
    }
}
