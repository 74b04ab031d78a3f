import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// A full join decides batches of whole linked components on worker connections; how the
/// store is cut into batches, and how many workers decide them, must not change a single row.
@Suite("Full join in batches")
struct JoinBatchTests {
    @Test("batches of 50 transactions on 2 workers write exactly the rows of one batch on 1 worker")
    func batchesEqualOneBatch() throws {
        let generated = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 600, days: 15, seed: 3), to: generated.input)
        let one = try join(generated.input, workers: 1, batch: 1_000_000)
        let many = try join(generated.input, workers: 2, batch: 50)
        let transactions = try one.database.scalar("SELECT count(*) FROM int_transactions_resolved").integerValue
        #expect(transactions > 400, "enough transactions for eight batches or more")
        #expect(one.summary.findings > 0)
        #expect(many.summary.findings == one.summary.findings)
        for table in ["int_transactions_resolved", "fct_findings"] {
            let expected = try rows(one.database, table)
            #expect(!expected.isEmpty, "\(table)")
            #expect(try rows(many.database, table) == expected, "\(table)")
        }
        withExtendedLifetime((generated, one.scenario, many.scenario)) {}
    }

    @Test("an incremental night cut into batches of 20 on 2 workers writes exactly what one full join writes")
    func incrementalBatchesEqualFull() throws {
        let (generated, nights, lastDay) = try Scenario.generatedNights(users: 600, days: 15, seed: 5)
        #expect(lastDay == "2026-09-15")
        #expect(try SourceFile.list(in: generated.input).contains { $0.relativePath.contains(lastDay) })
        // Days 1...14, then the whole folder: the second join is incremental.
        let database = try nights.open()
        for input in [nights.input, generated.input] {
            _ = try Pipeline.ingest(input: input, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
            try Pipeline.normalize(database: database)
            let summary = try Pipeline.join(database: database, settings: ReconcileSettings(), workers: WorkerPool(width: 2),
                                            batchTransactions: 20)
            if input == generated.input {
                let recomputed = try #require(summary.recomputedTransactions, "the second night is incremental")
                #expect(recomputed > 100, "enough transactions for several batches of 20")
            }
        }
        let full = try join(generated.input, workers: 1, batch: 1_000_000)
        for table in ["int_transactions_resolved", "fct_findings"] {
            #expect(try rows(database, table) == rows(full.database, table), "\(table)")
        }
        withExtendedLifetime((generated, nights, full.scenario)) {}
    }

    @Test("a night's batches, cut from the links its closure read, hold every link of their keys whole")
    func closureBatchesAreClosed() throws {
        let (generated, nights, _) = try Scenario.generatedNights(users: 600, days: 15, seed: 5)
        let database = try nights.open()
        for input in [nights.input, generated.input] {
            _ = try Pipeline.ingest(input: input, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
            try Pipeline.normalize(database: database)
            if input == nights.input { _ = try Pipeline.join(database: database, settings: ReconcileSettings()) }
        }
        let asOfMs = try database.scalar("SELECT as_of_ms FROM int_run_settings").integerValue
        let closed = try JoinStage.incrementalScope(SQLiteJoinStore(database), settings: ReconcileSettings(), asOfMs: asOfMs).get()
        let batches = JoinComponents.batches(of: closed.links, transactions: 1)
        #expect(batches.count > 10, "a night of many components")
        let scopeKeys = ["t": closed.scope.transactions, "o": closed.scope.orders, "u": closed.scope.users, "c": closed.scope.chains]
        var batchOf: [String: Int] = [:]
        for batch in 0..<batches.count {
            let scope = batches.scope(batch, of: [.transaction, .order, .user, .chain])
            for (kind, keys) in [("t", scope.transactions), ("o", scope.orders), ("u", scope.users), ("c", scope.chains)] {
                for key in keys.map(\.text) {
                    #expect(batchOf.updateValue(batch, forKey: kind + ":" + key) == nil, "\(kind):\(key) in one batch only")
                    #expect(scopeKeys[kind]?.contains(StoredText(key)) == true, "\(kind):\(key) is in the scope")
                }
            }
        }
        // Every stored link row that touches a batch's key has all its keys in that batch (an order
        // id no order line has links nothing).
        let links: [(String, [String])] = [
            ("""
             SELECT transaction_id, coalesce(original_transaction_id, transaction_id), \(StoredLinks.listedOrder("raw_apple__transactions.app_account_token")),
                    CASE WHEN \(TransactionOrigin.sentByUserSQL) THEN user_id END FROM raw_apple__transactions
             """, ["t", "c", "o", "u"]),
            ("SELECT order_id, user_id FROM raw_server__orders", ["o", "u"]),
            ("SELECT transaction_id, user_id, \(StoredLinks.listedOrder("raw_server__deliveries.order_id")) FROM raw_server__deliveries", ["t", "u", "o"]),
            ("""
             SELECT transaction_id, \(StoredLinks.listedOrder("raw_receipts__verifications.order_id")) FROM raw_receipts__verifications WHERE \(ReceiptClaims.condition)
             """, ["t", "o"]),
        ]
        var touching = 0
        for (sql, kinds) in links {
            try database.forEach(sql) { row in
                let keys = kinds.indices.compactMap { column in row.optionalString(column).map { kinds[column] + ":" + $0 } }
                let found = Set(keys.map { batchOf[$0] })
                guard found != [nil] else { return }
                touching += 1
                #expect(found.count == 1, "\(keys) split across batches")
            }
        }
        #expect(touching > 100)
        // Every scope transaction with a sighting is decided in some batch.
        var sighted = 0
        for transaction in closed.scope.transactions.map(\.text) {
            let sightings = try database.scalar("SELECT count(*) FROM raw_apple__transactions WHERE transaction_id = ?", [.text(transaction)])
            if sightings.integerValue > 0 {
                sighted += 1
                #expect(batchOf["t:" + transaction] != nil, "\(transaction)")
            }
        }
        #expect(sighted > 100)
        withExtendedLifetime((generated, nights)) {}
    }

    private func join(_ input: String, workers: Int, batch: Int) throws -> (scenario: Scenario, database: Database, summary: JoinSummary) {
        let scenario = try Scenario()
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: input, database: database, jobs: workers, rules: LineRules(signatures: .testChain), progress: nil)
        try Pipeline.normalize(database: database)
        let summary = try Pipeline.join(database: database, settings: ReconcileSettings(), workers: WorkerPool(width: workers),
                                        batchTransactions: batch)
        #expect(summary.recomputedTransactions == nil, "a first join is a full rebuild")
        return (scenario, database, summary)
    }

    /// Every row, in key order.
    private func rows(_ database: Database, _ table: String) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        var columns = 0
        try database.forEach("SELECT count(*) FROM pragma_table_info('\(table)')") { columns = Int($0.int(0)) }
        try database.forEach("SELECT * FROM \(table) ORDER BY 1") { row in rows.append((0..<columns).map { row.value($0) }) }
        return rows
    }
}
