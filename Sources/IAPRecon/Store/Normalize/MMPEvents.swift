/// The MMP rows attribution counts, each repeated install or purchase once (CONTRACT.md §1.5).
///
/// A row repeated with the same AppsFlyer ID (else CUID, IDFV, IDFA), event name, event time
/// and event value is one row, and the first in file order wins. The store keeps each accepted
/// row once (`raw_mmp__events`, only the columns attribution reads: a name and the event value's
/// hash on installs and purchases only, a campaign and an IDFV or IDFA on installs only, revenue on
/// purchases only); which rows are repeats is decided here, in memory, every time attribution reads them. So a replaced file, or a late one
/// that sorts among the stored ones, changes who wins with no staged copy to rebuild, and a night
/// pays nothing for MMP files before its report (which reads every row anyway).
///
/// What attribution takes from the rows (installs and purchases counted once):
/// - installs: `install` rows that are not retargeting;
/// - purchases: `af_purchase` rows that are not retargeting;
/// - links: the Customer User ID and AppsFlyer ID of any row that is not retargeting and has both.
///   Retargeting is not acquisition: such a row links no ids and claims no revenue.
enum MMPEvents {
    typealias Column = MMPEventColumn

    /// Calls `body` with the MMP rows attribution reads, in file order (files in path order, then
    /// line): each `install` and `af_purchase` row once, its repeats dropped, and the rows of other
    /// events as stored (with no name). All attribution takes from those is a link between two ids,
    /// which a repeat makes again to no effect, and the event name is part of a row's identity, so
    /// they can never be a repeat of an install or a purchase: they skip the check that most of
    /// them would pass.
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
        let select = "SELECT \(Column.selectList) FROM raw_mmp__events WHERE file_id = ? ORDER BY line, item"
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
            row.statement.withText(column) { fingerprint.add($0) }
        }
        fingerprint.add(0x1F)
        row.statement.withText(Column.eventName) { fingerprint.add($0) }
        fingerprint.add(0x1F)
        fingerprint.add(decimal: row.int(Column.eventWallMs))
        fingerprint.add(0x1F)
        row.statement.withText(Column.eventValueKey) { fingerprint.add($0) }
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
