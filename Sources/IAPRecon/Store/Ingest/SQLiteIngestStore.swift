/// Ingest's store in SQLite (`IngestStore`): the `files` ledger, the device-id key, and a
/// `FileWriter` per file on the one writer connection.
struct SQLiteIngestStore: IngestStore {
    let database: Database

    init(_ database: Database) {
        self.database = database
    }

    /// Rows added to indexed tables land on index pages all over the store, and a night's files
    /// share many of them: a larger cache keeps them between files instead of reading them again
    /// and writing them to the log once per file.
    private static let addingCacheKiB = 65_536

    func knownFiles() throws -> [String: KnownFile] {
        try StoredFiles.known(database)
    }

    func rejectReasons(startingWith prefix: String) throws -> [(path: String, reason: String)] {
        try StoredFiles.rejectReasons(startingWith: prefix, in: database)
    }

    func deviceIDPseudonyms() throws -> DeviceIDPseudonyms {
        try StoredDeviceIDKey.pseudonyms(database)
    }

    func touched(_ path: String, modifiedNs: Int64, hash: String) throws {
        try StoredFiles.touched(path, modifiedNs: modifiedNs, hash: hash, in: database)
    }

    func moved(_ path: String, to newPath: String) throws {
        try StoredFiles.moved(path, to: newPath, in: database)
    }

    func storedBytes() throws -> Int64 {
        try StoredFiles.bytes(database)
    }

    /// A bulk load drops the raw indexes instead of updating them row by row (normalize builds
    /// them again, in one sort each) and appends to unindexed tables; a smaller one gets a larger
    /// cache, and its statements' journals stay in memory (`keepTemporaryStorageInMemory`).
    func beginLoad(bulk: Bool) throws {
        if bulk {
            try RawIndexes.drop(database)
        } else {
            try database.setCacheSize(kibibytes: Self.addingCacheKiB)
            try database.keepTemporaryStorageInMemory(true)
        }
    }

    func endLoad(bulk: Bool) {
        // Every other writer relies on the cascades (`FileWriter` turns them off for a new file).
        try? database.enforceForeignKeys(true)
        if !bulk {
            try? database.setCacheSize(kibibytes: Database.cacheKiB)
            try? database.keepTemporaryStorageInMemory(false)
        }
    }

    func beginFile(path: String, source: SourceKind, readWith: String?, modifiedNs: Int64) throws -> any StoredFileWriter {
        try FileWriter(database: database, path: path, source: source, readWith: readWith, modifiedNs: modifiedNs)
    }

    func unanswerableConsumptionRequests(in paths: [String]) throws -> [String] {
        guard !paths.isEmpty else { return [] }
        var sources: [String] = []
        try database.forEach("""
            SELECT \(StoredLedger.pathAndLineSQL(file: "n.file_id", line: "n.line"))
            FROM raw_notifications__notifications n JOIN files f ON f.file_id = n.file_id
            WHERE f.path IN (SELECT value FROM json_each(?1)) AND n.notification_type = 'CONSUMPTION_REQUEST'
              AND (n.notification_uuid IS NULL OR n.signed_ms IS NULL)
            ORDER BY f.path, n.line
            """, [.textList(paths)]) { sources.append($0.string(0)) }
        return sources
    }

    func recordListing(present: [String], ignored: [String]) throws -> [(path: String, lines: Int)] {
        try StoredFiles.recordListing(present: present, ignored: ignored, in: database)
    }
}
