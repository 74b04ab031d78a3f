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
        // Not a family member's copy: its token, if Apple copies one onto it, is its purchaser's, whose order it is.
        for shared in byPurchase where !shared.value.isFamilyShared {
            let transaction = shared.value
            if let token = transaction.appAccountToken { link(token, transaction.transactionID, .appAccountToken, input) }
        }
        // Only what the heuristic compares: creation time and id, per user and product, in that order.
        var linesByUserProduct: [UserProduct: OrderLine] = [:]
        for order in input.orderIDsInFileOrder.compactMap({ input.orders[$0]?.value }) {
            linesByUserProduct[UserProduct(userID: order.userID, productID: order.productID), default: OrderLine()].orders.append((order.ms, order.orderID))
        }
        var placeOfOrder: [InternedID: (line: UserProduct, index: Int)] = [:]
        for key in Array(linesByUserProduct.keys) {
            linesByUserProduct[key]?.prepare(ids: ids) { index, orderID in
                placeOfOrder[orderID] = (key, index)
                return transactionOf[orderID] != nil
            }
        }
        for shared in byPurchase where orderOf[shared.value.transactionID] == nil {
            let transaction = shared.value
            var users = Set(input.senders[transaction.transactionID] ?? [])
            users.formUnion(input.deliveries[transaction.transactionID]?.map(\.userID) ?? [])
            var best: (ms: Int64, orderID: InternedID)?
            for user in users {
                let key = UserProduct(userID: user, productID: transaction.productID)
                guard let order = linesByUserProduct[key]?.latestUnmatched(atOrBefore: transaction.purchaseMs),
                      order.ms >= transaction.purchaseMs - Self.heuristicWindowMs else { continue }
                // The latest order, and of two at the same time the one whose id sorts last.
                if let current = best,
                   current.ms > order.ms || (current.ms == order.ms && !ids.precedes(current.orderID, order.orderID)) { continue }
                best = order
            }
            guard let best else { continue }
            link(best.orderID, transaction.transactionID, .heuristic, input)
            if transactionOf[best.orderID] != nil, let place = placeOfOrder[best.orderID] {
                linesByUserProduct[place.line]?.take(place.index)
            }
        }
    }

    /// A user's orders of one product in time order (ties by id text), each either unmatched or
    /// pointing left to where the next unmatched one may be: the heuristic finds the latest unmatched
    /// order at or before a purchase in near-constant time, however many orders the user made or
    /// the rules took (a whale whose client sends no order ids).
    private struct OrderLine {
        var orders: [(ms: Int64, orderID: InternedID)] = []
        /// For each order, itself when unmatched; else an earlier place to look at (-1: none).
        private var left: [Int32] = []

        /// Sorts the orders and marks those the earlier rules took: `isMatched` hears each order's
        /// place and id, and says whether it was taken.
        mutating func prepare(ids: IDTable, isMatched: (Int, InternedID) -> Bool) {
            orders.sort { $0.ms != $1.ms ? $0.ms < $1.ms : ids.precedes($0.orderID, $1.orderID) }
            left = orders.indices.map { Int32($0) }
            for (index, order) in orders.enumerated() where isMatched(index, order.orderID) { take(index) }
        }

        /// The latest unmatched order created at or before `ms`.
        mutating func latestUnmatched(atOrBefore ms: Int64) -> (ms: Int64, orderID: InternedID)? {
            // The first place past `ms`.
            var (low, high) = (0, orders.count)
            while low < high {
                let middle = (low + high) / 2
                if orders[middle].ms <= ms { low = middle + 1 } else { high = middle }
            }
            guard let place = find(low - 1) else { return nil }
            return orders[place]
        }

        /// Marks the order at `index` matched.
        mutating func take(_ index: Int) {
            left[index] = Int32(index - 1)
        }

        /// The latest unmatched place at or before `index`, shortening the paths it walked.
        private mutating func find(_ index: Int) -> Int? {
            var root = index
            while root >= 0, Int(left[root]) != root { root = Int(left[root]) }
            var place = index
            while place >= 0, Int(left[place]) != place {
                let next = Int(left[place])
                left[place] = Int32(root)
                place = next
            }
            return root >= 0 ? root : nil
        }
    }

    private mutating func link(_ orderID: InternedID, _ transactionID: InternedID, _ rule: MatchRule, _ input: ReconciliationInput) {
        guard input.orders[orderID] != nil, input.transactions[transactionID] != nil,
              transactionOf[orderID] == nil, orderOf[transactionID] == nil else { return }
        transactionOf[orderID] = transactionID
        orderOf[transactionID] = (orderID, rule)
    }
}
