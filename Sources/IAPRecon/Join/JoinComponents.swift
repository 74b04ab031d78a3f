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

    typealias Kind = KeyKind

    private var count: Int { kinds.count }

    /// Batches of whole components of every stored link (about `transactions` transactions each,
    /// more when one component is larger), in the order their keys were read, the same run to run.
    static func batches(in store: some JoinStore, transactions limit: Int) throws -> Batches {
        var graph = JoinComponents()
        try graph.read(store)
        return split(&graph, transactions: limit)
    }

    /// The same for the links of a closed scope, as its closure read them (`JoinScope.closure`).
    static func batches(of links: [LinkRows], transactions limit: Int) -> Batches {
        var graph = JoinComponents()
        for rows in links { graph.add(rows) }
        return split(&graph, transactions: limit)
    }

    /// `graph`'s components cut into batches; the graph is spent on it.
    private static func split(_ graph: inout JoinComponents, transactions limit: Int) -> Batches {
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

        /// The keys of batch `batch` of the kinds in `wanted`: what its facts are read by.
        func scope(_ batch: Int, of wanted: Set<Kind>) -> JoinScope {
            let positions = (batch == 0 ? 0 : ends[batch - 1])..<ends[batch]
            // Sized once: growing a set hashes every key in it again.
            var (transactions, orders, users, chains) = (0, 0, 0, 0)
            for position in positions where wanted.contains(kinds[Int(order[position])]) {
                switch kinds[Int(order[position])] {
                case .transaction: transactions += 1
                case .order: orders += 1
                case .user: users += 1
                case .chain: chains += 1
                default: break
                }
            }
            var scope = JoinScope()
            scope.transactions.reserveCapacity(transactions)
            scope.orders.reserveCapacity(orders)
            scope.users.reserveCapacity(users)
            scope.chains.reserveCapacity(chains)
            for position in positions {
                let node = Int(order[position])
                guard wanted.contains(kinds[node]) else { continue }
                scope.insert(String(decoding: bytes[Int(starts[node])..<Int(starts[node + 1])], as: UTF8.self), as: kinds[node])
            }
            return scope
        }

        /// The batches with their keys of the kinds in `wanted`, as a store reads them.
        func keys(of wanted: Set<Kind>) -> Keys {
            Keys(batches: self, wanted: wanted)
        }

        struct Keys: RebuildBatches {
            let batches: Batches
            let wanted: Set<Kind>

            var count: Int { batches.count }

            func scope(_ batch: Int) -> JoinScope {
                batches.scope(batch, of: wanted)
            }

            func forEachKey(_ body: (UnsafeBufferPointer<UInt8>, KeyKind, Int) -> Void) {
                batches.bytes.withUnsafeBufferPointer { bytes in
                    var position = 0
                    for (batch, end) in batches.ends.enumerated() {
                        while position < end {
                            let node = Int(batches.order[position])
                            position += 1
                            let kind = batches.kinds[node]
                            guard wanted.contains(kind) else { continue }
                            body(UnsafeBufferPointer(rebasing: bytes[Int(batches.starts[node])..<Int(batches.starts[node + 1])]), kind, batch)
                        }
                    }
                }
            }
        }
    }

    /// Every link of the stored facts, as undirected edges. They are read as raw lines: a repeated
    /// line, or a later sighting of a transaction, links what its first one links or more (a copy
    /// naming another user), so a component may be larger than the rules need, never smaller. This
    /// thread numbers the keys and joins their components as the store delivers them.
    private mutating func read(_ store: some JoinStore) throws {
        // About every key once (chains a fraction of transactions, users mostly registered):
        // the table is sized once instead of rehashing every key at each doubling.
        let keys = try store.linkKeysEstimate()
        ids.reserveCapacity(Int(keys))
        // The per-key arrays too: each doubling would copy them into freshly zeroed pages.
        starts.reserveCapacity(Int(keys) + 1)
        kinds.reserveCapacity(Int(keys))
        parent.reserveCapacity(Int(keys))
        bytes.reserveCapacity(Int(keys) * 24)  // ids run 8 (users) to 40 (orders) bytes
        // The order lines come first (`StoredLinks.forEachLinkRows`): an order id another row names
        // that none of them numbered has no order line, and links nothing.
        try store.forEachLinkRows { add($0, listedOrdersOnly: true) }
    }

    /// Numbers the keys of `rows` (a key seen before keeps its number) and joins each row's components.
    /// With `listedOrdersOnly`, an order id in a row that is not an order line's is left out unless
    /// it is numbered already: the rules match only an order that has a line (`OrderMatching`), and
    /// an id with none (a placeholder every client sends, a fixed `appAccountToken`) would otherwise
    /// join every transaction naming it into one component, one batch, whatever the batch size.
    private mutating func add(_ rows: LinkRows, listedOrdersOnly: Bool = false) {
        // The keys' bytes borrowed once: a slice of the array for each new key retained and released it.
        rows.bytes.withUnsafeBufferPointer { keyBytes in
            var key = 0
            for rowEnd in rows.rowEnds {
                let isOrderLine = key < Int(rowEnd) && rows.kinds[key] == .order
                var first: Int32?
                while key < Int(rowEnd) {
                    defer { key += 1 }
                    if listedOrdersOnly, !isOrderLine, rows.kinds[key] == .order, ids.index(forKey: rows.fingerprints[key]) == nil { continue }
                    let node = node(rows, keyBytes, key)
                    if let first { union(first, node) } else { first = node }
                }
            }
        }
    }

    /// The node of key `index` of `rows`, whose bytes are `keyBytes`.
    private mutating func node(_ rows: LinkRows, _ keyBytes: UnsafeBufferPointer<UInt8>, _ index: Int) -> Int32 {
        // One lookup, which finds the key or makes its slot: a lookup, then an insert for a new
        // key, would probe the table twice.
        let next = Int32(count)
        let id = Self.numbered(&ids[rows.fingerprints[index], default: -1], next)
        guard id == next else { return id }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: keyBytes[(index == 0 ? 0 : Int(rows.keyEnds[index - 1]))..<Int(rows.keyEnds[index])]))
        starts.append(Int32(bytes.count))
        kinds.append(rows.kinds[index])
        parent.append(id)
        return id
    }

    /// The number in `slot`, or `next` put there if it has none (-1).
    private static func numbered(_ slot: inout Int32, _ next: Int32) -> Int32 {
        if slot < 0 { slot = next }
        return slot
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
