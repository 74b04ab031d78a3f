import Foundation

/// The tie-out's inputs as the store holds them, and its results: `fct_apple_tieout`, the
/// `unverified_apple_sales` rows of `fct_findings`, the Sales Report files that repeat or overlap
/// another's day, `fct_apple_report_overlaps`, and the files of rows whose proceeds came in several
/// currencies, `fct_apple_mixed_proceeds` (`AppleTieOut.refresh` computes them).
///
/// Every row and finding belongs to one Pacific day, and a day's answer depends only on that
/// day's Sales Report rows and on the verified purchases and refunds that fall on it. So a full
/// join counts every day, and an incremental one only changes the days its changes touch: it
/// counts again the days of Sales Report rows a file added or took away (`ChangedKeys`), and
/// adds to the stored rows of the others what each purchase or refund it wrote differently
/// changed, taking away the row as it was and adding it as it is (`ScopeRows`): a night reads
/// its own transactions, not every transaction of the days they fall on. Either way it runs in
/// the transaction that writes those transactions, so a run killed on the way leaves the
/// tie-out of the transactions it kept.
enum AppleTieOutStore {
    /// Replaces the tie-out rows, `unverified_apple_sales` findings, report overlaps and files of
    /// rows in several proceeds currencies of `days` (each with its start, the findings' `event_ms`),
    /// or all of them when nil, with `rows`, `findings`, `overlaps` and `mixedProceeds`. A day's
    /// overlaps and files are its stored reports', not a night's new files': they stay while the
    /// files do, and go with the day's next tie-out once one is forgotten.
    static func replace(days: [(day: String, startMs: Int64?)]?, rows: [TieOutRow], findings: [Finding], overlaps: [SalesReportOverlap],
                        mixedProceeds: [SalesReportMixedProceeds], files: SourceFiles, in database: Database) throws {
        let findingKind = SQLValue.text(FindingKind.unverifiedAppleSales.rawValue)
        if let days {
            for (day, startMs) in days {
                try database.run("DELETE FROM fct_apple_tieout WHERE day = ?", [.text(day)])
                try database.run("DELETE FROM fct_apple_tieout_purchases WHERE day = ?", [.text(day)])
                try database.run("DELETE FROM fct_apple_report_overlaps WHERE day = ?", [.text(day)])
                try database.run("DELETE FROM fct_apple_mixed_proceeds WHERE day = ?", [.text(day)])
                if let startMs { try database.run("DELETE FROM fct_findings WHERE kind = ? AND event_ms = ?", [findingKind, .integer(startMs)]) }
            }
        } else {
            try database.execute("DELETE FROM fct_apple_tieout")
            try database.execute("DELETE FROM fct_apple_tieout_purchases")
            try database.execute("DELETE FROM fct_apple_report_overlaps")
            try database.execute("DELETE FROM fct_apple_mixed_proceeds")
            try database.run("DELETE FROM fct_findings WHERE kind = ?", [findingKind])
        }
        for overlap in overlaps {
            try database.run("INSERT INTO fct_apple_report_overlaps (day, path, earlier_path, kind) VALUES (?, ?, ?, ?)", [
                .text(overlap.day), .text(overlap.path), .text(overlap.earlierPath), .text(overlap.kind.rawValue),
            ])
        }
        for lines in mixedProceeds {
            try database.run("INSERT INTO fct_apple_mixed_proceeds (day, product_id, country, path) VALUES (?, ?, ?, ?)", [
                .text(lines.day), .text(lines.productID), .text(lines.country), .text(lines.path),
            ])
        }
        for row in rows {
            try database.run("INSERT INTO fct_apple_tieout VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                .text(row.day), .text(row.productID), .text(row.country), .integer(row.appleUnits), .integer(row.verifiedUnits),
                SQLValue(row.customerPrice), SQLValue(row.customerCurrency), SQLValue(row.proceeds), SQLValue(row.proceedsCurrency),
                .integer(row.verifiedChanges), .integer(row.unplacedPurchases),
            ])
            try database.run("INSERT INTO fct_apple_tieout_purchases VALUES (?, ?, ?, ?, ?)", [
                .text(row.day), .text(row.productID), .text(row.country), .integer(row.applePurchases), .integer(row.verifiedPurchases),
            ])
        }
        // A finding's row as the join writes every other (table 1 of its inserts: `fct_findings`).
        let insertFinding = StoredJoinResults.inserts { $0 }[1]
        for finding in findings { try database.run(insertFinding, StoredJoinResults.row(of: finding, files: files)) }
    }

    /// The rows of `days` as the last join left them.
    static func rows(days: Set<String>, in database: Database) throws -> [TieOutRow] {
        var rows: [TieOutRow] = []
        for day in days.sorted() {
            try database.forEach("""
                SELECT \(TieOutColumn.selectList) FROM fct_apple_tieout LEFT JOIN fct_apple_tieout_purchases USING (day, product_id, country)
                WHERE day = ?
                """, [.text(day)]) {
                rows.append(TieOutRow($0))
            }
        }
        return rows
    }

    /// The days of `days` (every day when nil) the Sales Reports cover, by any row, the app's own
    /// included: only those have a tie-out.
    static func coveredDays(_ database: Database, among days: Set<String>?) throws -> [String] {
        var covered: [String] = []
        try database.forEach("SELECT DISTINCT day FROM raw_apple__sales WHERE day IS NOT NULL ORDER BY day") { row in
            let day = row.string(0)
            if days?.contains(day) ?? true { covered.append(day) }
        }
        return covered
    }

    /// The latest day the Sales Reports cover, by any row (`coveredDays`' last).
    static func latestDay(_ database: Database) throws -> String? {
        guard case .text(let day)? = try database.scalar("SELECT max(day) FROM raw_apple__sales") else { return nil }
        return day
    }

    /// The Sales Report rows of `days`, or all when nil, in file order.
    static func sales(_ database: Database, days: Set<String>?, files: inout SourceFiles) throws -> [TieOutSalesLine] {
        var lines: [TieOutSalesLine] = []
        typealias Column = SalesColumn
        // In-app rows only: the app's own rows keep a day and nothing to count (`coveredDays`).
        try database.forEach("""
            SELECT \(Column.selectList) FROM raw_apple__sales s JOIN files f USING (file_id) WHERE s.product_id IS NOT NULL ORDER BY f.path, s.line
            """) { row in
            if let days, !days.contains(row.string(Column.day)) { return }
            lines.append(TieOutSalesLine(
                day: row.string(Column.day), productID: row.string(Column.productID), country: row.string(Column.country),
                units: row.int(Column.units), customerPrice: Money.parse(row.string(Column.customerPrice)) ?? 0,
                customerCurrency: row.string(Column.customerCurrency), proceeds: Money.parse(row.string(Column.proceeds)) ?? 0,
                proceedsCurrency: row.string(Column.proceedsCurrency),
                source: files.line(file: row.int(Column.fileID), row.int(Column.line))))
        }
        return lines
    }

    /// Verified Production, non-family-shared purchases (+quantity) and refunds (−quantity) on
    /// the days `days` (sorted) of `zone`, Apple's reporting zone. A Family Sharing revocation refunds nothing.
    ///
    /// `scan`: every day the reports cover (`AppleTieOut` keeps the covered days). Else a night's
    /// days, days in a row as one span: read through the purchase and refund indexes when they
    /// hold few of the sales. A row found through an index is looked up in the
    /// table out of order, which costs several times reading it in passing, so days that hold many
    /// (a night that touched old subscriptions' days, every day of a full rebuild) are read in one
    /// pass over the table instead. `throughIndexes` makes that choice (for the tests: both ways
    /// give the same changes). `rebuilt`: read a full rebuild's results beside the current ones,
    /// before the switch, in one pass (their indexes are being built meanwhile).
    static func verified(_ database: Database, days: [String], zone: Zone, scan: Bool, rebuilt: Bool = false,
                         throughIndexes: Bool? = nil) throws -> [VerifiedUnits] {
        var localSpans: [(from: Int64, until: Int64)] = []
        for day in days {
            guard let start = Timestamp.startOfDay(day) else { continue }
            if let last = localSpans.last, scan || last.until == start { localSpans[localSpans.count - 1].until = start + 86_400_000 } else {
                localSpans.append((start, start + 86_400_000))
            }
        }
        // In UTC, still sorted and apart: the zone's conversion keeps the order of times.
        let spans = localSpans.map { (from: zone.utc(fromLocal: $0.from), until: zone.utc(fromLocal: $0.until)) }
        var names = DayNames(zone)
        var changes: [VerifiedUnits] = []
        typealias Column = PurchaseColumn
        func add(_ row: Row, purchase: Bool, refund: Bool) {
            guard purchase || refund else { return }
            VerifiedUnits.append(AppleSale(
                productID: row.string(Column.productID), storefront: row.optionalString(Column.storefront), quantity: row.int(Column.quantity),
                purchaseMs: row.int(Column.purchaseMs), refundMs: row.optionalInt(Column.refundMs), refundType: row.optionalString(Column.refundType)),
                purchase: purchase, refund: refund, days: &names, to: &changes)
        }
        let columns = "SELECT \(Column.selectList) FROM \(RebuiltTables.name("int_transactions_resolved", beside: rebuilt))"
        let throughIndexes = try throughIndexes ?? !(scan || rebuilt || Self.holdMany(spans, database))
        if !throughIndexes {
            try database.forEach("\(columns) NOT INDEXED WHERE is_apple_sale = 1") { row in
                add(row, purchase: Self.contains(spans, row.int(Column.purchaseMs)),
                    refund: row.optionalInt(Column.refundMs).map { Self.contains(spans, $0) } ?? false)
            }
            return changes
        }
        for span in spans {
            let bounds: [SQLValue] = [.integer(span.from), .integer(span.until)]
            try database.forEach("\(columns) WHERE is_apple_sale = 1 AND purchase_ms >= ? AND purchase_ms < ?", bounds) {
                add($0, purchase: true, refund: false)
            }
            try database.forEach("\(columns) WHERE is_apple_sale = 1 AND refund_ms >= ? AND refund_ms < ?", bounds) {
                add($0, purchase: false, refund: true)
            }
        }
        return changes
    }

    /// Whether `spans` hold more than an eighth of the sales' purchases and refunds,
    /// counted in the indexes alone (no row is looked up).
    static func holdMany(_ spans: [(from: Int64, until: Int64)], _ database: Database) throws -> Bool {
        var inSpans: Int64 = 0
        for span in spans {
            let bounds: [SQLValue] = [.integer(span.from), .integer(span.until)]
            inSpans += try database.scalar("""
                SELECT count(*) FROM int_transactions_resolved WHERE is_apple_sale = 1 AND purchase_ms >= ? AND purchase_ms < ?
                """, bounds).integerValue
            inSpans += try database.scalar("""
                SELECT count(*) FROM int_transactions_resolved WHERE is_apple_sale = 1 AND refund_ms IS NOT NULL AND refund_ms >= ? AND refund_ms < ?
                """, bounds).integerValue
        }
        let all = try database.scalar("SELECT count(*) FROM int_transactions_resolved WHERE is_apple_sale = 1").integerValue
        return inSpans * 8 > all
    }

    /// Whether `ms` falls in one of `spans` (sorted, apart).
    static func contains(_ spans: [(from: Int64, until: Int64)], _ ms: Int64) -> Bool {
        var (low, high) = (0, spans.count)
        while low < high {
            let middle = (low + high) / 2
            if spans[middle].until <= ms { low = middle + 1 } else { high = middle }
        }
        return low < spans.count && spans[low].from <= ms
    }

    /// What `sales` selects of a Sales Report row (as `s`).
    private enum SalesColumn: Int, SelectedColumn {
        case day, productID, country, units, customerPrice, customerCurrency, proceeds, proceedsCurrency, fileID, line
        var sql: String {
            "s." + [
                "day", "product_id", "country", "units_n", "customer_price", "customer_currency", "proceeds", "proceeds_currency", "file_id",
                "line",
            ][rawValue]
        }
    }

    /// What `verified` selects of a sale.
    private enum PurchaseColumn: Int, SelectedColumn {
        case productID, storefront, quantity, purchaseMs, refundMs, refundType
        var sql: String { ["product_id", "storefront", "quantity", "purchase_ms", "refund_ms", "refund_type"][rawValue] }
    }
}

/// The columns of a `fct_apple_tieout` row and of its `fct_apple_tieout_purchases` row (joined `USING (day,
/// product_id, country)`), as `TieOutRow`
/// holds them. A row without purchases (none is, once the full join migration 43 asks for has run)
/// reads its net units as its purchases.
enum TieOutColumn: Int, SelectedColumn {
    case day, productID, country, appleUnits, verifiedUnits, customerPrice, customerCurrency, proceeds, proceedsCurrency
    case verifiedChanges, unplacedPurchases, applePurchases, verifiedPurchases
    var sql: String {
        [
            "day", "product_id", "country", "apple_units", "verified_units", "customer_price", "customer_currency", "proceeds",
            "proceeds_currency", "verified_changes", "unplaced_purchases", "coalesce(apple_purchases, max(apple_units, 0))",
            "coalesce(verified_purchases, max(verified_units, 0))",
        ][rawValue]
    }
}

extension TieOutRow {
    /// A row selected in `TieOutColumn`'s columns.
    init(_ row: Row) {
        typealias Column = TieOutColumn
        self.init(
            day: row.string(Column.day), productID: row.string(Column.productID), country: row.string(Column.country),
            appleUnits: row.int(Column.appleUnits), verifiedUnits: row.int(Column.verifiedUnits),
            customerPrice: row.optionalString(Column.customerPrice), customerCurrency: row.optionalString(Column.customerCurrency),
            proceeds: row.optionalString(Column.proceeds), proceedsCurrency: row.optionalString(Column.proceedsCurrency),
            verifiedChanges: row.int(Column.verifiedChanges), unplacedPurchases: row.int(Column.unplacedPurchases),
            applePurchases: row.int(Column.applePurchases), verifiedPurchases: row.int(Column.verifiedPurchases))
    }
}
