/// What joins changed of the rows `transactions.csv` shows: the transactions whose resolved row
/// was added, changed or removed, or whose findings were, and the chains a finding was linked to
/// or unlinked from (a finding about chains is listed on every transaction of each: `Finding.chainIDs`).
struct TransactionChanges: Sendable, Equatable {
    var transactions: Set<String> = []
    var chains: Set<String> = []

    var isEmpty: Bool { transactions.isEmpty && chains.isEmpty }

    /// Notes a finding's transaction, whose line lists it; a finding about no transaction is
    /// listed on none by its own row (its chains, if any, are noted by their links).
    mutating func noteFinding(transactionID: String?) {
        if let transactionID { transactions.insert(transactionID) }
    }

    mutating func formUnion(_ other: TransactionChanges) {
        transactions.formUnion(other.transactions)
        chains.formUnion(other.chains)
    }
}
