/// Stage 2, normalize: Apple's transaction sightings → one clean row per transaction (`stg_*`), no joins.
///
/// - `stg_apple__transactions`: one verified transaction per `transaction_id`,
///   merged from every receipt, V2 transaction and notification sighting.
/// - `stg_apple__refunds`: refund and reversal events per transaction, with
///   repeated notifications (same `notificationUUID`) dropped.
/// - `stg_receipts__senders`: which users sent a receipt with which transaction.
///
/// Server lines, receipt claims, MMP rows and first registrations are not staged: the stage that
/// reads them normalizes them as it reads (`ServerOrders`, `ServerDeliveries`, `ReceiptClaims`,
/// `MMPEvents`, `FirstRegistrations`).
public enum NormalizeStage {
    /// Rebuilds every `stg_*` table, or — when ingest recorded which keys changed — only the rows of those keys.
    ///
    /// The builders run as `ReaderJobs`: each reads the raw tables on a worker's own connection
    /// while this one only inserts (`workers` bounds how many read at once). What they read is
    /// committed first: a full rebuild's request in `ChangedKeys` (which only the join clears), an
    /// incremental one's changed keys (`normalize__changed_*`, taken from `ChangedKeys`, which keeps
    /// them). A full rebuild writes new tables beside the current ones, job by job, and switches
    /// them in at the end (`RebuiltTables`); an incremental one deletes the changed keys' rows and
    /// inserts their new ones in one transaction. Either way a reader (`history`) sees whole tables,
    /// never a half-written one, and a run killed half-way redoes the same work: in full, or for the
    /// same keys.
    /// `rowsWritten` hears of the rows written as they go, on the calling thread (a progress line).
    public static func run(
        database: Database, workers: WorkerPool = WorkerPool(width: WorkerPool.defaultWidth), rowsWritten: ((Int) -> Void)? = nil
    ) throws {
        Trace.mark("normalize start")
        let full = try database.transaction {
            let full = try needsFullRebuild(database)
            if full {
                try ChangedKeys.requestFullRebuild(database)
                try database.execute(tables.createBeside)
            } else {
                // What rebuilds one key's rows; a bulk ingest left them to be built again.
                try RawIndexes.restore(database)
                try database.execute(tables.dropBeside)
                try database.execute(NormalizeScope.prepareChanged)
                try database.execute(NormalizeScope.recordLinks)
            }
            return full
        }
        Trace.mark("normalize scope (\(full ? "full" : "changed keys"))")
        if full {
            let existing = try database.indexNames()
            // Each builder fills tables of its own, so their rows go in as they come. Whenever no
            // rows wait, the writer builds an index: first the raw tables' (which a bulk ingest
            // dropped), then each finished builder's tables', instead of all of them one after
            // another at the end.
            var indexes = RawIndexes.all
            func nextIndex() -> (() throws -> Void)? {
                guard !indexes.isEmpty else { return nil }
                let sql = indexes.removeFirst()
                return { try database.transaction { try database.execute(sql) } }
            }
            try ReaderJobs.runUnordered(
                builders.map { $0.build(.everything) }, database: database, pool: workers,
                afterJob: { job in
                    indexes += builders[job].tables.map { tables.createIndexes(of: $0, beside: true, existing: existing) }.filter { !$0.isEmpty }
                },
                idleWork: nextIndex, rowsWritten: rowsWritten)
            while let build = nextIndex() { try build() }
            Trace.mark("normalize builders and indexes")
            try database.transaction {
                try database.execute(tables.switchIn)
            }
            Trace.mark("normalize switch")
        } else {
            try database.transaction {
                try database.execute(NormalizeScope.deleteChanged)
                try ReaderJobs.runUnordered(builders.map { $0.build(.changed) }, database: database, pool: workers, inCallersTransaction: true,
                                            rowsWritten: rowsWritten)
                Trace.mark("normalize builders")
            }
            Trace.mark("normalize commit")
        }
    }

    /// A fresh store, a pending full rebuild, or `stg_*` tables from an older iaprecon.
    static func needsFullRebuild(_ database: Database) throws -> Bool {
        guard try hasCurrentTables(database), try !ChangedKeys.isFullRebuildPending(database) else { return true }
        // Past about a third of the transactions, one pass over everything is cheaper than key lookups.
        let changed = Int64(try ChangedKeys.count(.transaction, in: database))
        let transactions = try database.scalar("SELECT max(rowid) FROM stg_apple__transactions").integerValue
        return changed > max(1_000, transactions / 3)
    }

    /// Whether the `stg_*` tables have this iaprecon's newest columns. A store written by an older
    /// one (no `offer`, or sources as `path:line` text where they are now file ids and lines) is
    /// rebuilt in full once, never read as it is.
    static func hasCurrentTables(_ database: Database) throws -> Bool {
        let current = try database.scalar("""
            SELECT count(*) FROM pragma_table_info('stg_apple__transactions') WHERE name IN ('offer', 'file_id_3')
            """).integerValue
        return current == 2
    }

    /// The `stg_*` builders, each for all rows or the changed keys' rows; the slowest to read first,
    /// so a full rebuild's writer has rows to insert while the others still sort.
    private static let builders: [(tables: [String], build: @Sendable (NormalizeScope) -> ReaderJob)] = [
        (["stg_apple__transactions", "stg_apple__refunds", "stg_receipts__senders"], buildTransactions),
    ]

    /// The `stg_*` tables the builders write, declared in `Tables`.
    static let tables = Tables.staged

    /// Merges sightings per transaction in file order: the first sighting that has a field gives it,
    /// except that any `Production` sighting makes the transaction Production.
    private static func buildTransactions(_ scope: NormalizeScope) -> ReaderJob {
        ReaderJob(inserts: [
            RebuiltTables.insert(into: "stg_apple__transactions", values: 23, beside: scope.beside),
            RebuiltTables.insert(into: "stg_apple__refunds", values: 8, beside: scope.beside, orIgnore: true),
            RebuiltTables.insert(into: "stg_receipts__senders", values: 5, beside: scope.beside),
        ]) { reader, target in try mergeTransactions(reader, scope, into: target) }
    }

    /// Tables 0, 1, 2 of `target`: transactions, refunds, senders.
    private static func mergeTransactions(_ reader: Database, _ scope: NormalizeScope, into target: any RowTarget) throws {
        var current: MergedTransaction?
        // Per transaction: notifications seen, and each receipt sender's earliest line (by event time, then file order).
        var seenNotifications = Set<String>()
        var senders: [String: (ms: Int64, source: StoredSource)] = [:]
        func flush() throws {
            guard let merged = current else { return }
            try target.insert(table: 0, merged.values)
            for (userID, first) in senders {
                try target.insert(table: 2, [.text(merged.transactionID), .text(userID), .integer(first.ms)] + first.source.values)
            }
            current = nil
            seenNotifications.removeAll(keepingCapacity: true)
            senders.removeAll(keepingCapacity: true)
        }
        try reader.execute(SourceFiles.rankTable)
        try reader.forEach("""
            SELECT a.transaction_id, a.original_transaction_id, a.product_id, a.purchase_ms, a.expires_ms, a.environment,
                   a.price_milli_n, a.currency, a.storefront, a.app_account_token, a.type, a.quantity_n, a.ownership,
                   a.subscription_group, a.event_ms, a.file_id, a.notification_uuid, a.notification_type,
                   a.revocation_ms, a.revocation_type, a.revocation_percentage_n, a.revocation_reason, a.origin, a.user_id, a.line,
                   a.offer
            FROM raw_apple__transactions a \(scope.scan) JOIN temp.file_rank r USING (file_id)
            WHERE \(scope.transactions("a.transaction_id"))
            ORDER BY a.transaction_id, r.rank, a.line, a.item
            """) { row in
            let transactionID = row.string(0)
            let source = StoredSource(file: row.int(15), line: row.int(24))
            if current?.transactionID != transactionID {
                try flush()
                current = MergedTransaction(transactionID: transactionID)
            }
            // The same notification received twice is one notification (CONTRACT.md §1.3).
            if let uuid = row.optionalString(16), !seenNotifications.insert(uuid).inserted { return }
            // Who sent a receipt with it: rows arrive in file order, so a later row wins only with an earlier time.
            if let userID = row.optionalString(23), ["receipt", "v2"].contains(row.string(22)) {
                let ms = row.optionalInt(14) ?? .min
                if let first = senders[userID], first.ms <= ms {} else { senders[userID] = (ms, source) }
            }
            current?.add(row, source: source)
            let notificationType = row.optionalString(17)
            if notificationType == "REFUND_REVERSED" {
                try target.insert(table: 1, [.text(transactionID), .text("reversal"), SQLValue(row.optionalInt(14) ?? row.optionalInt(18)),
                                         .null, .null, .null] + source.values)
            } else if let revocationMs = row.optionalInt(18) {
                try target.insert(table: 1, [.text(transactionID), .text("refund"), .integer(revocationMs), SQLValue(row.optionalString(19)),
                                         SQLValue(row.optionalInt(20)), SQLValue(row.optionalString(21))] + source.values)
            }
        }
        try flush()
    }
}

/// Where a staged row was read, as its table stores it: `file_id, line` (`SourceFiles` reads them back).
private struct StoredSource {
    let file: Int64
    let line: Int64

    var values: [SQLValue] { [.integer(file), .integer(line)] }
}

/// The merge of one transaction's sightings.
private struct MergedTransaction {
    let transactionID: String
    var fields: [SQLValue] = Array(repeating: .null, count: 13)
    var environment: String?
    /// The strongest offer any sighting names: a trial in `in_app` counts though `latest_receipt_info` omits it.
    var offer: OfferTerms?
    var firstSeenMs: Int64?
    var sightings = 0
    /// Where it was first seen, and its second and third sightings.
    var sources: [StoredSource] = []

    init(transactionID: String) { self.transactionID = transactionID }

    /// Columns 1...13 of the sighting query map onto `fields` 0...12 (environment handled apart).
    mutating func add(_ row: Row, source: StoredSource) {
        sightings += 1
        for column in 1...13 where column != 5 {
            if fields[column - 1] == .null { fields[column - 1] = row.value(column) }
        }
        let sightingEnvironment = AppleEnvironment.canonical(row.optionalString(5))
        if environment == nil || sightingEnvironment == "Production" {
            environment = sightingEnvironment ?? environment
        }
        if let seen = row.optionalInt(14) { firstSeenMs = min(firstSeenMs ?? seen, seen) }
        if let sighted = row.optionalString(25).flatMap(OfferTerms.init(rawValue:)), offer.map({ $0 < sighted }) ?? true { offer = sighted }
        if sources.count < 3 { sources.append(source) }
    }

    var values: [SQLValue] {
        var merged = fields
        merged[4] = SQLValue(environment)
        if merged[0] == .null { merged[0] = .text(transactionID) }
        if merged[10] == .null { merged[10] = .integer(1) }
        return [.text(transactionID)] + merged
            + [SQLValue(firstSeenMs), .integer(Int64(sightings)), SQLValue(offer?.rawValue)]
            + (0..<3).flatMap { $0 < sources.count ? sources[$0].values : [.null, .null] }
    }
}

/// Which rows a normalize rebuilds: all, or those of the keys `ChangedKeys` recorded.
enum NormalizeScope {
    case everything
    case changed

    /// A full rebuild reads whole tables in storage order: walking a key index would fetch each row at random.
    var scan: String { self == .everything ? "NOT INDEXED" : "" }

    /// A full rebuild writes its tables beside the current ones (`RebuiltTables`).
    var beside: Bool { self == .everything }

    /// A condition on a transaction id column.
    func transactions(_ column: String) -> String {
        self == .everything ? "1" : "\(column) IN normalize__changed_transactions"
    }

    static let prepareChanged = """
        DROP TABLE IF EXISTS normalize__changed_transactions;
        \(Tables.normalizeChangedKeys)
        INSERT INTO normalize__changed_transactions \(ChangedKeys.selectKeys(.transaction));
        """

    /// Before the changed keys' rows go: the users, orders and chains they linked to, so the join
    /// also revisits what a replaced file took away. (Ingest records what a replaced file's
    /// order, delivery and receipt lines linked to: no staged copy of them exists.)
    static let recordLinks = [
        ChangedKeys.recordSQL(.transaction, "key FROM normalize__changed_transactions"),
        ChangedKeys.recordSQL(.user, "user_id FROM stg_receipts__senders WHERE transaction_id IN normalize__changed_transactions"),
        ChangedKeys.recordSQL(.chain, "original_transaction_id FROM stg_apple__transactions WHERE transaction_id IN normalize__changed_transactions"),
        ChangedKeys.recordSQL(.order, """
            app_account_token FROM stg_apple__transactions
            WHERE transaction_id IN normalize__changed_transactions AND app_account_token IS NOT NULL
            """),
    ].joined(separator: "\n")

    /// The changed keys' rows, deleted in the transaction that inserts their new ones.
    static let deleteChanged = """
        DELETE FROM stg_apple__transactions WHERE transaction_id IN normalize__changed_transactions;
        DELETE FROM stg_apple__refunds WHERE transaction_id IN normalize__changed_transactions;
        DELETE FROM stg_receipts__senders WHERE transaction_id IN normalize__changed_transactions;
        """
}
