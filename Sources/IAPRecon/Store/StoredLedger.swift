/// The `files` ledger as the readers of stored lines need it: which file each `file_id` is, in
/// path order.
enum StoredLedger {
    /// The stored files in path order as SQLite sorts it (byte by byte), which is the order the
    /// readers that normalize stored lines sort by (`ORDER BY ... path`).
    static func sourceFiles(_ database: Database) throws -> SourceFiles {
        var paths: [Int64: String] = [:]
        try database.forEach("SELECT file_id, path FROM files") { paths[$0.int(0)] = $0.string(1) }
        return SourceFiles(paths: paths)
    }

    /// The SQL expression of `SourceFiles.text` (`path:line`) for the file id column `file` and the line column `line`.
    static func pathAndLineSQL(file: String, line: String) -> String {
        "(SELECT path FROM files WHERE file_id = \(file)) || ':' || \(line)"
    }
}
