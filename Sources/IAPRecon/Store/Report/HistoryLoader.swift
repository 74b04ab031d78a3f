/// What `history` reads of the store for one lookup (`UserHistory`): whose story it is, then the
/// events of it, each query reading one index with the keys gathered so far, so a lookup stays
/// fast on a store of millions of transactions.
struct HistoryLoader {
    /// Whose story a lookup tells: a user's whole story, or only some transactions'.
    enum Scope {
        case user(String)
        case transactions([String])
    }

    /// Whether a join and a report have reconciled the store.
    static func isReconciled(_ database: Database) throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('fct_findings', 'fct_user_installs')") == .integer(2)
    }

    /// The scope, user and subject a lookup names, or NotFound.
    static func resolve(_ database: Database, _ lookup: UserHistory.Lookup) throws -> (Scope, String, String) {
        switch lookup {
        case .user(let id):
            let known = try database.scalar("""
                SELECT 1 WHERE EXISTS (SELECT 1 FROM raw_server__orders WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_server__deliveries WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM int_transactions_resolved WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_registrations__users WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_apple__transactions WHERE user_id = ?1 AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL))
                """, [.text(id)])
            if known == nil { throw UserHistory.NotFound(what: "user '\(id)'") }
            return (.user(id), id, "user \(id)")
        case .transaction(let id):
            var user: String?
            var known = false
            try database.forEach("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?", [.text(id)]) {
                known = true
                user = $0.optionalString(0)
            }
            if user == nil {
                // Whoever the log delivered it to first.
                var earliest: (ms: Int64, user: String)?
                try StoredDeliveries.withDeliveries(of: id, in: database) { deliveries in
                    while deliveries.hasDelivery {
                        let ms = deliveries.row.int(StoredDeliveries.Column.ms)
                        if ms < earliest?.ms ?? .max { earliest = (ms, deliveries.row.string(StoredDeliveries.Column.userID)) }
                        _ = try deliveries.advance()
                    }
                }
                user = earliest?.user
            }
            guard known || user != nil else { throw UserHistory.NotFound(what: "transaction '\(id)'") }
            return (.transactions([id]), user ?? "", "transaction \(id)")
        case .order(let id):
            var user: String?
            try ServerOrders.forEachFirst(in: database, where: "o.order_id = ?1", [.text(id)]) { user = $0.string(ServerOrders.Column.userID) }
            guard let user else { throw UserHistory.NotFound(what: "order '\(id)'") }
            return (.user(user), user, "user \(user)")
        case .originalTransaction(let id):
            // Every transaction a sighting names the chain of, and the one of its own id: those whose merge names it.
            let ids = try mergedTransactions(database, where: """
                a.transaction_id IN (
                  SELECT transaction_id FROM raw_apple__transactions WHERE original_transaction_id = ?1 AND original_transaction_id != transaction_id)
                OR a.transaction_id = ?1
                """, [.text(id)]) { $0.originalTransactionID == id }
            guard let firstID = ids.first else { throw UserHistory.NotFound(what: "subscription chain '\(id)'") }
            let user = try StoredReportRows.resolvedUser(of: firstID, in: database) ?? ""
            return (.transactions(ids), user, "subscription chain \(id)")
        case .appAccountToken(let token):
            let ids = try mergedTransactions(database, where: """
                a.transaction_id IN (
                  SELECT transaction_id FROM raw_apple__transactions WHERE app_account_token = ?1 AND app_account_token IS NOT NULL)
                """, [.text(token)]) { $0.appAccountToken == token }
            guard !ids.isEmpty else { throw UserHistory.NotFound(what: "app account token '\(token)'") }
            for id in ids {
                if let user = try StoredReportRows.resolvedUser(of: id, in: database) {
                    return (.user(user), user, "user \(user)")
                }
            }
            return (.transactions(ids), "", "app account token \(token)")
        }
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

    /// A verified transaction of the history, for the header's totals and subscriptions.
    struct Purchase {
        var ms: Int64
        var originalID: String
        var product: String
        var buyer: String?
        var isRevenue: Bool
        var currency: String
        var gross: Amount
        var refund: Amount
        var isRefunded: Bool
        var expiresMs: Int64?
        var environment: String
    }

    let database: Database
    var transactionIDs: [String] = []
    var events: [UserHistory.Event] = []
    var purchases: [Purchase] = []
    var findings: [UserHistory.OpenFinding] = []
    /// Orders already shown, so a matched order is listed once.
    var orderIDs = Set<StoredText>()

    init(database: Database) { self.database = database }

    /// The transaction ids as one JSON array parameter, read with `json_each` into an indexed `IN`.
    var idList: SQLValue { .text("[" + transactionIDs.map(JSONWriter.quote).joined(separator: ",") + "]") }

    /// The transactions the join resolved to `user`.
    func transactionIDs(resolvedTo user: String) throws -> [String] {
        var values: [String] = []
        try database.forEach("SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1", [.text(user)]) { values.append($0.string(0)) }
        return values
    }

    mutating func add(_ ms: Int64, _ event: String, id: String = "", product: String = "", amount: String? = nil, currency: String? = nil,
                      detail: String, source: String = "") {
        events.append(UserHistory.Event(ms: ms, event: event, id: id, product: product, amount: amount ?? "", currency: amount == nil ? "" : currency ?? "",
                            detail: detail, source: source))
    }

    mutating func signUp(_ user: String) throws {
        try database.forEach("""
            SELECT r.ts_ms, r.method, r.country, r.idfa, r.appsflyer_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line"))
            FROM raw_registrations__users r WHERE r.user_id = ?
            """, [.text(user)]) { row in
            var parts = ["method " + (row.optionalString(1) ?? "?")]
            if let country = row.optionalString(2) { parts.append("country " + country) }
            if let idfa = UserHistory.mask(row.value(3)) { parts.append("idfa " + idfa) }
            if let appsflyer = UserHistory.mask(row.value(4)) { parts.append("appsflyer " + appsflyer) }
            add(row.int(0), "registered", id: user, detail: parts.joined(separator: ", "), source: row.string(5))
        }
        // The install the report joined this user to (CONTRACT.md §1.5), with the key it was joined by.
        try database.forEach("""
            SELECT i.install_ms, i.media_source, i.campaign, i.matched_by, \(StoredLedger.pathAndLineSQL(file: "i.file_id", line: "i.line"))
            FROM fct_user_installs i WHERE i.user_id = ? AND i.install_ms IS NOT NULL
            """, [.text(user)]) { row in
            var detail = "media source \(row.optionalString(1) ?? "organic")"
            if let campaign = row.optionalString(2), !campaign.isEmpty { detail += ", campaign \(campaign)" }
            detail += ", joined by \(row.string(3))"
            add(row.int(0), "install", detail: detail, source: row.optionalString(4) ?? "")
        }
    }

    /// The orders (`ServerOrders`) of the order lines `condition` selects, and for each what the join matched it to;
    /// with `user`, only that user's orders.
    private mutating func orders(where condition: String, _ arguments: [SQLValue], user: String? = nil) throws {
        typealias O = ServerOrders.Column
        var orders: [(ms: Int64, id: String, product: String, price: String?, currency: String?, source: String)] = []
        try ServerOrders.forEachFirst(in: database, where: condition, arguments) { row in
            guard user.map({ row.string(O.userID).utf8.elementsEqual($0.utf8) }) ?? true,
                  !orderIDs.contains(StoredText(row.string(O.orderID))) else { return }
            orders.append((row.int(O.ms), row.string(O.orderID), row.string(O.productID), row.optionalString(O.price),
                           row.optionalString(O.currency), row.string(O.path) + ":" + String(row.int(O.line))))
        }
        for order in orders where orderIDs.insert(StoredText(order.id)).inserted {
            var matched = "no transaction matched"
            // The match is kept on the transaction's row; an unmatched order is on none.
            try database.forEach("SELECT transaction_id, match_rule FROM int_transactions_resolved WHERE order_id = ?1", [.text(order.id)]) { row in
                matched = "matched to \(row.string(0)) by \(row.string(1))"
            }
            add(order.ms, "order", id: order.id, product: order.product, amount: order.price, currency: order.currency, detail: matched,
                source: order.source)
        }
    }

    mutating func orders(ofUser user: String) throws {
        try orders(where: "o.order_id IN (SELECT order_id FROM raw_server__orders WHERE user_id = ?1)", [.text(user)], user: user)
    }

    /// The orders the transactions matched.
    mutating func matchedOrders() throws {
        try orders(where: """
            o.order_id IN (SELECT order_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
            """, [idList])
    }

    mutating func transactions(buyer: String, isUser: Bool) throws {
        // Where each transaction was first seen, from its merged sightings.
        var files = try StoredLedger.sourceFiles(database)
        var firstSighting: [String: String] = [:]
        let sightings = try AppleTransactions.Cursor(database, where: "a.transaction_id IN (SELECT value FROM json_each(?1))", [idList])
        while let merged = try sightings.next() {
            if let first = merged.sources.first { firstSighting[merged.transactionID] = files.text(files.line(file: first.file, first.line)) }
        }
        try database.forEach("""
            SELECT t.purchase_ms, t.transaction_id, t.product_id, t.unit_price, t.quantity, t.currency, t.environment, t.ownership,
                   t.original_transaction_id, t.refund_ms, t.refund_amount, t.refund_type, t.expires_ms,
                   NULL, t.user_id, t.is_revenue
            FROM int_transactions_resolved t
            WHERE t.transaction_id IN (SELECT value FROM json_each(?1))
            """, [idList]) { row in
            let id = row.string(1)
            var parts = [row.optionalString(6) ?? "unknown environment"]
            if row.string(8) != id { parts.append("renews \(row.string(8))") }
            if let expires = row.optionalInt(12) { parts.append("expires \(Timestamp.iso8601(expires))") }
            if row.optionalString(7) == "FAMILY_SHARED" { parts.append("family shared") }
            if isUser, let owner = row.optionalString(14), owner != buyer { parts.append("bought by \(owner)") }
            let price = row.optionalString(3).flatMap(Amount.parse).map { $0 * row.int(4) }
            add(row.int(0), "apple purchase", id: id, product: row.string(2), amount: price.map(Money.format), currency: row.optionalString(5),
                detail: parts.joined(separator: ", "), source: firstSighting[id] ?? "")
            if let refundMs = row.optionalInt(9) {
                add(refundMs, "refund", id: id, product: row.string(2), amount: row.optionalString(10), currency: row.optionalString(5),
                    detail: row.optionalString(11) ?? "refund")
            }
            purchases.append(Purchase(
                ms: row.int(0), originalID: row.string(8), product: row.string(2), buyer: row.optionalString(14), isRevenue: row.int(15) == 1,
                currency: row.optionalString(5) ?? "", gross: price ?? .zero, refund: row.isNull(9) ? .zero : row.optionalString(10).flatMap(Amount.parse) ?? .zero,
                isRefunded: !row.isNull(9), expiresMs: row.optionalInt(12), environment: row.optionalString(6) ?? "unknown"))
        }
    }

    /// A delivery as the history shows it.
    struct ShownDelivery {
        var ms: Int64
        var transactionID: String
        var productID: String
        var quantity: Int64
        var userID: String
        var copies: Int
        var source: String
    }

    /// The deliveries (`ServerDeliveries`) of the delivery lines `condition` selects.
    func deliveries(where condition: String, _ arguments: [SQLValue]) throws -> [ShownDelivery] {
        typealias D = StoredDeliveries.Column
        var shown: [ShownDelivery] = []
        let lines = try StoredDeliveries.Cursor(database, where: condition, arguments)
        while lines.hasDelivery {
            let row = lines.row
            var delivery = ShownDelivery(
                ms: row.int(D.ms), transactionID: row.string(D.transactionID), productID: row.string(D.productID),
                quantity: row.int(D.quantity), userID: row.string(D.userID), copies: 0,
                source: row.string(D.path) + ":" + String(row.int(D.line)))
            delivery.copies = try lines.advance()
            shown.append(delivery)
        }
        return shown
    }

    /// The deliveries to `user`: of every transaction some line delivers to them, those whose first line does.
    func deliveries(to user: String) throws -> [ShownDelivery] {
        try deliveries(where: "d.transaction_id IN (SELECT transaction_id FROM raw_server__deliveries WHERE user_id = ?1)", [.text(user)])
            .filter { $0.userID == user }
    }

    /// Deliveries of the transactions (for a user, they include every transaction delivered to
    /// them, Apple's or not).
    mutating func deliveries() throws {
        for delivery in try deliveries(where: "d.transaction_id IN (SELECT value FROM json_each(?1))", [idList]) {
            var parts = ["to \(delivery.userID)"]
            if delivery.quantity != 1 { parts.append("quantity \(delivery.quantity)") }
            if delivery.copies > 1 { parts.append("\(delivery.copies) copies in the log") }
            add(delivery.ms, "delivered", id: delivery.transactionID, product: delivery.productID, detail: parts.joined(separator: ", "),
                source: delivery.source)
        }
    }

    mutating func revocations(ofUser user: String) throws {
        try database.forEach("""
            SELECT r.ts_ms, r.transaction_id, r.user_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")) FROM raw_server__revocations r
            WHERE r.user_id = ?
            """, [.text(user)]) { add($0.int(0), "revoked", id: $0.string(1), detail: "from \($0.string(2))", source: $0.string(3)) }
    }

    mutating func revocations(ofTransactions: Void) throws {
        try database.forEach("""
            SELECT r.ts_ms, r.transaction_id, r.user_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")) FROM raw_server__revocations r
            WHERE r.transaction_id IN (SELECT value FROM json_each(?1))
            """, [idList]) { add($0.int(0), "revoked", id: $0.string(1), detail: "from \($0.string(2))", source: $0.string(3)) }
    }

    /// Findings on the transactions, on their subscription chains, and (for a user) their own.
    mutating func findings(user: String?) throws {
        var seen = Set<String>()
        func add(_ row: Row) {
            guard seen.insert(row.string(1)).inserted else { return }
            findings.append(UserHistory.OpenFinding(findingID: row.string(1), kind: row.string(2), severity: row.string(3)))
            self.add(row.int(0), "FINDING \(row.string(2))", id: row.string(1), product: row.optionalString(4) ?? "",
                     amount: row.optionalString(5), currency: row.optionalString(6), detail: "\(row.string(3)): \(row.string(7))")
        }
        let columns = "event_ms, finding_id, kind, severity, product_id, amount, currency, detail"
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
    }
}
