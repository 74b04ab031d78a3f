import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// The join names nothing of SQLite: it asks its store (`JoinStore`) for what changed, the links,
/// each batch's facts, and to keep its results. So another store must serve it as well. This one
/// holds every fact in memory, as values read once from a SQLite store, and keeps the join's
/// results in dictionaries; the join over it must decide exactly what it decides over SQLite.
@Suite("The join over a second store")
struct SecondStoreTests {
    @Test("a full join over facts held in memory decides every row the join over SQLite decides")
    func inMemoryStoreDecidesAsSQLite() throws {
        let generated = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 400, days: 12, seed: 11), to: generated.input)
        let scenario = try Scenario()
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: generated.input, database: database, jobs: 2, rules: LineRules(signatures: .testChain),
                                progress: nil)
        try Pipeline.normalize(database: database)
        let overSQLite = try Pipeline.join(database: database, settings: ReconcileSettings(), workers: WorkerPool(width: 2),
                                           batchTransactions: 40)

        let memory = try InMemoryJoinStore(copying: database)
        let overMemory = try JoinStage.run(store: memory, settings: ReconcileSettings(), workers: WorkerPool(width: 2),
                                           batchTransactions: 40)
        #expect(overMemory.asOfMs == overSQLite.asOfMs)
        #expect(overMemory.recomputedTransactions == nil, "a first join is a full rebuild")
        #expect(memory.savedSettings == JoinSettings(asOfMs: overSQLite.asOfMs, graceMs: 86_400_000, mmpZone: Zone.utc.identifier))
        #expect(memory.batchesDecided > 5, "the join cut the store into batches")

        let resolved = try rows(database, "SELECT * FROM int_transactions_resolved ORDER BY transaction_id", columns: 21)
        #expect(resolved.count > 200)
        #expect(memory.resolved.keys.sorted().map { memory.resolved[$0] ?? [] } == resolved)
        // The tie-out with Apple is the one part this store leaves out (it keeps no Sales Report).
        let findings = try rows(database, "SELECT * FROM fct_findings WHERE kind != 'unverified_apple_sales' ORDER BY finding_id", columns: 13)
        #expect(findings.count > 10)
        #expect(memory.findings.keys.sorted().map { memory.findings[$0] ?? [] } == findings)
        #expect(overMemory.findings == findings.count)
        withExtendedLifetime((generated, scenario)) {}
    }

    private func rows(_ database: Database, _ sql: String, columns: Int) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try database.forEach(sql) { row in rows.append((0..<columns).map { row.value($0) }) }
        return rows
    }
}

/// A `JoinStore` in memory: the facts of every transaction and order, as a SQLite store hands
/// them over, and the join's results as the rows SQLite would keep. It decides batches one after
/// another on the calling thread, and knows no Sales Report.
final class InMemoryJoinStore: JoinStore {
    private let facts: ScopeFacts
    private let files: SourceFiles
    private let latest: (ms: Int64?, mmpWallMs: Int64?)
    private(set) var savedSettings: JoinSettings?
    private(set) var resolved: [String: [SQLValue]] = [:]
    private(set) var findings: [String: [SQLValue]] = [:]
    private var rebuilt: (resolved: [String: [SQLValue]], findings: [String: [SQLValue]])?
    private(set) var batchesDecided = 0

    /// Every fact of `database`'s transactions and orders, in the order it hands them to a batch.
    init(copying database: Database) throws {
        var all = JoinScope()
        try StoredLinks.forEachLinkRows(database) { rows in
            var start = 0
            for (index, end) in rows.keyEnds.enumerated() {
                all.insert(String(decoding: rows.bytes[start..<Int(end)], as: UTF8.self), as: rows.kinds[index])
                start = Int(end)
            }
        }
        try StoredScopeFacts.fill(all, prefix: "join", in: database)
        var facts = ScopeFacts()
        try StoredScopeFacts.read(database, scope: "join", into: &facts)
        self.facts = facts
        files = try StoredLedger.sourceFiles(database)
        latest = try StoredJoinResults.latestEventTimes(database)
    }

    var factKeyKinds: Set<KeyKind> { [.transaction, .order] }

    func transaction<T>(_ body: () throws -> T) throws -> T { try body() }
    func missingRawIndexes() throws -> [String] { [] }
    func buildRawIndex(_ name: String) throws {}
    func latestEventTimes() throws -> (ms: Int64?, mmpWallMs: Int64?) { latest }
    func previousSettings() throws -> JoinSettings? { savedSettings }
    func isFullRebuildPending() throws -> Bool { savedSettings == nil }
    func changedKeys() throws -> [(kind: KeyKind, key: String)] { [] }
    func changedSalesDays() throws -> [String] { [] }
    func undeliveredTransactions(purchasedAfter after: Int64, through: Int64, _ body: (String) -> Void) throws {}
    func transactionCountEstimate() throws -> Int { resolved.count }
    func linkKeysEstimate() throws -> Int64 { Int64(facts.sightings.count + facts.orders.count) }

    /// The links `StoredLinks` reads, made from the facts: a sighting's transaction with its chain,
    /// `appAccountToken` and the user who sent it; an order with its user; a delivery's transaction
    /// with its user and order; a receipt claim's transaction with its order.
    func forEachLinkRows(_ deliver: (LinkRows) throws -> Void) throws {
        var rows = LinkRows()
        func add(_ keys: [(String?, KeyKind)]) {
            for case let (key?, kind) in keys {
                var key = key
                key.withUTF8 { rows.append($0, kind: kind) }
            }
            rows.endRow()
        }
        for (sighting, _) in facts.sightings {
            let sender = TransactionOrigin.sentByUser.contains(sighting.origin) ? sighting.userID : nil
            add([(sighting.transactionID, .transaction), (sighting.originalTransactionID ?? sighting.transactionID, .chain),
                 (sighting.appAccountToken, .order), (sender, .user)])
        }
        for (order, _) in facts.orders { add([(order.orderID, .order), (order.userID, .user)]) }
        for (delivery, _) in facts.deliveries {
            add([(delivery.transactionID, .transaction), (delivery.userID, .user), (delivery.orderID, .order)])
        }
        for claim in facts.receiptClaims { add([(claim.transactionID, .transaction), (claim.orderID, .order)]) }
        try deliver(rows)
    }

    func reach(from frontier: JoinScope, known: Set<RowFingerprint>) throws -> [ReachedKeys] {
        Issue.record("a first join follows no links: it rebuilds")
        return []
    }

    func update(_ scope: JoinScope, batches: Int, keys: @escaping @Sendable (Int) -> JoinScope, pool: WorkerPool,
                decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws -> [Int64] {
        Issue.record("a first join updates nothing: it rebuilds")
        return []
    }

    func beginRebuild() throws {
        rebuilt = ([:], [:])
    }

    func rebuild(batches: Int, keys: @escaping @Sendable (Int) -> JoinScope, pool: WorkerPool,
                 decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws {
        for number in 0..<batches {
            let batch = Batch(facts: facts, keys: keys(number), files: files)
            try decide(batch)
            for (key, row) in batch.resolved { rebuilt?.resolved[key] = row }
            for (key, row) in batch.findings { rebuilt?.findings[key] = row }
            batchesDecided += 1
        }
    }

    func switchInRebuilt() throws {
        guard let rebuilt else { throw Unexpected(what: "a switch with no rebuild") }
        (resolved, findings) = rebuilt
        self.rebuilt = nil
    }

    func finish(settings: JoinSettings) throws { savedSettings = settings }
    func findingCount() throws -> Int { findings.count }
    func tieOutInputs(days: Set<String>?, zone: Zone) throws -> TieOutInputs? { nil }

    func replaceTieOut(days: [(day: String, startMs: Int64?)]?, rows: [TieOutRow], findings: [Finding], files: SourceFiles) throws {
        throw Unexpected(what: "a tie-out with no Sales Report")
    }

    struct Unexpected: Error {
        var what: String
    }

    /// One batch: the facts of its keys, in the order they were copied, and the rows it decided.
    final class Batch: JoinBatch {
        private let facts: ScopeFacts
        private let keys: JoinScope
        let files: SourceFiles
        private(set) var resolved: [String: [SQLValue]] = [:]
        private(set) var findings: [String: [SQLValue]] = [:]

        init(facts: ScopeFacts, keys: JoinScope, files: SourceFiles) {
            (self.facts, self.keys, self.files) = (facts, keys, files)
        }

        func readFacts(into receiver: inout some ScopeFactsReceiver) throws {
            let (transactions, orders) = (keys.transactions, keys.orders)
            for (line, source) in facts.orders where orders.contains(StoredText(line.orderID)) { receiver.receive(order: line, at: source) }
            for (line, source) in facts.deliveries where transactions.contains(StoredText(line.transactionID)) {
                receiver.receive(delivery: line, at: source)
            }
            for (line, source) in facts.revocations where transactions.contains(StoredText(line.transactionID)) {
                receiver.receive(revocation: line, at: source)
            }
            for (sighting, source) in facts.sightings where transactions.contains(StoredText(sighting.transactionID)) {
                receiver.receive(sighting: sighting, at: source)
            }
            for claim in facts.receiptClaims where transactions.contains(StoredText(claim.transactionID)) { receiver.receive(claim: claim) }
            for product in facts.catalog { receiver.receive(product: product) }
        }

        func save(_ item: ResolvedTransaction, ids: IDTable) throws {
            resolved[ids.text(item.transaction.transactionID)] = StoredJoinResults.row(of: item, ids: ids)
        }

        func save(_ finding: Finding, files: SourceFiles) throws {
            findings[finding.findingID] = StoredJoinResults.row(of: finding, files: files)
        }
    }
}
