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
    ///
    /// The order lines come first: an order id that a delivery, a receipt or an `appAccountToken`
    /// names but no order line has links nothing (`listedOrder`), and the reader knows such an id
    /// by its not having been read with an order line before (`JoinComponents`). Here no index may
    /// be asked: a full rebuild reads the links while the raw indexes may still be being built.
    static func forEachLinkRows(_ database: Database, _ deliver: (LinkRows) throws -> Void) throws {
        let queries: [(sql: String, kinds: [Kind])] = [
            ("SELECT order_id, user_id FROM raw_server__orders", [.order, .user]),
            // A transaction that no sighting names an original of heads a chain of its own id.
            ("""
             SELECT transaction_id, coalesce(original_transaction_id, transaction_id), app_account_token,
                    CASE WHEN \(TransactionOrigin.sentByUserSQL) THEN user_id END
             FROM raw_apple__transactions
             """, [.transaction, .chain, .order, .user]),
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

    /// `column`, an order id a delivery, a receipt or an `appAccountToken` names, when an order line
    /// has that id; else NULL, which links nothing. The rules only ever match an order that has a
    /// line (`OrderMatching`), so an id with none (a client's placeholder, `0` or `undefined`, or
    /// an app's fixed `appAccountToken`) decides nothing; followed, it would join every transaction
    /// naming it into one component, which every night would reach whole. By the order index.
    static func listedOrder(_ column: String) -> String {
        "CASE WHEN EXISTS (SELECT 1 FROM raw_server__orders listed WHERE listed.order_id = \(column)) THEN \(column) END"
    }

    /// The condition that `column`, an order id of the frontier, has an order line: only then do the
    /// deliveries, receipts and tokens naming it link to it (`listedOrder`).
    private static func isListedOrder(_ column: String) -> String {
        "EXISTS (SELECT 1 FROM raw_server__orders listed WHERE listed.order_id = \(column))"
    }

    /// Adds `row`'s keys to `rows`, column by column of `kinds` from column `first` on: its first
    /// non-null key linked to the others.
    private static func append(_ row: Row, kinds: [Kind], from first: Int = 0, to rows: inout LinkRows) {
        for (column, kind) in kinds.enumerated() where !row.isNull(first + column) {
            row.statement.withText(Int32(first + column)) { rows.append($0, kind: kind) }
        }
        rows.endRow()
    }

    /// What the link queries reach from `frontier` that is not `known`: one result per query, in
    /// the queries' order, so the caller sees the same keys and link rows whichever connection
    /// read them. `database` and a second connection (`openHelper`, opened on a worker thread)
    /// each start with the queries from their own kinds of keys (transactions and chains; orders
    /// and users), the costliest first, and then take the other's that are left. Which queries are
    /// long depends on the kinds of keys a round follows (its users' orders in one, its
    /// transactions' sightings in the next), so no fixed split keeps both cores busy to the end of
    /// every round; a frontier table is filled on both connections only for a query taken over.
    ///
    /// Each query adds what it keeps to `budget` as it reads, and throws `ClosureMemoryBudget.Exceeded`
    /// once what the closure holds is past its limit, which stops the other connection's queries too.
    static func reach(from frontier: JoinScope, known: Set<RowFingerprint>, budget: ClosureMemoryBudget, in database: Database,
                      alongside openHelper: @escaping @Sendable () throws -> Database) throws -> [ReachedKeys] {
        let queues = [[KeyKind.transaction, .chain], [.order, .user]].map { kinds in
            let order = linkQueries.indices
                .filter { kinds.contains(linkQueries[$0].from) && !frontier.keys(linkQueries[$0].from).isEmpty }
                .map { (query: $0, cost: frontier.keys(linkQueries[$0].from).count * linkQueries[$0].costPerKey) }
                .sorted { ($0.cost, $1.query) > ($1.cost, $0.query) }
                .map(\.query)
            return QueryQueue(order: order, turns: JobTurns(count: order.count))
        }
        let helper = Background { () throws -> [(query: Int, reached: ReachedKeys)] in
            do {
                return try takeTurns([queues[1], queues[0]], from: frontier, known: known, budget: budget, in: openHelper())
            } catch {
                queues.forEach { $0.turns.stop() }
                throw error
            }
        }
        var results = [ReachedKeys](repeating: ReachedKeys(), count: linkQueries.count)
        do {
            for (query, reached) in try takeTurns(queues, from: frontier, known: known, budget: budget, in: database) { results[query] = reached }
        } catch {
            queues.forEach { $0.turns.stop() }
            helper.wait()
            throw error
        }
        for (query, reached) in try helper.value() { results[query] = reached }
        return results
    }

    /// Queries (numbers into `linkQueries`) in the order they are taken.
    private struct QueryQueue: Sendable {
        var order: [Int]
        var turns: JobTurns
    }

    /// Runs the queries this connection takes from `queues`, one queue after the other, each
    /// frontier table filled (`temp.frontier_*`) before the first query that reads it.
    private static func takeTurns(_ queues: [QueryQueue], from frontier: JoinScope, known: Set<RowFingerprint>,
                                  budget: ClosureMemoryBudget, in database: Database) throws -> [(query: Int, reached: ReachedKeys)] {
        var filled: Set<KeyKind> = []
        var results: [(query: Int, reached: ReachedKeys)] = []
        for queue in queues {
            while let turn = queue.turns.take() {
                let link = linkQueries[queue.order[turn]]
                if filled.insert(link.from).inserted { try StoredScopeFacts.fill(frontier, link.from, prefix: "frontier", in: database) }
                results.append((queue.order[turn], try reach(through: link, in: database, known: known, budget: budget)))
            }
        }
        return results
    }

    /// The keys one query reads that are not `known`, each once, its link rows, and the facts it
    /// read them from while the closure keeps facts, their bytes added to `budget` every so often
    /// as they grow.
    private static func reach(through link: LinkQuery, in database: Database, known: Set<RowFingerprint>,
                              budget: ClosureMemoryBudget) throws -> ReachedKeys {
        var reached = ReachedKeys()
        var seen = Set<RowFingerprint>()
        // Facts let go in an earlier round or query are not kept again.
        let keepsFacts = budget.holdsFacts
        var facts = keepsFacts ? link.facts.map { PackedRows(table: $0.rawValue) } : nil
        var resolved = keepsFacts && link.keepsCurrentResolved ? PackedRows(table: 0) : nil
        // A query that reads facts or resolved transactions has them first, then its keys.
        let first = link.firstKeyColumn
        var spent = (links: 0, facts: 0)
        func spend(atLeast step: Int) throws {
            let links = reached.links.footprint + reached.keys.count * MemoryLayout<(fingerprint: RowFingerprint, key: String, kind: KeyKind)>.stride
            let held = (facts?.bytes.count ?? 0) + (resolved?.bytes.count ?? 0)
            guard links - spent.links + held - spent.facts >= step else { return }
            let spends = budget.spend(links: links - spent.links, facts: held - spent.facts)
            spent = (links, held)
            guard spends else { throw ClosureMemoryBudget.Exceeded() }
            // Past the facts' limit the closure lets them go (`ClosureFacts`): this query keeps no more.
            if held > 0, !budget.holdsFacts {
                (facts, resolved) = (nil, nil)
                spent.facts = 0
            }
        }
        try database.forEach(link.sql) { row in
            for (index, kind) in link.kinds.enumerated() where !row.isNull(first + index) {
                let fingerprint = row.statement.withText(Int32(first + index)) { kind.fingerprint(of: $0) }
                guard !known.contains(fingerprint), seen.insert(fingerprint).inserted else { continue }
                reached.keys.append((fingerprint, row.string(first + index), kind))
            }
            if link.isLinkRow { append(row, kinds: link.kinds, from: first, to: &reached.links) }
            if let table = link.facts { facts?.append(row, columns: table.columns) }
            if link.keepsCurrentResolved { resolved?.append(row, columns: first) }
            try spend(atLeast: 1 << 16)
        }
        try spend(atLeast: 1)
        reached.facts = facts
        reached.currentResolved = resolved
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

    /// A query from one of the frontier's temp tables (`from`), naming what it reaches column by
    /// column. A link row (`forEachLinkRows`' rows, the same columns) names first the frontier's
    /// key it was found by; the others name only what they reach.
    private struct LinkQuery {
        var from: KeyKind
        /// About how long one key's rows take to read, against the other queries': what orders
        /// a round's queries, the longest first (it changes how fast a round ends, never what it reaches).
        var costPerKey: Int
        var sql: String
        var kinds: [KeyKind]
        var isLinkRow = false
        /// The fact table whose rows of the frontier's keys the query reads whole, before the
        /// columns of `kinds` (`ReachedKeys.facts`).
        var facts: StoredScopeFacts.FactTable?
        /// Whether the query reads the last join's resolved transactions whole, before the columns
        /// of `kinds` (`ReachedKeys.currentResolved`).
        var keepsCurrentResolved = false

        /// Where the columns of `kinds` start.
        var firstKeyColumn: Int { facts?.columns ?? (keepsCurrentResolved ? ScopeRows.tables[0].columns : 0) }

        init(from: KeyKind, costPerKey: Int, sql: String, kinds: [KeyKind], isLinkRow: Bool = false) {
            (self.from, self.costPerKey, self.sql, self.kinds, self.isLinkRow) = (from, costPerKey, sql, kinds, isLinkRow)
        }

        /// A query that reads the last join's resolved transactions of the frontier's transactions
        /// whole (`ScopeRows.tables[0]`, every column), with the columns `linking` names after them.
        init(from: KeyKind, costPerKey: Int, currentResolved columns: String, kinds: [KeyKind]) {
            let table = ScopeRows.tables[0]
            self.init(from: from, costPerKey: costPerKey, sql: "SELECT *, \(columns) FROM main.\(table.name) WHERE \(table.key[0]) IN temp.frontier_transactions",
                      kinds: kinds)
            keepsCurrentResolved = true
        }

        /// A link row query that reads the rows of `facts` of the frontier's keys (in
        /// `temp.frontier_<keys>`) whole, with the columns `linking` names after them.
        init(from: KeyKind, costPerKey: Int, facts table: StoredScopeFacts.FactTable, keys: String, linking columns: String,
             kinds: [KeyKind]) {
            self.init(from: from, costPerKey: costPerKey, sql: table.unorderedSelection(keysIn: "temp.frontier_" + keys, adding: columns),
                      kinds: kinds, isLinkRow: true)
            facts = table
        }
    }

    /// Every query a round runs, in the order its results are handed back.
    private static let linkQueries = linksFromTransactionsAndChains + linksFromOrdersAndUsers

    /// The fact tables whose rows a closure reads whole (`ReachedKeys.facts`): of a closed scope,
    /// every row of these of each of its keys, since each of its keys was once in a frontier.
    static let closureFactTables = Set(linkQueries.compactMap(\.facts))

    /// From transactions: who sent or received them, the orders named with them, their chain, the
    /// order they had. From chains: every renewal, and the first purchase, found by its own id.
    /// A query on a partially indexed column spells out the index's condition (`RawIndexes`):
    /// SQLite uses a partial index only for a query that names it.
    private static let linksFromTransactionsAndChains: [LinkQuery] = [
        .init(from: .transaction, costPerKey: 5, facts: .deliveries, keys: "transactions",
              linking: "d.transaction_id, d.user_id, \(listedOrder("d.order_id"))", kinds: [.transaction, .user, .order]),
        .init(from: .transaction, costPerKey: 2, facts: .claims, keys: "transactions",
              linking: "transaction_id, \(listedOrder("raw_receipts__verifications.order_id"))", kinds: [.transaction, .order]),
        // A transaction's sightings are many and wide.
        .init(from: .transaction, costPerKey: 10, facts: .sightings, keys: "transactions", linking: """
              a.transaction_id, coalesce(a.original_transaction_id, a.transaction_id), \(listedOrder("a.app_account_token")),
              CASE WHEN \(TransactionOrigin.sentByUserSQL) THEN a.user_id END
              """, kinds: [.transaction, .chain, .order, .user]),
        // The previous join's decisions are followed, not kept as links: the rules decide from the stored
        // facts alone, so a component needs only the facts' links.
        // Read whole: they are the scope's current resolved transactions (`ScopeRows`).
        .init(from: .transaction, costPerKey: 3, currentResolved: "order_id, user_id", kinds: [.order, .user]),
        .init(from: .chain, costPerKey: 3, sql: """
              SELECT transaction_id FROM raw_apple__transactions
              WHERE original_transaction_id IN temp.frontier_chains AND original_transaction_id != transaction_id
              """, kinds: [.transaction]),
        .init(from: .chain, costPerKey: 2,
              sql: "SELECT transaction_id FROM raw_apple__transactions WHERE transaction_id IN temp.frontier_chains", kinds: [.transaction]),
    ]

    /// From orders: their user, the transactions named with them, the transaction they had. From
    /// users: their orders (heuristic candidates), what they sent and what they received. The rows
    /// that link a transaction are link rows when read from its side, above. An order id with no
    /// order line (a changed key, or the match of a forgotten order) reaches only the transaction
    /// the last join matched it to: what else names it links nothing (`listedOrder`).
    private static let linksFromOrdersAndUsers: [LinkQuery] = [
        .init(from: .order, costPerKey: 3, facts: .orders, keys: "orders", linking: "o.order_id, o.user_id", kinds: [.order, .user]),
        .init(from: .order, costPerKey: 2, sql: """
              SELECT transaction_id FROM raw_server__deliveries
              WHERE order_id IN temp.frontier_orders AND \(isListedOrder("raw_server__deliveries.order_id"))
              """, kinds: [.transaction]),
        .init(from: .order, costPerKey: 2, sql: """
              SELECT transaction_id FROM raw_receipts__verifications
              WHERE \(ReceiptClaims.condition) AND order_id IN temp.frontier_orders AND \(isListedOrder("raw_receipts__verifications.order_id"))
              """, kinds: [.transaction]),
        .init(from: .order, costPerKey: 1, sql: """
              SELECT transaction_id FROM raw_apple__transactions
              WHERE app_account_token IN temp.frontier_orders AND app_account_token IS NOT NULL
                AND \(isListedOrder("raw_apple__transactions.app_account_token"))
              """, kinds: [.transaction]),
        // The transaction the previous join matched it to; the condition is the partial index's (`Tables.joinResults`).
        .init(from: .order, costPerKey: 2, sql: """
              SELECT transaction_id FROM int_transactions_resolved WHERE order_id IN temp.frontier_orders AND order_id IS NOT NULL
              """, kinds: [.transaction]),
        // A user has many orders, sightings and deliveries: the longest reads of a round that follows users.
        .init(from: .user, costPerKey: 13,
              sql: "SELECT order_id FROM raw_server__orders WHERE user_id IN temp.frontier_users", kinds: [.order]),
        .init(from: .user, costPerKey: 14, sql: """
              SELECT transaction_id FROM raw_apple__transactions
              WHERE user_id IN temp.frontier_users AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL)
              """, kinds: [.transaction]),
        .init(from: .user, costPerKey: 11,
              sql: "SELECT transaction_id FROM raw_server__deliveries WHERE user_id IN temp.frontier_users", kinds: [.transaction]),
    ]
}
