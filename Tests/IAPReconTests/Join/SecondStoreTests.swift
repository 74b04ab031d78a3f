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

        let resolved = try rows(database, "SELECT * FROM int_transactions_resolved ORDER BY transaction_id", columns: 22)
        #expect(resolved.count > 200)
        #expect(memory.resolved.keys.sorted().map { memory.resolved[$0] ?? [] } == resolved)
        // The tie-out with Apple is the one part this store leaves out (it keeps no Sales Report).
        let findings = try rows(database, "SELECT * FROM fct_findings WHERE kind != 'unverified_apple_sales' ORDER BY finding_id", columns: 13)
        #expect(findings.count > 10)
        #expect(memory.findings.keys.sorted().map { memory.findings[$0] ?? [] } == findings)
        #expect(overMemory.findings == findings.count)
        withExtendedLifetime((generated, scenario)) {}
    }

    @Test("a night over facts held in memory follows the changed keys and writes what a full join over SQLite writes")
    func inMemoryNightEqualsFullJoin() throws {
        let (generated, nights, _) = try Scenario.generatedNights(users: 500, days: 14, seed: 7)
        let database = try nights.open()
        _ = try Pipeline.ingest(input: nights.input, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
        try Pipeline.normalize(database: database)
        let memory = try InMemoryJoinStore(copying: database)
        #expect(try JoinStage.run(store: memory, settings: ReconcileSettings(), batchTransactions: 40).recomputedTransactions == nil)
        // The memory store has joined what the SQLite store holds: the SQLite store's log of changes
        // starts again, and the last day arrives; the memory store copies the facts and the changes.
        try ChangedKeys.clear(database)
        _ = try Pipeline.ingest(input: generated.input, database: database, jobs: 2, rules: LineRules(signatures: .testChain),
                                progress: nil)
        try memory.copy(database)
        let night = try JoinStage.run(store: memory, settings: ReconcileSettings(), batchTransactions: 40)
        let recomputed = try #require(night.recomputedTransactions, "the second join follows the changed keys")
        #expect(recomputed > 20)
        #expect(recomputed < memory.resolved.count, "a night recomputes less than the whole store")

        let full = try Scenario()
        let reference = try full.open()
        _ = try Pipeline.ingest(input: generated.input, database: reference, jobs: 2, rules: LineRules(signatures: .testChain),
                                progress: nil)
        try Pipeline.normalize(database: reference)
        let overSQLite = try Pipeline.join(database: reference, settings: ReconcileSettings())
        #expect(night.asOfMs == overSQLite.asOfMs)
        let resolved = try rows(reference, "SELECT * FROM int_transactions_resolved ORDER BY transaction_id", columns: 22)
        #expect(memory.resolved.keys.sorted().map { memory.resolved[$0] ?? [] } == resolved)
        let findings = try rows(reference, "SELECT * FROM fct_findings WHERE kind != 'unverified_apple_sales' ORDER BY finding_id",
                                columns: 13)
        #expect(findings.count > 10)
        #expect(memory.findings.keys.sorted().map { memory.findings[$0] ?? [] } == findings)
        withExtendedLifetime((generated, nights, full)) {}
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
    private var facts = ScopeFacts()
    private var files = SourceFiles(paths: [:])
    private var latest: (ms: Int64?, mmpWallMs: Int64?) = (nil, nil)
    /// What changed since the last join, as the SQLite store recorded it when the facts were copied.
    private var changed: [(kind: KeyKind, key: String)] = []
    private(set) var savedSettings: JoinSettings?
    private(set) var resolved: [String: [SQLValue]] = [:]
    private(set) var findings: [String: [SQLValue]] = [:]
    private var rebuilt: (resolved: [String: [SQLValue]], findings: [String: [SQLValue]])?
    private(set) var batchesDecided = 0

    /// Every fact of `database`'s transactions and orders, in the order it hands them to a batch.
    init(copying database: Database) throws {
        try copy(database)
    }

    /// Takes `database`'s facts and changed keys in place of those held (a night's new input);
    /// keeps the results and settings.
    func copy(_ database: Database) throws {
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
        changed = try ChangedKeys.all(in: database)
    }

    var factKeyKinds: Set<KeyKind> { [.transaction, .order] }

    func transaction<T>(_ body: () throws -> T) throws -> T { try body() }
    func missingRawIndexes() throws -> [String] { [] }
    func buildRawIndex(_ name: String) throws {}
    func latestEventTimes() throws -> (ms: Int64?, mmpWallMs: Int64?) { latest }
    func latestSalesReportDay() throws -> String? { nil }
    func latestSpendDay() throws -> String? { nil }
    func previousSettings() throws -> JoinSettings? { savedSettings }
    func fullRebuildCauses() throws -> [String] { changed.filter { $0.kind == .all }.map { $0.key.isEmpty ? "a store migration" : $0.key } }
    func changedKeys() throws -> [(kind: KeyKind, key: String)] { changed }
    func changedSalesDays() throws -> [String] { [] }

    func undeliveredTransactions(purchasedAfter after: Int64, through: Int64, _ body: (String) -> Void) throws {
        for (id, row) in resolved {
            guard case .integer(let purchaseMs) = row[Resolved.purchaseMs], purchaseMs > after, purchaseMs <= through,
                  row[Resolved.deliveries] == .integer(0) else { continue }
            body(id)
        }
    }

    /// Where a resolved transaction's row holds what the closure follows (`StoredJoinResults.row`).
    enum Resolved {
        static let purchaseMs = 3, userID = 6, orderID = 7, deliveries = 18
    }

    /// Where a finding's row holds what a scope's findings are picked by.
    enum FindingRow {
        static let kind = 1, userID = 3, transactionID = 5, originalTransactionID = 6
    }
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
        // The order lines first, as the protocol asks.
        for (order, _) in facts.orders { add([(order.orderID, .order), (order.userID, .user)]) }
        for (sighting, _) in facts.sightings {
            let sender = TransactionOrigin.sentByUser.contains(sighting.origin) ? sighting.userID : nil
            add([(sighting.transactionID, .transaction), (sighting.originalTransactionID ?? sighting.transactionID, .chain),
                 (sighting.appAccountToken, .order), (sender, .user)])
        }
        for (delivery, _) in facts.deliveries {
            add([(delivery.transactionID, .transaction), (delivery.userID, .user), (delivery.orderID, .order)])
        }
        for claim in facts.receiptClaims { add([(claim.transactionID, .transaction), (claim.orderID, .order)]) }
        try deliver(rows)
    }

    /// What `StoredLinks.reach` follows, over the facts: from a transaction, its deliveries,
    /// claims and sightings (link rows) and the order and user the last join gave it; from a
    /// chain, its renewals and its first purchase; from an order, its lines (link rows), the
    /// transactions delivered, claimed or tokened with it and the one the last join matched;
    /// from a user, their orders, what they sent and what they received.
    func reach(from frontier: JoinScope, known: Set<RowFingerprint>, budget _: ClosureMemoryBudget) throws -> [ReachedKeys]? {
        var reached = ReachedKeys()
        var seen = Set<RowFingerprint>()
        func note(_ key: String?, _ kind: KeyKind) {
            guard var key else { return }
            let fingerprint = key.withUTF8 { RowFingerprint(kind.rawValue, $0) }
            guard !known.contains(fingerprint), seen.insert(fingerprint).inserted else { return }
            reached.keys.append((fingerprint, key, kind))
        }
        func link(_ keys: [(String?, KeyKind)]) {
            for case let (key?, kind) in keys {
                note(key, kind)
                var key = key
                key.withUTF8 { reached.links.append($0, kind: kind) }
            }
            reached.links.endRow()
        }
        func has(_ set: Set<StoredText>, _ key: String?) -> Bool { key.map { set.contains(StoredText($0)) } ?? false }
        // An order id no order line has links nothing (`StoredLinks.listedOrder`).
        let orderLines = Set(facts.orders.map { StoredText($0.0.orderID) })
        func listed(_ orderID: String?) -> String? { has(orderLines, orderID) ? orderID : nil }
        for (line, _) in facts.deliveries {
            if has(frontier.transactions, line.transactionID) {
                link([(line.transactionID, .transaction), (line.userID, .user), (listed(line.orderID), .order)])
            }
            if has(frontier.orders, listed(line.orderID)) || has(frontier.users, line.userID) { note(line.transactionID, .transaction) }
        }
        for claim in facts.receiptClaims {
            if has(frontier.transactions, claim.transactionID) { link([(claim.transactionID, .transaction), (listed(claim.orderID), .order)]) }
            if has(frontier.orders, listed(claim.orderID)) { note(claim.transactionID, .transaction) }
        }
        for (sighting, _) in facts.sightings {
            let sender = TransactionOrigin.sentByUser.contains(sighting.origin) ? sighting.userID : nil
            if has(frontier.transactions, sighting.transactionID) {
                link([(sighting.transactionID, .transaction), (sighting.originalTransactionID ?? sighting.transactionID, .chain),
                      (listed(sighting.appAccountToken), .order), (sender, .user)])
            }
            let isRenewal = sighting.originalTransactionID.map { $0 != sighting.transactionID } ?? false
            if (isRenewal && has(frontier.chains, sighting.originalTransactionID)) || has(frontier.chains, sighting.transactionID)
                || has(frontier.orders, listed(sighting.appAccountToken)) || has(frontier.users, sender) {
                note(sighting.transactionID, .transaction)
            }
        }
        for (line, _) in facts.orders {
            if has(frontier.orders, line.orderID) { link([(line.orderID, .order), (line.userID, .user)]) }
            if has(frontier.users, line.userID) { note(line.orderID, .order) }
        }
        for (id, row) in resolved {
            if has(frontier.transactions, id) {
                note(row[Resolved.orderID].text, .order)
                note(row[Resolved.userID].text, .user)
            }
            if has(frontier.orders, row[Resolved.orderID].text) { note(id, .transaction) }
        }
        return [reached]
    }

    /// The closure read no facts whole (`reach` hands none): the facts are all in memory already.
    var closureFactsBudget: Int { 0 }
    /// Its facts are in memory already: a closure reads nothing new.
    var closureMemoryBudget: Int { .max }

    func update(_ scope: JoinScope, facts _: ClosureFacts, batches: some RebuildBatches, pool: WorkerPool,
                decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws -> TieOutChanges {
        var decided: (resolved: [String: [SQLValue]], findings: [String: [SQLValue]]) = ([:], [:])
        for number in 0..<batches.count {
            let batch = Batch(facts: facts, keys: batches.scope(number), files: files)
            try decide(batch)
            decided.resolved.merge(batch.resolved) { $1 }
            decided.findings.merge(batch.findings) { $1 }
            batchesDecided += 1
        }
        // The scope's current rows, as `ScopeRows.tables` picks them, give way to the decided ones.
        func inScope(_ key: String?, _ keys: Set<StoredText>) -> Bool { key.map { keys.contains(StoredText($0)) } ?? false }
        resolved = resolved.filter { !inScope($0.key, scope.transactions) }
        findings = findings.filter { _, row in
            let kind = row[FindingRow.kind].text
            return !(inScope(row[FindingRow.transactionID].text, scope.transactions)
                || (kind == "shared_apple_id_subscription" && inScope(row[FindingRow.originalTransactionID].text, scope.chains))
                || (kind == "multi_apple_id_subscription" && inScope(row[FindingRow.userID].text, scope.users)))
        }
        resolved.merge(decided.resolved) { $1 }
        findings.merge(decided.findings) { $1 }
        return TieOutChanges()
    }

    func beginRebuild() throws {
        rebuilt = ([:], [:])
    }

    func buildRawIndexesAlongside(_ names: [String]) -> Background<Void> { Background {} }
    func buildRebuiltIndexesAlongside() -> Background<Void> { Background {} }

    /// Each batch's keys: the facts are all in memory already.
    func readFacts(of batches: some RebuildBatches, pool: WorkerPool) throws -> [JoinScope] {
        (0..<batches.count).map { batches.scope($0) }
    }

    func rebuild(_ scopes: [JoinScope], pool: WorkerPool, decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws {
        for keys in scopes {
            let batch = Batch(facts: facts, keys: keys, files: files)
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

    func finish(settings: JoinSettings) throws {
        savedSettings = settings
        changed = []
    }
    func findingCount() throws -> Int { findings.count }
    func tieOutInputs(days: Set<String>?, counted: Set<String>?, zone: Zone, ofRebuilt: Bool) throws -> TieOutInputs? { nil }

    func tieOutRows(days: Set<String>) throws -> [TieOutRow] { [] }

    func replaceTieOut(days: [(day: String, startMs: Int64?)]?, rows: [TieOutRow], findings: [Finding], overlaps: [SalesReportOverlap],
                       mixedProceeds: [SalesReportMixedProceeds], files: SourceFiles) throws {
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

extension SQLValue {
    /// The text this value holds; nil for any other.
    fileprivate var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }
}
