/// What each MMP file counts for attribution, kept across runs (`fct_mmp_segments`, one
/// `MMPSegment` per file): a report reads the segments of the files that are as they were, in the
/// order they were, and counts only the rows of the files after them (a night's new file, or every
/// file from a late or replaced one on). Its other reports read the history anyway; attribution's
/// MMP rows are the one input a night's report need not read whole.
enum StoredMMPSegments {
    /// Calls `body` with the MMP rows attribution reads, in file order, each install and purchase
    /// once (`MMPEvents`). A file counted from its rows has its segment written at once, on a
    /// connection of its own (`database` may be read-only), in place of the one it had: only one
    /// segment is held at a time, however many files a full rebuild counts.
    static func forEachCounted(in database: Database, _ body: (MMPSegment.Row) throws -> Void) throws {
        let files = try MMPEvents.files(in: database)
        var chain = MMPSegment.chainSeed(schema: Schema.latestVersion, deviceIDKey: try deviceIDKey(database))
        let chains = files.map { file in
            chain = MMPSegment.chain(chain, then: file.id)
            return chain
        }
        var stored: [Int64: RowFingerprint] = [:]
        try database.forEach("SELECT file_id, chain FROM fct_mmp_segments") { row in
            row.withText(1) { bytes in stored[row.int(0)] = RowFingerprint(stored: bytes) }
        }
        let kept = zip(files, chains).prefix { stored[$0.id] == $1 }.count
        // The files after the kept ones are counted against every row before them: the segments'
        // installs and purchases (their repeats), and the links already made (a segment keeps an
        // other event's link only when it is new). Of the kept rows, only those a counted row can
        // meet are remembered (`Candidates`): a night's new file is a sliver of the history.
        let counted = files.dropFirst(kept)
        let candidates = kept > 0 && !counted.isEmpty ? try Candidates(of: counted.map(\.id), in: database) : nil
        var repeats = MMPEvents.Repeats(rows: counted.reduce(0) { $0 + $1.rows })
        var links = Set<RowFingerprint>()
        let select = try database.cached("SELECT data FROM fct_mmp_segments WHERE file_id = ?")
        for (file, chain) in zip(files, chains).prefix(kept) {
            try select.bind([.integer(file.id)])
            defer { select.reset() }
            guard try select.step() else { throw MMPSegment.Malformed(fileID: file.id) }
            let segment = MMPSegment(fileID: file.id, chain: chain, data: select.withText(0) { Array($0) })
            try segment.forEachRow { row in
                if let candidates {
                    if candidates.mayRepeat(row) { _ = repeats.counts(row) }
                    if let link = link(row), candidates.links.contains(link) { links.insert(link) }
                }
                try body(row)
            }
        }
        var writer: Database?
        for (file, chain) in zip(files, chains).dropFirst(kept) {
            var encoder = MMPSegment.Encoder()
            try MMPEvents.forEachRow(ofFile: file.id, in: database) { row in
                guard repeats.counts(row) else { return }
                let link = link(row)
                if MMPEvents.isInstallOrPurchase(row) {
                    encoder.append(row)
                    if let link { links.insert(link) }
                } else if let link, links.insert(link).inserted {
                    encoder.appendLink(row)
                }
            }
            let segment = MMPSegment(fileID: file.id, chain: chain, data: encoder.finish())
            try segment.forEachRow(body)
            let connection = try writer ?? Database(path: database.path)
            writer = connection
            try save(segment, in: connection)
        }
    }

    /// What the rows of the files to be counted can meet among the rows before them: their installs'
    /// and purchases' identities, the span of those rows' times (an identity holds its time, so a row
    /// outside it repeats none of them), and their other events' links.
    private struct Candidates {
        private var identities = Set<RowFingerprint>()
        private var times: ClosedRange<Int64>?
        private(set) var links = Set<RowFingerprint>()

        init(of files: [Int64], in database: Database) throws {
            for file in files {
                try MMPEvents.forEachRow(ofFile: file, in: database) { row in
                    if MMPEvents.isInstallOrPurchase(row) {
                        identities.insert(MMPEvents.identity(row))
                        let ms = row.int(MMPEventColumn.eventWallMs)
                        times = times.map { min($0.lowerBound, ms)...max($0.upperBound, ms) } ?? ms...ms
                    } else if let link = link(row) {
                        links.insert(link)
                    }
                }
            }
        }

        /// Whether `row`, one before them, may be repeated by one of the rows to be counted.
        func mayRepeat(_ row: some StoredRow) -> Bool {
            guard let times, times.contains(row.int(MMPEventColumn.eventWallMs)), MMPEvents.isInstallOrPurchase(row) else { return false }
            return identities.contains(MMPEvents.identity(row))
        }
    }

    /// Keeps `segment` in place of its file's earlier one, in a transaction of its own. A file's
    /// segment goes with the file (a replaced file is another file); one whose chain no longer
    /// holds is counted again by the next report and replaced then.
    static func save(_ segment: MMPSegment, in database: Database) throws {
        try database.transaction {
            try database.cached("INSERT OR REPLACE INTO fct_mmp_segments (file_id, chain, data) VALUES (?, ?, ?)")
                .insert([.integer(segment.fileID), .blob(segment.chain.storedBytes), .blob(segment.data)])
        }
    }

    /// The key the store's device ids are pseudonymised with, as stored; empty before the first ingest.
    /// Read only: `history` looks device ids up by it too.
    static func deviceIDKey(_ database: Database) throws -> String {
        guard try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'device_id_key'") != .integer(0),
              case .text(let key)? = try database.scalar("SELECT key FROM device_id_key") else { return "" }
        return key
    }

    /// The link a row makes, as the fingerprint of its two ids: any row that is not retargeting
    /// and has both a Customer User ID and an AppsFlyer ID.
    private static func link(_ row: some StoredRow) -> RowFingerprint? {
        typealias Column = MMPEventColumn
        guard row.int(Column.retargeting) == 0, !row.isNull(Column.customerUserID), !row.isNull(Column.appsflyerID) else { return nil }
        var link = RowFingerprint()
        row.withText(Column.customerUserID) { link.add($0) }
        link.add(0x1F)
        row.withText(Column.appsflyerID) { link.add($0) }
        return link
    }
}

extension RowFingerprint {
    /// Its 16 bytes as a store keeps them.
    var storedBytes: [UInt8] {
        withUnsafeBytes(of: (first.littleEndian, second.littleEndian)) { Array($0) }
    }

    /// The fingerprint `storedBytes` gave; an empty one for bytes of another length.
    init(stored bytes: UnsafeBufferPointer<UInt8>) {
        self.init()
        guard bytes.count == 16 else { return }
        var halves: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &halves) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        (first, second) = (UInt64(littleEndian: halves.0), UInt64(littleEndian: halves.1))
    }
}
