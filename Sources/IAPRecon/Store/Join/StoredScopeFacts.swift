/// The facts of one closed scope, as the join reads them (`ScopeFactsReceiver`).
enum StoredScopeFacts {
    /// The keys `read` selects facts by: a scope's transactions and orders.
    static let keyKinds: Set<ChangedKeys.Kind> = [.transaction, .order]

    /// Hands `receiver` the stored facts of the scope in the connection's
    /// `temp.<prefix>_transactions` and `temp.<prefix>_orders` tables (`fill`), and the
    /// whole catalog, as they are read.
    /// - Throws: `UnknownStoredCode` for a sighting this build cannot read, or SQLite's error.
    static func read(_ database: Database, scope prefix: String, into facts: inout some ScopeFactsReceiver) throws {
        let (transactions, orders) = ("temp.\(prefix)_transactions", "temp.\(prefix)_orders")
        try database.forEach("""
            SELECT o.ts_ms, o.order_id, o.user_id, o.product_id, o.price, o.currency, o.storefront, o.file_id, o.line
            FROM raw_server__orders o JOIN files f USING (file_id)
            WHERE o.order_id IN \(orders)
            ORDER BY o.order_id, f.path, o.line, o.item
            """) { row in
            facts.receive(order: OrderLine(ms: row.int(0), orderID: row.string(1), userID: row.string(2), productID: row.string(3),
                                           price: row.optionalString(4), currency: row.optionalString(5), storefront: row.optionalString(6)),
                          at: StoredLine(row, at: 7))
        }
        try database.forEach("""
            SELECT d.ts_ms, d.user_id, d.transaction_id, d.product_id, d.order_id, d.quantity_n, d.delivery_id, d.file_id, d.line
            FROM raw_server__deliveries d JOIN files f USING (file_id)
            WHERE d.transaction_id IN \(transactions)
            ORDER BY d.transaction_id, f.path, d.line, d.item
            """) { row in
            facts.receive(delivery: DeliveryLine(ms: row.int(0), userID: row.string(1), transactionID: row.string(2),
                                                 productID: row.string(3), orderID: row.optionalString(4), quantity: row.int(5),
                                                 deliveryID: row.optionalString(6)),
                          at: StoredLine(row, at: 7))
        }
        try database.forEach("""
            SELECT ts_ms, user_id, transaction_id, reason, file_id, line FROM raw_server__revocations
            WHERE transaction_id IN \(transactions)
            """) { row in
            facts.receive(revocation: RevocationLine(ms: row.int(0), userID: row.string(1), transactionID: row.string(2),
                                                     reason: row.optionalString(3)),
                          at: StoredLine(row, at: 4))
        }
        try database.forEach(StoredSightings.selection(where: "a.transaction_id IN \(transactions)")) { row in
            facts.receive(sighting: try AppleTransaction(row), at: StoredLine(row))
        }
        try database.forEach("""
            SELECT order_id, transaction_id, received_ms, file_id, line FROM raw_receipts__verifications
            WHERE \(ReceiptClaims.condition) AND transaction_id IN \(transactions)
            """) { row in
            facts.receive(claim: .init(orderID: row.string(0), transactionID: row.string(1), receivedMs: row.int(2),
                                       source: StoredLine(row, at: 3)))
        }
        // A product's last line in file order says what it is now.
        try database.forEach("""
            SELECT product_id, type, subscription_group, price, currency FROM (
              SELECT c.*, row_number() OVER (PARTITION BY product_id ORDER BY f.path DESC, c.line DESC) AS n
              FROM raw_catalog__products c JOIN files f USING (file_id)
            ) WHERE n = 1
            """) { row in
            facts.receive(product: .init(productID: row.string(0), type: row.string(1), subscriptionGroup: row.optionalString(2),
                                         price: row.optionalString(3), currency: row.optionalString(4)))
        }
    }

    /// Writes `scope` into the temp tables `<prefix>_transactions`, `_orders`, `_users`, `_chains`.
    static func fill(_ scope: JoinScope, prefix: String, in database: Database) throws {
        // One savepoint, not a commit of the temp database per key (inside a transaction or not).
        try database.execute("SAVEPOINT fill_scope")
        defer { try? database.execute("RELEASE fill_scope") }
        for (name, keys) in [("transactions", scope.transactions), ("orders", scope.orders), ("users", scope.users), ("chains", scope.chains)] {
            let table = "temp.\(prefix)_\(name)"
            // Emptied, not dropped: the tables are made once per connection.
            try database.execute("""
                CREATE TEMP TABLE IF NOT EXISTS \(prefix)_\(name) (key TEXT PRIMARY KEY) WITHOUT ROWID;
                DELETE FROM \(table);
                """)
            let insert = try database.cached("INSERT INTO \(table) VALUES (?)")
            for key in keys { try insert.insert([.text(key.text)]) }
        }
    }
}
