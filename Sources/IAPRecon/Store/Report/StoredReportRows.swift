/// What the report reads of the store that no other stage's part of it reads for it: the rows of
/// each report's one query, handed out as values where a report takes a few, and as rows in the
/// order the query gives where it streams many.
enum StoredReportRows {
    typealias RevenueColumn = RevenueTransactionColumn

    /// Every revenue transaction (`RevenueReport`), in `RevenueColumn`'s columns. Read straight
    /// through the table: the partial index on purchase time holds the same rows, but walking it
    /// would look each one up in the table out of order.
    static let revenueRows = "SELECT \(RevenueColumn.selectList) FROM int_transactions_resolved NOT INDEXED WHERE is_revenue = 1"

    static func forEachRevenueTransaction(_ database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach(revenueRows, [], body)
    }

    /// Every stored `fx.csv` row, by day, then file order.
    static func fxRates(_ database: Database) throws -> [FXRow] {
        var rows: [FXRow] = []
        try database.forEach("""
            SELECT f.path, r.line, r.day, r.currency, r.rate FROM raw_fx__rates r JOIN files f USING (file_id) ORDER BY r.day, f.path, r.line
            """) { rows.append(($0.string(0), $0.int(1), $0.string(2), $0.string(3), $0.string(4))) }
        return rows
    }

    /// The tie-out with Apple the join wrote, by day, product and country.
    static func tieOutRows(_ database: Database) throws -> [TieOutRow] {
        var rows: [TieOutRow] = []
        try database.forEach("""
            SELECT \(TieOutColumn.selectList) FROM fct_apple_tieout LEFT JOIN fct_apple_tieout_purchases USING (day, product_id, country)
            ORDER BY day, product_id, country
            """) {
            rows.append(TieOutRow($0))
        }
        return rows
    }

    /// The Sales Report files the join found repeating or overlapping an earlier one's day, by day,
    /// path and earlier path. A kind this build does not know is left out.
    static func salesReportOverlaps(_ database: Database) throws -> [SalesReportOverlap] {
        var overlaps: [SalesReportOverlap] = []
        try database.forEach("SELECT day, path, earlier_path, kind FROM fct_apple_report_overlaps ORDER BY day, path, earlier_path") { row in
            guard let kind = SalesReportOverlap.Kind(rawValue: row.string(3)) else { return }
            overlaps.append(SalesReportOverlap(day: row.string(0), path: row.string(1), earlierPath: row.string(2), kind: kind))
        }
        return overlaps
    }

    /// The Sales Report files of the tie-out rows whose proceeds came in several currencies, by day,
    /// product, country and path.
    static func salesReportMixedProceeds(_ database: Database) throws -> [SalesReportMixedProceeds] {
        var files: [SalesReportMixedProceeds] = []
        try database.forEach("SELECT day, product_id, country, path FROM fct_apple_mixed_proceeds ORDER BY day, product_id, country, path") {
            files.append(SalesReportMixedProceeds(day: $0.string(0), productID: $0.string(1), country: $0.string(2), path: $0.string(3)))
        }
        return files
    }

    /// Calls `body` with the type and `path:line` of every stored notification line whose transaction came
    /// with a type not in `known`, in path then line order. The store keeps a notification's type with the
    /// transaction it carries, coded when ingest knew it as a number (`Schema`, migration 14) and as text
    /// otherwise, and keeps no version there: a type known to either version is known here.
    static func forEachNotification(ofTypeOtherThan known: [String], in database: Database,
                                    _ body: (_ type: String, _ source: String) throws -> Void) throws {
        try database.forEach("""
            SELECT t.notification_type, \(StoredLedger.pathAndLineSQL(file: "t.file_id", line: "t.line"))
            FROM raw_apple__transactions t JOIN files f ON f.file_id = t.file_id
            WHERE typeof(t.notification_type) = 'text' AND t.notification_type NOT IN (SELECT value FROM json_each(?1))
            GROUP BY t.file_id, t.line
            ORDER BY f.path, t.line
            """, [.textList(known)]) { try body($0.string(0), $0.string(1)) }
    }

    /// Every stored catalog line, in path then line order: the order in which a later line says
    /// what a product is now, as the join reads the catalog (a root `catalog.csv` after every day
    /// folder's, whichever night each was stored).
    static func catalogRows(_ database: Database) throws -> [CatalogRow] {
        var rows: [CatalogRow] = []
        try database.forEach("""
            SELECT f.path, c.line, c.product_id, c.type, c.subscription_group, c.price, c.currency
            FROM raw_catalog__products c JOIN files f USING (file_id) ORDER BY f.path, c.line
            """) {
            rows.append(CatalogRow(path: $0.string(0), line: $0.int(1), productID: $0.string(2), type: $0.optionalString(3),
                                   subscriptionGroup: $0.optionalString(4), price: $0.optionalString(5), currency: $0.optionalString(6)))
        }
        return rows
    }

    /// Every place a finding is listed, by finding id, in `FindingSubjectColumn`'s columns: its
    /// transaction (the chain NULL), and each chain it is about (the transaction NULL).
    static func forEachFindingSubject(_ database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("""
            SELECT finding_id, transaction_id, NULL FROM fct_findings WHERE transaction_id IS NOT NULL
            UNION ALL
            SELECT finding_id, NULL, original_transaction_id FROM fct_finding_chains
            ORDER BY 1
            """, [], body)
    }

    typealias TransactionColumn = ReportTransactionColumn

    /// A statement over every resolved transaction in transaction id order, in `TransactionColumn`'s
    /// columns. Compiled once per connection.
    static func transactions(_ database: Database) throws -> Statement {
        try database.cached("SELECT \(TransactionColumn.selectList) FROM int_transactions_resolved ORDER BY transaction_id")
    }

    /// Each `CONSUMPTION_REQUEST` notification once (by its uuid), at its earliest signing, by
    /// time then uuid; only those about `transactionID` when one is given.
    static func consumptionRequests(_ database: Database, about transactionID: String?) throws
        -> [(uuid: String, transactionID: String, ms: Int64)] {
        var requests: [(uuid: String, transactionID: String, ms: Int64)] = []
        try database.forEach("""
            SELECT notification_uuid, transaction_id, min(signed_ms) FROM raw_notifications__notifications
            WHERE notification_type = 'CONSUMPTION_REQUEST' AND notification_uuid IS NOT NULL AND transaction_id IS NOT NULL
              AND signed_ms IS NOT NULL AND (?1 IS NULL OR transaction_id = ?1)
            GROUP BY notification_uuid, transaction_id ORDER BY 3, 1
            """, [SQLValue(transactionID)]) { row in
            requests.append((row.string(0), row.string(1), row.int(2)))
        }
        return requests
    }

    /// Whether the join resolved `transactionID`, and to which user.
    static func resolution(of transactionID: String, in database: Database) throws -> (resolved: Bool, user: String?) {
        var resolution: (resolved: Bool, user: String?) = (false, nil)
        try database.forEach("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?1", [.text(transactionID)]) {
            resolution = (true, $0.optionalString(0))
        }
        return resolution
    }

    /// Each `delivery_revoked` line of `transactionID`: its time and user.
    static func revocations(of transactionID: String, in database: Database) throws -> [(ms: Int64, userID: String)] {
        var revocations: [(ms: Int64, userID: String)] = []
        try database.forEach("SELECT ts_ms, user_id FROM raw_server__revocations WHERE transaction_id = ?1", [.text(transactionID)]) {
            revocations.append(($0.int(0), $0.string(1)))
        }
        return revocations
    }

    /// The user the join resolved `transactionID` to, if it resolved one.
    static func resolvedUser(of transactionID: String, in database: Database) throws -> String? {
        try resolution(of: transactionID, in: database).user
    }

    typealias PurchaseColumn = UserPurchaseColumn

    /// `user`'s revenue transactions purchased by `untilMs`, in `PurchaseColumn`'s columns.
    static func forEachPurchase(of user: String, through untilMs: Int64, in database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("""
            SELECT \(PurchaseColumn.selectList) FROM int_transactions_resolved WHERE user_id = ? AND is_revenue = 1 AND purchase_ms <= ?
            """, [.text(user), .integer(untilMs)], body)
    }

    /// Records this report's sighting of each finding no published report has shown, as pending
    /// (`first_report` 0): these are the report's new findings. A published sighting is never
    /// rewritten: `first_seen` is the as-of of the first run that reported the finding (CONTRACT.md
    /// §3), even when a later run judges an earlier moment (`nightly --date` replays a night the
    /// store went past in a scratch store of its own). Sightings a report left pending and
    /// never published (killed, a full disk) are dropped first: no output showed them, so they
    /// are this report's to make, with its as-of, and its alert's. `earlier` (another store's
    /// published sightings, `publishedSightings`) are kept as they were, before this report's.
    static func recordFirstSightings(asOfMs: Int64, earlier: [FirstSighting] = [], in database: Database) throws {
        try database.execute(Tables.findingFirstSeen)
        try database.transaction {
            try database.execute("DELETE FROM fct_finding_first_seen WHERE first_report = 0")
            for sighting in earlier {
                try database.run("""
                    INSERT INTO fct_finding_first_seen (finding_id, first_seen_ms, first_report) VALUES (?1, ?2, ?3)
                    ON CONFLICT (finding_id) DO NOTHING
                    """, [.text(sighting.findingID), .integer(sighting.firstSeenMs), .integer(sighting.report)])
            }
            try database.run("""
                INSERT INTO fct_finding_first_seen (finding_id, first_seen_ms, first_report) SELECT finding_id, ?1, 0 FROM fct_findings WHERE 1
                ON CONFLICT (finding_id) DO NOTHING
                """, [.integer(asOfMs)])
        }
    }

    /// A finding's first sighting by a report that published it.
    struct FirstSighting {
        var findingID: String
        var firstSeenMs: Int64
        var report: Int64
    }

    /// The sightings of `database`'s published reports judging a moment before `asOfMs`: what a
    /// night replayed from that store had seen reported before it (none when it never reported).
    static func publishedSightings(before asOfMs: Int64, in database: Database) throws -> [FirstSighting] {
        guard try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fct_finding_first_seen'")
            .integerValue > 0 else { return [] }
        var sightings: [FirstSighting] = []
        try database.forEach("""
            SELECT finding_id, first_seen_ms, first_report FROM fct_finding_first_seen WHERE first_report > 0 AND first_seen_ms < ?
            """, [.integer(asOfMs)]) { sightings.append(FirstSighting(findingID: $0.string(0), firstSeenMs: $0.int(1), report: $0.int(2))) }
        return sightings
    }

    /// The findings `database`'s published reports first showed judging `asOfMs` or a later moment:
    /// a night replayed from that store reports them new, and its nights have alerted on them.
    static func publishedFindings(from asOfMs: Int64, in database: Database) throws -> Set<String> {
        guard try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fct_finding_first_seen'")
            .integerValue > 0 else { return [] }
        var findings: Set<String> = []
        try database.forEach("""
            SELECT finding_id FROM fct_finding_first_seen WHERE first_report > 0 AND first_seen_ms >= ?
            """, [.integer(asOfMs)]) { findings.insert($0.string(0)) }
        return findings
    }

    /// Makes the pending sightings the report's, numbered after the reports before it: called
    /// once its outputs are switched in, so a finding counts as reported only by a run whose
    /// outputs showed it.
    static func publishFirstSightings(in database: Database) throws {
        let report = try database.scalar("SELECT coalesce(max(first_report), 0) + 1 FROM fct_finding_first_seen").integerValue
        try database.run("UPDATE fct_finding_first_seen SET first_report = ?1 WHERE first_report = 0", [.integer(report)])
    }

    typealias FindingColumn = ReportFindingColumn

    /// Every finding, most severe first, then by kind, time and id, in `FindingColumn`'s columns;
    /// those first shown judging `shownAgainAt` are new too.
    static func forEachFinding(_ database: Database, shownAgainAt: Int64?, _ body: (Row) throws -> Void) throws {
        try database.forEach("""
            SELECT \(FindingColumn.selectList) FROM fct_findings f JOIN fct_finding_first_seen s USING (finding_id)
            ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, f.kind, f.event_ms, f.finding_id
            """, [shownAgainAt.map { .integer($0) } ?? .null], body)
    }

    /// Every rejected line in file order, in `RejectColumn`'s columns.
    static func forEachReject(_ database: Database, _ body: (Row) throws -> Void) throws {
        try database.forEach("SELECT \(RejectColumn.selectList) FROM rejects r JOIN files f USING (file_id) ORDER BY f.path, r.line", [], body)
    }
}

extension RevenueTransactionColumn: SelectedColumn {
    var sql: String {
        ["purchase_ms", "product_id", "storefront", "currency", "unit_price", "quantity", "refund_ms", "refund_amount", "price_source"][rawValue]
    }
}

extension FindingSubjectColumn: SelectedColumn {
    var sql: String { ["finding_id", "transaction_id", "original_transaction_id"][rawValue] }
}

extension ReportTransactionColumn: SelectedColumn {
    var sql: String {
        [
            "transaction_id", "original_transaction_id", "user_id", "order_id", "match_rule", "product_id", "NULL",
            "storefront", "environment", "ownership", "currency", "unit_price", "quantity", "price_source",
            "purchase_ms", "expires_ms", "refund_ms", "refund_type", "refund_amount", "is_revenue", "deliveries", "delivered_to",
        ][rawValue]
    }
}

extension UserPurchaseColumn: SelectedColumn {
    var sql: String { ["purchase_ms", "unit_price", "quantity", "currency", "refund_ms", "refund_amount"][rawValue] }
}

extension ReportFindingColumn: SelectedColumn {
    var sql: String {
        [
            "f.finding_id", "f.kind", "f.severity", "f.user_id", "f.order_id", "f.transaction_id", "f.original_transaction_id",
            "f.product_id", "f.amount", "f.currency", "f.event_ms", "f.detail", "f.sources", "s.first_seen_ms",
            "s.first_report = 0 OR s.first_seen_ms IS ?1", "s.first_report > 0",
            "(SELECT t.purchase_ms FROM int_transactions_resolved t WHERE t.transaction_id = f.transaction_id)",
        ][rawValue]
    }
}

extension RejectColumn: SelectedColumn {
    var sql: String { ["f.path", "r.line", "r.reason", "r.text"][rawValue] }
}
