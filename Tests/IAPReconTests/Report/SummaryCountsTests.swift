import Testing
@testable import IAPRecon

/// What `summary.json` counts of the receipts and of the catalog, read in as few passes as the
/// store allows (`StoredSummaryCounts`).
@Suite("Summary counts of receipts and products")
struct SummaryCountsTests {
    @Test("bundle ids once each in byte order, none for a receipt without one; a failed verification is any status but 0 and 21006")
    func receiptCounts() throws {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("""
            INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
            VALUES (1, 'receipts/r.jsonl', 'receipts', '', 0, 8, 8, 0, 0, 0, 0);
            INSERT INTO raw_receipts__verifications (file_id, line, item, status_n, bundle_id) VALUES
              (1, 1, 0, 0, 'com.example.game'), (1, 2, 0, 0, 'com.example.game'), (1, 3, 0, 21006, 'com.example.game'),
              (1, 4, 0, 21007, 'Com.Example.Game'), (1, 5, 0, 21003, NULL), (1, 6, 0, NULL, 'com.example.game'),
              (1, 7, 0, 0, 'com.example.app'), (1, 8, 0, 21010, 'com.example.game');
            """)
        let counts = try StoredSummaryCounts.receiptCounts(database)
        // Uppercase sorts before lowercase, as SQLite orders the bytes.
        #expect(counts.bundleIDs == ["Com.Example.Game", "com.example.app", "com.example.game"])
        // 21007 (a sandbox receipt sent to production), 21003 and 21010 failed; 0, 21006 and no status did not.
        #expect(counts.failedVerifications == 3)
        // The notifications' apps join the receipts', each once; a notification that names none adds none.
        try database.execute("""
            INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
            VALUES (2, 'notifications/n.jsonl', 'notifications', '', 0, 4, 4, 0, 0, 0, 0);
            INSERT INTO raw_notifications__notifications (file_id, line, item, version, bundle_id) VALUES
              (2, 1, 0, '2', 'com.example.game'), (2, 2, 0, '2', 'com.example.watch'), (2, 3, 0, '1', 'com.example.watch'),
              (2, 4, 0, '2', NULL);
            """)
        #expect(try StoredSummaryCounts.bundleIDs(besides: counts.bundleIDs, in: database)
                == ["Com.Example.Game", "com.example.app", "com.example.game", "com.example.watch"])
    }

    @Test("transactions count by environment (NULL as unknown) and matched orders by rule, however their rows interleave, the last run too")
    func environmentsAndRules() throws {
        let scenario = try Scenario()
        let database = try scenario.open()
        // The join's table (a fresh store has none yet): the columns the counts read.
        try database.execute("""
            CREATE TABLE int_transactions_resolved (transaction_id TEXT NOT NULL, product_id TEXT NOT NULL, environment TEXT,
              order_id TEXT, match_rule TEXT, ownership TEXT)
            """)
        let rows: [(environment: String?, order: String?, rule: String?)] = [
            ("Production", "o1", "delivery"), ("Production", "o2", "delivery"), ("Sandbox", nil, nil), ("Production", "o3", "receipt"),
            (nil, nil, nil), ("Production", "o4", "delivery"), ("Xcode", "o5", nil), ("Sandbox", "o6", "receipt"), ("Sandbox", "o7", "receipt"),
        ]
        for (index, row) in rows.enumerated() {
            try database.cached("""
                INSERT INTO int_transactions_resolved (transaction_id, product_id, environment, order_id, match_rule)
                VALUES (?1, 'gems60', ?2, ?3, ?4)
                """).insert([.text("t\(index)"), row.environment.map(SQLValue.text) ?? .null, row.order.map(SQLValue.text) ?? .null,
                             row.rule.map(SQLValue.text) ?? .null])
        }
        let counts = try StoredSummaryCounts.counts(database: database, asOfMs: 0, graceMs: 0)
        #expect(counts.environments.map(\.name) == ["Production", "Sandbox", "Xcode", "unknown"])
        #expect(counts.environments.map(\.count) == [4, 3, 1, 1])
        #expect(counts.ordersByRule == ["delivery": 3, "receipt": 3])
    }

    @Test("summary.json lists the apps notifications name, V2 (of data or of the transaction) and V1 (bid), beside the receipts'")
    func notificationBundlesInSummary() throws {
        let scenario = try Scenario()
        let purchase = "2026-11-28T10:00:03Z"
        try scenario.write("receipts/r.jsonl", [
            #"{"received_at":"2026-11-28T10:00:05Z","user_id":"u1","transactions":[{"transactionId":"t1","bundleId":"com.example.game","productId":"gems60","purchaseDate":\#(Line.ms(purchase))}]}"#,
        ])
        try scenario.write("notifications/n.jsonl", [
            // The app of its data; then one whose data names none, its transaction's.
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n1","signedDate":\#(Line.ms("2026-11-28T10:00:06Z")),"data":{"bundleId":"com.example.watch","environment":"Production","transactionInfo":{"transactionId":"t2","bundleId":"com.example.watch","productId":"gems60","purchaseDate":\#(Line.ms(purchase))}}}"#,
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n2","signedDate":\#(Line.ms("2026-11-28T10:00:07Z")),"data":{"environment":"Production","transactionInfo":{"transactionId":"t3","bundleId":"com.example.mac","productId":"gems60","purchaseDate":\#(Line.ms(purchase))}}}"#,
            #"{"notification_type":"DID_RENEW","bid":"com.example.tv","unified_receipt":{"status":0,"environment":"Production","latest_receipt_info":[{"quantity":"1","product_id":"gems60","transaction_id":"t4","original_transaction_id":"t4","purchase_date_ms":"\#(Line.ms(purchase))"}]}}"#,
        ])
        _ = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        let summary = try scenario.output("summary.json")
        #expect(summary.contains(#""bundle_ids": [\#n    "com.example.game",\#n    "com.example.mac",\#n    "com.example.tv",\#n    "com.example.watch"\#n  ]"#))
    }

    @Test("summary.json lists the app of every transaction a line carries, where the line names another app too")
    func transactionBundlesApartFromTheirLine() throws {
        let scenario = try Scenario()
        let purchase = "2026-11-28T10:00:03Z"
        let transaction = { (id: String, bundle: String) in
            #"{"transactionId":"\#(id)","bundleId":"\#(bundle)","productId":"gems60","purchaseDate":\#(Line.ms(purchase))}"#
        }
        try scenario.write("receipts/r.jsonl", [
            // Two apps' V2 transactions in one line; the line is the first one's.
            #"{"received_at":"2026-11-28T10:00:05Z","user_id":"u1","transactions":[\#(transaction("t1", "com.example.game")),\#(transaction("t2", "com.example.watch"))]}"#,
            // A receipt of one app with a V2 transaction of another.
            #"{"received_at":"2026-11-28T10:00:06Z","user_id":"u2","response":{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[{"quantity":"1","product_id":"gems60","transaction_id":"t3","original_transaction_id":"t3","purchase_date_ms":"\#(Line.ms(purchase))"}]}},"transactions":[\#(transaction("t4", "com.example.mac"))]}"#,
            // Near miss: two transactions of the line's own app add none.
            #"{"received_at":"2026-11-28T10:00:07Z","user_id":"u3","transactions":[\#(transaction("t5", "com.example.game")),\#(transaction("t6", "com.example.game"))]}"#,
        ])
        try scenario.write("notifications/n.jsonl", [
            // A notification of one app carrying another's transaction.
            #"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"n1","signedDate":\#(Line.ms("2026-11-28T10:00:08Z")),"data":{"bundleId":"com.example.game","environment":"Production","transactionInfo":\#(transaction("t7", "com.example.tv"))}}"#,
        ])
        let result = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        let summary = try scenario.output("summary.json")
        #expect(summary.contains(#""bundle_ids": [\#n    "com.example.game",\#n    "com.example.mac",\#n    "com.example.tv",\#n    "com.example.watch"\#n  ]"#))
        #expect(result.report.bundleIDs == ["com.example.game", "com.example.mac", "com.example.tv", "com.example.watch"])
        // Each transaction is still reconciled: the line keeps all of them.
        #expect(try scenario.open().scalar("SELECT count(DISTINCT transaction_id) FROM raw_apple__transactions") == .integer(7))

        // A file written again keeps only the apps its lines name now.
        try scenario.write("receipts/r.jsonl", [
            #"{"received_at":"2026-11-28T10:00:07Z","user_id":"u3","transactions":[\#(transaction("t5", "com.example.game")),\#(transaction("t6", "com.example.game"))]}"#,
        ])
        _ = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(try scenario.output("summary.json").contains(#""bundle_ids": [\#n    "com.example.game",\#n    "com.example.tv"\#n  ]"#))
    }

    @Test("a product is missing from the catalog once, whether a transaction, a delivery or both name it; a catalogued one never")
    func productsMissingFromCatalog() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems.unknown"),
            Line.delivered("2026-11-28T10:00:09Z", "u2", "t2", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u3", "t3", "only.delivered"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems.unknown", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u4", transaction: Line.v2("t4", "only.sold", purchase: "2026-11-28T10:00:03Z")),
        ])
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        let counts = try StoredSummaryCounts.counts(database: scenario.open(), asOfMs: Line.ms("2026-11-30T00:00:00Z"), graceMs: 0)
        // gems.unknown (sold and delivered), only.sold, only.delivered; gems60 is in the catalog.
        #expect(counts.missingFromCatalog == 3)
    }

    @Test("a product differing from every catalogued id by a byte is missing, a catalogued one in many rows never; a NULL catalog id hides all, as NOT IN does")
    func productsMissingByTheirBytes() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // Near misses of gems60 and pro.monthly: a prefix, a longer id, another case, a trailing space.
        let products = ["gems6", "gems600", "GEMS60", "pro.monthly ", "gems60", "gems300", "gems60", "pro.monthly"]
        var deliveries: [String] = []
        var receipts: [String] = []
        for (index, product) in products.enumerated() {
            let (user, transaction) = ("u\(index)", "t\(index)")
            // Even transactions are delivered and sold, odd ones only sold: a product is found by either.
            if index.isMultiple(of: 2) { deliveries.append(Line.delivered("2026-11-28T10:00:09Z", user, transaction, product)) }
            receipts.append(Line.v2Receipt("2026-11-28T10:00:05Z", user, transaction: Line.v2(transaction, product, purchase: "2026-11-28T10:00:03Z")))
        }
        // A product only delivered, on many lines.
        for index in 0..<3 { deliveries.append(Line.delivered("2026-11-28T10:00:09Z", "d\(index)", "dt\(index)", "gems6000")) }
        try scenario.write("server/s.jsonl", deliveries)
        try scenario.write("receipts/r.jsonl", receipts)
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        let asOfMs = Line.ms("2026-11-30T00:00:00Z")
        // gems6, gems600, GEMS60, "pro.monthly " and gems6000; never gems60, gems300 or pro.monthly.
        #expect(try StoredSummaryCounts.counts(database: database, asOfMs: asOfMs, graceMs: 0).missingFromCatalog == 5)
        #expect(try database.scalar("""
            SELECT count(*) FROM (SELECT product_id FROM int_transactions_resolved UNION SELECT product_id FROM raw_server__deliveries)
            WHERE product_id NOT IN (SELECT product_id FROM raw_catalog__products)
            """) == .integer(5))

        // A catalog line without a product id (only a store written by hand holds one) makes
        // `NOT IN` NULL for every product: none is missing.
        try database.execute("""
            INSERT INTO raw_catalog__products (file_id, line, item, product_id) SELECT file_id, 99, 0, NULL FROM files WHERE path = 'catalog.csv'
            """)
        #expect(try StoredSummaryCounts.counts(database: database, asOfMs: asOfMs, graceMs: 0).missingFromCatalog == 0)
    }

    @Test("an order id two users logged is said on stderr and the page, with each user's first line; one user's copies of a line, or ids of their own, say nothing")
    func orderIDOfSeveralUsers() throws {
        let scenario = try Scenario()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-11T10:00:12Z", "dupord_a", orderID: "ORD-SAME",
                           transaction: Line.v2("3300000000000001", "gems", purchase: "2026-11-11T10:00:10Z")),
            Line.v2Receipt("2026-11-11T11:00:12Z", "dupord_b", orderID: "ORD-SAME",
                           transaction: Line.v2("3300000000000002", "gems", purchase: "2026-11-11T11:00:10Z")),
        ])
        var lines = [
            Line.order("2026-11-11T10:00:00Z", "ORD-SAME", "dupord_a", "gems"),
            // A log shipper's copy of the same user's line is the same order.
            Line.order("2026-11-11T10:00:00Z", "ORD-SAME", "dupord_a", "gems"),
            Line.delivered("2026-11-11T10:00:15Z", "dupord_a", "3300000000000001", "gems", orderID: "ORD-SAME"),
            Line.order("2026-11-12T10:30:00Z", "ORD-OWN", "dupord_b", "gems"),
        ]
        try scenario.write("server/s.jsonl", lines)
        // Near miss: each id is one user's.
        #expect(try scenario.run(asOf: "2026-11-30T00:00:00Z").report.warnings == [])
        lines += [
            Line.order("2026-11-11T11:00:00Z", "ORD-SAME", "dupord_b", "gems"),
            Line.delivered("2026-11-11T11:00:15Z", "dupord_b", "3300000000000002", "gems", orderID: "ORD-SAME"),
        ]
        try scenario.write("server/s.jsonl", lines)
        let warning = "order id ORD-SAME was logged by 2 users, dupord_a (server/s.jsonl:1) and dupord_b (server/s.jsonl:5): "
            + "the reconciliation takes the first line's order, and counts the others' nowhere (iaprecon history --order ORD-SAME)"
        let run = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(run.report.warnings == [warning])
        #expect(try scenario.output("report.html").contains(warning.replacingOccurrences(of: "'", with: "&#39;")))
        // The counts stay the contract's: one order per id, matched once.
        let summary = try scenario.output("summary.json")
        #expect(summary.contains("\"orders\": {\n    \"total\": 2,"))
        #expect(summary.contains("\"unmatched\": 1,"))
    }

    @Test("an order id's users are named in the order of their lines, five at most; ten ids at most, then how many more")
    func ordersOfSeveralUsersWarnings() {
        typealias Shared = SummaryCounts.OrderOfSeveralUsers
        let tail = ": the reconciliation takes the first line's order, and counts the others' nowhere"
        let three = Shared(orderID: "O1", users: [("b", "s.jsonl:9"), ("a", "s.jsonl:12"), ("c", "t.jsonl:1")])
        #expect(ReportStage.ordersOfSeveralUsersWarnings([three])
                == ["order id O1 was logged by 3 users, b (s.jsonl:9), a (s.jsonl:12) and c (t.jsonl:1)\(tail) (iaprecon history --order O1)"])
        let seven = Shared(orderID: "O7", users: (1...7).map { (userID: "u\($0)", source: "s.jsonl:\($0)") })
        #expect(ReportStage.ordersOfSeveralUsersWarnings([seven]) == [
            "order id O7 was logged by 7 users, u1 (s.jsonl:1), u2 (s.jsonl:2), u3 (s.jsonl:3), u4 (s.jsonl:4), u5 (s.jsonl:5) and 2 more"
            + "\(tail) (iaprecon history --order O7)",
        ])
        let twelve = (1...12).map { Shared(orderID: "O\($0)", users: [("a", "s.jsonl:\($0)"), ("b", "t.jsonl:\($0)")]) }
        let warnings = ReportStage.ordersOfSeveralUsersWarnings(twelve)
        #expect(warnings.count == 11)
        #expect(warnings.first?.hasPrefix("order id O1 was logged by 2 users, a (s.jsonl:1) and b (t.jsonl:1)") == true)
        #expect(warnings.last == "2 more order ids were logged by more than one user each (iaprecon history --order ID names an id's users)")
        #expect(ReportStage.ordersOfSeveralUsersWarnings(Array(twelve.prefix(11))).last
                == "1 more order id was logged by more than one user each (iaprecon history --order ID names an id's users)")
        // Near miss: ten ids are all named, with nothing after them; none says nothing.
        #expect(ReportStage.ordersOfSeveralUsersWarnings(Array(twelve.prefix(10))).count == 10)
        #expect(ReportStage.ordersOfSeveralUsersWarnings([]).isEmpty)
    }
}
