/// The MMP rows attribution counts, each repeated install or purchase once (CONTRACT.md §1.5).
///
/// A row repeated with the same AppsFlyer ID (else CUID, IDFV, IDFA), event name, event time
/// and event value is one row, and the first in file order wins. The store keeps each accepted
/// row once (`raw_mmp__events`, only the columns attribution reads: a name and the event value's
/// hash on installs and purchases only, a campaign and an IDFV or IDFA on installs only, revenue on
/// purchases only); which rows are repeats is decided here, in memory, as attribution reads them,
/// and what each file counts is kept beside them (`StoredMMPSegments`). So a replaced file, or a
/// late one that sorts among the stored ones, changes who wins with no staged copy to rebuild: the
/// files from it on are counted again.
///
/// What attribution takes from the rows (installs and purchases counted once):
/// - installs: `install` rows that are not retargeting;
/// - purchases: `af_purchase` rows that are not retargeting;
/// - links: the Customer User ID and AppsFlyer ID of any row that is not retargeting and has both.
///   Retargeting is not acquisition: such a row links no ids and claims no revenue.
enum MMPEvents {
    typealias Column = MMPEventColumn

    /// The MMP files in path order, the order repeats are decided in, and how many rows each has.
    static func files(in database: Database) throws -> [(id: Int64, rows: Int)] {
        var files: [(id: Int64, rows: Int)] = []
        try database.forEach("SELECT file_id, accepted FROM files WHERE source = ? ORDER BY path", [.text(SourceKind.attribution.rawValue)]) {
            files.append(($0.int(0), Int($0.int(1))))
        }
        return files
    }

    /// Calls `body` with each of `file`'s rows in line order, as stored (`MMPEventColumn`).
    static func forEachRow(ofFile file: Int64, in database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("SELECT \(Column.selectList) FROM raw_mmp__events WHERE file_id = ? ORDER BY line, item", [.integer(file)], body)
    }

    /// Whether a row is an `install` or an `af_purchase`: the rows that can repeat one another.
    static func isInstallOrPurchase(_ row: some StoredRow) -> Bool {
        row.text(Column.eventName, equals: "install") || row.text(Column.eventName, equals: "af_purchase")
    }

    /// Which rows count, told every row in file order (files in path order, then line): each
    /// install and purchase once, its repeats not; a retargeting install or purchase takes part
    /// too (the first in file order wins, and a retargeting row counts as nothing). The rows of
    /// other events all count: all attribution takes from those is a link between two ids, which
    /// a repeat makes again to no effect, and the event name is part of a row's identity, so they
    /// can never be a repeat of an install or a purchase: they skip the check that most of them
    /// would pass. Repeats are found by a 128-bit fingerprint of each row's identity, 16 bytes a
    /// row held until the last file is read.
    struct Repeats {
        private var seen = Set<RowFingerprint>()

        /// Sized once for `rows`, an upper bound of the installs and purchases it holds: not
        /// rehashed at each doubling.
        init(rows: Int) {
            seen.reserveCapacity(rows)
        }

        mutating func counts(_ row: some StoredRow) -> Bool {
            guard MMPEvents.isInstallOrPurchase(row) else { return true }
            return seen.insert(MMPEvents.identity(row)).inserted
        }
    }

    /// The identity of a row (`MMPEventColumn`): the fingerprint of its AppsFlyer ID (else CUID,
    /// IDFV, IDFA, else empty), event name, event time in ms and event value, joined by unit
    /// separators. Fed from the row's bytes: the same fingerprint as of that joined string, without
    /// making the string.
    static func identity(_ row: some StoredRow) -> RowFingerprint {
        var fingerprint = RowFingerprint()
        if let column = [Column.appsflyerID, Column.customerUserID, Column.idfv, Column.idfa].first(where: { !row.isNull($0) }) {
            row.withText(column) { fingerprint.add($0) }
        }
        fingerprint.add(0x1F)
        row.withText(Column.eventName) { fingerprint.add($0) }
        fingerprint.add(0x1F)
        fingerprint.add(decimal: row.int(Column.eventWallMs))
        fingerprint.add(0x1F)
        row.withText(Column.eventValueKey) { fingerprint.add($0) }
        return fingerprint
    }
}

extension MMPEventColumn: SelectedColumn {
    var sql: String {
        [
            "event_wall_ms", "install_wall_ms", "event_name", "media_source", "campaign", "customer_user_id", "idfv", "idfa",
            "appsflyer_id", "revenue", "revenue_currency", "revenue_usd", "is_retargeting_n", "event_value_key", "line", "file_id",
        ][rawValue]
    }
}
