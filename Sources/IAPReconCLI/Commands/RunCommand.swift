import Foundation
import IAPRecon

/// `iaprecon run`: all four stages, outputs switched in at once.
enum RunCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let quiet = command.flag("quiet")
        let options = RunOptions(
            input: command.inputFolder, databasePath: command.databasePath, outFolder: command.value("out") ?? "out",
            jobs: command.jobs, signatures: try command.signatureCheck(), reconcile: try command.reconcileSettings(),
            report: try command.reportSettings())
        let progress = quiet ? nil : StageProgress(live: console.isTerminal) { console.err($0) }
        let result = try Pipeline.run(options, progress: progress)
        if !quiet {
            console.out(findingsLine(result.report.findingsBySeverity, asOfMs: result.join.asOfMs, out: options.outFolder))
        }
        return exitCode(findings: result.report.findingsBySeverity, failOn: command.failOn)
    }

    static func findingsLine(_ bySeverity: [Severity: Int], asOfMs: Int64, out: String) -> String {
        let counts = Severity.allCases.reversed().map { "\(bySeverity[$0] ?? 0) \($0.rawValue)" }.joined(separator: ", ")
        return "as of \(Timestamp.iso8601(asOfMs)): \(counts) findings; reports in \(out)/"
    }
}

/// The single-stage commands, so a failed night can resume from the stage that failed.
enum StageCommands {
    static func ingest(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let lock = try RunLock(databasePath: command.databasePath, command: "ingest")
        defer { withExtendedLifetime(lock) {} }
        let database = try Store.open(path: command.databasePath)
        let runID = try RunLog.start(database, command: "ingest")
        do {
            let report = try Pipeline.ingest(input: command.inputFolder, database: database, jobs: command.jobs,
                                             signatures: try command.signatureCheck(), progress: nil)
            RunLog.finish(database, runID: runID, status: "ok", asOfMs: nil, linesRead: report.totals.read, findings: nil, message: nil)
            if !command.flag("quiet") { console.out(accountingTable(report)) }
            return .ok
        } catch {
            RunLog.finish(database, runID: runID, status: "failed", asOfMs: nil, linesRead: nil, findings: nil, message: "\(error)")
            throw error
        }
    }

    static func normalize(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        try stage(command, "normalize") { database in
            try NormalizeStage.run(database: database, workers: WorkerPool(width: command.jobs))
            return "normalized"
        }
    }

    static func join(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try command.reconcileSettings()
        return try stage(command, "join") { database in
            let summary = try JoinStage.run(database: database, settings: settings, workers: WorkerPool(width: command.jobs))
            return "as of \(Timestamp.iso8601(summary.asOfMs)): \(summary.findings) findings"
        } output: { console.out($0) }
    }

    static func report(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try command.reportSettings()
        var bySeverity: [Severity: Int] = [:]
        _ = try stage(command, "report") { database in
            let summary = try ReportStage.run(database: database, settings: settings)
            bySeverity = summary.findingsBySeverity
            return "wrote \(summary.files.joined(separator: ", ")) in \(settings.outFolder)/"
        } output: { console.out($0) }
        return exitCode(findings: bySeverity, failOn: command.failOn)
    }

    static func validate(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let files = try SourceFile.list(in: command.inputFolder)
        let report = try IngestStage.validate(files: files, jobs: command.jobs, signatures: try command.signatureCheck())
        console.out(accountingTable(report))
        if let unreadable = report.unreadable.first { throw unreadable }
        return .ok
    }

    /// Runs one stage under the lock, recording it in the runs table.
    private static func stage(
        _ command: ParsedCommand, _ name: String, _ body: (Database) throws -> String, output: (String) -> Void = { _ in }
    ) throws -> ExitCode {
        let lock = try RunLock(databasePath: command.databasePath, command: name)
        defer { withExtendedLifetime(lock) {} }
        let database = try Store.open(path: command.databasePath)
        let runID = try RunLog.start(database, command: name)
        do {
            let note = try body(database)
            RunLog.finish(database, runID: runID, status: "ok", asOfMs: nil, linesRead: nil, findings: nil, message: nil)
            output(note)
            return .ok
        } catch {
            RunLog.finish(database, runID: runID, status: "failed", asOfMs: nil, linesRead: nil, findings: nil, message: "\(error)")
            throw error
        }
    }
}

/// `iaprecon runs`: the store's run history.
enum RunsCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let database = try Store.open(path: command.databasePath, readOnly: true)
        let entries = try RunLog.recent(database, limit: try command.optionalInt("limit") ?? 20)
        var table = TextTable(["run", "command", "started", "seconds", "status", "as-of", "lines", "findings"], numeric: [0, 3, 6, 7])
        for entry in entries {
            let seconds = entry.endedMs.map { String(format: "%.1f", Double($0 - entry.startedMs) / 1000) } ?? ""
            table.add([String(entry.runID), entry.command, Timestamp.iso8601(entry.startedMs), seconds, entry.status,
                       entry.asOfMs.map(Timestamp.iso8601) ?? "", entry.linesRead.map { String($0) } ?? "",
                       entry.findings.map { String($0) } ?? ""])
        }
        console.out(table.text)
        return .ok
    }
}
