/// What joins changed of the rows `transactions.csv` shows: the transactions whose resolved row
/// was added, changed or removed, or whose findings were, and the chains whose own findings were
/// (a chain's finding is listed on every transaction of the chain).
struct TransactionChanges: Sendable, Equatable {
    var transactions: Set<String> = []
    var chains: Set<String> = []

    var isEmpty: Bool { transactions.isEmpty && chains.isEmpty }

    /// Notes a finding's subject as `transactions.csv` lists it: on its transaction, else on every
    /// transaction of its chain; a finding about neither is not listed there.
    mutating func noteFinding(transactionID: String?, originalTransactionID: String?) {
        if let transactionID {
            transactions.insert(transactionID)
        } else if let originalTransactionID {
            chains.insert(originalTransactionID)
        }
    }

    mutating func formUnion(_ other: TransactionChanges) {
        transactions.formUnion(other.transactions)
        chains.formUnion(other.chains)
    }
}
