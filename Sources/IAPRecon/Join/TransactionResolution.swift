import Foundation

extension ResolvedTransaction {
    /// In the order of their ids' text.
    static func resolve(_ input: ReconciliationInput, _ matching: OrderMatching) -> [ResolvedTransaction] {
        let ids = input.ids
        return input.transactions.values.sorted { ids.precedes($0.value.transactionID, $1.value.transactionID) }.map { shared in
            let transaction = shared.value
            let id = transaction.transactionID
            let match = matching.orderOf[id]
            let sharedOrder = match.flatMap { input.orders[$0.orderID] }
            let order = sharedOrder?.value
            let deliveries = input.deliveries[id] ?? []
            let sharedProduct = input.catalog[transaction.productID]
            let product = sharedProduct?.value
            var resolved = ResolvedTransaction(
                transaction: shared, order: sharedOrder, matchRule: match?.rule, refund: EffectiveRefund.resolve(input.refunds[id] ?? []),
                deliveries: deliveries, product: sharedProduct)
            resolved.userID = order?.userID ?? deliveries.first?.userID ?? input.senders[id]?.first
            // A free trial costs nothing; an intro offer's price is Apple's or the order's, never the catalog's
            // full price (CONTRACT.md §1.2).
            if transaction.offer == .freeTrial {
                resolved.unitPrice = 0
                resolved.currency = transaction.currency ?? order?.currency ?? product?.currency
                resolved.priceSource = .freeTrial
            } else if let milli = transaction.priceMilliunits, let currency = transaction.currency {
                resolved.unitPrice = Money.unitPrice(milliunits: milli, quantity: transaction.quantity)
                resolved.currency = currency
                resolved.priceSource = .apple
            } else if let price = order?.price, let currency = order?.currency {
                resolved.unitPrice = price
                resolved.currency = currency
                resolved.priceSource = .order
            } else if transaction.offer != .introOffer, let price = product?.price, let currency = product?.currency {
                resolved.unitPrice = price
                resolved.currency = currency
                resolved.priceSource = .catalog
            }
            return resolved
        }
    }
}
