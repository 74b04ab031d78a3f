/// The join's store in SQLite (`JoinStore`): one writer connection, and read-only connections of
/// its own for the work it spreads over threads (a closure round's queries, the link graph
/// read beside its numbering, each batch read and decided on a pool worker while the writer only
/// inserts: `ReaderJobs`). A batch's keys go into its reader's `temp.join_*` tables, which the
/// fact queries join against.
struct SQLiteJoinStore: JoinStore {
    let database: Database
    /// The bytes of facts a full rebuild holds in memory before it spills them (`RoutedFacts`).
    let routedFactsBudget: Int
    /// Hears how many bytes of facts a full rebuild spilled (tests).
    let spilledBytes: ((Int) -> Void)?
    /// The most bytes of facts an incremental join's closure holds for its batches (`ClosureFacts`).
    let closureFactsBudget: Int
    /// The most bytes an incremental join's closure holds before it gives up for a full rebuild (`ClosureMemoryBudget`).
    let closureMemoryBudget: Int

    static let routedFactsBudget = 256 << 20
    /// A closed scope is at most a third of the store: past this, its batches read their facts by key.
    static let closureFactsBudget = 128 << 20
    /// What a full rebuild holds before it spills: a night holds no more.
    static let closureMemoryBudget = routedFactsBudget

    init(_ database: Database, routedFactsBudget: Int = Self.routedFactsBudget, closureFactsBudget: Int = Self.closureFactsBudget,
         closureMemoryBudget: Int = Self.closureMemoryBudget, spilledBytes: ((Int) -> Void)? = nil) {
        self.database = database
        self.routedFactsBudget = routedFactsBudget
        self.closureFactsBudget = closureFactsBudget
        self.closureMemoryBudget = closureMemoryBudget
        self.spilledBytes = spilledBytes
    }

    /// With the connection's temporary storage in memory: an incremental join writes its results
    /// into indexed tables (`Database.keepTemporaryStorageInMemory`), and its temp tables hold
    /// only the keys of the scope it reads, which it holds anyway.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try database.keepTemporaryStorageInMemory(true)
        defer { try? database.keepTemporaryStorageInMemory(false) }
        return try database.transaction(body)
    }

    func missingRawIndexes() throws -> [String] {
        try SQLiteRawIndexStore(database).missingRawIndexes()
    }

    func buildRawIndex(_ name: String) throws {
        try SQLiteRawIndexStore(database).buildRawIndex(name)
    }

    func latestEventTimes() throws -> (ms: Int64?, mmpWallMs: Int64?) {
        try StoredJoinResults.latestEventTimes(database)
    }

    func latestSalesReportDay() throws -> String? {
        try AppleTieOutStore.latestDay(database)
    }

    func latestSpendDay() throws -> String? {
        try StoredJoinResults.latestSpendDay(database)
    }

    func previousSettings() throws -> JoinSettings? {
        try StoredJoinResults.previousSettings(database)
    }

    func fullRebuildCauses() throws -> [String] {
        try ChangedKeys.fullRebuildCauses(database)
    }

    func changedKeys() throws -> [(kind: KeyKind, key: String)] {
        try ChangedKeys.all(in: database)
    }

    func undeliveredTransactions(purchasedAfter after: Int64, through: Int64, _ body: (String) -> Void) throws {
        try StoredLinks.undeliveredTransactions(purchasedAfter: after, through: through, in: database, body)
    }

    func transactionCountEstimate() throws -> Int {
        try StoredJoinResults.transactionCountEstimate(database)
    }

    func linkKeysEstimate() throws -> Int64 {
        try StoredLinks.keysEstimate(database)
    }

    /// Read on a worker's own connection, which steps the queries and fingerprints the keys, while
    /// the calling thread takes each batch: the two halves of the work on two cores.
    func forEachLinkRows(_ deliver: (LinkRows) throws -> Void) throws {
        let path = database.path
        try WorkerPool(width: 1).run(count: 1, bound: 4, produce: { (_, send: (Result<LinkRows, any Error>) -> Void) in
            do {
                try StoredLinks.forEachLinkRows(Database(path: path, readOnly: true)) { send(.success($0)) }
            } catch {
                send(.failure(error))
            }
        }, consume: { _, batch in try deliver(try batch.get()) })
    }

    /// The link queries shared between this connection and a reader's own (what it reads was
    /// committed before the caller's transaction began, which has written nothing of the join's yet).
    func reach(from frontier: JoinScope, known: Set<RowFingerprint>, budget: ClosureMemoryBudget) throws -> [ReachedKeys]? {
        do {
            return try StoredLinks.reach(from: frontier, known: known, budget: budget, in: database, alongside: { [path = database.path] in
                try Database(path: path, readOnly: true)
            })
        } catch is ClosureMemoryBudget.Exceeded {
            return nil
        }
    }

    var factKeyKinds: Set<KeyKind> { StoredScopeFacts.keyKinds }

    func changedSalesDays() throws -> [String] {
        try ChangedKeys.keys(.salesDay, in: database)
    }

    /// The facts the closure held are routed to the batches, which read only the others by key.
    func update(_ scope: JoinScope, facts: ClosureFacts, batches: some RebuildBatches, pool: WorkerPool,
                decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws -> TieOutChanges {
        let currentResolved = facts.isHeld ? facts.takeCurrentResolved() : nil
        let held = facts.isHeld ? RoutedFacts.holding(facts, routedTo: batches, folder: PathParent.of(database.path)) : nil
        Trace.mark("join closure's facts routed (\(held == nil ? "none held" : "\(facts.bytes) bytes"))")
        // The scope's current rows are read here while the workers read the batches' facts.
        var current: ScopeRows?
        try ReaderJobs.run(Self.jobs(batches, held, decide, inserts: StoredJoinResults.inserts { "main." + $0 }), database: database,
                           pool: pool, inCallersTransaction: true, prepare: {
                               // What `ScopeRows` selects the current rows by: no orders.
                               for kind in [KeyKind.transaction, .user, .chain] {
                                   try StoredScopeFacts.fill(scope, kind, prefix: "join", in: database)
                               }
                               try StoredJoinResults.beginUpdate(database)
                               current = try ScopeRows(database, currentResolved: currentResolved)
                           }, keep: { batch in
                               guard let kept = try current?.changed(batch) else { throw ScopeRows.NotRead() }
                               return kept
                           }, rowsWritten: rowsWritten)
        guard var rows = current else { throw ScopeRows.NotRead() }
        try rows.deleteUnwritten()
        try StoredTransactionChanges.record(rows.transactionChanges, in: database)
        try StoredJoinResults.createMissingIndexes(database)
        return rows.tieOutChanges
    }

    func beginRebuild() throws {
        try StoredJoinResults.beginRebuild(database)
    }

    /// On a read-write connection of its own, one transaction per index, as normalize builds them.
    func buildRawIndexesAlongside(_ names: [String]) -> Background<Void> {
        Background { [path = database.path] in
            guard !names.isEmpty else { return }
            let builder = try Database(path: path)
            try builder.enableWAL()
            for name in names {
                try SQLiteRawIndexStore(builder).buildRawIndex(name)
                Trace.mark("join raw index \(name) built alongside")
            }
        }
    }

    /// On a read-write connection of its own, in one transaction (`StoredJoinResults.createIndexesBeside`).
    func buildRebuiltIndexesAlongside() -> Background<Void> {
        Background { [path = database.path] in
            let builder = try Database(path: path)
            try builder.enableWAL()
            try StoredJoinResults.createIndexesBeside(builder)
            Trace.mark("join rebuilt results' indexes built alongside")
        }
    }

    /// Reads the facts once, table by table, routed to their batches (`RoutedFacts`), holding what
    /// the heap has room for beside the batches and their routes (`RoutedFacts.budget`).
    func readFacts(of batches: some RebuildBatches, pool: WorkerPool) throws -> RoutedFacts {
        let budget = RoutedFacts.budget(most: routedFactsBudget, heapInUse: ProcessMemory.heapBytesInUse ?? 0)
        let facts = try RoutedFacts.read(path: database.path, batches: batches, pool: pool, budget: budget)
        Trace.mark("join facts routed (\(facts.spilledBytes) bytes spilled)")
        return facts
    }

    /// Decides the batches on the pool's workers.
    func rebuild(_ facts: RoutedFacts, pool: WorkerPool, decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws {
        let inserts = StoredJoinResults.inserts { RebuiltTables.name($0, beside: true) }
        let jobs = (0..<facts.batches).map { batch in
            ReaderJob(inserts: inserts) { reader, target in
                try decide(RoutedBatch(reader: reader, target: target, files: try StoredLedger.sourceFiles(reader),
                                       rows: facts.take(batch: batch)))
            }
        }
        try ReaderJobs.run(jobs, database: database, pool: pool, rowsWritten: rowsWritten)
        spilledBytes?(facts.spilledBytes)
    }

    func switchInRebuilt() throws {
        try StoredJoinResults.switchIn(database)
        try StoredTransactionChanges.recordAll(in: database)
    }

    func finish(settings: JoinSettings) throws {
        try StoredJoinResults.saveSettings(settings, in: database)
        try ChangedKeys.clear(database)
    }

    func findingCount() throws -> Int {
        try StoredJoinResults.findingCount(database)
    }

    func tieOutInputs(days: Set<String>?, counted: Set<String>?, zone: Zone, ofRebuilt: Bool) throws -> TieOutInputs? {
        if let days, days.isEmpty { return nil }
        // Read once: the verified units are wanted for the covered days counted anew, the rows for
        // the covered days recomputed.
        let covered = try AppleTieOutStore.coveredDays(database, among: nil)
        let verified = try AppleTieOutStore.verified(database, days: covered.filter { counted?.contains($0) ?? true }, zone: zone,
                                                     scan: days == nil, rebuilt: ofRebuilt)
        var files = try StoredLedger.sourceFiles(database)
        let sales = try AppleTieOutStore.sales(database, days: days, files: &files)
        return TieOutInputs(days: days, sales: sales, covered: Set(covered.filter { days?.contains($0) ?? true }), verified: verified,
                            files: files)
    }

    func tieOutRows(days: Set<String>) throws -> [TieOutRow] {
        try AppleTieOutStore.rows(days: days, in: database)
    }

    func replaceTieOut(days: [(day: String, startMs: Int64?)]?, rows: [TieOutRow], findings: [Finding],
                       overlaps: [SalesReportOverlap], mixedProceeds: [SalesReportMixedProceeds], files: SourceFiles) throws {
        try AppleTieOutStore.replace(days: days, rows: rows, findings: findings, overlaps: overlaps, mixedProceeds: mixedProceeds, files: files,
                                     in: database)
    }

    /// One job per batch: its keys into the reader's temp tables, then decided, with the facts
    /// the closure held for it (`held`; nil: none held).
    private static func jobs(_ batches: some RebuildBatches, _ held: RoutedFacts?, _ decide: @escaping JoinDecision,
                             inserts: [String]) -> [ReaderJob] {
        (0..<batches.count).map { batch in
            ReaderJob(inserts: inserts) { reader, target in
                // Only what the batch reads by key: with the closure's facts, no orders.
                let keys = batches.scope(batch)
                for kind in held == nil ? [KeyKind.transaction, .order] : [.transaction] {
                    try StoredScopeFacts.fill(keys, kind, prefix: "join", in: reader)
                }
                try decide(Batch(reader: reader, target: target, files: try StoredLedger.sourceFiles(reader), held: held?.take(batch: batch)))
            }
        }
    }

    /// A batch on its reader's connection: facts from its `temp.join_*` keys, but for the tables
    /// the closure read whole (`StoredLinks.closureFactTables`) when it held them (`held`, by table), results to the writer.
    private struct Batch: JoinBatch, SavedToReaderTarget {
        let reader: Database
        let target: any RowTarget
        let files: SourceFiles
        let held: [RoutedRows]?
        let amounts = AmountTexts()

        func readFacts(into receiver: inout some ScopeFactsReceiver) throws {
            for table in StoredScopeFacts.FactTable.allCases {
                if let held, StoredLinks.closureFactTables.contains(table) {
                    try table.hand(routed: held[table.rawValue], files: files, to: &receiver)
                } else {
                    try StoredScopeFacts.read(table, reader, scope: "join", into: &receiver)
                }
            }
            try StoredScopeFacts.readCatalog(reader, into: &receiver)
        }
    }

    /// A batch of a full rebuild: its facts as routed to it, the catalog from its reader's
    /// connection, results to the writer.
    private struct RoutedBatch: JoinBatch, SavedToReaderTarget {
        let reader: Database
        let target: any RowTarget
        let files: SourceFiles
        /// By table (`FactTable.rawValue`).
        let rows: [RoutedRows]
        let amounts = AmountTexts()

        func readFacts(into receiver: inout some ScopeFactsReceiver) throws {
            for table in StoredScopeFacts.FactTable.allCases {
                try table.hand(routed: rows[table.rawValue], files: files, to: &receiver)
            }
            try StoredScopeFacts.readCatalog(reader, into: &receiver)
        }
    }
}

/// A batch whose decisions go to its reader job's target: tables 0, 1 and 2 of its inserts.
private protocol SavedToReaderTarget {
    var target: any RowTarget { get }
    /// The texts of the amounts the batch wrote, for its thread alone.
    var amounts: AmountTexts { get }
}

extension SavedToReaderTarget {
    func save(_ resolved: ResolvedTransaction, ids: IDTable) throws {
        try target.insert(table: 0, StoredJoinResults.row(of: resolved, ids: ids, amounts: amounts))
    }

    func save(_ finding: Finding, files: SourceFiles) throws {
        try target.insert(table: 1, StoredJoinResults.row(of: finding, files: files))
        for link in StoredJoinResults.chainRows(of: finding) { try target.insert(table: ScopeRows.findingChainsTable, link) }
    }
}
