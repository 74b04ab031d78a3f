import Foundation

/// Where a transaction's price came from (CONTRACT.md §1.6, in this order).
public enum PriceSource: String, Sendable, CaseIterable {
    case apple = "v2_price"
    case order
    case catalog
    /// A free trial: priced 0 whatever else is known.
    case freeTrial = "free_trial"
    case none
}

/// A verified transaction with everything the join decided about it.
struct ResolvedTransaction {
    private let sharedTransaction: Shared<VerifiedTransaction>
    private let sharedOrder: Shared<Order>?
    var transaction: VerifiedTransaction { sharedTransaction.value }
    var order: Order? { sharedOrder?.value }
    var userID: InternedID?
    var matchRule: MatchRule?
    var unitPrice: Decimal?
    var currency: String?
    var priceSource: PriceSource
    var refund: EffectiveRefund?
    var deliveries: [Delivery]
    private let sharedProduct: Shared<Product>?
    var product: Product? { sharedProduct?.value }

    /// Revenue: Production, not family-shared, not a free trial (CONTRACT.md §1.2, §2).
    var isRevenue: Bool { transaction.isProduction && !transaction.isFamilyShared && transaction.offer != .freeTrial }

    /// `delivered_to`: each receiving user once, at their first delivery, in the order of those
    /// deliveries (then of the user ids' bytes, as SQLite orders text), joined by `;`.
    func deliveredTo(_ ids: IDTable) -> String {
        Self.deliveredTo(deliveries.map { (ms: $0.ms, userID: ids.text($0.userID)) })
    }

    static func deliveredTo(_ deliveries: [(ms: Int64, userID: String)]) -> String {
        var first: [StoredText: Int64] = [:]
        for delivery in deliveries {
            let user = StoredText(delivery.userID)
            first[user] = min(first[user] ?? .max, delivery.ms)
        }
        return first.sorted { $0.value != $1.value ? $0.value < $1.value : $0.key.text.utf8.lexicographicallyPrecedes($1.key.text.utf8) }
            .map(\.key.text).joined(separator: ";")
    }

    /// price × quantity, when a price is known.
    var amount: Decimal? { unitPrice.map { $0 * Decimal(transaction.quantity) } }

    /// The money given back by the effective refund.
    var refundAmount: Decimal? {
        guard let refund, let amount else { return nil }
        return amount * refund.share
    }

    var isAutoRenewable: Bool {
        if let product { return product.isAutoRenewable }
        return transaction.type == "Auto-Renewable Subscription"
    }

    var subscriptionGroup: InternedID? { product?.subscriptionGroup ?? transaction.subscriptionGroup }

    /// In the order of their ids' text.
    static func resolve(_ input: ReconciliationInput, _ matching: OrderMatching) -> [ResolvedTransaction] {
        let ids = input.ids
        return input.transactions.values.sorted { ids.text($0.value.transactionID) < ids.text($1.value.transactionID) }.map { shared in
            let transaction = shared.value
            let id = transaction.transactionID
            let match = matching.orderOf[id]
            let sharedOrder = match.flatMap { input.orders[$0.orderID] }
            let order = sharedOrder?.value
            let deliveries = input.deliveries[id] ?? []
            let sharedProduct = input.catalog[transaction.productID]
            let product = sharedProduct?.value
            var resolved = ResolvedTransaction(
                sharedTransaction: shared, sharedOrder: sharedOrder, userID: nil, matchRule: match?.rule, unitPrice: nil, currency: nil,
                priceSource: .none, refund: EffectiveRefund.resolve(input.refunds[id] ?? []), deliveries: deliveries, sharedProduct: sharedProduct)
            resolved.userID = order?.userID ?? deliveries.first?.userID ?? input.senders[id]?.first
            // A free trial costs nothing; an intro offer's price is Apple's or the order's, never the catalog's
            // full price (CONTRACT.md §1.2).
            if transaction.offer == .freeTrial {
                resolved.unitPrice = 0
                resolved.currency = transaction.currency ?? order?.currency ?? product?.currency
                resolved.priceSource = .freeTrial
            } else if let milli = transaction.priceMilliunits, let currency = transaction.currency {
                resolved.unitPrice = Money.fromMilliunits(milli)
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
