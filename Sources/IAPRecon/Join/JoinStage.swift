import Foundation

/// The settings a reconciliation depends on.
public struct ReconcileSettings: Sendable {
    /// `--as-of`; nil for the latest event time in the inputs.
    public var asOfMs: Int64?
    public var graceMs: Int64 = 86_400_000
    public var mmpZone: Zone = .utc
    /// Without `--as-of`, the latest event time is taken up to this moment at most (a night's
    /// `--date` judges as of the end of its day at the latest).
    public var asOfLimitMs: Int64?
    /// `--tz`: the zone whose days spend rows name, as the report reads them; the default
    /// as-of of an input with no event time is the end of such a day (`JoinStage.defaultAsOfMs`).
    /// `Pipeline.run` takes its report's.
    public var reportZone: Zone = .utc
    /// The run's clock (`--now`, default the system clock), UTC epoch ms: the default as-of of an
    /// input with no event time is at most a day after it (`JoinStage.defaultAsOfMs`).
    /// `Pipeline.run` takes its line rules'.
    public var nowMs: Int64

    public init(asOfMs: Int64? = nil, graceMs: Int64 = 86_400_000, mmpZone: Zone = .utc, reportZone: Zone = .utc,
                nowMs: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) {
        self.asOfMs = asOfMs
        self.graceMs = graceMs
        self.mmpZone = mmpZone
        self.reportZone = reportZone
        self.nowMs = nowMs
    }
}

/// The store's raw lines are not indexed yet (a bulk ingest drops the indexes, normalize builds
/// them): the join would read every line for every batch.
public struct NotNormalized: Error, CustomStringConvertible, Sendable {
    public var description: String {
        "the store's input lines are not indexed for the join yet; run 'iaprecon normalize' on it first (or 'iaprecon run')"
    }
}

/// What the join decided, in numbers.
public struct JoinSummary: Sendable {
    public var asOfMs: Int64
    public var findings: Int
    /// For an incremental join, how many transactions it recomputed; nil for a full rebuild.
    public var recomputedTransactions: Int?
    /// For a full rebuild, why it was one, in words for the run's log.
    public var fullRebuildReason: String?
    /// How many raw indexes the join built itself (`MissingRawIndexes.builtByTheJoin`).
    public var rawIndexesBuilt = 0
    /// What a person should know of the inputs of the days it tied out: Sales Reports put in twice,
    /// and reports whose differing rows of a day share a product and country (`AppleTieOut.reportWarnings`).
    public var warnings: [String] = []
}

/// What the join does with a store whose raw indexes a bulk ingest dropped (`NormalizeStage`).
public enum MissingRawIndexes: Sendable {
    /// Refuses it: the stages run one by one, normalize first (`NotNormalized`).
    case refused
    /// Builds them: beside a full rebuild's reading, which reads each table whole and needs none
    /// of them, so that one core sorts indexes while the other reads; first, for a join that may
    /// read by key. `iaprecon run`, which runs both stages, leaves them to the join when it rebuilds in full.
    case builtByTheJoin
}

/// Stage 3, join: order ↔ transaction matching, refunds net of reversals,
/// subscription chains, findings (`int_*` and `fct_findings`), and the tie-out with Apple's
/// Sales Report (`fct_apple_tieout`, recomputed for the days a run touches: `AppleTieOut.refresh`).
///
/// Reads each batch's input lines, normalized as it reads them (`ReconciliationInput`), into
/// memory grouped by transaction, decides in Swift, and writes `int_transactions_resolved` (one row per verified
/// transaction with its user, the order matched to it and by which rule, price, refund and
/// deliveries) and `fct_findings`.
public enum JoinStage {
    /// Transactions per batch of a full rebuild (JoinComponents): what bounds the join's memory.
    public static let batchTransactions = 15_000

    /// Recomputes the closed scope of what changed, or everything when that reaches too far.
    ///
    /// Both decide batches of whole components, which the store reads and saves on the workers
    /// of `workers` (`JoinStore`). An incremental join cuts its closed scope into batches and
    /// saves them all in the one transaction that replaces the scope's results. A full rebuild
    /// saves its results beside the current ones batch by batch and switches them in with the run
    /// settings in its last transaction: readers see the previous results whole until then, and a
    /// run killed before it finds the same reason to rebuild in full. A full rebuild reads the
    /// store before it writes anything; raw indexes it is to build (`missingRawIndexes`) are
    /// built meanwhile, by the store's writer. Its results' indexes are built beside them, before
    /// the switch, while the tie-out with Apple reads them.
    static func run<Backend: JoinStore>(store: Backend, settings: ReconcileSettings, missingRawIndexes: MissingRawIndexes = .refused,
                    workers: WorkerPool = WorkerPool(width: WorkerPool.defaultWidth),
                    batchTransactions: Int = batchTransactions, rowsWritten: ((Int) -> Void)? = nil) throws -> JoinSummary {
        Trace.mark("join start")
        var missing = try store.missingRawIndexes()
        let rawIndexesBuilt = missing.count
        guard missing.isEmpty || missingRawIndexes == .builtByTheJoin else { throw NotNormalized() }
        if !missing.isEmpty, try !rebuildsInFull(store, settings: settings) {
            for name in missing { try store.buildRawIndex(name) }
            missing = []
            Trace.mark("join raw indexes built")
        }
        let latestMs = try defaultAsOfMs(store, settings: settings).map { min($0, settings.asOfLimitMs ?? .max) }
        let asOfMs = settings.asOfMs ?? latestMs ?? 0
        let rules = FindingRules(asOfMs: asOfMs, graceMs: settings.graceMs)
        let decide: JoinDecision = { batch in try decideBatch(batch, rules) }
        let kinds = store.factKeyKinds
        Trace.mark("join as-of")
        var warnings: [String] = []
        // One transaction from the first read: the scope's keys are written inside it too.
        var fullRebuildReason: String?
        let scope = try store.transaction { () throws -> JoinScope? in
            let closed: (scope: JoinScope, links: [LinkRows], facts: ClosureFacts)?
            switch try incrementalScope(store, settings: settings, asOfMs: asOfMs) {
            case .success(let scope): closed = scope
            case .failure(let full): (closed, fullRebuildReason) = (nil, full.reason)
            }
            Trace.mark("join scope (\(closed.map { String($0.scope.transactions.count) } ?? "full") transactions)")
            if let (scope, links, facts) = closed {
                // Small batches, so every worker has some.
                let limit = min(batchTransactions, max(100, scope.transactions.count / (4 * workers.width)))
                let batches = JoinComponents.batches(of: links, transactions: limit)
                Trace.mark("join batches (\(batches.count))")
                let changes = try store.update(scope, facts: facts, batches: batches.keys(of: kinds), pool: workers, decide: decide,
                                               rowsWritten: rowsWritten)
                Trace.mark("join decide")
                let days = Set(try store.changedSalesDays())
                // Not inside `rowsWritten?(…)`: an optional call skips its argument when nobody listens.
                let tieOut = try AppleTieOut.refresh(store, days: days, changes: changes)
                warnings = tieOut.warnings
                rowsWritten?(tieOut.rowsWritten)
                Trace.mark("join apple tie-out (\(days.count) report days, \(changes.removed.count + changes.added.count) changes)")
            }
            return closed?.scope
        }
        Trace.mark("join commit")
        if scope == nil {
            // Reading only, until the indexes are in: the store's one writer is theirs meanwhile.
            let indexes = store.buildRawIndexesAlongside(missing)
            let facts: Backend.RebuildFacts
            do {
                let batches = try JoinComponents.batches(in: store, transactions: batchTransactions)
                Trace.mark("join batches (\(batches.count))")
                facts = try store.readFacts(of: batches.keys(of: kinds), pool: workers)
            } catch {
                indexes.wait()
                throw error
            }
            try indexes.value()
            // Built beside the current results, which readers keep seeing until the switch.
            try store.transaction { try store.beginRebuild() }
            try store.rebuild(facts, pool: workers, decide: decide, rowsWritten: rowsWritten)
            // The batches' graphs and facts are freed: the tie-out and the report after it start
            // from what the join still holds, not from its peak.
            ProcessMemory.releaseFreed()
            Trace.mark("join decide")
        }
        // A full rebuild's results get their indexes on the store's writer while the tie-out with
        // Apple reads them on this connection, which writes it with the switch.
        var rebuiltTieOut: AppleTieOut.Refreshed?
        if scope == nil {
            let indexes = store.buildRebuiltIndexesAlongside()
            do {
                rebuiltTieOut = try AppleTieOut.refreshedFromRebuilt(store)
            } catch {
                indexes.wait()
                throw error
            }
            Trace.mark("join apple tie-out read")
            try indexes.value()
        }
        let summary = try store.transaction {
            if scope == nil { try store.switchInRebuilt() }
            try store.finish(settings: JoinSettings(asOfMs: asOfMs, graceMs: settings.graceMs, mmpZone: settings.mmpZone.identifier))
            Trace.mark("join switch and settings")
            if scope == nil {
                let tieOut = try rebuiltTieOut?.save(to: store) ?? (rowsWritten: 0, warnings: [])
                warnings = tieOut.warnings
                rowsWritten?(tieOut.rowsWritten)
                Trace.mark("join apple tie-out")
            }
            let total = try store.findingCount()
            return JoinSummary(asOfMs: asOfMs, findings: total, recomputedTransactions: scope?.transactions.count,
                               fullRebuildReason: fullRebuildReason, rawIndexesBuilt: rawIndexesBuilt, warnings: warnings)
        }
        Trace.mark("join committed")
        return summary
    }

    /// Decides one batch of whole components from its facts, and saves what it decided.
    private static func decideBatch(_ batch: any JoinBatch, _ rules: FindingRules) throws {
        var builder = ReconciliationInput.Builder(files: batch.files)
        try batch.readFacts(into: &builder)
        var input = builder.finished()
        let files = builder.files
        let matching = OrderMatching(input)
        // What only matching needed goes before the rest is resolved.
        input.orderDeliveriesInTimeOrder = []
        input.receiptClaims = []
        let resolved = ResolvedTransaction.resolve(input, matching)
        input.senders = [:]
        input.refunds = [:]
        let findings = rules.findings(resolved, input)
        for item in resolved { try batch.save(item, ids: input.ids) }
        for finding in findings { try batch.save(finding, files: files) }
    }

    /// Why a join rebuilt everything, in words for the run's log.
    struct FullRebuild: Error, Equatable {
        var reason: String
    }

    /// The scope of an incremental join, or why the join rebuilds in full: a pending full rebuild,
    /// no earlier join (or an older iaprecon's), other settings than the earlier join's, or changes
    /// that reach too far (a third of the transactions, or more held rows than the store's `closureMemoryBudget`).
    static func incrementalScope(_ store: some JoinStore, settings: ReconcileSettings, asOfMs: Int64) throws
        -> Result<(scope: JoinScope, links: [LinkRows], facts: ClosureFacts), FullRebuild> {
        let previous: JoinSettings
        switch try updatable(store, settings: settings) {
        case .success(let settings): previous = settings
        case .failure(let full): return .failure(full)
        }
        let seeds = try JoinScope.seeds(in: store, previousAsOfMs: previous.asOfMs, asOfMs: asOfMs, graceMs: settings.graceMs)
        // Past about a third of the transactions, reading them all is cheaper than chasing links.
        let transactions = try store.transactionCountEstimate()
        return try JoinScope.closure(of: seeds, in: store, limit: max(1_000, transactions / 3)).mapError { FullRebuild(reason: $0.reason) }
    }

    /// The settings of the earlier join whose results this one may update, or why there are none:
    /// a pending full rebuild, no earlier join (or an older iaprecon's), or other settings than the
    /// earlier join's (the same MMP zone by another name is the same setting).
    private static func updatable(_ store: some JoinStore, settings: ReconcileSettings) throws -> Result<JoinSettings, FullRebuild> {
        guard let previous = try store.previousSettings() else {
            return .failure(FullRebuild(reason: "no earlier join to update (a new store, or results of an older iaprecon)"))
        }
        let causes = try store.fullRebuildCauses()
        if !causes.isEmpty {
            return .failure(FullRebuild(reason: causes.joined(separator: ", ")))
        }
        guard previous.graceMs == settings.graceMs else {
            return .failure(FullRebuild(reason: "--grace \(Self.duration(settings.graceMs)) differs from the earlier join's \(Self.duration(previous.graceMs))"))
        }
        guard previous.mmpZone == settings.mmpZone.identifier
                || Zone(previous.mmpZone)?.canonicalIdentifier == settings.mmpZone.canonicalIdentifier else {
            return .failure(FullRebuild(reason: "--mmp-tz \(settings.mmpZone.identifier) differs from the earlier join's \(previous.mmpZone)"))
        }
        return .success(previous)
    }

    /// `ms` in the largest unit up to hours that says it whole, as `--grace` is written (`24h`, `90m`, `1500ms`).
    static func duration(_ ms: Int64) -> String {
        for (unit, size) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1_000)] where ms != 0 && ms % size == 0 {
            return "\(ms / size)\(unit)"
        }
        return "\(ms)ms"
    }

    /// Whether the next join rebuilds everything whatever changed: it reads nothing by key.
    static func rebuildsInFull(_ store: some JoinStore, settings: ReconcileSettings) throws -> Bool {
        if case .failure = try updatable(store, settings: settings) { return true }
        return false
    }

    /// The as-of when none is given: the latest event time in the inputs; with no event time at all,
    /// the end of the latest day the dated inputs cover, a day being over once it is reported: a
    /// Sales Report's Pacific day, a spend row's day in `--tz` (the days the report reads them by),
    /// whichever ends last, but never more than a day after the run's clock. A dated day never
    /// moves an as-of that event times give (it is no event time, CONTRACT.md §2), but an input
    /// without one must not be judged as of 1970, which its findings would give as their
    /// `first_seen`. Nil when nothing dates the input (a catalog, V1 notifications: their purchase
    /// and expiry dates are no event times either). An fx.csv day dates nothing: a rate holds from
    /// its day on, and finance loads rates for days to come.
    static func defaultAsOfMs(_ store: some JoinStore, settings: ReconcileSettings) throws -> Int64? {
        if let latestMs = try latestEventMs(store, mmpZone: settings.mmpZone) { return latestMs }
        func endMs(of day: String?, in zone: Zone) -> Int64? {
            guard let day, let dayStart = Timestamp.startOfDay(day) else { return nil }
            return zone.utc(fromLocal: dayStart + 86_400_000) - 1
        }
        let ends = [endMs(of: try store.latestSalesReportDay(), in: AppleTieOut.reportZone),
                    endMs(of: try store.latestSpendDay(), in: settings.reportZone)]
        // Ingest rejects a day that starts more than a day after the clock, but a day it reads may
        // end well after that (tomorrow's spend; a day ingest judged by its start in the zone
        // furthest ahead, read in --tz). Capped at the clock + 24 h, the bound CONTRACT.md §2 sets
        // and the latest event time a run accepts, so an input is judged no later whatever dates
        // it. Not at the end of the clock's day: that is a day of some zone (Pacific for reports,
        // --tz for spend), and a 25-hour day ends more than a day after a clock at its start. A day
        // begun by the clock ends within a day of it (but in a 25-hour day's first hour), so an
        // input of days already reported is dated as before.
        return ends.compactMap { $0 }.max().map { min($0, settings.nowMs + LineRules.futureToleranceMs) }
    }

    /// The latest event time in the inputs (CONTRACT.md §2, "as-of"): server `ts`, receipt
    /// `received_at`, V2 notification `signedDate`, registration `ts`, MMP `Event Time`.
    static func latestEventMs(_ store: some JoinStore, mmpZone: Zone) throws -> Int64? {
        let (ms, mmpWallMs) = try store.latestEventTimes()
        guard let mmpWallMs else { return ms }
        let mmp = mmpZone.utc(fromLocal: mmpWallMs)
        return max(ms ?? mmp, mmp)
    }
}
