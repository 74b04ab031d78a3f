/// The MMP rows attribution needs, each repeated row counted once (`stg_mmp__*`).
///
/// A row repeated with the same AppsFlyer ID (else CUID, IDFV, IDFA), event name, event time
/// and event value is one row, and the first in file order wins. `stg_mmp__identities` keeps every
/// winner's identity (a 128-bit fingerprint of it), so a night whose MMP files all sort after the stored ones only appends
/// them; a replaced MMP file, or a new one that sorts among the stored ones, rebuilds the tables.
/// Identities are keyed by event time first (a repeat has its original's time): a night's rows,
/// mostly of that day, land at the end of the table instead of on every one of its pages.
///
/// - `stg_mmp__installs`: install rows (retargeting ones too, flagged), in file order.
/// - `stg_mmp__purchases`: `af_purchase` rows.
/// - `stg_mmp__links`: the Customer User IDs seen with each AppsFlyer ID, on any event.
enum MMPEvents {
    static let tables = Tables.mmp

    /// Brings the tables up to date: appends the new MMP files, or rebuilds when appending would change who wins.
    static func update(_ database: Database) throws {
        let newFiles = try ChangedKeys.keys(.mmpFile, in: database).compactMap { Int64($0) }
        let rebuildRequested = try ChangedKeys.count(.mmpRebuild, in: database) > 0
        let exists = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'stg_mmp__identities'").integerValue > 0
        let inOrder = try appendsInOrder(database, newFiles)
        // Identities stored by an iaprecon that keyed them by fingerprint alone are rebuilt once.
        let keyedByTime = try database.scalar(
            "SELECT count(*) FROM pragma_table_info('stg_mmp__identities') WHERE name = 'event_wall_ms'").integerValue > 0
        if rebuildRequested || !exists || !keyedByTime || !inOrder {
            // In place: this runs inside the caller's one transaction.
            try database.execute(tables.dropAndCreate)
            try rebuild(beside: false).runHere(database)
        } else if !newFiles.isEmpty {
            // Identities already stored decide what is a repeat: each new one is inserted first.
            let inserts = inserts(beside: false)
            let identity = try database.cached(inserts[0])
            let target = try DirectInserts(database: database, inserts: inserts)
            try append(database, files: "file_id IN (\(newFiles.map(String.init).joined(separator: ",")))", into: target) { ms, fingerprint in
                try identity.insert([.integer(ms), .integer(Int64(bitPattern: fingerprint.first)), .integer(Int64(bitPattern: fingerprint.second))])
                return database.changes == 1
            }
        }
    }

    /// Tables 0...3: identities, installs, purchases, links (or their `__next` twins).
    private static func inserts(beside: Bool) -> [String] {
        [
            RebuiltTables.insert(into: "stg_mmp__identities", values: 3, beside: beside, orIgnore: true),
            RebuiltTables.insert(into: "stg_mmp__installs", values: 10, beside: beside),
            RebuiltTables.insert(into: "stg_mmp__purchases", values: 6, beside: beside),
            RebuiltTables.insert(into: "stg_mmp__links", values: 2, beside: beside, orIgnore: true),
        ]
    }

    /// Fills the empty (just created) tables from every MMP file. Repeats are found in memory
    /// (16 bytes a row, and 24 for the winners' identities), which are written sorted at the end,
    /// so no insert lands at a random place of a large b-tree.
    static func rebuild(beside: Bool) -> ReaderJob {
        ReaderJob(inserts: inserts(beside: beside)) { reader, target in
            var seen = Set<RowFingerprint>()
            var winners: [(ms: Int64, first: Int64, second: Int64)] = []
            // Sized once for every MMP row (repeats are few), not rehashed at each doubling.
            let rows = try reader.scalar("SELECT coalesce(sum(accepted), 0) FROM files WHERE source = '\(SourceKind.attribution.rawValue)'")
            seen.reserveCapacity(Int(rows.integerValue))
            winners.reserveCapacity(Int(rows.integerValue))
            try append(reader, files: "source = '\(SourceKind.attribution.rawValue)'", into: target) { ms, fingerprint in
                guard seen.insert(fingerprint).inserted else { return false }
                winners.append((ms, Int64(bitPattern: fingerprint.first), Int64(bitPattern: fingerprint.second)))
                return true
            }
            seen = []
            winners.sort { ($0.ms, $0.first, $0.second) < ($1.ms, $1.first, $1.second) }
            for winner in winners { try target.insert(table: 0, [.integer(winner.ms), .integer(winner.first), .integer(winner.second)]) }
        }
    }

    /// True when every new file sorts after every MMP file already in the tables.
    private static func appendsInOrder(_ database: Database, _ newFiles: [Int64]) throws -> Bool {
        guard !newFiles.isEmpty else { return true }
        let ids = newFiles.map(String.init).joined(separator: ",")
        let oldest = try database.scalar("SELECT min(path) FROM files WHERE file_id IN (\(ids))")
        let stored = try database.scalar("SELECT max(path) FROM files WHERE source = '\(SourceKind.attribution.rawValue)' AND file_id NOT IN (\(ids))")
        guard case .text(let newest)? = stored else { return true }
        guard case .text(let first)? = oldest else { return true }
        return first > newest
    }

    /// Appends the rows of the files `condition` selects, in path and line order, that `isNew` (given
    /// the row's event time and identity) lets through.
    private static func append(_ reader: Database, files condition: String, into target: any RowTarget,
                               isNew: (Int64, RowFingerprint) throws -> Bool) throws {
        var files: [(id: Int64, path: String)] = []
        try reader.forEach("SELECT file_id, path FROM files WHERE \(condition) ORDER BY path") { files.append(($0.int(0), $0.string(1))) }
        for file in files {
            try reader.forEach("""
                SELECT event_wall_ms, install_wall_ms, event_name, media_source, campaign, customer_user_id, idfv, idfa, appsflyer_id,
                       revenue, revenue_currency, revenue_usd, is_retargeting_n, event_value_key, line
                FROM raw_mmp__events WHERE file_id = ? ORDER BY line, item
                """, [.integer(file.id)]) { row in
                guard try isNew(row.int(0), identity(row)) else { return }
                let cuid = row.optionalString(5)
                let appsflyerID = row.optionalString(8)
                let name = row.string(2)
                // Retargeting is not acquisition: such a row links no ids and claims no revenue (CONTRACT.md §1.5).
                let retargeting = row.int(12) == 1
                if !retargeting, let cuid, let appsflyerID { try target.insert(table: 3, [.text(cuid), .text(appsflyerID)]) }
                if name == "install" {
                    try target.insert(table: 1, [.integer(row.optionalInt(1) ?? row.int(0)), row.value(3), row.value(4), row.value(5), row.value(6),
                                                 row.value(7), row.value(8), .integer(row.int(12) == 1 ? 1 : 0), .integer(file.id), row.value(14)])
                } else if name == "af_purchase", !retargeting {
                    try target.insert(table: 2, [row.value(0), row.value(5), row.value(8), row.value(9), row.value(10), row.value(11)])
                }
            }
        }
    }
}

extension MMPEvents {
    /// The identity of an MMP row of `append`'s query: the fingerprint of its AppsFlyer ID (else
    /// CUID, IDFV, IDFA, else empty), event name, event time in ms and event value, joined by unit
    /// separators. Fed from the row's bytes: the same fingerprint as of that joined string (which
    /// `stg_mmp__identities` holds from earlier runs), without making the string.
    static func identity(_ row: Row) -> RowFingerprint {
        var fingerprint = RowFingerprint()
        if let column = [8, 5, 6, 7].first(where: { !row.isNull($0) }) {
            row.statement.withText(Int32(column)) { fingerprint.add($0) }
        }
        fingerprint.add(0x1F)
        row.statement.withText(2) { fingerprint.add($0) }
        fingerprint.add(0x1F)
        fingerprint.add(decimal: row.int(0))
        fingerprint.add(0x1F)
        row.statement.withText(13) { fingerprint.add($0) }
        return fingerprint
    }
}

/// Two independent 64-bit FNV-style hashes of a row's identity: 128 bits, so distinct rows never meet in practice.
struct RowFingerprint: Hashable {
    var first: UInt64 = 0xCBF2_9CE4_8422_2325
    var second: UInt64 = 0x8422_2325_CBF2_9CE4

    init(_ text: String) {
        for byte in text.utf8 { add(byte) }
    }

    /// A fingerprint is a hash already: the dictionaries keyed by it (millions of ids in the
    /// join's components, the MMP repeats, attribution's install index) take one multiply and
    /// shift of it, with the process's seed, instead of running SipHash over its 16 bytes.
    /// Both halves go in, so ids made to collide in one hash still spread.
    func _rawHashValue(seed: Int) -> Int {
        var mixed = (first ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
        mixed ^= second
        mixed = (mixed ^ (mixed >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 32))
    }

    /// The fingerprint of `prefix`, a unit separator, then `bytes`: the same as of that string.
    init(_ prefix: String, _ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in prefix.utf8 { add(byte) }
        add(0x1F)
        for byte in bytes { add(byte) }
    }

    /// The fingerprint of no bytes, to be fed with `add`.
    init() {}

    mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// Adds `value` as `String(value)` spells it.
    mutating func add(decimal value: Int64) {
        if value < 0 { add(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, most significant last
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { add(buffer[index]) }
        }
    }

    mutating func add(_ byte: UInt8) {
        first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        second = (second &+ UInt64(byte)) &* 0x9E37_79B9_7F4A_7C15
        second ^= second >> 29
    }
}
