import Foundation
import IAPRecon

/// `iaprecon nightly` and `iaprecon backfill`: the cron surface over day partitions.
///
/// A night reads `<root>/YYYY-MM-DD/<source>/...` up to its day (files already
/// stored are skipped by content hash, so a night costs its new day), writes
/// `<out>/YYYY-MM-DD/`, and only then points `<out>/latest` at it with one
/// atomic rename. Each run appends stage timings to a log file of its own.
enum NightlyCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let root = command.value("root") ?? "data"
        let date: String
        if let given = command.value("date") {
            guard SourceFile.isPartitionName(given) else { throw command.usageError("'\(given)' is not a day for --date (yyyy-mm-dd)") }
            date = given
        } else {
            guard let newest = try partitions(in: root).last else {
                throw InputError(path: root, reason: "no YYYY-MM-DD partition folders")
            }
            date = newest
        }
        return try night(command, root: root, date: date, console: console)
    }

    static func backfill(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let root = command.value("root") ?? "data"
        let from = try command.string("from")
        let to = try command.string("to")
        guard let start = Timestamp.startOfDay(from), let end = Timestamp.startOfDay(to) else {
            throw command.usageError("--from and --to take days as yyyy-mm-dd")
        }
        guard start <= end else { throw command.usageError("--from \(from) is after --to \(to)") }
        var worst = ExitCode.ok
        var day = start
        while day <= end {
            let code = try night(command, root: root, date: Timestamp.day(day), console: console)
            if code != .ok { worst = code }
            day += 86_400_000
        }
        return worst
    }

    /// The `YYYY-MM-DD` folders under `root`, oldest first.
    static func partitions(in root: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else {
            throw InputError(path: root, reason: "cannot list the folder")
        }
        return names.filter(SourceFile.isPartitionName).sorted()
    }

    private static func night(_ command: ParsedCommand, root: String, date: String, console: Console) throws -> ExitCode {
        let outRoot = command.value("reports") ?? "reports"
        let logDir = command.value("log-dir") ?? "logs"
        try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outRoot, withIntermediateDirectories: true)
        let stamp = Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000)).replacingOccurrences(of: ":", with: "")
        let log = LogFile(path: "\(logDir)/iaprecon-\(date)-\(stamp).log")
        let quiet = command.flag("quiet")
        log.write("iaprecon \(IAPReconCLI.version) \(command.name) --root \(root) --date \(date)")
        var options = RunOptions(
            input: root, databasePath: command.databasePath, outFolder: outRoot + "/" + date, jobs: command.jobs,
            signatures: try command.signatureCheck(), reconcile: try command.reconcileSettings(), report: try command.reportSettings())
        options.partitionsThrough = date
        options.report.outFolder = options.outFolder
        let progress = StageProgress(live: !quiet && console.isTerminal) { line in
            log.write(line)
            if !quiet { console.err(line) }
        }
        do {
            let result = try Pipeline.run(options, progress: progress)
            try pointLatest(outRoot: outRoot, at: date)
            let line = RunCommand.findingsLine(result.report.findingsBySeverity, asOfMs: result.join.asOfMs, out: options.outFolder)
            log.write(line)
            if !quiet { console.out(line) }
            let code = exitCode(findings: result.report.findingsBySeverity, failOn: command.failOn)
            log.write("exit \(code.rawValue)")
            return code
        } catch {
            log.write("failed: \(error)")
            throw error
        }
    }

    /// Points `<out>/latest` at `date` with one rename, so readers never see it missing.
    static func pointLatest(outRoot: String, at date: String) throws {
        let temporary = outRoot + "/.latest.tmp-\(getpid())"
        unlink(temporary)
        guard symlink(date, temporary) == 0, rename(temporary, outRoot + "/latest") == 0 else {
            throw OutputError(path: outRoot + "/latest", reason: String(cString: strerror(errno)))
        }
    }
}

/// A run's log file: one timestamped line per event, appended and flushed as it goes.
final class LogFile {
    private let handle: FileHandle?

    init(path: String) {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        handle = FileHandle(forWritingAtPath: path)
        handle?.seekToEndOfFile()
    }

    deinit { try? handle?.close() }

    func write(_ line: String) {
        let stamp = Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000))
        handle?.write(Data("\(stamp) \(line)\n".utf8))
    }
}
