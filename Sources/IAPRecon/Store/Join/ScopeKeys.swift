/// The keys of a part of the store a join decides at once, by kind: what its facts are read by
/// (`StoredScopeFacts`) and its links followed from (`StoredLinks`). The join finds them
/// (`JoinScope.closure`, `JoinComponents`).
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

    /// Adds `key` to the keys of its kind; kinds a scope does not hold (files, days) add nothing.
    mutating func insert(_ key: String, as kind: ChangedKeys.Kind) {
        switch kind {
        case .transaction: transactions.insert(StoredText(key))
        case .order: orders.insert(StoredText(key))
        case .user: users.insert(StoredText(key))
        case .chain: chains.insert(StoredText(key))
        case .all, .mmpFile, .registration, .salesDay: break
        }
    }

    /// Calls `body` with every key and its kind.
    func forEachKey(_ body: (String, ChangedKeys.Kind) -> Void) {
        for key in transactions { body(key.text, .transaction) }
        for key in orders { body(key.text, .order) }
        for key in users { body(key.text, .user) }
        for key in chains { body(key.text, .chain) }
    }
}
