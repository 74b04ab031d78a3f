/// The facts of one closed scope, as the join reads them (`ScopeFactsReceiver`).
enum StoredScopeFacts {
    /// The keys `read` selects facts by: a scope's transactions and orders.
    static let keyKinds: Set<KeyKind> = [.transaction, .order]

    /// Hands `receiver` the stored facts of the scope in the connection's
    /// `temp.<prefix>_transactions` and `temp.<prefix>_orders` tables (`fill`), and the
    /// whole catalog, as they are read.
    /// - Throws: `UnknownStoredCode` for a sighting this build cannot read, or SQLite's error.
    static func read(_ database: Database, scope prefix: String, into facts: inout some ScopeFactsReceiver) throws {
        let (transactions, orders) = ("temp.\(prefix)_transactions", "temp.\(prefix)_orders")
        try database.forEach("""
            SELECT \(OrderColumn.selectList)
            FROM raw_server__orders o JOIN files f USING (file_id)
            WHERE o.order_id IN \(orders)
            ORDER BY o.order_id, f.path, o.line, o.item
            """) { row in
            typealias Column = OrderColumn
            facts.receive(order: OrderLine(ms: row.int(Column.ms), orderID: row.string(Column.orderID), userID: row.string(Column.userID),
                                           productID: row.string(Column.productID), price: row.optionalString(Column.price),
                                           currency: row.optionalString(Column.currency), storefront: row.optionalString(Column.storefront)),
                          at: StoredLine(file: row.int(Column.fileID), line: row.int(Column.line)))
        }
        try database.forEach("""
            SELECT \(DeliveryColumn.selectList)
            FROM raw_server__deliveries d JOIN files f USING (file_id)
            WHERE d.transaction_id IN \(transactions)
            ORDER BY d.transaction_id, f.path, d.line, d.item
            """) { row in
            typealias Column = DeliveryColumn
            facts.receive(delivery: DeliveryLine(ms: row.int(Column.ms), userID: row.string(Column.userID),
                                                 transactionID: row.string(Column.transactionID), productID: row.string(Column.productID),
                                                 orderID: row.optionalString(Column.orderID), quantity: row.int(Column.quantity),
                                                 deliveryID: row.optionalString(Column.deliveryID)),
                          at: StoredLine(file: row.int(Column.fileID), line: row.int(Column.line)))
        }
        try database.forEach("""
            SELECT \(RevocationColumn.selectList) FROM raw_server__revocations
            WHERE transaction_id IN \(transactions)
            """) { row in
            typealias Column = RevocationColumn
            facts.receive(revocation: RevocationLine(ms: row.int(Column.ms), userID: row.string(Column.userID),
                                                     transactionID: row.string(Column.transactionID), reason: row.optionalString(Column.reason)),
                          at: StoredLine(file: row.int(Column.fileID), line: row.int(Column.line)))
        }
        try database.forEach(StoredSightings.selection(where: "a.transaction_id IN \(transactions)")) { row in
            facts.receive(sighting: try AppleTransaction(row), at: StoredLine(row))
        }
        try database.forEach("""
            SELECT \(ClaimColumn.selectList) FROM raw_receipts__verifications
            WHERE \(ReceiptClaims.condition) AND transaction_id IN \(transactions)
            """) { row in
            typealias Column = ClaimColumn
            facts.receive(claim: .init(orderID: row.string(Column.orderID), transactionID: row.string(Column.transactionID),
                                       receivedMs: row.int(Column.receivedMs),
                                       source: StoredLine(file: row.int(Column.fileID), line: row.int(Column.line))))
        }
        // A product's last line in file order says what it is now.
        try database.forEach("""
            SELECT \(ProductColumn.selectList) FROM (
              SELECT c.*, row_number() OVER (PARTITION BY product_id ORDER BY f.path DESC, c.line DESC) AS n
              FROM raw_catalog__products c JOIN files f USING (file_id)
            ) WHERE n = 1
            """) { row in
            facts.receive(product: .init(productID: row.string(ProductColumn.productID), type: row.string(ProductColumn.type),
                                         subscriptionGroup: row.optionalString(ProductColumn.subscriptionGroup),
                                         price: row.optionalString(ProductColumn.price), currency: row.optionalString(ProductColumn.currency)))
        }
    }

    /// What `read` selects of an order line (the lines as `o`).
    private enum OrderColumn: Int, SelectedColumn {
        case ms, orderID, userID, productID, price, currency, storefront, fileID, line
        var sql: String {
            ["o.ts_ms", "o.order_id", "o.user_id", "o.product_id", "o.price", "o.currency", "o.storefront", "o.file_id", "o.line"][rawValue]
        }
    }

    /// What `read` selects of a delivery line (the lines as `d`).
    private enum DeliveryColumn: Int, SelectedColumn {
        case ms, userID, transactionID, productID, orderID, quantity, deliveryID, fileID, line
        var sql: String {
            ["d.ts_ms", "d.user_id", "d.transaction_id", "d.product_id", "d.order_id", "d.quantity_n", "d.delivery_id", "d.file_id",
             "d.line"][rawValue]
        }
    }

    /// What `read` selects of a revocation line.
    private enum RevocationColumn: Int, SelectedColumn {
        case ms, userID, transactionID, reason, fileID, line
        var sql: String { ["ts_ms", "user_id", "transaction_id", "reason", "file_id", "line"][rawValue] }
    }

    /// What `read` selects of a receipt claim.
    private enum ClaimColumn: Int, SelectedColumn {
        case orderID, transactionID, receivedMs, fileID, line
        var sql: String { ["order_id", "transaction_id", "received_ms", "file_id", "line"][rawValue] }
    }

    /// What `read` selects of a catalog product.
    private enum ProductColumn: Int, SelectedColumn {
        case productID, type, subscriptionGroup, price, currency
        var sql: String { ["product_id", "type", "subscription_group", "price", "currency"][rawValue] }
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
