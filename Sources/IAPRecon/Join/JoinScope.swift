/// The part of the store an incremental join recomputes: every transaction, order, user and
/// subscription chain whose outcome the changed keys can reach.
///
/// Matching and findings only ever compare things linked to each other: an order and the
/// transactions a delivery line, a receipt line or an `appAccountToken` names with it; a
/// transaction and the orders of the users who sent it or received it (the heuristic rule); a
/// chain and every renewal in it; a user and every chain delivered to them (multi-Apple-ID).
/// The scope is the closure of the changed keys under those links, taken both in the stored rows
/// as they are now (orders, deliveries and claims as raw lines, whose copies link no less than
/// their first lines) and in the previous join's decisions (an order it matched, a user it
/// resolved), so a link that new data breaks is revisited too. Inside a closed scope the rules
/// see exactly what a full rebuild shows them, in the same order, so they decide the same.
struct JoinScope {
    // Keys compare by their bytes, as the store's do: a scope holding one spelling of an accented
    // id and not the other would read the rows of only one.
    var transactions: Set<StoredText> = []
    var orders: Set<StoredText> = []
    var users: Set<StoredText> = []
    var chains: Set<StoredText> = []

    var isEmpty: Bool { transactions.isEmpty && orders.isEmpty && users.isEmpty && chains.isEmpty }

    /// Adds every key of `other`, kind by kind.
    mutating func formUnion(_ other: JoinScope) {
        transactions.formUnion(other.transactions)
        orders.formUnion(other.orders)
        users.formUnion(other.users)
        chains.formUnion(other.chains)
    }

    mutating func insert(_ key: String, as kind: ChangedKeys.Kind) {
        switch kind {
        case .transaction: transactions.insert(StoredText(key))
        case .order: orders.insert(StoredText(key))
        case .user: users.insert(StoredText(key))
        case .chain: chains.insert(StoredText(key))
        case .all, .mmpFile, .registration, .salesDay: break
        }
    }

    /// A condition on a transaction id column: the scope's rows (the scope is in `temp.join_transactions`).
    static func transactions(_ column: String) -> String { "\(column) IN temp.join_transactions" }

    /// A condition on an order id column: the scope's rows.
    static func orders(_ column: String) -> String { "\(column) IN temp.join_orders" }

    /// The closure of `seeds`, or nil when it would reach more than `limit` transactions
    /// (a full rebuild is then the cheaper way to the same answer), with the links between its
    /// keys (`JoinComponents`): the rows the closure reads from each key's side are exactly the
    /// link rows of the scope, each read once, in the round its key joined the scope.
    ///
    /// Each round follows the links of the new keys: those from transactions and chains on this
    /// connection, those from orders and users at the same time on a reader's own connection
    /// (what they read was committed before this transaction began, which has written nothing yet).
    static func closure(of seeds: JoinScope, in database: Database, limit: Int) throws -> (scope: JoinScope, links: [JoinComponents.LinkRows])? {
        var scope = JoinScope()
        var links: [JoinComponents.LinkRows] = []
        // Every key of the scope, by kind and bytes: a row's key already known is skipped before it
        // is made into a string. Most keys a round reads are known (an order's user, a
        // transaction's chain), and a set of strings would hash each of them in full.
        var known = Set<RowFingerprint>()
        seeds.forEachKey { key, kind in
            var key = key
            known.insert(key.withUTF8 { RowFingerprint(kind.rawValue, $0) })
        }
        var frontier = seeds
        let path = database.path
        while !frontier.isEmpty {
            scope.formUnion(frontier)
            if scope.transactions.count > limit { return nil }
            let fromOrdersAndUsers = JoinScope(orders: frontier.orders, users: frontier.users)
            let helper = Background { [known] () throws -> Reached in
                try reach(from: fromOrdersAndUsers, through: linksFromOrdersAndUsers, in: Database(path: path, readOnly: true), known: known)
            }
            let reached: Reached
            do {
                reached = try reach(from: JoinScope(transactions: frontier.transactions, chains: frontier.chains),
                                    through: linksFromTransactionsAndChains, in: database, known: known)
            } catch {
                helper.wait()
                throw error
            }
            let more = try helper.value()
            links.append(reached.links)
            links.append(more.links)
            Trace.mark("join closure round: frontier \(frontier.transactions.count) transactions, \(frontier.orders.count) orders, \(frontier.users.count) users, \(frontier.chains.count) chains")
            // Both sides may reach one key: it joins the next frontier once.
            frontier = JoinScope()
            for new in [reached.keys, more.keys] {
                for (fingerprint, key, kind) in new where known.insert(fingerprint).inserted { frontier.insert(key, as: kind) }
            }
        }
        try fill(scope, prefix: "join", in: database)
        return (scope, links)
    }

    /// Calls `body` with every key and its kind.
    func forEachKey(_ body: (String, ChangedKeys.Kind) -> Void) {
        for key in transactions { body(key.text, .transaction) }
        for key in orders { body(key.text, .order) }
        for key in users { body(key.text, .user) }
        for key in chains { body(key.text, .chain) }
    }

    /// What a round reached: the keys the scope did not know, each once, and the link rows among what it read.
    private struct Reached: Sendable {
        var keys: [(fingerprint: RowFingerprint, key: String, kind: ChangedKeys.Kind)] = []
        var links = JoinComponents.LinkRows()
    }

    /// What `links` reach from `frontier` (written into `database`'s `frontier_*` temp tables first)
    /// that is not `known`.
    private static func reach(from frontier: JoinScope, through links: [LinkQuery], in database: Database,
                              known: Set<RowFingerprint>) throws -> Reached {
        try fill(frontier, prefix: "frontier", in: database)
        var reached = Reached()
        var seen = Set<RowFingerprint>()
        for link in links {
            try database.forEach(link.sql) { row in
                for (column, kind) in link.kinds.enumerated() where !row.isNull(column) {
                    let fingerprint = row.statement.withText(Int32(column)) { RowFingerprint(kind.rawValue, $0) }
                    guard !known.contains(fingerprint), seen.insert(fingerprint).inserted else { continue }
                    reached.keys.append((fingerprint, row.string(column), kind))
                }
                if link.isLinkRow { reached.links.append(row, kinds: link.kinds) }
            }
        }
        return reached
    }

    /// The keys `ChangedKeys` recorded, plus the undelivered transactions whose `lost_delivery`
    /// due time the as-of moved across (purchased in the window between the two as-of times, less grace).
    static func seeds(in database: Database, previousAsOfMs: Int64, asOfMs: Int64, graceMs: Int64) throws -> JoinScope {
        var seeds = JoinScope()
        for (kind, key) in try ChangedKeys.all(in: database) { seeds.insert(key, as: kind) }
        if previousAsOfMs != asOfMs {
            // Only lost_delivery reads the as-of, and only for a transaction never delivered.
            // As the last join left them: what changed since is among the recorded keys already.
            try database.forEach("""
                SELECT transaction_id FROM int_transactions_resolved WHERE purchase_ms > ? AND purchase_ms <= ? AND deliveries = 0
                """, [.integer(min(previousAsOfMs, asOfMs) - graceMs), .integer(max(previousAsOfMs, asOfMs) - graceMs)]) { row in
                seeds.insert(row.string(0), as: .transaction)
            }
        }
        return seeds
    }

    /// A query from the frontier's temp tables, naming what it reaches column by column. A link
    /// row (`JoinComponents.readLinks`'s rows, the same columns) names first the frontier's key it
    /// was found by; the others name only what they reach.
    private struct LinkQuery {
        var sql: String
        var kinds: [ChangedKeys.Kind]
        var isLinkRow = false
    }

    /// From transactions: who sent or received them, the orders named with them, their chain, the
    /// order they had. From chains: every renewal, and the first purchase, found by its own id.
    /// A query on a partially indexed column spells out the index's condition (`RawIndexes`):
    /// SQLite uses a partial index only for a query that names it.
    private static let linksFromTransactionsAndChains: [LinkQuery] = [
        .init(sql: "SELECT transaction_id, user_id, order_id FROM raw_server__deliveries WHERE transaction_id IN temp.frontier_transactions",
              kinds: [.transaction, .user, .order], isLinkRow: true),
        .init(sql: """
              SELECT transaction_id, order_id FROM raw_receipts__verifications
              WHERE \(ReceiptClaims.condition) AND transaction_id IN temp.frontier_transactions
              """, kinds: [.transaction, .order], isLinkRow: true),
        .init(sql: """
              SELECT transaction_id, coalesce(original_transaction_id, transaction_id), app_account_token,
                     CASE WHEN \(TransactionOrigin.sentByUserSQL) THEN user_id END
              FROM raw_apple__transactions WHERE transaction_id IN temp.frontier_transactions
              """, kinds: [.transaction, .chain, .order, .user], isLinkRow: true),
        // The previous join's decisions are followed, not kept as links: the rules decide from the stored
        // facts alone, so a component needs only the facts' links.
        .init(sql: "SELECT order_id, user_id FROM int_transactions_resolved WHERE transaction_id IN temp.frontier_transactions",
              kinds: [.order, .user]),
        .init(sql: """
              SELECT transaction_id FROM raw_apple__transactions
              WHERE original_transaction_id IN temp.frontier_chains AND original_transaction_id != transaction_id
              """, kinds: [.transaction]),
        .init(sql: "SELECT transaction_id FROM raw_apple__transactions WHERE transaction_id IN temp.frontier_chains", kinds: [.transaction]),
    ]

    /// From orders: their user, the transactions named with them, the transaction they had. From
    /// users: their orders (heuristic candidates), what they sent and what they received. The rows
    /// that link a transaction are link rows when read from its side, above.
    private static let linksFromOrdersAndUsers: [LinkQuery] = [
        .init(sql: "SELECT order_id, user_id FROM raw_server__orders WHERE order_id IN temp.frontier_orders",
              kinds: [.order, .user], isLinkRow: true),
        .init(sql: "SELECT transaction_id FROM raw_server__deliveries WHERE order_id IN temp.frontier_orders", kinds: [.transaction]),
        .init(sql: """
              SELECT transaction_id FROM raw_receipts__verifications WHERE \(ReceiptClaims.condition) AND order_id IN temp.frontier_orders
              """, kinds: [.transaction]),
        .init(sql: """
              SELECT transaction_id FROM raw_apple__transactions WHERE app_account_token IN temp.frontier_orders AND app_account_token IS NOT NULL
              """, kinds: [.transaction]),
        // The transaction the previous join matched it to; the condition is the partial index's (`Tables.joinResults`).
        .init(sql: """
              SELECT transaction_id FROM int_transactions_resolved WHERE order_id IN temp.frontier_orders AND order_id IS NOT NULL
              """, kinds: [.transaction]),
        .init(sql: "SELECT order_id FROM raw_server__orders WHERE user_id IN temp.frontier_users", kinds: [.order]),
        .init(sql: """
              SELECT transaction_id FROM raw_apple__transactions
              WHERE user_id IN temp.frontier_users AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL)
              """, kinds: [.transaction]),
        .init(sql: "SELECT transaction_id FROM raw_server__deliveries WHERE user_id IN temp.frontier_users", kinds: [.transaction]),
    ]

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
