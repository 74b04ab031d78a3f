import Foundation

/// Where a run reports progress: a live line on a terminal, one line per stage otherwise, nothing with `--quiet`.
public protocol ProgressSink: AnyObject {
    func stageStarted(_ stage: String)
    func advanced(_ progress: IngestProgress)
    func stageFinished(_ stage: String, seconds: Double, note: String)
    /// Something the run goes on despite, for whoever watches (a `Warning:` line on stderr).
    func warning(_ message: String)
    /// A warning that must be seen even under `--quiet`, since stored lines depend on it
    /// (`IngestReport.alerts`); a sink that tells none apart gives it as any warning.
    func alert(_ message: String)
}

extension ProgressSink {
    public func alert(_ message: String) { warning(message) }
}

/// Everything a full run needs.
public struct RunOptions: Sendable {
    public var input: String
    /// With a partitioned input: read the `YYYY-MM-DD` partitions up to this day only.
    public var partitionsThrough: String?
    public var databasePath: String
    public var outFolder: String
    public var jobs: Int
    public var reconcile: ReconcileSettings
    public var report: ReportSettings
    /// The command the runs table and the lock name (`run`, `nightly`, `backfill`).
    public var command = "run"
    /// Runs SQLite's quick check of the store's turn (`Store.checkTurn`) first and refuses a damaged store (nightly
    /// does); otherwise the turn is checked beside the stages.
    public var checkStore = false
    /// How the run's end is recorded; without it, success is `ok` (exit 0) and an error `failed` (exit 1).
    public var verdict: (@Sendable (Result<RunResult, any Error>) -> RunVerdict)?
    /// The run's clock and `--bundle-id`, for the line checks that depend on them.
    public var lineRules = LineRules()

    public init(input: String, databasePath: String, outFolder: String, jobs: Int, lineRules: LineRules = LineRules(),
                reconcile: ReconcileSettings, report: ReportSettings) {
        self.input = input
        self.lineRules = lineRules
        self.partitionsThrough = nil
        self.databasePath = databasePath
        self.outFolder = outFolder
        self.jobs = jobs
        self.reconcile = reconcile
        self.report = report
    }
}

/// The result of a full run.
public struct RunResult: Sendable {
    public var ingest: IngestReport
    public var join: JoinSummary
    public var report: ReportSummary
    public var timings: [(String, Double)]
}

/// Runs the stages in order: ingest → normalize → join → report.
///
/// Each stage is also callable alone (the `ingest`, `normalize`, `join` and
/// `report` subcommands), so a failed night can resume from the stage that
/// failed: every stage reads only the store and rebuilds its own tables.
public enum Pipeline {
    /// Checks every `fx.csv` of the input against the reporting currency, before anything else is read
    /// (CONTRACT.md §1.6): a mismatch throws `ReportingCurrency.Mismatch` (exit 2).
    public static func checkFX(input: String, through: String? = nil, currency: ReportingCurrency) throws {
        for file in days(try SourceFile.scan(input).files, through: through) where file.kind == .fx {
            var rows: [(currency: String, rate: String, day: String, line: Int)] = []
            var rejected: (line: Int, reason: String, more: Int)?
            try SourceFileParser.parse(file) { lines in
                for line in lines {
                    switch line.outcome {
                    case .accepted(let raw):
                        for row in raw {
                            if case .text(let day) = row.values[0], case .text(let code) = row.values[1], case .text(let rate) = row.values[2] {
                                rows.append((code, rate, day, line.line))
                            }
                        }
                    case .rejected(let reason):
                        if rejected == nil { rejected = (line.line, reason, 0) } else { rejected?.more += 1 }
                    default: break
                    }
                }
            }
            try currency.check(fxRows: rows, file: file.relativePath, rejected: rejected)
        }
    }

    /// A partitioned input's files of the days up to `through`, and the undated ones; every file without it.
    private static func days(_ files: [SourceFile], through: String?) -> [SourceFile] {
        guard let through else { return files }
        return files.filter { file in
            let first = String(file.relativePath.prefix { $0 != "/" })
            return !SourceFile.isPartitionName(first) || first <= through
        }
    }

    /// Runs `body`, a stage that adds to the store at `database`'s path, while a reader of its own checks the store's
    /// turn as the store was (`Store.checkTurn`); then notes the tables checked. Damage fails the stage once `body` is
    /// done, as it does a run.
    public static func checkingStoreTurn<T>(_ database: Database, _ body: () throws -> T) throws -> T {
        let storeCheck = Background { [path = database.path] in try Store.checkTurn(Database(path: path, readOnly: true)) }
        let result: T
        do {
            result = try body()
        } catch {
            // A stage that fails has had its turn of the check all the same (`run`).
            try? Store.recordChecked(database, (try? storeCheck.value()) ?? [])
            throw error
        }
        try Store.recordChecked(database, storeCheck.value())
        return result
    }

    /// Ingest; throws the first unreadable input (exit 3) after storing every readable file.
    ///
    /// A folder with no source file at all is an error (a mistyped `--input` must not reconcile
    /// nothing in silence). Files that match no source are named in a warning and kept for
    /// `summary.json`, and every stored file is marked present or not in the folder (not, when it
    /// is empty now and its stored lines are kept).
    public static func ingest(
        input: String, through: String? = nil, database: Database, jobs: Int, rules: LineRules = LineRules(), progress: ProgressSink?
    ) throws -> IngestReport {
        let listing = try SourceFile.scan(input)
        guard !listing.files.isEmpty else { throw SourceFile.noSourceFile(in: input) }
        for path in listing.ignored {
            progress?.warning("not read, matches no source: \(input)/\(path)")
        }
        let store = SQLiteIngestStore(database)
        var report = try IngestStage.run(files: days(listing.files, through: through), store: store, jobs: jobs, rules: rules,
                                         inFolder: Set(listing.files.map(\.relativePath)), progress: { progress?.advanced($0) })
        report.ignored = listing.ignored
        for alert in report.alerts { progress?.alert(alert) }
        // A file empty now whose stored lines are kept is marked as one that left the folder: its lines are not in it.
        let emptied = Set(report.files.filter { $0.status == .emptied }.map(\.path))
        let left = try store.recordListing(present: listing.files.map(\.relativePath).filter { !emptied.contains($0) }, ignored: listing.ignored)
        report.warnings += IngestStage.leftTheFolder(left.filter { !emptied.contains($0.path) }, input: input)
        let notifications = report.files.filter { $0.kind == .notifications && ($0.status == .added || $0.status == .replaced) }.map(\.path)
        report.warnings += ConsumptionRequestsReport.unanswerableWarnings(try store.unanswerableConsumptionRequests(in: notifications))
            + report.unknownNotificationTypes.warnings + report.unknownProductTypes.warnings
        for warning in report.warnings { progress?.warning(warning) }
        if let first = report.unreadable.first { throw first }
        return report
    }

    /// Runs the stages under the store's lock: `storeLock` when the caller took it for checks of its own before
    /// the run (a night looks at the store first), so that no other run can start between those checks and this
    /// run; otherwise the run takes it.
    ///
    /// `announce` says the run's findings once its outputs are in place (the findings line, the alert), and only
    /// then do they count as reported: a run stopped before `announce` returns leaves them new, so the next run
    /// alerts on them again rather than never.
    public static func run(_ options: RunOptions, holding storeLock: RunLock? = nil, progress: ProgressSink?,
                           announce: (RunResult) throws -> Void = { _ in }) throws -> RunResult {
        // An --out that cannot be written, or holds what iaprecon did not write, fails now, not after an hour of
        // work, and before the store: a refused folder is a mistyped argument, which creates no store and is no run.
        try OutputSet.checkTarget(options.report.outFolder)
        try SourceFile.checkFolder(options.input)
        // A lock of another file (one put in the store's place since it was taken) does not keep other runs off this one.
        let lock = try storeLock.flatMap { $0.locks(databasePath: options.databasePath) ? $0 : nil }
            ?? RunLock(databasePath: options.databasePath, command: options.command)
        defer { withExtendedLifetime(lock) {} }
        lock.startsRun()
        // A store that holds nothing yet is built without waiting for the disk, until the join is done (`FirstBuild`).
        if let warning = lock.emptiedFirstBuild { progress?.warning(warning) }
        let database = try Store.open(path: options.databasePath, firstBuildUnsynced: true)
        let checkedFirst = options.checkStore ? try Store.checkTurn(database) : []
        // Logged from here on, so `iaprecon runs` lists a run its checks stop too, with its reason.
        let runID = try RunLog.start(database, command: options.command, partitionDate: options.partitionsThrough)
        let verdict = options.verdict ?? { result in
            switch result {
            case .success: RunVerdict(status: "ok", exitCode: 0, message: nil)
            case .failure(let error): RunVerdict(status: "failed", exitCode: 1, message: "\(error)")
            }
        }
        // The turn's check read its tables whatever became of the stages: a run that fails notes them too, or a night that
        // fails night after night would check the same tables each night and never the others.
        var checksNoted = false
        func failed(_ error: any Error, checkedBeside: [CheckedTable] = []) -> any Error {
            if !checksNoted { try? Store.recordChecked(database, checkedFirst + checkedBeside) }
            RunLog.finish(database, runID: runID, verdict: verdict(.failure(error)), asOfMs: nil, linesRead: nil, findings: nil)
            // What a failed first build stored is kept, as any failed run's is: on the disk, like theirs. Should the sync fail,
            // the note stays and the next writer deals with it (`FirstBuild.recover`).
            try? FirstBuild.finish(database)
            return error
        }
        do {
            try checkFX(input: options.input, through: options.partitionsThrough, currency: options.report.reportingCurrency)
        } catch {
            throw failed(error)
        }
        // A store this run made and that its checks stopped holds nothing but the run's start, which its caller may
        // remove (a first night); what the stages store from here on is kept.
        lock.storesInputs()
        // A run reads only the tables its stages need: damage elsewhere (a raw table this night does
        // not read, an index) is looked for, in turns, on a reader of its own while the stages work.
        let storeCheck = Background { [path = options.databasePath, checked = options.checkStore] in
            checked ? [] : try Store.checkTurn(Database(path: path, readOnly: true))
        }
        // Its result is handed over once (`Background.value`).
        var checkClaimed = false
        func checkedBeside() throws -> [CheckedTable] {
            checkClaimed = true
            return try storeCheck.value()
        }
        // Spend rows name days of the report's zone: the join dates an input by them so too, and by
        // the clock ingest judged its lines by.
        var reconcile = options.reconcile
        reconcile.reportZone = options.report.zone
        reconcile.nowMs = options.lineRules.nowMs
        var timings: [(String, Double)] = []
        func timed<T>(_ stage: String, note: (T) -> String, _ body: () throws -> T) throws -> T {
            progress?.stageStarted(stage)
            let start = Date()
            let result = try body()
            ProcessMemory.releaseFreed()
            let seconds = Date().timeIntervalSince(start)
            timings.append((stage, seconds))
            progress?.stageFinished(stage, seconds: seconds, note: note(result))
            return result
        }
        do {
            let ingest = try timed("ingest", note: { (report: IngestReport) in
                "\(report.totals.read) lines, \(report.totals.rejected) rejected, \(report.files.filter { $0.status == .unchanged }.count) files unchanged"
            }) {
                try Pipeline.ingest(input: options.input, through: options.partitionsThrough, database: database, jobs: options.jobs,
                                    rules: options.lineRules, progress: progress)
            }
            _ = try timed("normalize", note: { (indexes: (built: Int, leftToTheJoin: Int)) in
                indexes.leftToTheJoin > 0 ? "\(indexes.leftToTheJoin) indexes to build, beside the join's reading"
                    : indexes.built > 0 ? "\(indexes.built) indexes built" : ""
            }) {
                try Pipeline.normalize(database: database, beforeJoining: reconcile)
            }
            let join = try timed("join", note: { (summary: JoinSummary) in
                "as-of \(Timestamp.iso8601(summary.asOfMs)), \(summary.findings) findings"
                    + (summary.recomputedTransactions.map { ", incremental: \($0) transactions recomputed" } ?? "")
                    + (summary.fullRebuildReason.map { ", rebuilt in full: \($0)" } ?? "")
                    + (summary.rawIndexesBuilt > 0 ? ", \(summary.rawIndexesBuilt) indexes built" : "")
            }) {
                let summary = try Pipeline.join(database: database, settings: reconcile, missingRawIndexes: .builtByTheJoin,
                                                workers: WorkerPool(width: options.jobs)) { progress?.advanced(.lines($0)) }
                // On the disk before any report is published from it.
                try FirstBuild.finish(database)
                return summary
            }
            for warning in join.warnings { progress?.warning(warning) }
            let report = try timed("report", note: { (summary: ReportSummary) in "\(summary.files.count) files in \(options.outFolder)" }) {
                var settings = options.report
                // The summary says which signatures ingest trusted.
                settings.signatures = options.lineRules.signatures.check
                return try ReportStage.run(database: database, settings: settings) { progress?.advanced(.lines($0)) }
            }
            for warning in report.warnings { progress?.warning(warning) }
            // Finance books the days it names: said also under --quiet, as a night runs.
            if let restated = report.restatedRevenue { progress?.alert("restated revenue: " + restated) }
            try Store.recordChecked(database, checkedFirst + checkedBeside())
            checksNoted = true
            RunLog.recordStages(database, runID: runID, timings: timings)
            let result = RunResult(ingest: ingest, join: join, report: report, timings: timings)
            try announce(result)
            try ReportStage.markReported(database: database, outFolder: options.outFolder)
            RunLog.finish(database, runID: runID, verdict: verdict(.success(result)), asOfMs: join.asOfMs,
                          linesRead: ingest.totals.read, findings: join.findings)
            return result
        } catch {
            // Damage the check found is not said over the stage's own error (a stage that read it fails on it).
            throw failed(error, checkedBeside: checkClaimed ? [] : (try? checkedBeside()) ?? [])
        }
    }
}
