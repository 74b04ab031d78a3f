import Foundation
import IAPRecon

/// `iaprecon run`: all four stages, outputs switched in at once.
enum RunCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let quiet = command.flag("quiet")
        var options = RunOptions(
            input: command.inputFolder, databasePath: command.databasePath, outFolder: command.value("out") ?? "out",
            jobs: command.jobs, reconcile: try command.reconcileSettings(), report: try command.reportSettings())
        options.lineRules = try command.lineRules()
        options.verdict = verdict(failOn: command.failOn, failOnNew: command.failOnNew, out: options.outFolder)
        // Under --quiet, alerts only: a file emptied since it was read, one that holds fewer lines, a log rewritten.
        let progress = quiet ? StageProgress.quiet { console.err($0) } : StageProgress(live: console.isTerminal) { console.err($0) }
        let result = try Pipeline.run(options, progress: progress) { result in
            if !quiet {
                console.out(findingsLine(result.report.findingsBySeverity, asOfMs: result.join.asOfMs, out: options.outFolder))
            }
            if !quiet, let warning = bundleWarning(result.report, bundleOption: options.lineRules.bundleID) { console.err(warning) }
            if let alert = findingsOutcome(result.report, failOn: command.failOn, failOnNew: command.failOnNew, outFolder: options.outFolder).alert {
                try console.alert(alert)
            }
        }
        return findingsOutcome(result.report, failOn: command.failOn, failOnNew: command.failOnNew, outFolder: options.outFolder).code
    }

    static func findingsLine(_ bySeverity: [Severity: Int], asOfMs: Int64, out: String) -> String {
        let counts = Severity.allCases.reversed().map { "\(bySeverity[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        return "as of \(Timestamp.iso8601(asOfMs)): \(counts) findings; reports in \(out)/"
    }

    /// How a whole run's end goes into the runs table: the exit code the command line will give. Its
    /// message is the alert line, after the `warnings` a night's command gave about the night itself
    /// (`nightly`'s partition that has not landed, the days a backfill skipped), so that `runs` shows
    /// such a night as more than a plain ok.
    static func verdict(failOn: Severity?, failOnNew: Severity?, out: String, warnings: [String] = [])
        -> @Sendable (Result<RunResult, any Error>) -> RunVerdict {
        { result in
            switch result {
            case .success(let run):
                let outcome = findingsOutcome(run.report, failOn: failOn, failOnNew: failOnNew, outFolder: out)
                let message = (warnings + run.ingest.alerts + [outcome.alert].compactMap { $0 }).joined(separator: "; ")
                return RunVerdict(status: outcome.code == .ok ? "ok" : "findings", exitCode: outcome.code.rawValue,
                                  message: message.isEmpty ? nil : message)
            case .failure(let error):
                return StageCommands.failed(error)
            }
        }
    }
}

/// The single-stage commands, so a failed night can resume from the stage that failed.
enum StageCommands {
    static func ingest(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        // A mistyped --input makes no store, as in `Pipeline.run`.
        try SourceFile.checkFolder(command.inputFolder)
        // A --now it cannot read is a usage error, which opens no store.
        let rules = try command.lineRules()
        let lock = try RunLock(databasePath: command.databasePath, command: "ingest")
        defer { withExtendedLifetime(lock) {} }
        let database = try Store.open(path: command.databasePath)
        let runID = try RunLog.start(database, command: "ingest")
        do {
            // Under --quiet, alerts only, as for run.
            let progress = command.flag("quiet") ? StageProgress.quiet { console.err($0) } : StageProgress(live: console.isTerminal) { console.err($0) }
            progress.stageStarted("ingest")
            defer { progress.clear() }
            // A night run stage by stage checks the store's turn as `run` and `nightly` do.
            let report = try Pipeline.checkingStoreTurn(database) {
                try Pipeline.ingest(input: command.inputFolder, database: database, jobs: command.jobs, rules: rules, progress: progress)
            }
            RunLog.finish(database, runID: runID, verdict: RunVerdict(status: "ok", exitCode: 0, message: nil), asOfMs: nil,
                          linesRead: report.totals.read, findings: nil)
            if !command.flag("quiet") { console.out(accountingTable(report)) }
            return .ok
        } catch {
            RunLog.finish(database, runID: runID, verdict: failed(error), asOfMs: nil, linesRead: nil, findings: nil)
            throw error
        }
    }

    /// A command that ended with `error`, as the runs table records it.
    static func failed(_ error: any Error) -> RunVerdict {
        RunVerdict(status: "failed", exitCode: IAPReconCLI.exitCode(for: error).rawValue, message: "\(error)")
    }

    static func normalize(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        try stage(command, "normalize", console: console) { database, _ in
            let built = try Pipeline.normalize(database: database)
            return built == 0 ? "normalized" : "normalized: \(built) indexes built"
        }
    }

    static func join(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try command.reconcileSettings()
        return try stage(command, "join", console: console) { database, progress in
            let summary = try Pipeline.join(database: database, settings: settings, workers: WorkerPool(width: command.jobs)) {
                progress?.advanced(.lines($0))
            }
            progress?.clear()
            if !command.flag("quiet") { for warning in summary.warnings { console.err("Warning: " + warning) } }
            return "as of \(Timestamp.iso8601(summary.asOfMs)): \(summary.findings) findings"
        } output: { console.out($0) }
    }

    static func report(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try command.reportSettings()
        var report: ReportSummary?
        // As run refuses it: a folder that holds what iaprecon did not write is a wrong argument, not a report that failed.
        // Checked once the store is found, since the check makes the folders it is in: a store that is not there, or
        // holds nothing to report, is refused with no folder made.
        return try stage(command, "report", console: console, refuses: { try OutputSet.checkTarget(settings.outFolder) }) { database, progress in
            let summary = try ReportStage.run(database: database, settings: settings) { progress?.advanced(.lines($0)) }
            report = summary
            progress?.clear()
            if !command.flag("quiet") { for warning in summary.warnings { console.err("Warning: " + warning) } }
            // Finance books the days it names: said also under --quiet, as `run` says it.
            if let restated = summary.restatedRevenue { console.err("Warning: restated revenue: " + restated) }
            return "wrote \(summary.files.joined(separator: ", ")) in \(settings.outFolder)/"
        } output: { console.out($0) } judge: { database in
            guard let report else { return .ok }
            let outcome = findingsOutcome(report, failOn: command.failOn, failOnNew: command.failOnNew, outFolder: settings.outFolder)
            if let alert = outcome.alert { try console.alert(alert) }
            // Said: the report's findings are no longer new to the store (`Pipeline.run`'s `announce`).
            try ReportStage.markReported(database: database, outFolder: settings.outFolder)
            return outcome.code
        }
    }

    static func validate(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let listing = try SourceFile.scan(command.inputFolder)
        for path in listing.ignored {
            console.err("Warning: not read, matches no source: \(command.inputFolder)/\(path)")
        }
        guard !listing.files.isEmpty else { throw SourceFile.noSourceFile(in: command.inputFolder) }
        // What a run refuses before it reads anything, said after the accounting, which shows the
        // rates' rejected lines too.
        var ratesRefused: ReportingCurrency.Mismatch?
        do {
            try Pipeline.checkFX(input: command.inputFolder, currency: ReportingCurrency(command.value("currency") ?? "USD"))
        } catch let mismatch as ReportingCurrency.Mismatch {
            ratesRefused = mismatch
        }
        let report = try IngestStage.validate(files: listing.files, jobs: command.jobs, rules: try command.lineRules())
        console.out(accountingTable(report))
        if !report.firstRejects.isEmpty {
            var rejects = TextTable(["file:line", "reason", "text"], numeric: [])
            for reject in report.firstRejects {
                rejects.add(["\(reject.path):\(reject.line)", reject.reason, reject.text])
            }
            let shown = report.firstRejects.count < report.totals.rejected ? "first \(report.firstRejects.count) of \(report.totals.rejected)" : "all"
            console.out("\nrejected lines (\(shown)):\n" + rejects.text)
        }
        if let unreadable = report.unreadable.first { throw unreadable }
        if let ratesRefused { throw ratesRefused }
        return .ok
    }

    /// `iaprecon forget PATH...`: removes stored files' rows; the next run reconciles without them.
    static func forget(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let paths = command.positionals
        guard !paths.isEmpty else { throw command.usageError("name at least one stored file to forget") }
        return try stage(command, "forget", console: console) { database, _ in
            let unknown = try StoredFiles.forget(paths: paths, in: database)
            guard unknown.isEmpty else {
                // Named only when every path ends in a stored one: a hint for some would read as the list of all.
                let meant = try unknown.compactMap { try StoredFiles.storedPath(endingIn: $0, in: database) }
                throw UnknownStoredFiles(paths: unknown, meant: meant.count == unknown.count ? meant : [])
            }
            // A path named twice is one file forgotten.
            let count = Set(paths).count
            return count == 1 ? "forgot 1 file; the next run reconciles without it"
                : "forgot \(count) files; the next run reconciles without them"
        } output: { console.out($0) }
    }

    /// `forget` named files the store does not hold: nothing was removed. The store is fine, so the line names the paths,
    /// not the store; where each ends in a stored file's path (given with the input folder, or absolute), it names those.
    struct UnknownStoredFiles: Error, CustomStringConvertible {
        var paths: [String]
        var meant: [String]
        var description: String {
            let quoted = { (paths: [String]) in paths.map { "'\($0)'" }.joined(separator: ", ") }
            let hint = meant.isEmpty ? "summary.json lists the stored files"
                : "name \(paths.count == 1 ? "it" : "them") as summary.json does, relative to the input folder: \(quoted(meant))"
            return "no stored file \(quoted(paths)) (nothing was removed; \(hint))"
        }
    }

    /// Runs one stage under the lock on an existing store, recording it in the runs table;
    /// `refuses` checks the command's own arguments once the store is found, before the stage is a run;
    /// `judge` gives the exit code once the stage is done (`--fail-on`). On a terminal the body
    /// gets a live progress line, cleared before its result is printed.
    private static func stage(
        _ command: ParsedCommand, _ name: String, console: Console, refuses check: () throws -> Void = {},
        _ body: (Database, StageProgress?) throws -> String, output: (String) -> Void = { _ in },
        judge: (Database) throws -> ExitCode = { _ in .ok }
    ) throws -> ExitCode {
        let lock = try RunLock(databasePath: command.databasePath, command: name, createStore: false)
        defer { withExtendedLifetime(lock) {} }
        let database: Database
        do {
            // A store no run has written a table to holds nothing to work on, as no file holds nothing: refused,
            // not made a store with this stage recorded as its first run.
            database = try Store.open(path: command.databasePath, requireWritten: true)
            try check()
        } catch {
            // Refused before it is a run, it leaves no file it did not find: not even the lock's note.
            lock.removeMadeNote()
            throw error
        }
        let runID = try RunLog.start(database, command: name)
        // --quiet as for run: errors and the alert line only.
        let quiet = command.flag("quiet")
        let progress = console.isTerminal && !quiet ? StageProgress(live: true) { console.err($0) } : nil
        progress?.stageStarted(name)
        do {
            let note = try body(database, progress)
            progress?.clear()
            let code = try judge(database)
            let verdict = code == .ok ? RunVerdict(status: "ok", exitCode: 0, message: nil)
                : RunVerdict(status: "findings", exitCode: code.rawValue, message: "findings at --fail-on")
            RunLog.finish(database, runID: runID, verdict: verdict, asOfMs: nil, linesRead: nil, findings: nil)
            if !quiet { output(note) }
            return code
        } catch {
            progress?.clear()
            RunLog.finish(database, runID: runID, verdict: failed(error), asOfMs: nil, linesRead: nil, findings: nil)
            throw error
        }
    }

    /// `iaprecon check`: SQLite's full integrity check of the store.
    static func check(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let database = try Store.open(path: command.databasePath, readOnly: true)
        try Store.checkIntegrity(database)
        console.out("ok: \(command.databasePath) passed SQLite's integrity check")
        return .ok
    }
}

/// `iaprecon runs`: the store's run history.
enum RunsCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let database = try Store.open(path: command.databasePath, readOnly: true)
        let entries = try RunLog.recent(database, limit: try command.optionalInt("limit") ?? 20)
        // A run still marked running while no process holds the store was killed: the next run
        // records it as interrupted, and so does this list already.
        let held = RunLock.holder(databasePath: command.databasePath) != nil
        var table = TextTable(
            ["run", "command", "date", "started", "seconds", "status", "exit", "as-of", "lines", "findings", "stage seconds", "message"],
            numeric: [0, 4, 6, 8, 9])
        for entry in entries {
            let seconds = entry.endedMs.map { String(format: "%.1f", Double($0 - entry.startedMs) / 1000) } ?? ""
            // The stage timings summary.json no longer carries, so that two runs' outputs compare byte for byte.
            let stages = try RunLog.stages(database, runID: entry.runID).map { "\($0.stage) \(String(format: "%.2f", $0.seconds))" }
            table.add([String(entry.runID), entry.command, entry.partitionDate ?? "", Timestamp.iso8601(entry.startedMs), seconds,
                       entry.status == "running" && !held ? "interrupted" : entry.status, entry.exitCode.map { String($0) } ?? "", entry.asOfMs.map(Timestamp.iso8601) ?? "",
                       entry.linesRead.map { String($0) } ?? "", entry.findings.map { String($0) } ?? "",
                       stages.joined(separator: ", "), (entry.message ?? "").replacingOccurrences(of: "\n", with: " ")])
        }
        console.out(table.text)
        return .ok
    }
}
