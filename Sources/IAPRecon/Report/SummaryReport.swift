import Foundation

/// `summary.json`: the run in numbers (CONTRACT.md §3).
///
/// As-of, per-file input accounting, the bundle ids seen, counts and amounts
/// per finding kind (new ones apart), money at risk in the reporting currency,
/// orders matched by rule, unmatched and unpaid, transactions by environment,
/// price sources (so finance sees catalog-priced and unpriced transactions),
/// revenue totals, the tie-out with Apple's Sales Report and attribution join keys. Nothing in it
/// depends on the clock or the machine, so two runs over the same inputs write the same bytes
/// (stage timings go to the run log and the `run_stages` table).
enum SummaryReport {
    /// The contract version the outputs follow.
    static let contractVersion = 2

    /// The distinct app bundle ids the receipts named, sorted.
    static func bundleIDs(_ database: Database) throws -> [String] {
        var ids: [String] = []
        try database.forEach("""
            SELECT DISTINCT bundle_id FROM raw_receipts__verifications WHERE bundle_id IS NOT NULL ORDER BY bundle_id
            """) { ids.append($0.string(0)) }
        return ids
    }

    /// What the summary counts in the store, read on its own connection while attribution runs.
    struct Counts: Sendable {
        var inputs: [JSONValue]
        /// Paths under the input folder that match no source (`ignored_files`).
        var ignoredFiles: [JSONValue]
        /// The same files as `inputs`, typed, for the report page.
        var files: [ReportPage.InputFile]
        var totals: LineCounts
        var orders: Int64
        var unmatched: Int64
        var ordersByRule: [String: Int64]
        var unpaid: Int64
        var environments: [(String, JSONValue)]
        var unmatchedTransactions: Int64
        var familyShared: Int64
        var failedVerifications: Int64
        var missingFromCatalog: Int64
        var bundleIDs: [String]
    }

    static func counts(database: Database, asOfMs: Int64, graceMs: Int64) throws -> Counts {
        var inputs: [JSONValue] = []
        var files: [ReportPage.InputFile] = []
        var totals = LineCounts()
        try database.forEach("SELECT path, source, lines_read, accepted, rejected, blank, ignored, bytes, present FROM files ORDER BY path") { row in
            let counts = LineCounts(read: Int(row.int(2)), accepted: Int(row.int(3)), rejected: Int(row.int(4)),
                                    blank: Int(row.int(5)), ignored: Int(row.int(6)))
            totals = totals + counts
            files.append(ReportPage.InputFile(path: row.string(0), source: row.string(1), counts: counts))
            inputs.append(.object([
                ("file", .string(row.string(0))), ("source", .string(row.string(1))), ("bytes", .int(row.int(7))),
                ("read", .int(counts.read)), ("accepted", .int(counts.accepted)), ("rejected", .int(counts.rejected)),
                ("blank", .int(counts.blank)), ("ignored", .int(counts.ignored)), ("present", .bool(row.int(8) != 0)),
            ]))
        }
        var ignoredFiles: [JSONValue] = []
        try database.forEach("SELECT path FROM ignored_files ORDER BY path") { ignoredFiles.append(.string($0.string(0))) }

        // One pass over the transactions for every count of them and of the orders matched to them
        // (a match is kept once, on its transaction), and one over the orders none is matched to.
        var ordersByRule: [String: Int64] = [:]
        var matched: Int64 = 0
        var byEnvironment: [String: Int64] = [:]
        var unmatchedTransactions: Int64 = 0
        var familyShared: Int64 = 0
        try database.forEach("""
            SELECT coalesce(environment, 'unknown'), order_id IS NULL AND environment = 'Production',
                   environment = 'Production' AND ownership = 'FAMILY_SHARED', order_id IS NOT NULL, match_rule
            FROM int_transactions_resolved
            """) { row in
            byEnvironment[row.string(0), default: 0] += 1
            unmatchedTransactions += row.int(1)
            familyShared += row.int(2)
            if row.int(3) == 1 {
                matched += 1
                if let rule = row.optionalString(4) { ordersByRule[rule, default: 0] += 1 }
            }
        }
        let (unmatched, unpaid) = try unmatchedOrders(database, createdByMs: asOfMs - graceMs)
        let orders = matched + unmatched
        // In SQLite's order (bytes), as the contract's consumers have always seen them.
        let environments: [(String, JSONValue)] = byEnvironment.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { ($0, .int(byEnvironment[$0] ?? 0)) }
        let failedVerifications = try database.scalar("SELECT count(*) FROM raw_receipts__verifications WHERE status_n NOT IN (0, 21006)").integerValue
        let missingFromCatalog = try productsMissingFromCatalog(database)

        return Counts(inputs: inputs, ignoredFiles: ignoredFiles, files: files, totals: totals, orders: orders, unmatched: unmatched, ordersByRule: ordersByRule, unpaid: unpaid,
                      environments: environments, unmatchedTransactions: unmatchedTransactions, familyShared: familyShared,
                      failedVerifications: failedVerifications, missingFromCatalog: missingFromCatalog,
                      bundleIDs: try bundleIDs(database))
    }

    /// Every order id of the order lines, in id order, each as often as it has lines: the key index alone.
    static let orderIDs = "SELECT order_id FROM raw_server__orders WHERE order_id IS NOT NULL ORDER BY order_id"

    /// Every matched order id, in id order: the partial index of matched orders alone (a match is kept once, on its transaction).
    static let matchedOrderIDs = "SELECT order_id FROM int_transactions_resolved WHERE order_id IS NOT NULL ORDER BY order_id"

    /// How many orders no resolved transaction is matched to, and how many of them were created (their
    /// first line) at or before `dueMs`: unpaid after the grace. The order ids and the matched ones
    /// are walked side by side in id order, through their indexes, and only the unmatched orders'
    /// first lines are read, through a temporary table filled in the same order.
    static func unmatchedOrders(_ database: Database, createdByMs dueMs: Int64) throws -> (unmatched: Int64, unpaid: Int64) {
        try database.execute("""
            CREATE TEMP TABLE IF NOT EXISTS unmatched_orders (key TEXT PRIMARY KEY) WITHOUT ROWID;
            DELETE FROM temp.unmatched_orders;
            """)
        let insert = try database.cached("INSERT INTO temp.unmatched_orders VALUES (?)")
        let orders = try database.cached(orderIDs)
        let matched = try database.cached(matchedOrderIDs)
        defer {
            orders.reset()
            matched.reset()
        }
        var hasMatched = try matched.step()
        var runs = KeyRuns()
        while try orders.step() {
            guard orders.withText(0, { runs.starts($0) }) else { continue }
            while hasMatched, matched.row.compareText(0, with: orders.row, 0) < 0 { hasMatched = try matched.step() }
            if hasMatched, matched.row.compareText(0, with: orders.row, 0) == 0 { continue }
            try insert.insert([.text(orders.row.string(0))])
        }
        var unmatched: Int64 = 0
        var unpaid: Int64 = 0
        try ServerOrders.forEachFirst(in: database, where: "o.order_id IN temp.unmatched_orders") {
            unmatched += 1
            if $0.int(ServerOrders.Column.ms) <= dueMs { unpaid += 1 }
        }
        return (unmatched, unpaid)
    }

    /// Product ids of verified transactions or deliveries that the catalog lacks. A delivery's
    /// product is its first line's: a product only a repeated line names is no delivery's. Such a
    /// product is rare, so the lines naming it are checked one candidate at a time.
    static func productsMissingFromCatalog(_ database: Database) throws -> Int64 {
        var missing = Set<String>()
        try database.forEach("""
            SELECT DISTINCT product_id FROM int_transactions_resolved WHERE product_id NOT IN (SELECT product_id FROM raw_catalog__products)
            """) { missing.insert($0.string(0)) }
        var candidates: [String] = []
        try database.forEach("""
            SELECT DISTINCT product_id FROM raw_server__deliveries WHERE product_id IS NOT NULL AND product_id NOT IN (SELECT product_id FROM raw_catalog__products)
            """) { row in if !missing.contains(row.string(0)) { candidates.append(row.string(0)) } }
        for product in candidates {
            let deliveries = try StoredDeliveries.Cursor(database, where: """
                d.transaction_id IN (SELECT transaction_id FROM raw_server__deliveries WHERE product_id = ?1)
                """, [.text(product)])
            while deliveries.hasDelivery {
                if deliveries.row.string(StoredDeliveries.Column.productID) == product {
                    missing.insert(product)
                    break
                }
                _ = try deliveries.advance()
            }
        }
        return Int64(missing.count)
    }

    /// The summary of a report: `counts` from the store, the rest from the other reports.
    static func build(
        counts: Counts, asOfMs: Int64, graceMs: Int64, settings: ReportSettings, findings: FindingsReport,
        revenue: RevenueReport, tieOut: AppleTieOutReport, attribution: AttributionReport
    ) -> JSONValue {
        let currency = settings.reportingCurrency
        let byRule: [(String, JSONValue)] = MatchRule.allCases.map { ($0.rawValue, .int(counts.ordersByRule[$0.rawValue] ?? 0)) }
        var kinds: [(String, JSONValue)] = []
        var atRiskByKind: [(String, JSONValue)] = []
        var atRisk = Amount.zero
        var newAtRisk = Amount.zero
        for kind in FindingKind.allCases {
            let rows = findings.rows.filter { $0.kind == kind.rawValue }
            var amounts: [String: Decimal] = [:]
            var reporting = Amount.zero
            var newReporting = Amount.zero
            for row in rows {
                if let amount = row.values[8].flatMap(Money.parse), let currency = row.values[9] { amounts[currency, default: 0] += amount }
                reporting += row.reportingAmount ?? .zero
                if row.isNew { newReporting += row.reportingAmount ?? .zero }
            }
            kinds.append((kind.rawValue, .object([
                ("severity", .string(kind.severity.rawValue)), ("count", .int(rows.count)),
                ("new", .int(rows.filter(\.isNew).count)),
                ("amount", .object(amounts.keys.sorted().map { ($0, .string(Money.format(amounts[$0] ?? 0))) })),
                (currency.column("amount"), .string(Money.format(reporting))),
                (currency.column("new_amount"), .string(Money.format(newReporting))),
            ])))
            atRiskByKind.append((kind.rawValue, .string(Money.format(reporting))))
            atRisk += reporting
            newAtRisk += newReporting
        }

        return .object([
            ("contract_version", .int(contractVersion)),
            ("as_of", .string(Timestamp.iso8601(asOfMs))),
            ("grace_hours", .number(Money.format(Decimal(graceMs) / 3_600_000))),
            ("time_zone", .string(settings.zone.identifier)),
            ("reporting_currency", .string(settings.currency)),
            ("signatures", settings.signatures.summary),
            ("inputs", .object([
                ("files", .array(counts.inputs)),
                ("totals", .object([
                    ("read", .int(counts.totals.read)), ("accepted", .int(counts.totals.accepted)), ("rejected", .int(counts.totals.rejected)),
                    ("blank", .int(counts.totals.blank)), ("ignored", .int(counts.totals.ignored)),
                ])),
            ])),
            ("ignored_files", .array(counts.ignoredFiles)),
            ("bundle_ids", .array(counts.bundleIDs.map { .string($0) })),
            ("findings", .object([
                ("total", .int(findings.rows.count)), ("new", .int(findings.rows.filter(\.isNew).count)), ("by_kind", .object(kinds)),
            ])),
            (currency.column("money_at_risk"), .object([
                ("total", .string(Money.format(atRisk))), ("new", .string(Money.format(newAtRisk))), ("by_kind", .object(atRiskByKind)),
            ])),
            ("orders", .object([
                ("total", .int(counts.orders)),
                ("matched_by_rule", .object(byRule)), ("unmatched", .int(counts.unmatched)), ("unpaid_after_grace", .int(counts.unpaid)),
            ])),
            ("transactions", .object([
                ("by_environment", .object(counts.environments)), ("production_without_order", .int(counts.unmatchedTransactions)),
                ("family_shared", .int(counts.familyShared)), ("failed_verifications", .int(counts.failedVerifications)),
                ("price_source", .object(PriceSource.allCases.filter { $0 != .freeTrial }.map { ($0.rawValue, .int(revenue.priceSources[$0] ?? 0)) })),
                ("without_fx_rate", .int(revenue.unconverted)),
                ("products_missing_from_catalog", .int(counts.missingFromCatalog)),
            ])),
            ("revenue", .object([
                (currency.column("gross"), .string(Money.format(revenue.grossUSD))),
                (currency.column("refunds"), .string(Money.format(revenue.refundsUSD))),
                (currency.column("net"), .string(Money.format(revenue.grossUSD - revenue.refundsUSD))),
            ])),
            ("apple_tieout", tieOut.summary(reportingCurrency: settings.currency)),
            ("attribution", .object([
                ("install_rows", .int(attribution.installRows)),
                ("purchases_without_user", .int(attribution.userlessPurchases)),
                ("spend_rows_without_fx_rate", .int(attribution.unconvertedSpendRows)),
                ("users_matched_by", .object(["customer_user_id", "appsflyer_id", "idfv", "idfa", "unattributed"].map {
                    ($0, .int(attribution.matchedBy[$0] ?? 0))
                })),
            ])),
        ])
    }
}

extension Optional where Wrapped == SQLValue {
    var integerValue: Int64 {
        if case .integer(let value)? = self { return value }
        return 0
    }
}
