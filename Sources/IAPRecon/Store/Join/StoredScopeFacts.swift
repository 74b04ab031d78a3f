/// The facts of one closed scope, as the join reads them (`ScopeFactsReceiver`).
enum StoredScopeFacts {
    /// The keys `read` selects facts by: a scope's transactions and orders.
    static let keyKinds: Set<KeyKind> = [.transaction, .order]

    /// Hands `receiver` the stored facts of the scope in the connection's
    /// `temp.<prefix>_transactions` and `temp.<prefix>_orders` tables (`fill`), table by table
    /// (`FactTable`), and the whole catalog, as they are read.
    /// - Throws: `UnknownStoredCode` for a sighting this build cannot read, or SQLite's error.
    static func read(_ database: Database, scope prefix: String, into facts: inout some ScopeFactsReceiver) throws {
        for table in FactTable.allCases { try read(table, database, scope: prefix, into: &facts) }
        try readCatalog(database, into: &facts)
    }

    /// Hands `receiver` the stored facts of one table of the scope in `temp.<prefix>_*` (`read`).
    static func read(_ table: FactTable, _ database: Database, scope prefix: String, into facts: inout some ScopeFactsReceiver) throws {
        try database.forEach(table.selection(keysIn: "temp.\(prefix)_" + (table.isKeyedByOrder ? "orders" : "transactions"))) { row in
            try table.hand(row, to: &facts)
        }
    }

    /// Hands `receiver` the whole catalog: each product as its last line in file order says.
    static func readCatalog(_ database: Database, into facts: inout some ScopeFactsReceiver) throws {
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

    /// The tables a scope's facts come from, in the order a receiver is handed them: each
    /// selected by its key (an order's id, or a transaction's), a key's rows together in file
    /// order: files in path order where the file is joined (`isOrderedByPath`), by file id
    /// where the key's index alone orders them; then line and item.
    enum FactTable: Int, CaseIterable, Sendable {
        case orders, deliveries, revocations, sightings, claims

        /// The rows of the keys in table `keys` (nil: every row of the table, in the table's
        /// order), their columns as `hand` reads them, then the row's item.
        func selection(keysIn keys: String?) -> String {
            let (source, columns) = sourceAndColumns
            var conditions = self == .claims ? [ReceiptClaims.condition] : []
            guard let keys else { return "SELECT \(columns), \(alias)item FROM \(source) WHERE " + (conditions.first ?? "1") }
            conditions.append("\(keySQL) IN \(keys)")
            guard isOrderedByPath else { return "SELECT \(columns), item FROM \(source) WHERE \(conditions.joined(separator: " AND "))" }
            return """
                SELECT \(columns), \(alias)item FROM \(source) JOIN files f USING (file_id)
                WHERE \(conditions.joined(separator: " AND "))
                ORDER BY \(keySQL), f.path, \(alias)line, \(alias)item
                """
        }

        /// The rows of the keys in table `keys`, in no particular order, their columns as
        /// `selection` has them and then the columns `adding` names: what `hand(routed:)` takes,
        /// read beside something else (`StoredLinks.reach`). The file of a row is not joined:
        /// `hand(routed:)` leaves out the rows `selection`'s join would.
        func unorderedSelection(keysIn keys: String, adding extra: String) -> String {
            let (source, columns) = sourceAndColumns
            let conditions = (self == .claims ? [ReceiptClaims.condition] : []) + ["\(keySQL) IN \(keys)"]
            return "SELECT \(columns), \(alias)item, \(extra) FROM \(source) WHERE \(conditions.joined(separator: " AND "))"
        }

        /// The table (with its alias) and the columns `hand` reads, the item apart.
        private var sourceAndColumns: (source: String, columns: String) {
            switch self {
            case .orders: ("raw_server__orders o", OrderColumn.selectList)
            case .deliveries: ("raw_server__deliveries d", DeliveryColumn.selectList)
            case .revocations: ("raw_server__revocations", RevocationColumn.selectList)
            case .sightings: ("raw_apple__transactions a", StoredSightings.Column.selectList)
            case .claims: ("raw_receipts__verifications", ClaimColumn.selectList)
            }
        }

        /// Whether `read` orders a key's rows by their file's path (it joins `files`), or by file id.
        var isOrderedByPath: Bool { self == .orders || self == .deliveries || self == .sightings }

        /// How many columns `selection` selects, the item last.
        var columns: Int { item + 1 }

        /// Where `selection` has the row's key, file id, line and item.
        var key: Int { positions.key }
        var file: Int { positions.file }
        var line: Int { positions.line }
        var item: Int { positions.item }

        private var positions: (key: Int, file: Int, line: Int, item: Int) {
            switch self {
            case .orders: (OrderColumn.orderID.rawValue, OrderColumn.fileID.rawValue, OrderColumn.line.rawValue, OrderColumn.allCases.count)
            case .deliveries:
                (DeliveryColumn.transactionID.rawValue, DeliveryColumn.fileID.rawValue, DeliveryColumn.line.rawValue,
                 DeliveryColumn.allCases.count)
            case .revocations:
                (RevocationColumn.transactionID.rawValue, RevocationColumn.fileID.rawValue, RevocationColumn.line.rawValue,
                 RevocationColumn.allCases.count)
            case .sightings:
                (StoredSightings.Column.transactionID.rawValue, StoredSightings.Column.fileID.rawValue, StoredSightings.Column.line.rawValue,
                 StoredSightings.Column.allCases.count)
            case .claims: (ClaimColumn.transactionID.rawValue, ClaimColumn.fileID.rawValue, ClaimColumn.line.rawValue, ClaimColumn.allCases.count)
            }
        }

        /// Whether the key is an order's id (else a transaction's).
        var isKeyedByOrder: Bool { self == .orders }

        private var alias: String {
            switch self {
            case .orders: "o."
            case .deliveries: "d."
            case .sightings: "a."
            case .revocations, .claims: ""
            }
        }

        private var keySQL: String { alias + (isKeyedByOrder ? "order_id" : "transaction_id") }

        /// Hands `receiver` the fact in `row`, a row of `selection`.
        /// - Throws: `UnknownStoredCode` for a sighting this build cannot read.
        ///
        /// Inlined where it is called: the receiver is known there only as a type the join passes
        /// at run time, and a call with one type unknown is not specialized for the other; inlined,
        /// the row is read as its own type, not through the protocol for each column.
        @inline(__always)
        func hand(_ row: some StoredRow, to facts: inout some ScopeFactsReceiver) throws {
            let at = StoredLine(file: row.int(file), line: row.int(line))
            switch self {
            case .orders:
                typealias Column = OrderColumn
                facts.receive(order: OrderLine(ms: row.int(Column.ms), orderID: row.string(Column.orderID), userID: row.string(Column.userID),
                                               productID: row.string(Column.productID), price: row.optionalString(Column.price),
                                               currency: row.optionalString(Column.currency), storefront: row.optionalString(Column.storefront)),
                              at: at)
            case .deliveries:
                typealias Column = DeliveryColumn
                facts.receive(delivery: DeliveryLine(ms: row.int(Column.ms), userID: row.string(Column.userID),
                                                     transactionID: row.string(Column.transactionID), productID: row.string(Column.productID),
                                                     orderID: row.optionalString(Column.orderID), quantity: row.int(Column.quantity),
                                                     deliveryID: row.optionalString(Column.deliveryID)),
                              at: at)
            case .revocations:
                typealias Column = RevocationColumn
                facts.receive(revocation: RevocationLine(ms: row.int(Column.ms), userID: row.string(Column.userID),
                                                         transactionID: row.string(Column.transactionID), reason: row.optionalString(Column.reason)),
                              at: at)
            case .sightings:
                facts.receive(sighting: try AppleTransaction(row), at: at)
            case .claims:
                typealias Column = ClaimColumn
                facts.receive(claim: .init(orderID: row.string(Column.orderID), transactionID: row.string(Column.transactionID),
                                           receivedMs: row.int(Column.receivedMs), source: at))
            }
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
        for kind in [KeyKind.transaction, .order, .user, .chain] { try fill(scope, kind, prefix: prefix, in: database) }
    }

    /// Writes the keys of `scope` of one kind into the temp table `<prefix>_transactions` (`_orders`,
    /// `_users` or `_chains`).
    static func fill(_ scope: JoinScope, _ kind: KeyKind, prefix: String, in database: Database) throws {
        guard let name = tableNames[kind] else { return }
        // One savepoint, not a commit of the temp database per key (inside a transaction or not).
        try database.execute("SAVEPOINT fill_scope")
        defer { try? database.execute("RELEASE fill_scope") }
        let table = "temp.\(prefix)_\(name)"
        // Emptied, not dropped: the tables are made once per connection.
        try database.execute("""
            CREATE TEMP TABLE IF NOT EXISTS \(prefix)_\(name) (key TEXT PRIMARY KEY) WITHOUT ROWID;
            DELETE FROM \(table);
            """)
        let insert = try database.cached("INSERT INTO \(table) VALUES (?)")
        for key in scope.keys(kind) { try insert.insert([.text(key.text)]) }
    }

    /// The temp table's name past its prefix, for each kind of key a scope holds.
    private static let tableNames: [KeyKind: String] = [.transaction: "transactions", .order: "orders", .user: "users", .chain: "chains"]
}
