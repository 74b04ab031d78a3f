import Foundation

/// The store could not be opened: not a database, or from a newer iaprecon.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "cannot use store \(path): \(reason)" }

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// Opens the SQLite store and brings its schema up to date.
public enum Store {
    /// `requireWritten`: a writer that works on what a store holds (a stage run alone, under its own lock)
    /// refuses a store no run has written a table to, as a reader does, rather than make it a new store.
    /// `firstBuildUnsynced`: a run's writer builds a store that holds no table yet without waiting for the disk
    /// (`FirstBuild`), and calls `FirstBuild.finish` before it publishes anything from it. A writer holds the store's
    /// lock, which dealt with what an earlier first build left; a reader refuses a store a restart cut short.
    public static func open(path: String, readOnly: Bool = false, requireWritten: Bool = false, firstBuildUnsynced: Bool = false) throws -> Database {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError(path: path, reason: "it is a directory, not a store file; --db names the store's file")
        }
        if readOnly, let reason = ReaderAccess.unreachable(path: path, effectiveUser: geteuid()) {
            throw StoreError(path: path, reason: reason)
        }
        if readOnly {
            try FirstBuild.checkReadable(databasePath: path)
            if let problem = ReaderAccess.problem(path: path, effectiveUser: geteuid()) { throw StoreError(path: path, reason: problem) }
        }
        let database: Database
        do {
            database = try Database(path: path, readOnly: readOnly)
        } catch {
            throw unusable(path, error, reason: (readOnly ? nil : unwritableFolder(path, error)) ?? error.message)
        }
        do {
            // Never take over another application's database: an iaprecon store is empty or has our migrations.
            let objects = try database.scalar("SELECT count(*) FROM sqlite_master").integerValue
            let ours = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'").integerValue
            if objects > 0, ours == 0 {
                throw StoreError(path: path, reason: "the file is not an iaprecon store (a SQLite database of something else)")
            }
            // An empty file (a first run stopped once it had the lock, a file made ahead to set its owner, or a first
            // run under way) is a new store to a writer that creates the tables; a reader, or a stage, has none to
            // work on. A reader names the run that holds it now; a stage holds the lock itself.
            if objects == 0, readOnly || requireWritten {
                throw unwritten(path: path, holder: readOnly ? RunLock.holder(databasePath: path) : nil)
            }
            // A newer iaprecon's store is refused before anything is written to it, its journal mode too: that
            // iaprecon may keep it otherwise.
            if ours > 0 { _ = try Schema.pending(database) }
            if !readOnly {
                try database.enableWAL()
                if objects == 0, firstBuildUnsynced { try FirstBuild.start(database) }
                try Schema.migrate(database)
            }
        } catch let error as Schema.NewerSchemaError {
            throw StoreError(path: path, reason: error.description)
        } catch let error as SQLiteError {
            throw unusable(path, error, reason: (readOnly ? nil : unwritableFolder(path, error)) ?? error.description)
        }
        return database
    }

    /// Why a writer cannot use a store whose folder it may not write, when that is why SQLite refused it: a
    /// write-ahead-logged store is written through `-wal` and `-shm` files SQLite makes beside it, and SQLite says only
    /// "attempt to write a readonly database" (or that it cannot open the file) of a store file its owner may write.
    private static func unwritableFolder(_ path: String, _ error: SQLiteError) -> String? {
        // SQLITE_READONLY and SQLITE_CANTOPEN.
        guard [8, 14].contains(error.primaryCode) else { return nil }
        let folder = PathParent.of(RunLock.realPath(path))
        guard !folder.isEmpty, access(folder, W_OK) != 0 else { return nil }
        return "its folder \(folder) is not writable by \(ReaderAccess.userName(geteuid())): SQLite writes the store through "
            + "-wal and -shm files it makes beside it (\(error.message))"
    }

    /// Whether the store file at `path` holds no table yet: an empty file, or SQLite's header alone (a first
    /// run stopped once it turned on WAL, before its first migration committed). A writer makes either a new
    /// store; a reader has nothing to read (`open`). False when it holds tables or is no database, which
    /// `open` names.
    public static func holdsNoTables(path: String) -> Bool {
        guard let database = try? Database(path: path, readOnly: true),
              let objects = try? database.scalar("SELECT count(*) FROM sqlite_master") else { return false }
        return objects == .integer(0)
    }

    /// Why a command that works on what a store holds cannot use the store at `path`, which holds no table:
    /// what fills it, or the run that holds it now (`holder`, as `RunLock.holder` describes it) and has not
    /// written it yet.
    private static func unwritten(path: String, holder: String?) -> StoreError {
        let fill = holder.map { "the run that holds it (\($0)) has not written it yet" } ?? "run 'iaprecon run' or 'iaprecon ingest' first"
        return StoreError(path: path, reason: "it is empty, no run has completed on it yet; " + fill)
    }

    /// Why SQLite's `error` makes the store at `path` unusable; `reason` unless it is not a database or damaged.
    private static func unusable(_ path: String, _ error: SQLiteError, reason: String) -> StoreError {
        switch error.primaryCode {
        case 26: StoreError(path: path, reason: "the file is not an iaprecon store (not a SQLite database)")
        // Its schema cannot be read: as damaged as a b-tree `checkIntegrity` finds broken.
        case 11: StoreError(path: path, reason: "damaged (SQLite: \(error.message)); " + damagedAdvice)
        default: StoreError(path: path, reason: reason)
        }
    }
}

/// How a run ended, as `runs` shows it: `ok`, `findings` (exit 1 by `--fail-on`), or `failed`.
public struct RunVerdict: Sendable, Equatable {
    public var status: String
    public var exitCode: Int32
    public var message: String?

    public init(status: String, exitCode: Int32, message: String?) {
        self.status = status
        self.exitCode = exitCode
        self.message = message
    }
}

/// The `runs` table: one row per command that changed the store.
public enum RunLog {
    /// Starts a run's row; `partitionDate` is a night's `--date`.
    public static func start(_ database: Database, command: String, partitionDate: String? = nil) throws -> Int64 {
        // The caller holds the run lock: a run still marked running was killed.
        try database.run("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        var id: Int64 = 0
        try database.forEach("INSERT INTO runs (command, started_ms, status, partition_date) VALUES (?, ?, 'running', ?) RETURNING run_id",
                             [.text(command), .integer(nowMs()), SQLValue(partitionDate)]) { id = $0.int(0) }
        return id
    }

    public static func finish(
        _ database: Database, runID: Int64, verdict: RunVerdict, asOfMs: Int64?, linesRead: Int?, findings: Int?
    ) {
        try? database.run("""
            UPDATE runs SET ended_ms = ?, status = ?, exit_code = ?, as_of_ms = ?, lines_read = ?, findings = ?, message = ?
            WHERE run_id = ?
            """, [.integer(nowMs()), .text(verdict.status), .integer(Int64(verdict.exitCode)), SQLValue(asOfMs), SQLValue(linesRead),
                  SQLValue(findings), SQLValue(verdict.message), .integer(runID)])
    }

    public struct Entry: Sendable {
        public var runID: Int64
        public var command: String
        public var partitionDate: String?
        public var startedMs: Int64
        public var endedMs: Int64?
        public var status: String
        public var exitCode: Int64?
        public var asOfMs: Int64?
        public var linesRead: Int64?
        public var findings: Int64?
        public var message: String?
    }

    public static func recent(_ database: Database, limit: Int) throws -> [Entry] {
        var entries: [Entry] = []
        typealias Column = EntryColumn
        try database.forEach("SELECT \(Column.selectList) FROM runs ORDER BY run_id DESC LIMIT ?", [.integer(Int64(limit))]) { row in
            entries.append(Entry(runID: row.int(Column.runID), command: row.string(Column.command),
                                 partitionDate: row.optionalString(Column.partitionDate), startedMs: row.int(Column.startedMs),
                                 endedMs: row.optionalInt(Column.endedMs), status: row.string(Column.status),
                                 exitCode: row.optionalInt(Column.exitCode), asOfMs: row.optionalInt(Column.asOfMs),
                                 linesRead: row.optionalInt(Column.linesRead), findings: row.optionalInt(Column.findings),
                                 message: row.optionalString(Column.message)))
        }
        return entries
    }

    /// What `recent` selects of a run.
    private enum EntryColumn: Int, SelectedColumn {
        case runID, command, startedMs, endedMs, status, asOfMs, linesRead, findings, message, partitionDate, exitCode
        var sql: String {
            [
                "run_id", "command", "started_ms", "ended_ms", "status", "as_of_ms", "lines_read", "findings", "message", "partition_date",
                "exit_code",
            ][rawValue]
        }
    }

    public static func recordStages(_ database: Database, runID: Int64, timings: [(String, Double)]) {
        try? database.execute(Tables.runStages)
        for (stage, seconds) in timings {
            try? database.run("INSERT OR REPLACE INTO run_stages (run_id, stage, seconds) VALUES (?, ?, ?)",
                              [.integer(runID), .text(stage), .text(String(format: "%.3f", seconds))])
        }
    }

    /// The stage timings of a run, in the order the stages ran.
    public static func stages(_ database: Database, runID: Int64) throws -> [(stage: String, seconds: Double)] {
        guard try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'run_stages'").integerValue > 0 else { return [] }
        var stages: [(String, Double)] = []
        try database.forEach("SELECT stage, seconds FROM run_stages WHERE run_id = ? ORDER BY rowid", [.integer(runID)]) { row in
            stages.append((row.string(0), Double(row.string(1)) ?? 0))
        }
        return stages
    }

    static func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

extension Store {
    /// SQLite's `integrity_check` of the whole store: every page, index and constraint (`iaprecon check`; a run
    /// checks its turn, `checkTurn`).
    /// - Throws: `StoreError` naming the first problems when the store is damaged.
    public static func checkIntegrity(_ database: Database) throws {
        var problems: [String] = []
        do {
            try database.forEach("PRAGMA integrity_check(20)") { problems.append($0.string(0)) }
        } catch let error as SQLiteError {
            // Damage bad enough that the check itself stops reading.
            problems = [error.message]
        }
        guard problems != ["ok"] else { return }
        throw damaged(database, problems, check: "integrity_check")
    }

    /// The error of a store whose `check` found `problems`.
    private static func damaged(_ database: Database, _ problems: [String], check: String) -> StoreError {
        // One line: SQLite heads its findings with `*** in database main ***` and may break a finding over lines.
        let findings = problems.flatMap { $0.split(whereSeparator: \.isNewline).map(String.init) }.filter { !$0.hasPrefix("***") }
        let shown = findings.prefix(3).joined(separator: "; ") + (findings.count > 3 ? "; …" : "")
        return StoreError(path: database.path, reason: "damaged (SQLite's \(check) found: \(shown)); " + damagedAdvice)
    }

    /// What to do with a damaged store.
    public static let damagedAdvice = "restore it from a backup, or delete it and let the next run read the inputs again"
}

/// One table of the store that a run's check read: its name and the pages its check read (the table's and its
/// indexes'), which tell the next runs how much of the store it is.
public struct CheckedTable: Sendable, Equatable {
    public var table: String
    public var pages: Int64
}

extension Store {
    /// A run checks the store in turns, each reading about this fraction of it: every table is checked about once in
    /// this many runs (a table too large for a turn's share waits until it is first in line).
    public static let checkTurns: Int64 = 7

    /// SQLite's `quick_check` of this run's turn of the store: the tables (each with its indexes) checked longest ago,
    /// never-checked ones first, until about a seventh of the store's pages is read. A night thus reads what its data
    /// needs and not the whole history, and every table is checked about every `checkTurns` runs, since each turn
    /// reads its share of the pages in that order. A table left for a later turn because it would take this one far
    /// past its share (smaller ones after it are checked instead) is the first of that turn, so none waits longer. `iaprecon check` checks all of the store at once,
    /// the pages no table holds too; a damaged page a night reads stops that night whatever its turn.
    /// - Returns: the tables checked, for `recordChecked` once the run has used the store, whether it succeeded or failed.
    /// - Throws: `StoreError` naming the first problems when a checked table is damaged.
    public static func checkTurn(_ database: Database) throws -> [CheckedTable] {
        var checked: [CheckedTable] = []
        var problems: [String] = []
        do {
            let share = (try database.scalar("PRAGMA page_count").integerValue + checkTurns - 1) / checkTurns
            var last: [String: (turn: Int64, pages: Int64)] = [:]
            if try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'store_checks'").integerValue > 0 {
                try database.forEach("SELECT table_name, turn, pages FROM store_checks") { last[$0.string(0)] = ($0.int(1), $0.int(2)) }
            }
            var tables: [String] = []
            try database.forEach("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'") { tables.append($0.string(0)) }
            tables.sort { (last[$0]?.turn ?? 0, $0) < (last[$1]?.turn ?? 0, $1) }
            var read: Int64 = 0
            _ = database.pagesRead(reset: true)
            for table in tables {
                if !checked.isEmpty, read + (last[table]?.pages ?? 0) > 2 * share { continue }
                try database.forEach("PRAGMA quick_check(\"\(table)\")") { problems.append($0.string(0)) }
                guard problems == ["ok"] else { break }
                problems = []
                let pages = database.pagesRead(reset: true)
                checked.append(CheckedTable(table: table, pages: pages))
                read += pages
                if read >= share { break }
            }
        } catch let error as SQLiteError {
            // Damage bad enough that the check itself stops reading.
            problems = [error.message]
        }
        guard problems.isEmpty else { throw damaged(database, problems, check: "quick_check") }
        return checked
    }

    /// Notes the tables `checkTurn` checked as checked in a new turn, so that the next runs check the others first.
    public static func recordChecked(_ database: Database, _ tables: [CheckedTable]) throws {
        guard !tables.isEmpty else { return }
        try database.transaction {
            try database.execute(Tables.storeChecks)
            let turn = try database.scalar("SELECT coalesce(max(turn), 0) + 1 FROM store_checks").integerValue
            for checked in tables {
                try database.run("INSERT OR REPLACE INTO store_checks (table_name, turn, pages) VALUES (?, ?, ?)",
                                 [.text(checked.table), .integer(turn), .integer(checked.pages)])
            }
        }
    }
}

/// Bytes of the store that belong to one layer of `Tables` (ledger, raw, results).
public struct LayerBytes: Sendable, Equatable {
    public var layer: String
    public var bytes: Int
}

extension Store {
    /// Where the store's bytes go, by layer, each index counted with its table, largest first; nil
    /// when the SQLite library has no `dbstat` table. What the bench shows beside the store's size.
    public static func bytesByLayer(path: String) -> [LayerBytes]? {
        guard let database = try? Database(path: path, readOnly: true) else { return nil }
        var bytes: [String: Int] = [:]
        do {
            try database.forEach("""
                SELECT coalesce(m.tbl_name, s.name), sum(s.pgsize) FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name
                GROUP BY 1
                """) { row in
                let layer = Tables.named(row.string(0)).map { name(of: $0.layer) } ?? "other"
                bytes[layer, default: 0] += Int(row.int(1))
            }
        } catch {
            return nil
        }
        return bytes.map { LayerBytes(layer: $0.key, bytes: $0.value) }.sorted { ($0.bytes, $1.layer) > ($1.bytes, $0.layer) }
    }

    private static func name(of layer: Tables.Layer) -> String {
        switch layer {
        case .ledger: "ledger"
        case .raw: "raw"
        case .result: "results"
        }
    }
}

extension Store {
    /// SQLite alone storing what ingest stores: the ledger and raw tables of the store at `path`,
    /// copied into a fresh file at `scratch` (their schema, write-ahead log, one transaction), then
    /// the raw tables' indexes built one by one as normalize builds them. No line is parsed and no
    /// value passes through Swift, but every row's record is built anew from its values, as a writer
    /// of parsed lines must (`WHERE 1` keeps SQLite from moving the stored records as they are): the
    /// least any design that keeps these rows in SQLite pays to write them, which the bench shows
    /// beside parsing alone. `scratch` and its log are replaced.
    public static func copyIngested(from path: String, into scratch: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: scratch + suffix) }
        let source = try Database(path: path, readOnly: true)
        var tables: [(name: String, sql: String)] = []
        var indexes: [String] = []
        try source.forEach("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid") { row in
            guard let layer = Tables.named(row.string(2))?.layer, layer == .ledger || layer == .raw else { return }
            switch row.string(0) {
            case "table": tables.append((row.string(1), row.string(3)))
            case "index" where layer == .raw: indexes.append(row.string(3))
            default: break
            }
        }
        let target = try Database(path: scratch)
        try target.enableWAL()
        for table in tables { try target.execute(table.sql) }
        try target.run("ATTACH DATABASE ? AS ingested", [.text(path)])
        try target.transaction {
            for table in tables { try target.execute("INSERT INTO main.\(table.name) SELECT * FROM ingested.\(table.name) WHERE 1") }
        }
        try target.execute("DETACH DATABASE ingested")
        for index in indexes { try target.execute(index) }
    }
}
