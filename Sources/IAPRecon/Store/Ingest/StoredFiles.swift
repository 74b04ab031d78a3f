/// The ingest's part of the `files` ledger: what the store knows of each input file it read, and
/// the input folder's listing.
public enum StoredFiles {
    /// What the store knows of each file it read, by path under the input folder.
    static func known(_ database: Database) throws -> [String: KnownFile] {
        var known: [String: KnownFile] = [:]
        typealias Column = KnownColumn
        try database.forEach("SELECT \(Column.selectList) FROM files LEFT JOIN file_rules USING (file_id) LEFT JOIN file_clock_span USING (file_id)") { row in
            known[row.string(Column.path)] = KnownFile(
                hash: row.string(Column.hash), bytes: Int(row.int(Column.bytes)), modifiedNs: row.optionalInt(Column.modifiedNs),
                ingestedMs: row.int(Column.ingestedMs),
                counts: LineCounts(read: Int(row.int(Column.read)), accepted: Int(row.int(Column.accepted)),
                                   rejected: Int(row.int(Column.rejected)), blank: Int(row.int(Column.blank)),
                                   ignored: Int(row.int(Column.ignored))),
                latestMs: row.optionalInt(Column.latestMs), latestMMPWallMs: row.optionalInt(Column.latestMMPWallMs),
                readWith: row.optionalString(Column.readWith),
                clockSpan: row.int(Column.clockJudged) == 0 ? nil
                    : (row.optionalInt(Column.clockFromMs) ?? .min)...(row.optionalInt(Column.clockToMs) ?? .max))
        }
        return known
    }

    /// The reasons of the stored rejects that start with `prefix`, with their file's path.
    static func rejectReasons(startingWith prefix: String, in database: Database) throws -> [(path: String, reason: String)] {
        var reasons: [(path: String, reason: String)] = []
        try database.forEach("""
            SELECT f.path, r.reason FROM rejects r JOIN files f USING (file_id) WHERE substr(r.reason, 1, length(?1)) = ?1
            """, [.text(prefix)]) { reasons.append(($0.string(0), $0.string(1))) }
        return reasons
    }

    /// What `known` selects of a file.
    private enum KnownColumn: Int, SelectedColumn {
        case path, hash, read, accepted, rejected, blank, ignored, bytes, modifiedNs, ingestedMs, latestMs, latestMMPWallMs, readWith
        case clockJudged, clockFromMs, clockToMs
        var sql: String {
            [
                "path", "content_hash", "lines_read", "accepted", "rejected", "blank", "ignored", "bytes", "mtime_ns", "ingested_ms",
                "latest_ms", "latest_mmp_wall_ms", "read_with", "file_clock_span.file_id IS NOT NULL", "from_ms", "to_ms",
            ][rawValue]
        }
    }

    /// A stored file found with the same bytes and a new modification time: the time (and the hash, of the current kind) is kept.
    static func touched(_ path: String, modifiedNs: Int64, hash: String, in database: Database) throws {
        try database.run("UPDATE files SET mtime_ns = ?, ingested_ms = ?, content_hash = ? WHERE path = ?",
                         [.integer(modifiedNs), .integer(RunLog.nowMs()), .text(hash), .text(path)])
    }

    /// A stored file found at another path with the same bytes: its ledger row takes the new path (its rows,
    /// keyed by file id, go with it), and the keys its rows touch are recorded as changed, as `forget` does, so
    /// the findings that name its lines name them by the new path.
    static func moved(_ path: String, to newPath: String, in database: Database) throws {
        try database.transaction {
            guard case .integer(let fileID)? = try database.scalar("SELECT file_id FROM files WHERE path = ?", [.text(path)]) else { return }
            try ChangedKeys.recordRows(of: fileID, in: database)
            try database.run("UPDATE files SET path = ? WHERE file_id = ?", [.text(newPath), .integer(fileID)])
        }
    }

    /// The bytes of every stored file.
    static func bytes(_ database: Database) throws -> Int64 {
        try database.scalar("SELECT coalesce(sum(bytes), 0) FROM files").integerValue
    }

    /// Records what the input folder held: each stored file is present or not (a file read once
    /// keeps its rows when it leaves the folder, as archived partitions do), and the files that
    /// match no source replace the previous run's list.
    /// `present` and `ignored` are paths relative to the input folder.
    /// - Returns: the stored files that were present and are not now, by path, with their lines read, in path order.
    @discardableResult
    static func recordListing(present: [String], ignored: [String], in database: Database) throws -> [(path: String, lines: Int)] {
        try database.transaction {
            var left: [(path: String, lines: Int)] = []
            try database.forEach("""
                SELECT path, lines_read FROM files WHERE present = 1 AND path NOT IN (SELECT value FROM json_each(?)) ORDER BY path
                """, [.textList(present)]) { left.append(($0.string(0), Int($0.int(1)))) }
            try database.execute("UPDATE files SET present = 0 WHERE present = 1")
            for path in present {
                try database.run("UPDATE files SET present = 1 WHERE path = ?", [.text(path)])
            }
            try database.execute("DELETE FROM ignored_files")
            for path in ignored {
                try database.run("INSERT OR IGNORE INTO ignored_files (path) VALUES (?)", [.text(path)])
            }
            return left
        }
    }

    /// Removes stored files and their rows, so the next run reconciles without them: the keys
    /// their rows touched are recorded as changed first, as when a file is replaced.
    /// - Returns: the paths the store does not hold; when there are any, nothing was removed.
    public static func forget(paths: [String], in database: Database) throws -> [String] {
        try database.transaction {
            var fileIDs: [Int64] = []
            var unknown: [String] = []
            for path in paths {
                if case .integer(let fileID)? = try database.scalar("SELECT file_id FROM files WHERE path = ?", [.text(path)]) {
                    fileIDs.append(fileID)
                } else {
                    unknown.append(path)
                }
            }
            guard unknown.isEmpty else { return unknown }
            for fileID in fileIDs {
                try ChangedKeys.recordRows(of: fileID, in: database)
                try database.run("DELETE FROM files WHERE file_id = ?", [.integer(fileID)])
            }
            return []
        }
    }

    /// The stored file a path ends in (`in/spend/spend.csv`, `./spend/spend.csv` or an absolute path, for the stored
    /// `spend/spend.csv`), the longest where several do; nil when it ends in none. The store names files relative to the
    /// input folder, and a path copied from a shell names them from elsewhere.
    public static func storedPath(endingIn path: String, in database: Database) throws -> String? {
        let found = try database.scalar("""
            SELECT path FROM files WHERE length(?1) > length(path) AND substr(?1, length(?1) - length(path)) = '/' || path
            ORDER BY length(path) DESC LIMIT 1
            """, [.text(path)])
        if case .text(let stored) = found { return stored }
        return nil
    }

    /// Sets `files.latest_ms` (the latest event time of CONTRACT.md §2's as-of, in UTC) and
    /// `latest_mmp_wall_ms` (the latest MMP `Event Time`, wall clock) for the files `where` selects.
    static func latestTimesSQL(where condition: String) -> String {
        let id = "files.file_id"
        return """
            UPDATE files SET
              latest_ms = (SELECT max(m) FROM (
                SELECT max(ts_ms) AS m FROM raw_server__orders WHERE file_id = \(id)
                UNION ALL SELECT max(ts_ms) FROM raw_server__deliveries WHERE file_id = \(id)
                UNION ALL SELECT max(ts_ms) FROM raw_server__revocations WHERE file_id = \(id)
                UNION ALL SELECT max(received_ms) FROM raw_receipts__verifications WHERE file_id = \(id)
                UNION ALL SELECT max(signed_ms) FROM raw_notifications__notifications WHERE file_id = \(id) AND version = '2'
                UNION ALL SELECT max(ts_ms) FROM raw_registrations__users WHERE file_id = \(id))),
              latest_mmp_wall_ms = (SELECT max(event_wall_ms) FROM raw_mmp__events WHERE file_id = \(id))
            WHERE \(condition)
            """
    }

    /// True when the store holds files of a `YYYY-MM-DD` partition later than `day`.
    public static func holdsPartitions(after day: String, in database: Database) throws -> Bool {
        try database.scalar("""
            SELECT count(*) FROM files WHERE path GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/*' AND substr(path, 1, 10) > ?
            """, [.text(day)]).integerValue > 0
    }

    /// The stored files a night of `day` reads (those of the partitions up to `day`, and the
    /// undated ones), by path.
    public static func paths(through day: String, in database: Database) throws -> [String] {
        var paths: [String] = []
        try database.forEach("""
            SELECT path FROM files WHERE NOT path GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/*' OR substr(path, 1, 10) <= ?
            ORDER BY path
            """, [.text(day)]) { paths.append($0.string(0)) }
        return paths
    }

    /// Lines read from each stored file, by its path under the input folder.
    public static func linesRead(in database: Database) throws -> [String: Int] {
        var lines: [String: Int] = [:]
        try database.forEach("SELECT path, lines_read FROM files") { lines[$0.string(0)] = Int($0.int(1)) }
        return lines
    }
}
