/// What `history` reads of the store for one lookup (`UserHistory`): what tells whose story a
/// lookup names, then the facts of it as values, each query reading one index with the keys
/// gathered so far, so a lookup stays fast on a store of millions of transactions. `UserHistory`
/// decides from them and words them as events.
struct HistoryLoader {
    /// Whether a join and a report have reconciled the store.
    static func isReconciled(_ database: Database) throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('fct_findings', 'fct_user_installs')") == .integer(2)
    }

    /// Whether any order, delivery, resolved transaction, registration or sighting a user sent names `user`.
    static func knows(user: String, in database: Database) throws -> Bool {
        try database.scalar("""
            SELECT 1 WHERE EXISTS (SELECT 1 FROM raw_server__orders WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_server__deliveries WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM int_transactions_resolved WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_registrations__users WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_apple__transactions WHERE user_id = ?1 AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL))
            """, [.text(user)]) != nil
    }

    /// Whoever the log delivered `transactionID` to first, if it delivered it.
    static func firstRecipient(of transactionID: String, in database: Database) throws -> String? {
        var earliest: (ms: Int64, user: String)?
        try StoredDeliveries.withDeliveries(of: transactionID, in: database) { deliveries in
            while deliveries.hasDelivery {
                let ms = deliveries.row.int(StoredDeliveries.Column.ms)
                if ms < earliest?.ms ?? .max { earliest = (ms, deliveries.row.string(StoredDeliveries.Column.userID)) }
                _ = try deliveries.advance()
            }
        }
        return earliest?.user
    }

    /// The user who created order `orderID` (its first line's), if the log has it.
    static func creator(of orderID: String, in database: Database) throws -> String? {
        var user: String?
        try ServerOrders.forEachFirst(in: database, where: "o.order_id = ?1", [.text(orderID)]) { user = $0.string(ServerOrders.Column.userID) }
        return user
    }

    /// The transactions of subscription chain `originalTransactionID`, by purchase time: every one
    /// a sighting names the chain of, and the one of its own id, those whose merge names it.
    static func transactions(ofChain originalTransactionID: String, in database: Database) throws -> [String] {
        try mergedTransactions(database, where: """
            a.transaction_id IN (
              SELECT transaction_id FROM raw_apple__transactions WHERE original_transaction_id = ?1 AND original_transaction_id != transaction_id)
            OR a.transaction_id = ?1
            """, [.text(originalTransactionID)]) { $0.originalTransactionID == originalTransactionID }
    }

    /// The transactions whose merge carries `appAccountToken`, by purchase time.
    static func transactions(withToken appAccountToken: String, in database: Database) throws -> [String] {
        try mergedTransactions(database, where: """
            a.transaction_id IN (
              SELECT transaction_id FROM raw_apple__transactions WHERE app_account_token = ?1 AND app_account_token IS NOT NULL)
            """, [.text(appAccountToken)]) { $0.appAccountToken == appAccountToken }
    }

    /// The ids of the transactions merged from the sightings `condition` selects (as `a`, whole
    /// transactions) that `include` keeps, by purchase time, then id.
    private static func mergedTransactions(_ database: Database, where condition: String, _ arguments: [SQLValue],
                                           including include: (AppleTransactions.Merged) -> Bool) throws -> [String] {
        var found: [(purchaseMs: Int64, id: String)] = []
        let sightings = try AppleTransactions.Cursor(database, where: condition, arguments)
        while let merged = try sightings.next() {
            if include(merged) { found.append((merged.purchaseMs, merged.transactionID)) }
        }
        return found.sorted { $0.purchaseMs != $1.purchaseMs ? $0.purchaseMs < $1.purchaseMs : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            .map(\.id)
    }

    /// A registration line of the user.
    struct Registration {
        var ms: Int64
        var method: String?
        var country: String?
        /// As stored: a pseudonym (blob) or, in a store written before pseudonyms, the whole id.
        var idfa: SQLValue
        var appsflyerID: SQLValue
        var source: String
    }

    /// The install the report joined the user to, and the key it joined by.
    struct Install {
        var ms: Int64
        var mediaSource: String?
        var campaign: String?
        var matchedBy: String
        var source: String?
    }

    /// An order (`ServerOrders`), and the transaction the join matched to it, if any.
    struct Order {
        var ms: Int64
        var orderID: String
        var productID: String
        var price: String?
        var currency: String?
        var source: String
        var match: (transactionID: String, rule: String)?
    }

    /// A transaction as the join resolved it, and where it was first seen.
    struct Transaction {
        var purchaseMs: Int64
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var unitPrice: String?
        var quantity: Int64
        var currency: String?
        var environment: String?
        var ownership: String?
        var expiresMs: Int64?
        var refundMs: Int64?
        var refundAmount: String?
        var refundType: String?
        var userID: String?
        var isRevenue: Bool
        var firstSighting: String?

        /// What it cost: the unit price times the quantity, when the price is known.
        var price: Amount? { unitPrice.flatMap(Amount.parse).map { $0 * quantity } }
    }

    /// A delivery (`ServerDeliveries`), with how many lines of the log it is.
    struct Delivery {
        var ms: Int64
        var transactionID: String
        var productID: String
        var quantity: Int64
        var userID: String
        var copies: Int
        var source: String
    }

    /// A revocation line of the server log.
    struct Revocation {
        var ms: Int64
        var transactionID: String
        var userID: String
        var source: String
    }

    /// A finding of the join.
    struct Finding {
        var eventMs: Int64
        var findingID: String
        var kind: String
        var severity: String
        var productID: String?
        var amount: String?
        var currency: String?
        var detail: String
    }

    let database: Database
    var transactionIDs: [String] = []

    init(database: Database) { self.database = database }

    /// The transaction ids as one JSON array parameter, read with `json_each` into an indexed `IN`.
    var idList: SQLValue { .text("[" + transactionIDs.map(JSONWriter.quote).joined(separator: ",") + "]") }

    /// The transactions the join resolved to `user`.
    func transactionIDs(resolvedTo user: String) throws -> [String] {
        var values: [String] = []
        try database.forEach("SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1", [.text(user)]) { values.append($0.string(0)) }
        return values
    }

    func registrations(of user: String) throws -> [Registration] {
        var registrations: [Registration] = []
        typealias Column = RegistrationColumn
        try database.forEach("SELECT \(Column.selectList) FROM raw_registrations__users r WHERE r.user_id = ?", [.text(user)]) { row in
            registrations.append(Registration(ms: row.int(Column.ms), method: row.optionalString(Column.method),
                                              country: row.optionalString(Column.country), idfa: row.value(Column.idfa.rawValue),
                                              appsflyerID: row.value(Column.appsflyerID.rawValue), source: row.string(Column.source)))
        }
        return registrations
    }

    /// What `registrations(of:)` selects of a sign-up (as `r`).
    private enum RegistrationColumn: Int, SelectedColumn {
        case ms, method, country, idfa, appsflyerID, source
        var sql: String {
            ["r.ts_ms", "r.method", "r.country", "r.idfa", "r.appsflyer_id", StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")][rawValue]
        }
    }

    /// The install the report joined `user` to (CONTRACT.md §1.5); none when it joined them to none.
    func installs(of user: String) throws -> [Install] {
        var installs: [Install] = []
        typealias Column = InstallColumn
        try database.forEach("""
            SELECT \(Column.selectList) FROM fct_user_installs i WHERE i.user_id = ? AND i.install_ms IS NOT NULL
            """, [.text(user)]) { row in
            installs.append(Install(ms: row.int(Column.ms), mediaSource: row.optionalString(Column.mediaSource),
                                    campaign: row.optionalString(Column.campaign), matchedBy: row.string(Column.matchedBy),
                                    source: row.optionalString(Column.source)))
        }
        return installs
    }

    /// What `installs(of:)` selects of a user's install (as `i`).
    private enum InstallColumn: Int, SelectedColumn {
        case ms, mediaSource, campaign, matchedBy, source
        var sql: String {
            ["i.install_ms", "i.media_source", "i.campaign", "i.matched_by", StoredLedger.pathAndLineSQL(file: "i.file_id", line: "i.line")][rawValue]
        }
    }

    /// The orders (`ServerOrders`) of the order lines `condition` selects, each once, and what the
    /// join matched each to; with `user`, only that user's orders.
    private func orders(where condition: String, _ arguments: [SQLValue], user: String? = nil) throws -> [Order] {
        typealias O = ServerOrders.Column
        var orders: [Order] = []
        var seen = Set<StoredText>()
        try ServerOrders.forEachFirst(in: database, where: condition, arguments) { row in
            guard user.map({ row.string(O.userID).utf8.elementsEqual($0.utf8) }) ?? true,
                  seen.insert(StoredText(row.string(O.orderID))).inserted else { return }
            orders.append(Order(ms: row.int(O.ms), orderID: row.string(O.orderID), productID: row.string(O.productID),
                                price: row.optionalString(O.price), currency: row.optionalString(O.currency),
                                source: row.string(O.path) + ":" + String(row.int(O.line))))
        }
        for index in orders.indices {
            // The match is kept on the transaction's row; an unmatched order is on none.
            try database.forEach("SELECT transaction_id, match_rule FROM int_transactions_resolved WHERE order_id = ?1",
                                 [.text(orders[index].orderID)]) { row in
                orders[index].match = (transactionID: row.string(0), rule: row.string(1))
            }
        }
        return orders
    }

    func orders(ofUser user: String) throws -> [Order] {
        try orders(where: "o.order_id IN (SELECT order_id FROM raw_server__orders WHERE user_id = ?1)", [.text(user)], user: user)
    }

    /// The orders the transactions matched.
    func matchedOrders() throws -> [Order] {
        try orders(where: """
            o.order_id IN (SELECT order_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
            """, [idList])
    }

    /// The transactions as the join resolved them, each with the line of its first sighting.
    func transactions() throws -> [Transaction] {
        var files = try StoredLedger.sourceFiles(database)
        var firstSighting: [String: String] = [:]
        let sightings = try AppleTransactions.Cursor(database, where: "a.transaction_id IN (SELECT value FROM json_each(?1))", [idList])
        while let merged = try sightings.next() {
            if let first = merged.sources.first { firstSighting[merged.transactionID] = files.text(files.line(file: first.file, first.line)) }
        }
        var transactions: [Transaction] = []
        typealias Column = TransactionColumn
        try database.forEach("""
            SELECT \(Column.selectList) FROM int_transactions_resolved t WHERE t.transaction_id IN (SELECT value FROM json_each(?1))
            """, [idList]) { row in
            let id = row.string(Column.transactionID)
            transactions.append(Transaction(
                purchaseMs: row.int(Column.purchaseMs), transactionID: id, originalTransactionID: row.string(Column.originalTransactionID),
                productID: row.string(Column.productID), unitPrice: row.optionalString(Column.unitPrice), quantity: row.int(Column.quantity),
                currency: row.optionalString(Column.currency), environment: row.optionalString(Column.environment),
                ownership: row.optionalString(Column.ownership), expiresMs: row.optionalInt(Column.expiresMs),
                refundMs: row.optionalInt(Column.refundMs), refundAmount: row.optionalString(Column.refundAmount),
                refundType: row.optionalString(Column.refundType), userID: row.optionalString(Column.userID),
                isRevenue: row.int(Column.isRevenue) == 1, firstSighting: firstSighting[id]))
        }
        return transactions
    }

    /// What `transactions()` selects of a resolved transaction (as `t`).
    private enum TransactionColumn: Int, SelectedColumn {
        case purchaseMs, transactionID, productID, unitPrice, quantity, currency, environment, ownership, originalTransactionID
        case refundMs, refundAmount, refundType, expiresMs, userID, isRevenue
        var sql: String {
            "t." + [
                "purchase_ms", "transaction_id", "product_id", "unit_price", "quantity", "currency", "environment", "ownership",
                "original_transaction_id", "refund_ms", "refund_amount", "refund_type", "expires_ms", "user_id", "is_revenue",
            ][rawValue]
        }
    }

    /// The deliveries (`ServerDeliveries`) of the delivery lines `condition` selects.
    private func deliveries(where condition: String, _ arguments: [SQLValue]) throws -> [Delivery] {
        typealias D = StoredDeliveries.Column
        var shown: [Delivery] = []
        let lines = try StoredDeliveries.Cursor(database, where: condition, arguments)
        while lines.hasDelivery {
            let row = lines.row
            var delivery = Delivery(
                ms: row.int(D.ms), transactionID: row.string(D.transactionID), productID: row.string(D.productID),
                quantity: row.int(D.quantity), userID: row.string(D.userID), copies: 0,
                source: row.string(D.path) + ":" + String(row.int(D.line)))
            delivery.copies = try lines.advance()
            shown.append(delivery)
        }
        return shown
    }

    /// The deliveries to `user`: of every transaction some line delivers to them, those whose first line does.
    func deliveries(to user: String) throws -> [Delivery] {
        try deliveries(where: "d.transaction_id IN (SELECT transaction_id FROM raw_server__deliveries WHERE user_id = ?1)", [.text(user)])
            .filter { $0.userID == user }
    }

    /// The deliveries of the transactions.
    func deliveries() throws -> [Delivery] {
        try deliveries(where: "d.transaction_id IN (SELECT value FROM json_each(?1))", [idList])
    }

    /// The revocation lines `condition` selects (on the lines as `r`).
    private func revocations(where condition: String, _ arguments: [SQLValue]) throws -> [Revocation] {
        var revocations: [Revocation] = []
        typealias Column = RevocationColumn
        try database.forEach("SELECT \(Column.selectList) FROM raw_server__revocations r WHERE \(condition)", arguments) { row in
            revocations.append(Revocation(ms: row.int(Column.ms), transactionID: row.string(Column.transactionID),
                                          userID: row.string(Column.userID), source: row.string(Column.source)))
        }
        return revocations
    }

    /// What `revocations(where:)` selects of a revocation line (as `r`).
    private enum RevocationColumn: Int, SelectedColumn {
        case ms, transactionID, userID, source
        var sql: String { ["r.ts_ms", "r.transaction_id", "r.user_id", StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")][rawValue] }
    }

    func revocations(ofUser user: String) throws -> [Revocation] {
        try revocations(where: "r.user_id = ?1", [.text(user)])
    }

    /// The revocations of the transactions.
    func revocations() throws -> [Revocation] {
        try revocations(where: "r.transaction_id IN (SELECT value FROM json_each(?1))", [idList])
    }

    /// Findings on the transactions, on their subscription chains, and (for a user) their own; each once.
    func findings(user: String?) throws -> [Finding] {
        var findings: [Finding] = []
        var seen = Set<String>()
        typealias Column = FindingColumn
        func add(_ row: Row) {
            guard seen.insert(row.string(Column.findingID)).inserted else { return }
            findings.append(Finding(eventMs: row.int(Column.eventMs), findingID: row.string(Column.findingID), kind: row.string(Column.kind),
                                    severity: row.string(Column.severity), productID: row.optionalString(Column.productID),
                                    amount: row.optionalString(Column.amount), currency: row.optionalString(Column.currency),
                                    detail: row.string(Column.detail)))
        }
        let columns = Column.selectList
        // `+transaction_id` keeps the planner on the chain index: chain findings have no transaction.
        try database.forEach("""
            SELECT \(columns) FROM fct_findings WHERE transaction_id IN (SELECT value FROM json_each(?1))
            UNION ALL
            SELECT \(columns) FROM fct_findings WHERE +transaction_id IS NULL AND original_transaction_id IN (
              SELECT original_transaction_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
            """, [idList]) { add($0) }
        if let user {
            try database.forEach("SELECT \(columns) FROM fct_findings WHERE user_id = ?1", [.text(user)]) { add($0) }
        }
        return findings
    }

    /// What `findings(user:)` selects of a finding.
    private enum FindingColumn: Int, SelectedColumn {
        case eventMs, findingID, kind, severity, productID, amount, currency, detail
        var sql: String { ["event_ms", "finding_id", "kind", "severity", "product_id", "amount", "currency", "detail"][rawValue] }
    }
}
