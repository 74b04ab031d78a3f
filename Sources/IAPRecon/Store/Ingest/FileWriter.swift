import CSQLite
import Foundation

/// Stores one file's parsed lines in one transaction.
final class FileWriter: StoredFileWriter {
    private let database: Database
    private let fileID: Int64
    /// Prepared INSERTs per raw table, by `RawTable.rawValue`: of one row, and of `groupRows`.
    private let inserts: [(one: Statement, group: Statement)]
    /// Rows a grouped INSERT writes at once: one statement's fixed cost shared by them all.
    static let groupRows = 16
    /// The INSERTs' text per raw table, made once: every file asks, and the grouped one is long.
    private static let insertSQL = RawTable.allCases.map { (one: $0.insertSQL(), group: $0.insertSQL(rows: groupRows)) }
    private(set) var counts = LineCounts()
    /// The clocks that judge alike the chains its lines had judged at the run's clock, so far.
    private var clockSpan: ClosedRange<Int64>?

    /// Begins storing the file at `path` (relative to the input folder) of `source`, modified at
    /// `modifiedNs`: it replaces a stored file of that path when it commits.
    init(database: Database, path: String, source: SourceKind, readWith: String?, modifiedNs: Int64) throws {
        self.database = database
        // A file that replaces none deletes nothing, so nothing cascades, and each of its rows
        // names the `files` row made here: foreign keys are checked only for a file that replaces
        // one. The one writer holds the store, so what is found here still holds in the transaction.
        let replaces = try database.scalar("SELECT file_id FROM files WHERE path = ?", [.text(path)]) != nil
        try database.enforceForeignKeys(replaces)
        try database.execute("BEGIN IMMEDIATE")
        do {
            if case .integer(let previousID)? = try database.scalar("SELECT file_id FROM files WHERE path = ?", [.text(path)]) {
                // Without the checks, the replaced file's rows would stay.
                guard database.enforcesForeignKeys else {
                    throw SQLiteError(code: SQLITE_MISUSE, message: "\(path) was stored by another writer meanwhile", sql: nil)
                }
                // What the replaced rows touched is recomputed too.
                try ChangedKeys.recordRows(of: previousID, in: database)
                try database.run("DELETE FROM files WHERE file_id = ?", [.integer(previousID)])
            }
            var id: Int64 = 0
            // Its hash and length are of the bytes its jobs read, known at `commit`.
            try database.forEach("""
                INSERT INTO files (path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms, mtime_ns)
                VALUES (?, ?, '', 0, 0, 0, 0, 0, 0, ?, ?) RETURNING file_id
                """, [.text(path), .text(source.rawValue),
                      .integer(Int64(Date().timeIntervalSince1970 * 1000)), .integer(modifiedNs)]) { id = $0.int(0) }
            if let readWith {
                try database.run("INSERT INTO file_rules (file_id, read_with) VALUES (?, ?)", [.integer(id), .text(readWith)])
            }
            fileID = id
            inserts = try Self.insertSQL.map { (try database.cached($0.one), try database.cached($0.group)) }
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    /// Writes a batch of this file's lines; `lineOffset` is the lines of the chunks before the batch's.
    func write(_ batch: LineBatch, lineOffset: Int) throws {
        counts = counts + batch.counts
        // Each span holds the clock that judged it, so they meet.
        if let span = batch.clockSpan { clockSpan = clockSpan?.clamped(to: span) ?? span }
        for rows in batch.rows where rows.count > 0 {
            try rows.insert(with: inserts[rows.table].one, prefix: [.integer(fileID), .integer(Int64(lineOffset))],
                            groupsOf: (inserts[rows.table].group, Self.groupRows))
        }
        for reject in batch.rejects {
            try database.cached("INSERT INTO rejects (file_id, line, reason, text) VALUES (?, ?, ?, ?)")
                .insert([.integer(fileID), .integer(Int64(reject.line + lineOffset)), .text(reject.reason), .text(reject.text)])
        }
    }

    func commit(hash: String, bytes: Int) throws -> (counts: LineCounts, bytes: Int) {
        try database.run(
            "UPDATE files SET content_hash = ?, bytes = ?, lines_read = ?, accepted = ?, rejected = ?, blank = ?, ignored = ? WHERE file_id = ?",
            [.text(hash), .integer(Int64(bytes)), .integer(Int64(counts.read)), .integer(Int64(counts.accepted)), .integer(Int64(counts.rejected)),
             .integer(Int64(counts.blank)), .integer(Int64(counts.ignored)), .integer(fileID)])
        // One statement for every file, bound to it, rather than parsed again for each.
        try database.run(StoredFiles.latestTimesSQL(where: "file_id = ?1"), [.integer(fileID)])
        if let clockSpan {
            // An open end is every clock on that side of a certificate's validity.
            try database.run("INSERT INTO file_clock_span (file_id, from_ms, to_ms) VALUES (?, ?, ?)", [
                .integer(fileID), clockSpan.lowerBound == .min ? .null : .integer(clockSpan.lowerBound),
                clockSpan.upperBound == .max ? .null : .integer(clockSpan.upperBound),
            ])
        }
        try ChangedKeys.recordRows(of: fileID, in: database)
        try database.execute("COMMIT")
        return (counts, bytes)
    }

    func rollback() {
        try? database.execute("ROLLBACK")
    }
}

extension RawTable {
    /// An INSERT of `rows` rows. Parameters: ?1 the file, ?2 the lines of the file's chunks before
    /// this one, then for each row the line within its chunk, `item` and `columns`.
    func insertSQL(rows: Int = 1) -> String {
        let names = ["file_id", "line", "item"] + columns
        // Each row's own parameters: its line, item and columns.
        let perRow = names.count - 1
        let tuples = (0..<rows).map { row in
            let first = 3 + row * perRow
            return "(" + (["?1", "?2 + ?\(first)"] + ((first + 1)..<(first + perRow)).map { "?\($0)" }).joined(separator: ", ") + ")"
        }
        return "INSERT INTO \(name) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))"
    }
}
