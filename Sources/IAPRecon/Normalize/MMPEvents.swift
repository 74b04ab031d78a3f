/// The MMP rows attribution counts, each repeated install or purchase once (CONTRACT.md §1.5).
///
/// A row repeated with the same AppsFlyer ID (else CUID, IDFV, IDFA), event name, event time
/// and event value is one row, and the first in file order wins. The store keeps each accepted
/// row once (`raw_mmp__events`, only the columns attribution reads: the event value as its hash,
/// a campaign and an IDFV or IDFA on installs only, revenue on purchases only); which rows are repeats is
/// decided here, in memory, every time attribution reads them. So a replaced file, or a late one
/// that sorts among the stored ones, changes who wins with no staged copy to rebuild, and a night
/// pays nothing for MMP files before its report (which reads every row anyway).
///
/// What attribution takes from the rows (installs and purchases counted once):
/// - installs: `install` rows that are not retargeting;
/// - purchases: `af_purchase` rows that are not retargeting;
/// - links: the Customer User ID and AppsFlyer ID of any row that is not retargeting and has both.
///   Retargeting is not acquisition: such a row links no ids and claims no revenue.
enum MMPEvents {
    /// The columns of the rows `forEachCounted` hands out.
    enum Column {
        static let eventWallMs = 0, installWallMs = 1, eventName = 2, mediaSource = 3, campaign = 4, customerUserID = 5
        static let idfv = 6, idfa = 7, appsflyerID = 8, revenue = 9, revenueCurrency = 10, revenueUSD = 11, retargeting = 12
        static let eventValueKey = 13, line = 14, fileID = 15
    }

    /// Calls `body` with the MMP rows attribution reads, in file order (files in path order, then
    /// line): each `install` and `af_purchase` row once, its repeats dropped, and the rows of other
    /// events as stored. All attribution takes from those is a link between two ids, which a repeat
    /// makes again to no effect, and the event name is part of a row's identity, so they can never
    /// be a repeat of an install or a purchase: they skip the check that most of them would pass.
    /// Repeats are found by a 128-bit fingerprint of each row's identity, 16 bytes a row held
    /// until the last file is read.
    static func forEachCounted(in database: Database, _ body: (Row) throws -> Void) throws {
        var files: [Int64] = []
        var rows = 0
        try database.forEach("SELECT file_id, accepted FROM files WHERE source = ? ORDER BY path", [.text(SourceKind.attribution.rawValue)]) {
            files.append($0.int(0))
            rows += Int($0.int(1))
        }
        var seen = Set<RowFingerprint>()
        // Sized once for every row, an upper bound of the installs and purchases it holds: not
        // rehashed at each doubling.
        seen.reserveCapacity(rows)
        let select = """
            SELECT event_wall_ms, install_wall_ms, event_name, media_source, campaign, customer_user_id, idfv, idfa, appsflyer_id,
                   revenue, revenue_currency, revenue_usd, is_retargeting_n, event_value_key, line, file_id
            FROM raw_mmp__events WHERE file_id = ? ORDER BY line, item
            """
        for file in files {
            try database.forEach(select, [.integer(file)]) { row in
                // A retargeting install or purchase takes part too: the first in file order wins,
                // and a retargeting row counts as nothing.
                if row.text(Column.eventName, equals: "install") || row.text(Column.eventName, equals: "af_purchase") {
                    guard seen.insert(identity(row)).inserted else { return }
                }
                try body(row)
            }
        }
    }
}

extension MMPEvents {
    /// The identity of a row of `forEachCounted`'s query: the fingerprint of its AppsFlyer ID (else
    /// CUID, IDFV, IDFA, else empty), event name, event time in ms and event value, joined by unit
    /// separators. Fed from the row's bytes: the same fingerprint as of that joined string, without
    /// making the string.
    static func identity(_ row: Row) -> RowFingerprint {
        var fingerprint = RowFingerprint()
        if let column = [Column.appsflyerID, Column.customerUserID, Column.idfv, Column.idfa].first(where: { !row.isNull($0) }) {
            row.statement.withText(Int32(column)) { fingerprint.add($0) }
        }
        fingerprint.add(0x1F)
        row.statement.withText(Int32(Column.eventName)) { fingerprint.add($0) }
        fingerprint.add(0x1F)
        fingerprint.add(decimal: row.int(Column.eventWallMs))
        fingerprint.add(0x1F)
        row.statement.withText(Int32(Column.eventValueKey)) { fingerprint.add($0) }
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
