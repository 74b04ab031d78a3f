/// A full join in bounded memory: the transactions, orders, users and chains fall apart into
/// connected components under the links `JoinScope` follows, and no rule ever looks across two
/// components. So a full rebuild decides batches of whole components, one after another, each
/// exactly as an incremental join decides its scope, and holds one batch at a time.
///
/// Only the link graph of the whole store is in memory at once: every key once, its bytes packed
/// in one buffer and found by a 128-bit fingerprint, and a union-find over small integers.
struct JoinComponents {
    private var ids: [RowFingerprint: Int32] = [:]
    private var bytes: [UInt8] = []
    /// Where key `n` starts in `bytes`; it ends where key `n + 1` starts.
    private var starts: [Int32] = [0]
    private var kinds: [Kind] = []
    private var parent: [Int32] = []

    typealias Kind = ChangedKeys.Kind

    private var count: Int { kinds.count }

    /// Batches of whole components (about `transactions` transactions each, more when one
    /// component is larger), in the order their keys were read, the same run to run. With
    /// `withinScope`, only the links of the closed scope in the `temp.join_*` tables.
    static func batches(in database: Database, transactions limit: Int, withinScope: Bool = false) throws -> Batches {
        var graph = JoinComponents()
        try graph.read(database, withinScope: withinScope)
        let count = graph.count
        var rootOf = [Int32](repeating: 0, count: count)
        for node in 0..<count { rootOf[node] = graph.find(Int32(node)) }
        graph.ids = [:]
        graph.parent = []
        // Nodes grouped by component (a counting sort on the root, the component's first key).
        var start = [Int32](repeating: 0, count: count + 1)
        for root in rootOf { start[Int(root) + 1] += 1 }
        for index in 0..<count { start[index + 1] += start[index] }
        var next = start
        var order = [Int32](repeating: 0, count: count)
        for node in 0..<count {
            let root = Int(rootOf[node])
            order[Int(next[root])] = Int32(node)
            next[root] += 1
        }
        rootOf = []
        next = []
        // Cut `order` after the component that brings a batch to `limit` transactions.
        var ends: [Int] = []
        var transactions = 0
        for root in 0..<count where start[root] < start[root + 1] {
            for position in Int(start[root])..<Int(start[root + 1]) where graph.kinds[Int(order[position])] == .transaction {
                transactions += 1
            }
            if transactions >= limit {
                ends.append(Int(start[root + 1]))
                transactions = 0
            }
        }
        if ends.last != count, count > 0 { ends.append(count) }
        return Batches(bytes: graph.bytes, starts: graph.starts, kinds: graph.kinds, order: order, ends: ends)
    }

    /// The keys of every batch, packed: batch `n` is the nodes `order[ends[n - 1]..<ends[n]]`.
    struct Batches: Sendable {
        fileprivate let bytes: [UInt8]
        fileprivate let starts: [Int32]
        fileprivate let kinds: [Kind]
        fileprivate let order: [Int32]
        fileprivate let ends: [Int]

        var count: Int { ends.count }

        func scope(_ batch: Int) -> JoinScope {
            var scope = JoinScope()
            for position in (batch == 0 ? 0 : ends[batch - 1])..<ends[batch] {
                let node = Int(order[position])
                scope.insert(String(decoding: bytes[Int(starts[node])..<Int(starts[node + 1])], as: UTF8.self), as: kinds[node])
            }
            return scope
        }
    }

    /// Every link of the normalized tables, as undirected edges.
    private mutating func read(_ database: Database, withinScope: Bool) throws {
        if !withinScope {
            // About every key once (chains a fraction of transactions, users mostly registered):
            // the table is sized once instead of rehashing every key at each doubling.
            let keys = try database.scalar("""
                SELECT coalesce((SELECT max(rowid) FROM stg_apple__transactions), 0) * 3 / 2
                     + coalesce((SELECT max(rowid) FROM stg_server__orders), 0)
                     + (SELECT count(*) FROM stg_registrations__first)
                """).integerValue
            ids.reserveCapacity(Int(keys))
        }
        // A closed scope holds every key its rows link to, so its rows are found from one end.
        let transactions = withinScope ? "WHERE \(JoinScope.transactions("transaction_id"))" : ""
        let orders = withinScope ? "WHERE \(JoinScope.orders("order_id"))" : ""
        try database.forEach("SELECT transaction_id, original_transaction_id, app_account_token FROM stg_apple__transactions \(transactions)") { row in
            let transaction = node(.transaction, row, 0)
            union(transaction, node(.chain, row, 1))
            if !row.isNull(2) { union(transaction, node(.order, row, 2)) }
        }
        try database.forEach("SELECT order_id, user_id FROM stg_server__orders \(orders)") { row in
            union(node(.order, row, 0), node(.user, row, 1))
        }
        try database.forEach("SELECT transaction_id, user_id, order_id FROM stg_server__deliveries \(transactions)") { row in
            let transaction = node(.transaction, row, 0)
            union(transaction, node(.user, row, 1))
            if !row.isNull(2) { union(transaction, node(.order, row, 2)) }
        }
        try database.forEach("SELECT transaction_id, user_id FROM stg_receipts__senders \(transactions)") { row in
            union(node(.transaction, row, 0), node(.user, row, 1))
        }
        try database.forEach("SELECT transaction_id, order_id FROM stg_receipts__claims \(transactions)") { row in
            union(node(.transaction, row, 0), node(.order, row, 1))
        }
    }

    /// The node of the key in `column` of `row`, read as bytes: no string is made for a key seen before.
    private mutating func node(_ kind: Kind, _ row: Row, _ column: Int) -> Int32 {
        row.statement.withText(Int32(column)) { key in
            let fingerprint = RowFingerprint(kind.rawValue, key)
            if let id = ids[fingerprint] { return id }
            let id = Int32(count)
            ids[fingerprint] = id
            bytes.append(contentsOf: key)
            starts.append(Int32(bytes.count))
            kinds.append(kind)
            parent.append(id)
            return id
        }
    }

    private mutating func find(_ node: Int32) -> Int32 {
        var node = node
        while parent[Int(node)] != node {
            parent[Int(node)] = parent[Int(parent[Int(node)])]
            node = parent[Int(node)]
        }
        return node
    }

    private mutating func union(_ a: Int32, _ b: Int32) {
        let (rootA, rootB) = (find(a), find(b))
        if rootA != rootB { parent[Int(max(rootA, rootB))] = min(rootA, rootB) }
    }
}
