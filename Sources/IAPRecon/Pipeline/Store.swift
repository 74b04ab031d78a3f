import Foundation

/// The store could not be opened: not a database, or from a newer iaprecon.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "cannot use store \(path): \(reason)" }

    /// SQLite's integrity check found `problem`: the run's reports may rest on it, and a later full rebuild would fail.
    static func damaged(path: String, _ problem: String) -> StoreError {
        // SQLite heads its findings with `*** in database main ***`: the first finding itself says more.
        let lines = problem.split(whereSeparator: \.isNewline).map(String.init)
        let firstLine = lines.first { !$0.hasPrefix("***") } ?? lines.first ?? problem
        return StoreError(path: path, reason: "the store is damaged (SQLite integrity check: \(firstLine)); "
            + "restore it from a backup, or move it aside and run again to rebuild it from the inputs")
    }
}

/// Opens the SQLite store and brings its schema up to date.
public enum Store {
    public static func open(path: String, readOnly: Bool = false) throws -> Database {
        if readOnly, !FileManager.default.fileExists(atPath: path) {
            throw StoreError(path: path, reason: "no such file; run 'iaprecon run' or 'iaprecon ingest' first")
        }
        let database: Database
        do {
            database = try Database(path: path, readOnly: readOnly)
        } catch {
            throw StoreError(path: path, reason: error.primaryCode == 26 ? "the file is not an iaprecon store (not a SQLite database)" : error.message)
        }
        do {
            // Never take over another application's database: an iaprecon store is empty or has our migrations.
            let objects = try database.scalar("SELECT count(*) FROM sqlite_master").integerValue
            let ours = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'").integerValue
            if objects > 0, ours == 0 {
                throw StoreError(path: path, reason: "the file is not an iaprecon store (a SQLite database of something else)")
            }
            if readOnly {
                let version = try database.scalar("SELECT coalesce(max(id), 0) FROM schema_migrations").integerValue
                if version > Schema.latestVersion { throw Schema.NewerSchemaError(found: Int(version)) }
            } else {
                try database.enableWAL()
                try Schema.migrate(database)
            }
        } catch let error as Schema.NewerSchemaError {
            throw StoreError(path: path, reason: error.description)
        } catch let error as SQLiteError {
            throw StoreError(path: path, reason: error.primaryCode == 26 ? "the file is not an iaprecon store (not a SQLite database)" : error.description)
        }
        return database
    }

    /// The first problem SQLite's `quick_check` finds in the store at `path`, or nil when it finds none.
    ///
    /// A run reads only the tables its stages need, so damage elsewhere (a raw table an
    /// incremental night does not read, an index) would pass unnoticed until a full rebuild
    /// fails weeks later. The check reads the store on its own read-only connection, as the
    /// run found it, while the run works. Only damage counts: a check that cannot run for
    /// another reason (the file went away) leaves that to the run.
    public static func damage(path: String) -> String? {
        do {
            let database = try Database(path: path, readOnly: true)
            var problems: [String] = []
            try database.forEach("PRAGMA quick_check(1)") { problems.append($0.string(0)) }
            return problems == ["ok"] ? nil : problems.first ?? "the integrity check returned nothing"
        } catch let error as SQLiteError where error.isDamage {
            return error.message
        } catch {
            return nil
        }
    }
}

/// The `runs` table: one row per command that changed the store.
public enum RunLog {
    public static func start(_ database: Database, command: String) throws -> Int64 {
        // The caller holds the run lock: a run still marked running was killed.
        try database.run("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        var id: Int64 = 0
        try database.forEach("INSERT INTO runs (command, started_ms, status) VALUES (?, ?, 'running') RETURNING run_id",
                             [.text(command), .integer(nowMs())]) { id = $0.int(0) }
        return id
    }

    public static func finish(_ database: Database, runID: Int64, status: String, asOfMs: Int64?, linesRead: Int?, findings: Int?, message: String?) {
        try? database.run("""
            UPDATE runs SET ended_ms = ?, status = ?, as_of_ms = ?, lines_read = ?, findings = ?, message = ? WHERE run_id = ?
            """, [.integer(nowMs()), .text(status), SQLValue(asOfMs), SQLValue(linesRead), SQLValue(findings), SQLValue(message), .integer(runID)])
    }

    public struct Entry: Sendable {
        public var runID: Int64
        public var command: String
        public var startedMs: Int64
        public var endedMs: Int64?
        public var status: String
        public var asOfMs: Int64?
        public var linesRead: Int64?
        public var findings: Int64?
        public var message: String?
    }

    public static func recent(_ database: Database, limit: Int) throws -> [Entry] {
        var entries: [Entry] = []
        try database.forEach("""
            SELECT run_id, command, started_ms, ended_ms, status, as_of_ms, lines_read, findings, message FROM runs
            ORDER BY run_id DESC LIMIT ?
            """, [.integer(Int64(limit))]) { row in
            entries.append(Entry(runID: row.int(0), command: row.string(1), startedMs: row.int(2), endedMs: row.optionalInt(3),
                                 status: row.string(4), asOfMs: row.optionalInt(5), linesRead: row.optionalInt(6),
                                 findings: row.optionalInt(7), message: row.optionalString(8)))
        }
        return entries
    }

    static func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}
