import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// An incremental join's closure reads the rows of some fact tables whole with its links, and its
/// batches take them from there instead of reading them again by key (`ClosureFacts`): every batch
/// must receive exactly the facts, in exactly the order, that reading by key hands it. So too the
/// scope's current resolved transactions, which the writer compares the decided ones with.
@Suite("A closed scope's facts, read with its links")
struct ClosureFactsTests {
    @Test("every batch of a closed scope receives from the closure the facts reading by key gives it, in the same order, also where file ids and paths disagree")
    func heldEqualsKeyed() throws {
        let (scenario, database, copyID) = try RoutedFactsTests.ingestedWithALaterCopy()
        let store = SQLiteJoinStore(database)
        // The closure follows the last join's decisions too.
        _ = try JoinStage.run(store: store, settings: ReconcileSettings(), workers: WorkerPool(width: 2))
        let closed = try JoinScope.closure(of: seeds(database), in: store, limit: 1_000_000).get()
        #expect(closed.facts.isHeld)
        #expect(Set(closed.facts.rows.map(\.table)) == Set(StoredLinks.closureFactTables.map(\.rawValue)), "every table read whole has rows")
        // The scope's current resolved transactions, each once, as `ScopeRows` reads them.
        try StoredScopeFacts.fill(closed.scope, prefix: "join", in: database)
        var keyedResolved = PackedRows(table: 0)
        try database.forEach("SELECT * FROM main.int_transactions_resolved WHERE transaction_id IN temp.join_transactions") {
            keyedResolved.append($0, columns: ScopeRows.tables[0].columns)
        }
        #expect(keyedResolved.count > 100)
        #expect(packedRows(closed.facts.currentResolved) == packedRows([keyedResolved]), "the closure read the scope's current rows")
        let batches = JoinComponents.batches(of: closed.links, transactions: 20).keys(of: store.factKeyKinds)
        #expect(batches.count > 3)
        let held = RoutedFacts.holding(closed.facts, routedTo: batches, folder: PathParent.of(database.path))
        let files = try StoredLedger.sourceFiles(database)
        try RoutedFactsTests.expectEachBatchAsKeyed(batches, database: database, copyID: copyID, handedBy: "held") { batch, facts in
            let rows = held.take(batch: batch)
            for table in StoredScopeFacts.FactTable.allCases {
                if StoredLinks.closureFactTables.contains(table) {
                    try table.hand(routed: rows[table.rawValue], files: files, to: &facts)
                } else {
                    #expect(rows[table.rawValue].bytes == 0, "\(table) is not read by the closure")
                    try StoredScopeFacts.read(table, database, scope: "join", into: &facts)
                }
            }
        }
        withExtendedLifetime(scenario) {}
    }

    @Test("near miss: a closure whose facts outgrow its budget holds none, and a night whose batches read theirs by key writes what one that held them writes")
    func overBudgetReadsByKey() throws {
        let (generated, nights, _) = try Scenario.generatedNights(users: 300, days: 10, seed: 11)
        _ = try nights.run()
        // The last night's files ingested, then the store copied: each copy joins the night once.
        let database = try nights.open()
        let rules = LineRules(signatures: .testChain)
        _ = try Pipeline.ingest(input: generated.input, database: database, jobs: 2, rules: rules, progress: nil)
        _ = try Pipeline.normalize(database: database)
        let copyPath = nights.root + "/copy.sqlite"
        try database.execute("VACUUM INTO '\(copyPath)'")
        let copy = try Store.open(path: copyPath)

        let seeds = try ChangedKeys.all(in: database).reduce(into: JoinScope()) { $0.insert($1.key, as: $1.kind) }
        #expect(!seeds.isEmpty)
        let held = try JoinScope.closure(of: seeds, in: SQLiteJoinStore(database), limit: 1_000_000).get().facts
        let letGo = try JoinScope.closure(of: seeds, in: SQLiteJoinStore(copy, closureFactsBudget: 1 << 10), limit: 1_000_000).get().facts
        #expect(held.isHeld && held.bytes > 1 << 10, "the night's facts fit the default budget")
        #expect(!letGo.isHeld && letGo.rows.isEmpty && letGo.currentResolved.isEmpty, "past its budget, the closure let its facts go")

        func night(_ store: SQLiteJoinStore) throws -> [String: [[SQLValue]]] {
            let summary = try JoinStage.run(store: store, settings: ReconcileSettings(), workers: WorkerPool(width: 2), batchTransactions: 40)
            #expect(summary.recomputedTransactions ?? 0 > 20, "an incremental night")
            var tables: [String: [[SQLValue]]] = [:]
            for table in ["int_transactions_resolved", "fct_findings", "fct_finding_chains", "int_transaction_changes", "fct_apple_tieout"] {
                let columns = Int(try store.database.scalar("SELECT count(*) FROM pragma_table_info('\(table)')").integerValue)
                let order = (1...columns).map(String.init).joined(separator: ", ")
                var rows: [[SQLValue]] = []
                try store.database.forEach("SELECT * FROM \(table) ORDER BY \(order)") { row in rows.append((0..<columns).map { row.value($0) }) }
                tables[table] = rows
            }
            return tables
        }
        let fromHeld = try night(SQLiteJoinStore(database))
        let fromKeys = try night(SQLiteJoinStore(copy, closureFactsBudget: 1 << 10))
        #expect(fromHeld["int_transactions_resolved"]?.count ?? 0 > 100)
        #expect(fromHeld["fct_findings"]?.count ?? 0 > 10)
        for (table, rows) in fromHeld { #expect(fromKeys[table] == rows, "\(table)") }
        withExtendedLifetime(generated) {}
    }

    /// Each row's packed bytes, sorted: the rows as a multiset.
    private func packedRows(_ chunks: [PackedRows]) -> [[UInt8]] {
        var rows: [[UInt8]] = []
        for chunk in chunks { chunk.forEachRow(columns: ScopeRows.tables[0].columns) { rows.append(Array($0.bytes)) } }
        return rows.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Some users and transactions of the store, and every chain: a scope that reaches orders,
    /// deliveries, claims and sightings of many components.
    private func seeds(_ database: Database) throws -> JoinScope {
        var seeds = JoinScope()
        try database.forEach("SELECT DISTINCT user_id FROM raw_server__orders ORDER BY user_id LIMIT 150") { seeds.insert($0.string(0), as: .user) }
        try database.forEach("SELECT DISTINCT transaction_id FROM raw_apple__transactions ORDER BY transaction_id DESC LIMIT 150") {
            seeds.insert($0.string(0), as: .transaction)
        }
        return seeds
    }
}
