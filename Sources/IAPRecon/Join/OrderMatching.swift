/// Order ↔ transaction matching: one order per transaction and one transaction per order.
///
/// The rules run in order and a rule never takes an order or a transaction an
/// earlier rule took: a `delivered` line naming both, a receipt line naming
/// both, `appAccountToken` equal to the `order_id`, and last, taking
/// transactions in purchase order, the latest unmatched order of the same
/// product created within the hour before the purchase by a user who sent a
/// receipt with the transaction or received a delivery of it.
struct OrderMatching {
    static let heuristicWindowMs: Int64 = 3_600_000

    private(set) var orderOf: [InternedID: (orderID: InternedID, rule: MatchRule)] = [:]
    private(set) var transactionOf: [InternedID: InternedID] = [:]

    /// A user's orders of one product: what the heuristic looks among.
    private struct UserProduct: Hashable {
        var userID: InternedID
        var productID: InternedID
    }

    init(_ input: ReconciliationInput) {
        let ids = input.ids
        for delivery in input.orderDeliveriesInTimeOrder {
            link(delivery.orderID, delivery.transactionID, .delivery, input)
        }
        for claim in input.receiptClaims {
            link(claim.orderID, claim.transactionID, .receipt, input)
        }
        // Ties in time are broken by the ids' text, never by their numbers.
        let byPurchase = input.transactions.values.sorted {
            $0.value.purchaseMs != $1.value.purchaseMs
                ? $0.value.purchaseMs < $1.value.purchaseMs
                : ids.precedes($0.value.transactionID, $1.value.transactionID)
        }
        for shared in byPurchase {
            let transaction = shared.value
            if let token = transaction.appAccountToken { link(token, transaction.transactionID, .appAccountToken, input) }
        }
        // Only what the heuristic compares: creation time and id, per user and product.
        var ordersByUserProduct: [UserProduct: [(ms: Int64, orderID: InternedID)]] = [:]
        for order in input.orderIDsInFileOrder.compactMap({ input.orders[$0]?.value }) {
            ordersByUserProduct[UserProduct(userID: order.userID, productID: order.productID), default: []].append((order.ms, order.orderID))
        }
        for shared in byPurchase where orderOf[shared.value.transactionID] == nil {
            let transaction = shared.value
            var users = Set(input.senders[transaction.transactionID] ?? [])
            users.formUnion(input.deliveries[transaction.transactionID]?.map(\.userID) ?? [])
            var best: (ms: Int64, orderID: InternedID)?
            for user in users {
                for order in ordersByUserProduct[UserProduct(userID: user, productID: transaction.productID)] ?? []
                where transactionOf[order.orderID] == nil
                    && order.ms <= transaction.purchaseMs && order.ms >= transaction.purchaseMs - Self.heuristicWindowMs {
                    // The latest order, and of two at the same time the one whose id sorts last.
                    if let current = best,
                       current.ms > order.ms || (current.ms == order.ms && !ids.precedes(current.orderID, order.orderID)) { continue }
                    best = order
                }
            }
            if let best { link(best.orderID, transaction.transactionID, .heuristic, input) }
        }
    }

    private mutating func link(_ orderID: InternedID, _ transactionID: InternedID, _ rule: MatchRule, _ input: ReconciliationInput) {
        guard input.orders[orderID] != nil, input.transactions[transactionID] != nil,
              transactionOf[orderID] == nil, orderOf[transactionID] == nil else { return }
        transactionOf[orderID] = transactionID
        orderOf[transactionID] = (orderID, rule)
    }
}
