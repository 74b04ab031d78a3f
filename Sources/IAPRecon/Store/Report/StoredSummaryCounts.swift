/// What `summary.json` and the report page count in the store.
enum StoredSummaryCounts {
    typealias InputFile = SummaryCounts.InputFile
    typealias Counts = SummaryCounts

    /// What the summary counts in the store, as of `asOfMs` with `graceMs` of grace.
    static func counts(database: Database, asOfMs: Int64, graceMs: Int64) throws -> Counts {
        var files: [InputFile] = []
        var totals = LineCounts()
        try database.forEach("SELECT \(FileColumn.selectList) FROM files ORDER BY path") { row in
            typealias Column = FileColumn
            let counts = LineCounts(read: Int(row.int(Column.read)), accepted: Int(row.int(Column.accepted)),
                                    rejected: Int(row.int(Column.rejected)), blank: Int(row.int(Column.blank)), ignored: Int(row.int(Column.ignored)))
            totals = totals + counts
            files.append(InputFile(path: row.string(Column.path), source: row.string(Column.source), bytes: row.int(Column.bytes),
                                   counts: counts, present: row.int(Column.present) != 0, readAgainFor: row.optionalString(Column.readAgainFor)))
        }
        var ignoredFiles: [String] = []
        try database.forEach("SELECT path FROM ignored_files ORDER BY path") { ignoredFiles.append($0.string(0)) }
        var readWith = Set<String>()
        try database.forEach("""
            SELECT DISTINCT r.read_with FROM file_rules r JOIN files f USING (file_id) WHERE f.source IN ('receipts', 'notifications')
            """) { readWith.insert($0.string(0)) }

        // One pass over the transactions for every count of them and of the orders matched to them
        // (a match is kept once, on its transaction), and one over the orders none is matched to.
        // The transactions' products the catalog lacks are found in the same pass.
        var ordersByRule = TextTally()
        var matched: Int64 = 0
        var byEnvironment = TextTally()
        var unmatchedTransactions: Int64 = 0
        var familyShared: Int64 = 0
        var missingProducts = Set<String>()
        let catalog = try CatalogProducts(database)
        try database.forEach("SELECT \(TransactionColumn.selectList) FROM int_transactions_resolved") { row in
            typealias Column = TransactionColumn
            if catalog.lacks(row, Column.productID.rawValue) { missingProducts.insert(row.string(Column.productID)) }
            byEnvironment.add(row, Column.environment.rawValue)
            unmatchedTransactions += row.int(Column.isUnmatchedProduction)
            familyShared += row.int(Column.isFamilySharedProduction)
            if row.int(Column.isMatched) == 1 {
                matched += 1
                if !row.isNull(Column.matchRule) { ordersByRule.add(row, Column.matchRule.rawValue) }
            }
        }
        let (byEnvironmentCounts, ordersByRuleCounts) = (byEnvironment.counts(), ordersByRule.counts())
        let (unmatched, unpaid, repeatedOrderIDs) = try unmatchedOrders(database, createdByMs: asOfMs - graceMs)
        let orders = matched + unmatched
        // In SQLite's order (bytes), as the contract's consumers have always seen them.
        let environments = byEnvironmentCounts.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { (name: $0, count: byEnvironmentCounts[$0] ?? 0) }
        let receipts = try receiptCounts(database)
        let missingFromCatalog = try productsMissingFromCatalog(database, catalog: catalog, besides: missingProducts)

        return Counts(files: files, ignoredFiles: ignoredFiles, totals: totals, orders: orders, unmatched: unmatched, ordersByRule: ordersByRuleCounts,
                      unpaid: unpaid, environments: environments, unmatchedTransactions: unmatchedTransactions, familyShared: familyShared,
                      failedVerifications: receipts.failedVerifications, missingFromCatalog: missingFromCatalog,
                      bundleIDs: try bundleIDs(besides: receipts.bundleIDs, in: database), readWith: readWith,
                      salesReportApps: try salesReportApps(database), salesReportDays: try salesReportDays(database),
                      ordersOfSeveralUsers: try ordersOfSeveralUsers(database, among: repeatedOrderIDs))
    }

    /// The apps whose in-app rows the Sales Reports read without `--app-sku` tie out (a report
    /// read before the rules were recorded was read so too), once each in byte order.
    static func salesReportApps(_ database: Database) throws -> [String] {
        var apps: [String] = []
        try database.forEach("""
            SELECT DISTINCT a.parent_sku FROM raw_apple__sales_apps a LEFT JOIN file_rules r USING (file_id)
            WHERE coalesce(r.read_with, ?1) = ?1 ORDER BY 1
            """, [.text(LineRules().readWith(.apple) ?? "")]) { apps.append($0.string(0)) }
        return apps
    }

    /// The Pacific days the Sales Reports cover, by any row, in order: the tie-out compares those alone.
    static func salesReportDays(_ database: Database) throws -> [String] {
        var days: [String] = []
        try database.forEach("SELECT DISTINCT day FROM raw_apple__sales WHERE day IS NOT NULL ORDER BY day") { days.append($0.string(0)) }
        return days
    }

    /// The distinct app bundle ids the receipts named, sorted by their bytes, and how many
    /// verifications failed (a status other than 0 and 21006): one pass over the receipts. A
    /// bundle id is made into a string only where it differs from the row before.
    ///
    /// Log shippers repeat lines, and a file may be copied under a second name: a failed
    /// verification's line read twice is one verification (CONTRACT.md §1.1), as a repeated
    /// accepted line's transaction is one transaction. So failed ones count once per distinct
    /// content (every column its line gives), spelled by SQLite only for the rare failed rows.
    static func receiptCounts(_ database: Database) throws -> (bundleIDs: [String], failedVerifications: Int64) {
        var bundleIDs = Set<String>()
        var last: String?
        var failed = Set<String>()
        try database.forEach("""
            SELECT bundle_id, status_n NOT IN (0, 21006),
              CASE WHEN status_n NOT IN (0, 21006) THEN quote(received_ms) || ',' || quote(user_id) || ',' || quote(order_id) || ','
                || quote(transaction_id) || ',' || quote(status_n) || ',' || quote(environment) || ',' || quote(bundle_id) || ','
                || quote(shape) END
            FROM raw_receipts__verifications
            """) { row in
            if row.int(1) == 1 { failed.insert(row.string(2)) }
            guard !row.isNull(0), !(last.map { row.text(0, equals: $0) } ?? false) else { return }
            let bundleID = row.string(0)
            bundleIDs.insert(bundleID)
            last = bundleID
        }
        return (bundleIDs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, Int64(failed.count))
    }

    /// The apps the receipts (`receipts`), the notifications and the transactions apart from their
    /// line's app named, once each in byte order.
    static func bundleIDs(besides receipts: [String], in database: Database) throws -> [String] {
        var bundleIDs = Set(receipts)
        try database.forEach("""
            SELECT DISTINCT bundle_id FROM raw_notifications__notifications WHERE bundle_id IS NOT NULL
            UNION SELECT bundle_id FROM raw_apple__transaction_bundles
            """) {
            bundleIDs.insert($0.string(0))
        }
        return bundleIDs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Every order id of the order lines, in id order, each as often as it has lines: the key index alone.
    static let orderIDs = "SELECT order_id FROM raw_server__orders WHERE order_id IS NOT NULL ORDER BY order_id"

    /// Every matched order id, in id order: the partial index of matched orders alone (a match is kept once, on its transaction).
    static let matchedOrderIDs = "SELECT order_id FROM int_transactions_resolved WHERE order_id IS NOT NULL ORDER BY order_id"

    /// How many orders no resolved transaction is matched to, and how many of them were created (their
    /// first line) at or before `dueMs`: unpaid after the grace. The order ids and the matched ones
    /// are walked side by side in id order, through their indexes, and only the unmatched orders'
    /// first lines are read, through a temporary table filled in the same order. The same walk
    /// lists the ids of more than one line (`ordersOfSeveralUsers` reads whose lines they are).
    static func unmatchedOrders(_ database: Database, createdByMs dueMs: Int64) throws
        -> (unmatched: Int64, unpaid: Int64, repeatedOrderIDs: [String]) {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS unmatched_orders (key TEXT PRIMARY KEY) WITHOUT ROWID")
        // The unmatched orders are inserted in one transaction of the connection's own: each
        // insert on its own would be a transaction of its own, for thousands of orders a night.
        try database.execute("SAVEPOINT unmatched_orders")
        do {
            let counts = try unmatchedOrdersListed(database, createdByMs: dueMs)
            try database.execute("RELEASE unmatched_orders")
            return counts
        } catch {
            try? database.execute("ROLLBACK TO unmatched_orders; RELEASE unmatched_orders")
            throw error
        }
    }

    /// `unmatchedOrders` inside its savepoint: the orders listed in the temporary table, then counted.
    private static func unmatchedOrdersListed(_ database: Database, createdByMs dueMs: Int64) throws
        -> (unmatched: Int64, unpaid: Int64, repeatedOrderIDs: [String]) {
        try database.execute("DELETE FROM temp.unmatched_orders")
        let insert = try database.cached("INSERT INTO temp.unmatched_orders VALUES (?)")
        let orders = try database.cached(orderIDs)
        let matched = try database.cached(matchedOrderIDs)
        defer {
            orders.reset()
            matched.reset()
        }
        var hasMatched = try matched.step()
        var runs = KeyRuns()
        var repeated: [String] = []
        var isRepeated = false
        while try orders.step() {
            guard orders.withText(0, { runs.starts($0) }) else {
                if !isRepeated { repeated.append(orders.row.string(0)) }
                isRepeated = true
                continue
            }
            isRepeated = false
            while hasMatched, matched.row.compareText(0, with: orders.row, 0) < 0 { hasMatched = try matched.step() }
            if hasMatched, matched.row.compareText(0, with: orders.row, 0) == 0 { continue }
            try insert.insert([.text(orders.row.string(0))])
        }
        orders.reset()
        matched.reset()
        var unmatched: Int64 = 0
        var unpaid: Int64 = 0
        try ServerOrders.forEachFirst(in: database, where: "o.order_id IN temp.unmatched_orders") {
            unmatched += 1
            if $0.int(ServerOrders.Column.ms) <= dueMs { unpaid += 1 }
        }
        return (unmatched, unpaid, repeated)
    }

    /// The order ids among `orderIDs` that more than one user logged, in id order, each with its
    /// users in the order of their first lines (files in path order, then line), as the join takes
    /// an id's first line for its order (`ServerOrders`). The ids come from `unmatchedOrders`' walk:
    /// those of more than one line, mostly a log shipper's copies of one user's line.
    static func ordersOfSeveralUsers(_ database: Database, among orderIDs: [String]) throws -> [SummaryCounts.OrderOfSeveralUsers] {
        guard !orderIDs.isEmpty else { return [] }
        var shared: [SummaryCounts.OrderOfSeveralUsers] = []
        var current: SummaryCounts.OrderOfSeveralUsers?
        var users = Set<StoredText>()
        func close() {
            if let current, current.users.count > 1 { shared.append(current) }
        }
        try database.forEach("""
            SELECT o.order_id, o.user_id, f.path, o.line FROM raw_server__orders o JOIN files f USING (file_id)
            WHERE o.order_id IN (SELECT value FROM json_each(?1)) ORDER BY o.order_id, f.path, o.line, o.item
            """, [.textList(orderIDs)]) { row in
            let orderID = row.string(0)
            if !(current.map { $0.orderID.hasSameUTF8(as: orderID) } ?? false) {
                close()
                current = SummaryCounts.OrderOfSeveralUsers(orderID: orderID, users: [])
                users = []
            }
            let user = row.string(1)
            if users.insert(StoredText(user)).inserted {
                current?.users.append((userID: user, source: row.string(2) + ":" + String(row.int(3))))
            }
        }
        close()
        return shared
    }

    /// How many product ids of verified transactions (`transactionProducts`, those the catalog
    /// lacks) or deliveries the catalog lacks. A delivery's product is its first line's: a product
    /// only a repeated line names is no delivery's. Such a product is rare, so the lines naming it
    /// are checked one candidate at a time. The delivery lines' products are checked against
    /// `catalog` in place as they come: a `String` is made only of a product it lacks, once.
    static func productsMissingFromCatalog(_ database: Database, catalog: CatalogProducts,
                                           besides transactionProducts: Set<String>) throws -> Int64 {
        var missing = transactionProducts
        var candidates: [String] = []
        var lacked = Set<RowFingerprint>()
        try database.forEach("SELECT product_id FROM raw_server__deliveries WHERE product_id IS NOT NULL") { row in
            guard catalog.lacks(row, 0), let fingerprint = row.fingerprint(0), lacked.insert(fingerprint).inserted else { return }
            let product = row.string(0)
            if !missing.contains(product) { candidates.append(product) }
        }
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

    /// The catalog's product ids, to tell of a row's product, in place, whether the catalog lacks it
    /// as `product_id NOT IN (SELECT product_id FROM raw_catalog__products)` does: a byte for byte
    /// match with none of them, and never where the catalog holds a NULL id (`NOT IN` is then NULL).
    /// The ids are kept in byte order, end to end in one buffer, and a row's bytes are found among
    /// them by halving, so no `String` is made of each of the history's transactions and deliveries.
    struct CatalogProducts {
        private var bytes: [UInt8] = []
        /// Where each id is in `bytes`, the ids in byte order.
        private var ids: [Range<Int>] = []
        private var hasNull = false

        init(_ database: Database) throws {
            var products: [[UInt8]] = []
            try database.forEach("SELECT product_id FROM raw_catalog__products") { row in
                if row.isNull(0) { hasNull = true } else { row.withText(0) { products.append(Array($0)) } }
            }
            for product in products.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                ids.append(bytes.count..<bytes.count + product.count)
                bytes += product
            }
        }

        /// Whether the catalog lacks column `index`'s product (never for NULL).
        func lacks(_ row: Row, _ index: Int) -> Bool {
            guard !hasNull, !row.isNull(index) else { return false }
            return row.withText(index) { text in
                bytes.withUnsafeBufferPointer { all in
                    var (low, high) = (0, ids.count)
                    while low < high {
                        let middle = (low + high) / 2
                        let order = BinaryOrder.compare(UnsafeBufferPointer(rebasing: all[ids[middle]]), text)
                        if order == 0 { return false }
                        if order < 0 { low = middle + 1 } else { high = middle }
                    }
                    return true
                }
            }
        }
    }

    /// How many rows hold each text of a column. Rows come in runs of one text (nearly every
    /// transaction is Production): a row is compared in place with the run's text, and a `String`
    /// is made, and looked up, only where a new run starts.
    private struct TextTally {
        private var tally: [String: Int64] = [:]
        private var runText: String?
        private var runCount: Int64 = 0

        mutating func add(_ row: Row, _ column: Int) {
            if let text = runText, row.text(column, equals: text) {
                runCount += 1
                return
            }
            if let text = runText { tally[text, default: 0] += runCount }
            (runText, runCount) = (row.string(column), 1)
        }

        /// Each text's count.
        func counts() -> [String: Int64] {
            var counts = tally
            if let text = runText { counts[text, default: 0] += runCount }
            return counts
        }
    }

    /// What `counts` selects of each input file.
    private enum FileColumn: Int, SelectedColumn {
        case path, source, read, accepted, rejected, blank, ignored, bytes, present, readAgainFor
        var sql: String {
            ["path", "source", "lines_read", "accepted", "rejected", "blank", "ignored", "bytes", "present",
             // What a migration writes in place of the hash of a file to be read again (`Schema.migrations`).
             "CASE WHEN content_hash LIKE 'read again for %' THEN substr(content_hash, 16) END"][rawValue]
        }
    }

    /// What `counts` reads of each resolved transaction: its environment, whether it counts as
    /// unmatched, family shared or matched, and its product.
    private enum TransactionColumn: Int, SelectedColumn {
        case environment, isUnmatchedProduction, isFamilySharedProduction, isMatched, matchRule, productID
        var sql: String {
            [
                "coalesce(environment, 'unknown')", "order_id IS NULL AND environment = 'Production'",
                "environment = 'Production' AND ownership = 'FAMILY_SHARED'", "order_id IS NOT NULL", "match_rule",
                "product_id",
            ][rawValue]
        }
    }
}
