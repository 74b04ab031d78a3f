/// The links between the join's keys as the store holds them (`JoinComponents`, `JoinScope`):
/// which transactions, orders, users and subscription chains a stored row names together.
///
/// A link row names first the key it is read by and then the keys it links to it, column by
/// column; a NULL column links nothing. The whole store's links are read once for a full rebuild,
/// and a closed scope's closure reads the same rows from each key's side, round by round.
enum StoredLinks {
    typealias Kind = KeyKind
    /// About how many keys the store holds (every sighting and order, each registered user): what
    /// a full rebuild sizes its tables of keys by.
    static func keysEstimate(_ database: Database) throws -> Int64 {
        try database.scalar("""
            SELECT (SELECT count(*) FROM raw_apple__transactions) + (SELECT count(*) FROM raw_server__orders)
                 + (SELECT coalesce(sum(accepted), 0) FROM files WHERE source = '\(SourceKind.registrations.rawValue)')
            """).integerValue
    }

    /// Reads every link query (its first column linked to each of its other non-null columns), in
    /// batches of rows. A closed scope's closure reads the same rows from each key's side (`JoinScope`).
    static func forEachLinkRows(_ database: Database, _ deliver: (LinkRows) throws -> Void) throws {
        let queries: [(sql: String, kinds: [Kind])] = [
            // A transaction that no sighting names an original of heads a chain of its own id.
            ("""
             SELECT transaction_id, coalesce(original_transaction_id, transaction_id), app_account_token,
                    CASE WHEN \(TransactionOrigin.sentByUserSQL) THEN user_id END
             FROM raw_apple__transactions
             """, [.transaction, .chain, .order, .user]),
            ("SELECT order_id, user_id FROM raw_server__orders", [.order, .user]),
            ("SELECT transaction_id, user_id, order_id FROM raw_server__deliveries", [.transaction, .user, .order]),
            ("SELECT transaction_id, order_id FROM raw_receipts__verifications WHERE \(ReceiptClaims.condition)", [.transaction, .order]),
        ]
        var batch = LinkRows()
        for (sql, kinds) in queries {
            try database.forEach(sql) { row in
                append(row, kinds: kinds, to: &batch)
                if batch.rowEnds.count >= 8_192 {
                    try deliver(batch)
                    batch = LinkRows()
                }
            }
        }
        if !batch.rowEnds.isEmpty { try deliver(batch) }
    }

    /// Adds `row`'s keys to `rows`, column by column of `kinds`: its first non-null key linked to the others.
    private static func append(_ row: Row, kinds: [Kind], to rows: inout LinkRows) {
        for (column, kind) in kinds.enumerated() where !row.isNull(column) {
            row.statement.withText(Int32(column)) { rows.append($0, kind: kind) }
        }
        rows.endRow()
    }

    /// The keys a closure round follows links from.
    enum Side: Sendable {
        case transactionsAndChains, ordersAndUsers
    }

    /// What `links` reach from `frontier` (written into `database`'s `frontier_*` temp tables first)
    /// that is not `known`.
    static func reach(from frontier: JoinScope, through side: Side, in database: Database, known: Set<RowFingerprint>) throws -> ReachedKeys {
        try StoredScopeFacts.fill(frontier, prefix: "frontier", in: database)
        let links = side == .transactionsAndChains ? linksFromTransactionsAndChains : linksFromOrdersAndUsers
        var reached = ReachedKeys()
        var seen = Set<RowFingerprint>()
        for link in links {
            try database.forEach(link.sql) { row in
                for (column, kind) in link.kinds.enumerated() where !row.isNull(column) {
                    let fingerprint = row.statement.withText(Int32(column)) { RowFingerprint(kind.rawValue, $0) }
                    guard !known.contains(fingerprint), seen.insert(fingerprint).inserted else { continue }
                    reached.keys.append((fingerprint, row.string(column), kind))
                }
                if link.isLinkRow { append(row, kinds: link.kinds, to: &reached.links) }
            }
        }
        return reached
    }

    /// The transactions the last join wrote as never delivered and purchased in (`after`, `through`]:
    /// those whose `lost_delivery` due time an as-of moved across.
    static func undeliveredTransactions(purchasedAfter after: Int64, through: Int64, in database: Database, _ body: (String) -> Void) throws {
        try database.forEach("""
            SELECT transaction_id FROM int_transactions_resolved WHERE purchase_ms > ? AND purchase_ms <= ? AND deliveries = 0
            """, [.integer(after), .integer(through)]) { row in
            body(row.string(0))
        }
    }

    /// A query from the frontier's temp tables, naming what it reaches column by column. A link
    /// row (`forEachLinkRows`' rows, the same columns) names first the frontier's key it
    /// was found by; the others name only what they reach.
    private struct LinkQuery {
        var sql: String
        var kinds: [KeyKind]
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
}
