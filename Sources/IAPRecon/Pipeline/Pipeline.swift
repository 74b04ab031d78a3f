import Foundation

/// Where a run reports progress: a live line on a terminal, one line per stage otherwise, nothing with `--quiet`.
public protocol ProgressSink: AnyObject {
    func stageStarted(_ stage: String)
    func advanced(_ progress: IngestProgress)
    func stageFinished(_ stage: String, seconds: Double, note: String)
}

/// Everything a full run needs.
public struct RunOptions: Sendable {
    public var input: String
    /// With a partitioned input: read the `YYYY-MM-DD` partitions up to this day only.
    public var partitionsThrough: String?
    public var databasePath: String
    public var outFolder: String
    public var jobs: Int
    /// Which JWS signatures ingest trusts.
    public var signatures: SignatureCheck
    public var reconcile: ReconcileSettings
    public var report: ReportSettings

    public init(input: String, databasePath: String, outFolder: String, jobs: Int, signatures: SignatureCheck = .appleOnly,
                reconcile: ReconcileSettings, report: ReportSettings) {
        self.input = input
        self.signatures = signatures
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
    /// Ingest; throws the first unreadable input (exit 3) after storing every readable file.
    public static func ingest(
        input: String, through: String? = nil, database: Database, jobs: Int, signatures: SignatureCheck, progress: ProgressSink?
    ) throws -> IngestReport {
        var files = try SourceFile.list(in: input)
        if let through {
            files = files.filter { file in
                let first = String(file.relativePath.prefix { $0 != "/" })
                return !SourceFile.isPartitionName(first) || first <= through
            }
        }
        let report = try IngestStage.run(files: files, database: database, jobs: jobs, signatures: signatures, progress: { progress?.advanced($0) })
        if let first = report.unreadable.first { throw first }
        return report
    }

    public static func run(_ options: RunOptions, progress: ProgressSink?) throws -> RunResult {
        let lock = try RunLock(databasePath: options.databasePath, command: "run")
        defer { withExtendedLifetime(lock) {} }
        let database = try Store.open(path: options.databasePath)
        // An --out that cannot be written fails now, not after an hour of work.
        try OutputSet.makeDirectories(options.report.outFolder)
        let runID = try RunLog.start(database, command: "run")
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
                                    signatures: options.signatures, progress: progress)
            }
            try timed("normalize", note: { (_: Void) in "" }) {
                try NormalizeStage.run(database: database, workers: WorkerPool(width: options.jobs))
            }
            let join = try timed("join", note: { (summary: JoinSummary) in
                "as-of \(Timestamp.iso8601(summary.asOfMs)), \(summary.findings) findings"
                    + (summary.recomputedTransactions.map { ", incremental: \($0) transactions recomputed" } ?? "")
            }) {
                try JoinStage.run(database: database, settings: options.reconcile, workers: WorkerPool(width: options.jobs))
            }
            let report = try timed("report", note: { (summary: ReportSummary) in "\(summary.files.count) files in \(options.outFolder)" }) {
                var settings = options.report
                settings.signatures = options.signatures
                return try ReportStage.run(database: database, settings: settings, timings: timings)
            }
            RunLog.finish(database, runID: runID, status: "ok", asOfMs: join.asOfMs, linesRead: ingest.totals.read,
                          findings: join.findings, message: nil)
            return RunResult(ingest: ingest, join: join, report: report, timings: timings)
        } catch {
            RunLog.finish(database, runID: runID, status: "failed", asOfMs: nil, linesRead: nil, findings: nil, message: "\(error)")
            throw error
        }
    }
}
