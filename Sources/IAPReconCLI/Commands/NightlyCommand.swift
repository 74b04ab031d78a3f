import Foundation
import IAPRecon

/// `iaprecon nightly` and `iaprecon backfill`: the cron surface over day partitions.
///
/// A night reads `<root>/YYYY-MM-DD/<source>/...` up to its day (files already
/// stored are skipped by content hash, so a night costs its new day), writes
/// `<out>/YYYY-MM-DD/`, and only then points `<out>/latest` at it with one
/// atomic rename. Each run appends stage timings to a log file of its own.
///
/// A night reports what a fresh store fed the partitions up to its day would report, as of the
/// end of that day in `--tz` at the latest. When the store already holds later partitions (a
/// re-run night, a backfill), the night is replayed in a scratch store beside the store, fed only
/// the partitions up to the day, and the store itself is left as it was; a backfill feeds one
/// scratch store a day at a time, which gives the same answer as a fresh one per day (the
/// incremental nights equal full rebuilds).
enum NightlyCommand {
    static func run(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try NightSettings(command)
        let root = command.value("root") ?? "data"
        let date: String
        // Day folders newer than the night's that hold no source file yet.
        var unlanded: [String] = []
        if let given = command.value("date") {
            guard SourceFile.isPartitionName(given) else { throw command.usageError("'\(given)' is not a day for --date (yyyy-mm-dd)") }
            try requirePartition(root: root, date: given)
            date = given
        } else {
            let folders = try partitions(in: root)
            guard !folders.isEmpty else { throw InputError(path: root, reason: "no YYYY-MM-DD partition folders") }
            // A day folder is made before its files are written: until one of them is there, its partition has not landed.
            guard let newest = try folders.last(where: { try holdsSourceFile(root: root, day: $0) }) else {
                throw InputError(path: root, reason: "no YYYY-MM-DD partition folder holds a source file (\(folderList(root: root, folders)) "
                                 + (folders.count == 1 ? "holds" : "hold") + " none)")
            }
            unlanded = folders.filter { $0 > newest }
            date = newest
        }
        console.reached("day chosen")
        let store = try prepare(command, settings, root: root, from: date, through: date, nights: [date], console: console)
        defer { store.release() }
        var warnings: [String] = []
        // Tonight's partition has not landed: the night re-reports the last one, which is worth a
        // line in cron's mail, even under --quiet, rather than an exit 0 that looks like news, and
        // a word in the night's log and its row of `runs`, which would otherwise say a plain ok.
        // Looked for under the store's lock, as every look of the night's: a run that reported the
        // day since the night chose it is the one named, and a store another run is changing is not read.
        if command.value("date") == nil {
            let earlier = reportedNight(date, databasePath: command.databasePath)
            if earlier != nil || !unlanded.isEmpty {
                let empty = unlanded.isEmpty ? ""
                    : " (\(folderList(root: root, unlanded)) " + (unlanded.count == 1 ? "holds" : "hold") + " no source file)"
                let warning = "no partition after \(root)/\(date)" + empty
                    + (earlier.map { ", which \($0) already reported; reporting it again" } ?? "; reporting \(date)")
                console.err("Warning: " + warning)
                warnings.append(warning)
            }
        }
        if let missing = try missingDaysWarning(root: root, before: date) {
            console.err("Warning: " + missing)
            warnings.append(missing)
        }
        return try night(command, settings, root: root, date: date, warnings: warnings, store: store, console: console)
    }

    /// The days between the partition landed before `date` and `date` whose partitions have not
    /// landed (no folder, or one holding no source file), as a warning; nil when there are none.
    /// The night reads the partitions up to its day, so such a day is reported as a day without
    /// sales, deliveries or refunds, which finance would take for one: a partition that lands late
    /// is read by the next night, which restates its day. Said while the gap stays.
    static func missingDaysWarning(root: String, before date: String) throws -> String? {
        let folders = Set(try partitions(in: root))
        guard let earliest = folders.min(), var dayMs = Timestamp.startOfDay(date) else { return nil }
        var missing: [String] = []
        // Back from the night's day to the one before it that landed; none before it is a first partition.
        while true {
            dayMs -= 86_400_000
            let day = Timestamp.day(dayMs)
            guard day >= earliest else { return nil }
            if folders.contains(day), try holdsSourceFile(root: root, day: day) { break }
            missing.insert(day, at: 0)
        }
        guard !missing.isEmpty else { return nil }
        let listed = missing.count <= 3 ? missing : [missing[0], "…", missing[missing.count - 1]]
        let named = listed.map { day in
            day == "…" ? day : root + "/" + day + (folders.contains(day) ? " (the folder holds no source file)" : "")
        }
        return "no partition " + named.joined(separator: ", ") + " before \(root)/\(date): "
            + (missing.count == 1 ? "that day is reported without its partition (a night after it lands reads it, and restates its day)"
                : "those days are reported without their partitions (a night after they land reads them, and restates their days)")
    }

    static func backfill(_ command: ParsedCommand, console: Console) throws -> ExitCode {
        let settings = try NightSettings(command)
        let root = command.value("root") ?? "data"
        let from = try command.string("from")
        let to = try command.string("to")
        guard let start = Timestamp.startOfDay(from), let end = Timestamp.startOfDay(to) else {
            throw command.usageError("--from and --to take days as yyyy-mm-dd")
        }
        guard start <= end else { throw command.usageError("--from \(from) is after --to \(to)") }
        let folders = Set(try partitions(in: root))
        let days = stride(from: start, through: end, by: 86_400_000).map { Timestamp.day($0) }
        // A day folder that holds no source file yet is a partition that has not landed, skipped as a missing one.
        let available = Set(try days.filter { try folders.contains($0) && holdsSourceFile(root: root, day: $0) })
        let nights = days.filter(available.contains)
        var store = try prepare(command, settings, root: root, from: from, through: to, nights: nights, console: console)
        defer { store.release() }
        // A day without a partition has nothing new: the range goes on past it, saying so, also
        // under --quiet: a gap in the days is what whoever reads the mail must know. It has no
        // night of its own to record it, so the night after it does (its log and its row of `runs`),
        // or the range's last night when none follows.
        var skipped: [String: [String]] = [:]
        for day in days where !available.contains(day) {
            guard let recordedBy = nights.first(where: { $0 > day }) ?? nights.last else { break }
            skipped[recordedBy, default: []].append(skippedNight(root: root, day: day, folder: folders.contains(day)))
        }
        var worst = ExitCode.ok
        for date in days {
            guard available.contains(date) else {
                console.err("Warning: " + skippedNight(root: root, day: date, folder: folders.contains(date)))
                continue
            }
            let code = try night(command, settings, root: root, date: date, warnings: skipped[date] ?? [], store: store, console: console)
            // The first night's log named what killed runs left.
            store.leftovers = []
            if code != .ok { worst = code }
        }
        return worst
    }

    /// What the nights of `nights` (from `first` to `last`) need before the first of them, checked
    /// before any folder is made, so that a night refused before any work leaves nothing behind: the
    /// store's folder (exit 1), another run holding the store (exit 4), a replay's files gone from
    /// `root` (exit 3), then a report folder holding what iaprecon did not write (exit 2).
    ///
    /// Returns the store's lock, taken before the store is first looked at and before any folder is
    /// made, and held until the last night ends: a night that made its folders or looked at the store
    /// before it held the lock could find another run there once its log and report folder exist, or
    /// run on what that run changed since the look. It is the lock every command takes, a `flock` on
    /// the store file itself (a lock file of the night's own would not keep a `run` off the store, nor
    /// be the same for two hard links of it), so taking it makes the file of a store that does not
    /// exist yet. A first night refused after that removes the file it made, and the lock's note,
    /// while it still holds the lock, so it leaves no store behind; `RunLock` opens the path again
    /// for a run that opened the file before it was removed and locked it after.
    private static func prepare(
        _ command: ParsedCommand, _ settings: NightSettings, root: String, from first: String, through last: String, nights: [String],
        console: Console
    ) throws -> HeldStore {
        guard !nights.isEmpty else {
            // A backfill whose range holds no partition makes nothing, not even a store; one that is
            // there is held while the backfill names the days it skips.
            let lock = try RunLock.ifExists(databasePath: command.databasePath, command: command.name)
            let replay = try lock.flatMap { _ in try Replay.ifNeeded(databasePath: command.databasePath, root: root, from: first, through: last) }
            console.reached("store checked")
            return HeldStore(lock: lock, replay: replay, folders: [])
        }
        let lock = try RunLock(databasePath: command.databasePath, command: command.name)
        do {
            let replay = try Replay.ifNeeded(databasePath: command.databasePath, root: root, from: first, through: last)
            console.reached("store checked")
            let folders = try settings.prepareFolders(for: nights)
            console.reached("folders made")
            // Under the store's lock, once the nights are sure to run (a refused night changes nothing) and before they write.
            let leftovers = KilledRunLeftovers.remove(databasePath: command.databasePath, outRoot: settings.outRoot)
            return HeldStore(lock: lock, replay: replay, folders: folders, leftovers: leftovers)
        } catch {
            lock.removeMadeStore()
            throw error
        }
    }

    /// A backfill's warning for a day of its range that has no partition: no folder, or a `folder` that holds no source file.
    private static func skippedNight(root: String, day: String, folder: Bool) -> String {
        "no partition \(root)/\(day)" + (folder ? " (the folder holds no source file)" : "") + "; that night is skipped"
    }

    /// The night (of `nightly`, or one of a `backfill`'s) that already reported `date` to its end
    /// (`ok`, or exit 1 on findings), as `run 12 (2026-11-29 03:15 UTC)`; nil when none did, or the store cannot say (a first
    /// night, or a store the run itself will refuse with its own reason). The caller holds the store's lock.
    static func reportedNight(_ date: String, databasePath: String) -> String? {
        guard FileManager.default.fileExists(atPath: databasePath),
              let database = try? Store.open(path: databasePath, readOnly: true),
              let runs = try? RunLog.recent(database, limit: 50) else { return nil }
        guard let run = runs.first(where: { ["nightly", "backfill"].contains($0.command) && $0.partitionDate == date && ["ok", "findings"].contains($0.status) })
        else { return nil }
        return "run \(run.runID) (" + Timestamp.iso8601(run.startedMs).prefix(16).replacingOccurrences(of: "T", with: " ") + " UTC)"
    }

    /// The `YYYY-MM-DD` folders under `root`, oldest first (a file of such a name is no partition: ingest does not read it as one).
    static func partitions(in root: String) throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else {
            throw InputError(path: root, reason: unlistableReason(root))
        }
        return names.filter { SourceFile.isPartitionName($0) && isFolder(root + "/" + $0) }.sorted()
    }

    /// Why `root` cannot be listed, in the words `run` uses for its `--input`: a mistyped `root` in the config
    /// is the usual cause, and "no such folder" says so where "cannot list the folder" leaves one guessing.
    private static func unlistableReason(_ root: String) -> String {
        var status = stat()
        guard stat(root, &status) == 0 else { return errno == ENOENT ? "no such folder" : String(cString: strerror(errno)) }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "not a folder" }
        guard let folder = opendir(root) else { return "cannot list the folder: " + String(cString: strerror(errno)) }
        closedir(folder)
        return "cannot list the folder"
    }

    /// Whether the day folder `root/day` holds a source file, as ingest lists them (`SourceFile.holdsSourceFile`): a
    /// folder made ahead of its files, or holding only files ingest does not read, is a partition that has not landed.
    /// - Throws: `InputError` when the folder cannot be read, as ingest would fail on it.
    static func holdsSourceFile(root: String, day: String) throws -> Bool {
        try SourceFile.holdsSourceFile(partition: root + "/" + day)
    }

    /// `root/a, root/b`, for a warning naming day folders; the first and the last of more than three.
    private static func folderList(root: String, _ days: [String]) -> String {
        let shown = days.count <= 3 ? days : [days[0], "…", days[days.count - 1]]
        return shown.map { $0 == "…" ? $0 : root + "/" + $0 }.joined(separator: ", ")
    }

    /// A `--date` whose partition never landed must not report the day before as that day: no folder, or one that
    /// holds no source file yet.
    static func requirePartition(root: String, date: String) throws {
        guard isFolder(root + "/" + date) else {
            throw InputError(path: root + "/" + date, reason: "no partition for --date \(date)")
        }
        guard try holdsSourceFile(root: root, day: date) else {
            throw InputError(path: root + "/" + date, reason: "no partition for --date \(date) (the folder holds no source file)")
        }
    }

    private static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }

    /// Runs one night; `warnings` are the command's own about it (a partition that has not landed, days a backfill
    /// skipped), which its log and its row of `runs` keep, as a run's other warnings go to its log.
    private static func night(
        _ command: ParsedCommand, _ settings: NightSettings, root: String, date: String, warnings: [String], store: HeldStore,
        console: Console
    ) throws -> ExitCode {
        let databasePath = store.replay?.path ?? command.databasePath
        let outRoot = settings.outRoot
        let quiet = settings.quiet
        let stamp = Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000)).replacingOccurrences(of: ":", with: "")
        let log: LogFile
        do {
            log = try LogFile(path: "\(settings.logDir)/iaprecon-\(date)-\(stamp).log")
        } catch {
            store.removeIfUnwritten()
            throw error
        }
        log.write("iaprecon \(IAPReconCLI.version) \(command.name) --root \(root) --date \(date)"
                  + (databasePath == command.databasePath ? "" : " (replayed in the scratch store \(databasePath))"))
        // A log that takes no line (its disk is full) is a log that cannot be written: refused as one that cannot be opened.
        if let failure = log.failure {
            store.removeIfUnwritten()
            throw OutputError(path: log.path, reason: failure)
        }
        // Once the night has begun, a log that stops taking lines is said at its end, whatever the end.
        defer { if let warning = log.incompleteWarning { console.err(warning) } }
        for warning in warnings { log.write("Warning: " + warning) }
        for leftover in store.leftovers {
            let note = "removed \(leftover.path), left by pid \(leftover.pid), which is gone"
            log.write(note)
            if !quiet { console.err("Note: " + note) }
        }
        console.reached("log opened")
        var options = RunOptions(
            input: root, databasePath: databasePath, outFolder: outRoot + "/" + date, jobs: command.jobs,
            reconcile: settings.reconcile, report: settings.report)
        options.partitionsThrough = date
        options.lineRules = settings.lineRules
        options.report.outFolder = options.outFolder
        options.command = command.name
        options.checkStore = databasePath == command.databasePath
        // A replay's findings were reported by the nights before it as the store saw them.
        if databasePath != command.databasePath { options.report.earlierSightings = command.databasePath }
        // A night the store reported already says new as it did (`--date` means as that night saw it).
        options.report.nightReportedBefore = reportedNight(date, databasePath: command.databasePath) != nil
        options.report.nightWarnings = warnings
        options.verdict = RunCommand.verdict(failOn: command.failOn, failOnNew: command.failOnNew, out: options.outFolder, warnings: warnings)
        if let dayStart = Timestamp.startOfDay(date) {
            options.reconcile.asOfLimitMs = options.report.zone.utc(fromLocal: dayStart + 86_400_000) - 1
        }
        // An alert (a file emptied since it was read) reaches cron's mail even under --quiet.
        let progress = StageProgress(live: !quiet && console.isTerminal, write: { line in
            log.write(line)
            if !quiet { console.err(line) }
        }, alert: { line in
            log.write(line)
            console.err(line)
        })
        do {
            console.reached("run starts")
            // The store's own lock, which the night took before its first look at the store; a replay's
            // scratch store is locked by its run (no other run knows it: the store's lock keeps them off).
            // Said before the night's findings count as reported: a night stopped before its alert
            // was printed leaves them new, and the next night alerts on them.
            let result = try Pipeline.run(options, holding: store.replay == nil ? store.lock : nil, progress: progress) { result in
                console.reached("outputs written")
                if try pointLatest(outRoot: outRoot, at: date, force: command.flag("force")) == false {
                    let note = "latest stays at a later night (--force moves it back to \(date))"
                    log.write(note)
                    if !quiet { console.err("Note: " + note) }
                }
                let line = RunCommand.findingsLine(result.report.findingsBySeverity, asOfMs: result.join.asOfMs, out: options.outFolder)
                log.write(line)
                if !quiet { console.out(line) }
                if let warning = bundleWarning(result.report, bundleOption: options.lineRules.bundleID) {
                    log.write(warning)
                    if !quiet { console.err(warning) }
                }
                if let alert = findingsOutcome(result.report, failOn: command.failOn, failOnNew: command.failOnNew,
                                               outFolder: options.outFolder).alert {
                    log.write(alert)
                    try console.alert(alert)
                }
            }
            console.reached("run done")
            if let keepReports = settings.keepReports {
                pruneReports(outRoot: outRoot, keep: keepReports, written: date, log: log, quiet: quiet, console: console)
            }
            let outcome = findingsOutcome(result.report, failOn: command.failOn, failOnNew: command.failOnNew, outFolder: options.outFolder)
            log.write("exit \(outcome.code.rawValue)")
            console.reached("night done")
            return outcome.code
        } catch {
            log.write("failed: \(error)")
            store.removeIfUnwritten()
            throw error
        }
    }

    /// `--keep-reports`: once the night's set and `latest` are in place. What was removed goes to the
    /// log and, unless --quiet, to one line on stdout (cron mails what is printed); a folder that
    /// cannot be removed is a warning even under --quiet, since the disk fills up unseen otherwise.
    /// The night's exit code does not change either way.
    private static func pruneReports(outRoot: String, keep: Int, written: String, log: LogFile, quiet: Bool, console: Console) {
        let outcome = ReportPruning.prune(outRoot: outRoot, keep: keep, written: written)
        if !outcome.removed.isEmpty {
            log.write("keep-reports \(keep): removed " + outcome.removed.map { outRoot + "/" + $0 }.joined(separator: ", "))
            let shown = outcome.removed.count <= 3
                ? outcome.removed.joined(separator: ", ")
                : "\(outcome.removed[0]) … \(outcome.removed[outcome.removed.count - 1])"
            let folders = outcome.removed.count == 1 ? "folder" : "folders"
            if !quiet { console.out("Removed \(outcome.removed.count) report \(folders) beyond the newest \(keep) in \(outRoot): \(shown)") }
        }
        for failure in outcome.failures {
            let warning = "Warning: cannot remove the old report folder \(failure.folder) (--keep-reports \(keep)): \(failure.reason)"
            log.write(warning)
            console.err(warning)
        }
    }

    /// Creates `path` and its parents, adding each folder it made to `made`, outermost first; a folder
    /// that cannot be made is named with the system's reason (`OutputError`), not Foundation's error
    /// record, since that line is what cron mails.
    static func makeFolder(_ path: String, made: inout [String]) throws {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw OutputError(path: path, reason: String(cString: strerror(ENOTDIR))) }
            return
        }
        let parent = PathParent.of(path)
        if !parent.isEmpty, parent != path { try makeFolder(parent, made: &made) }
        if mkdir(path, 0o755) == 0 {
            made.append(path)
        } else if errno != EEXIST {
            throw OutputError(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Points `<out>/latest` at `date` with one rename, so readers never see it missing; only
    /// forward (to a later day) unless `force`. Returns false when it stayed where it was.
    @discardableResult
    static func pointLatest(outRoot: String, at date: String, force: Bool = false) throws -> Bool {
        if !force, let current = try? FileManager.default.destinationOfSymbolicLink(atPath: outRoot + "/latest"),
           SourceFile.isPartitionName(current), current > date {
            return false
        }
        let temporary = outRoot + "/.latest.tmp-\(getpid())"
        unlink(temporary)
        guard symlink(date, temporary) == 0, rename(temporary, outRoot + "/latest") == 0 else {
            throw OutputError(path: outRoot + "/latest", reason: String(cString: strerror(errno)))
        }
        return true
    }
}

/// What every night of a `nightly` or `backfill` runs with, read before anything is made: a value
/// that is refused stops the command before any folder, store, log or run record.
struct NightSettings {
    var outRoot: String
    var logDir: String
    var quiet: Bool
    var keepReports: Int?
    var reconcile: ReconcileSettings
    var report: ReportSettings
    var lineRules: LineRules

    init(_ command: ParsedCommand) throws {
        outRoot = command.value("reports") ?? "reports"
        logDir = command.value("log-dir") ?? "logs"
        quiet = command.flag("quiet")
        keepReports = try command.optionalInt("keep-reports")
        reconcile = try command.reconcileSettings()
        report = try command.reportSettings()
        lineRules = try command.lineRules()
    }

    /// Checks the report folder of each of `dates` as `run` checks --out (each night checks its own
    /// again, and its report when it writes), and makes the report and log folders, once the store is
    /// locked and before a log is written: a folder holding what iaprecon did not write stops a
    /// backfill before its first night, not half-way through the range. The log folder is made
    /// last, so such a refusal makes no folder (a day folder that exists was in the report folder);
    /// a log folder that cannot be made removes again the report folders made before it. Returns the
    /// folders it made, outermost first, which a first night that stops before it stores anything removes.
    func prepareFolders(for dates: [String]) throws -> [String] {
        guard !dates.isEmpty else { return [] }
        var made: [String] = []
        do {
            try NightlyCommand.makeFolder(outRoot, made: &made)
            for date in dates { try OutputSet.checkTarget(outRoot + "/" + date) }
            try NightlyCommand.makeFolder(logDir, made: &made)
        } catch {
            // Innermost first; rmdir removes only an empty folder, so nothing another run put there since goes.
            for folder in made.reversed() { rmdir(folder) }
            throw error
        }
        return made
    }
}

/// The store's lock a `nightly` or `backfill` holds from its first look at the store to its last
/// night's end, and the replay its nights run in, if any; no lock only when there is no store and no night.
struct HeldStore {
    let lock: RunLock?
    /// The scratch store the nights run in; nil when the store takes them itself.
    let replay: Replay?
    /// The report and log folders the command made, outermost first.
    let folders: [String]
    /// What killed runs had left, which the command removed (`KilledRunLeftovers`): its first night's log names them.
    var leftovers: [(path: String, pid: Int32)] = []

    /// A first night that stops before it stored anything it read (its log cannot be opened, its report folder is
    /// refused once it runs, its fx.csv does not convert into the reporting currency, ...) leaves no store, as one
    /// refused before it ran: not the store file its lock made, with nothing in it but the schema and the night's own
    /// row of `runs`, nor the lock's note, nor the report folders it made, while they are empty. Its log stays, with
    /// the folder it is in: it is where the runbook sends a person to read why the night failed. Nothing is removed
    /// once a night stored what it read (`RunLock.storesInputs`), nor on a store that was there before the command.
    func removeIfUnwritten() {
        guard lock?.removeMadeStore() == true else { return }
        // Innermost first; rmdir removes only an empty folder, so not the log's.
        for folder in folders.reversed() { rmdir(folder) }
    }

    /// Removes the replay's scratch store, then lets go of the store's lock.
    func release() {
        replay?.remove()
        withExtendedLifetime(lock) {}
    }
}

/// A scratch store for replaying nights the store has already gone past.
///
/// The store's own lock is held for the whole replay (`HeldStore`): the scratch store has a lock of
/// its own, which no other run on the store would meet, and a replay writes the same `<reports>`
/// and reads the store's sightings, so a second run on the store exits 4 as it would otherwise.
struct Replay {
    let path: String

    /// A scratch store beside the store at `databasePath` when that store holds partitions after
    /// `first`, for replaying the nights `first` to `last`; nil when the store can take them itself.
    /// The caller holds the store's lock, so no run can add later days between this look and the nights.
    /// - Throws: `ReplayError` when a file the store holds for those nights is no longer under `root`
    ///   (an archived partition): the scratch store is fed the folder alone, and would report the
    ///   nights without the file's rows (CONTRACT.md §1: a file that leaves the folder keeps its rows).
    static func ifNeeded(databasePath: String, root: String, from first: String, through last: String) throws -> Replay? {
        // A file without tables is a store no run has written to yet (a first night stopped once it had
        // the lock or turned on WAL, or a file made ahead for its owner): it holds no partitions.
        guard !Store.holdsNoTables(path: databasePath) else { return nil }
        let database = try Store.open(path: databasePath, readOnly: true)
        guard try StoredFiles.holdsPartitions(after: first, in: database) else { return nil }
        let missing = try StoredFiles.paths(through: last, in: database).filter { !FileManager.default.fileExists(atPath: root + "/" + $0) }
        if !missing.isEmpty {
            // The first night that reads one of them.
            let day = missing.map { path in max(first, SourceFile.isPartitionName(String(path.prefix(10))) ? String(path.prefix(10)) : first) }.min()
            throw ReplayError(day: day ?? first, root: root, missing: missing)
        }
        let path = databasePath + ".replay-\(getpid()).sqlite"
        let replay = Replay(path: path)
        replay.remove()
        return replay
    }

    /// The scratch store's file and what a store file has beside it: its journal files and notes.
    static let fileSuffixes = ["", "-wal", "-shm", "-journal", ".lock", ".unsynced"]

    /// Removes the scratch store and its journal files.
    func remove() {
        for suffix in Self.fileSuffixes { unlink(path + suffix) }
    }
}

/// A replay refused because files the store holds for its nights are gone from the input folder
/// (exit 3, as for an input that cannot be read): putting them back lets it run.
struct ReplayError: Error, CustomStringConvertible {
    var day: String
    var root: String
    /// Paths under `root`, sorted.
    var missing: [String]

    var description: String {
        let one = missing.count == 1
        let shown = missing.prefix(3).joined(separator: ", ") + (missing.count > 3 ? ", …" : "")
        return "cannot replay \(day): \(missing.count) file\(one ? "" : "s") the store holds for it \(one ? "is" : "are") no longer under "
            + "\(root) (\(shown)); put \(one ? "it" : "them") back"
    }
}

/// A run's log file: one timestamped line per event, appended and flushed as it goes.
final class LogFile {
    let path: String
    private let descriptor: Int32
    /// Why a line could not be written (a full disk), from the first that could not; the lines after it are not tried.
    private(set) var failure: String?

    /// - Throws: `OutputError` when the file cannot be opened (a read-only `--log-dir`): a night
    ///   must not run without the log its runbook points to.
    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        self.path = path
    }

    deinit { close(descriptor) }

    /// Appends one line. A line the disk refuses does not stop the night (Foundation's `FileHandle.write` trapped, so a
    /// full log disk crashed every night at its first line): `failure` keeps why, for the night to say.
    func write(_ line: String) {
        guard failure == nil else { return }
        let stamp = Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000))
        // The log is read on a terminal (and mailed) like stderr: input's control characters and line
        // breaks escaped, so every line of it is one stamped event.
        if let error = StandardStreams.write("\(stamp) \(Terminal.visible(line))\n".utf8, to: descriptor) {
            failure = String(cString: strerror(error))
        }
    }

    /// The warning a night gives, also under --quiet, when its log lost lines: the runbook sends a person to it.
    var incompleteWarning: String? {
        failure.map { "Warning: the log \(path) is incomplete: a line could not be written (\($0)), nor any after it" }
    }
}
