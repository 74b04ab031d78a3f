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

/// How an order was matched to its transaction (CONTRACT.md §2, in rule order).
public enum MatchRule: String, Sendable, CaseIterable {
    case delivery
    case receipt
    case appAccountToken = "app_account_token"
    case heuristic
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

    /// A unit Apple's Sales Report counts, and the tie-out verifies: Production, not family-shared,
    /// free trials included, which Apple lists at a price of 0 (CONTRACT.md §2, "Tie-out with Apple").
    var isAppleSale: Bool { transaction.isProduction && !transaction.isFamilyShared }

    /// `delivered_to`: each receiving user once, at their first delivery, in the order of those
    /// deliveries (then of the user ids' bytes, as SQLite orders text), joined by `;`.
    func deliveredTo(_ ids: IDTable) -> String {
        // Most transactions are delivered to one user, or to none: nothing to order. One id is one text.
        guard let user = deliveries.first?.userID else { return "" }
        if deliveries.allSatisfy({ $0.userID == user }) { return ids.text(user) }
        return Self.deliveredTo(deliveries.map { (ms: $0.ms, userID: ids.text($0.userID)) })
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

    /// What one unit of this transaction puts at risk in a finding: its price, but nothing for a
    /// family-shared one, whose holder paid nothing (it is never revenue; the purchaser's own
    /// transaction carries the money), as its refund gives back nothing (`refundAmount`).
    var unitPriceAtRisk: Decimal? { transaction.isFamilyShared ? unitPrice.map { _ in 0 } : unitPrice }

    /// `amount` as a finding counts it at risk (`unitPriceAtRisk`).
    var amountAtRisk: Decimal? { unitPriceAtRisk.map { $0 * Decimal(transaction.quantity) } }

    /// The money given back by the effective refund. A family-shared transaction's gives back
    /// nothing, whatever its type: its holder paid nothing (it is never revenue), and Apple withdraws
    /// it (`REVOKE`, which older payloads and receipts send without `revocationType`) when the
    /// purchaser's own purchase is refunded or no longer shared, which that purchase's refund counts.
    var refundAmount: Decimal? {
        guard let refund, let amount else { return nil }
        return transaction.isFamilyShared ? 0 : amount * refund.share
    }

    /// From the catalog only: a product missing from it is consumable (CONTRACT.md 1.6), whatever
    /// Apple's payload calls it, and it is reported so the catalog gets fixed.
    var isAutoRenewable: Bool { product?.isAutoRenewable ?? false }

    /// The catalog's group, which is what the multi-Apple-ID rule groups by (CONTRACT.md 2).
    var subscriptionGroup: InternedID? { product?.subscriptionGroup }

    /// Unpriced and unmatched to a user; the join prices it and names its user (`resolve`).
    init(transaction: Shared<VerifiedTransaction>, order: Shared<Order>?, matchRule: MatchRule?, refund: EffectiveRefund?,
         deliveries: [Delivery], product: Shared<Product>?) {
        sharedTransaction = transaction
        sharedOrder = order
        self.matchRule = matchRule
        priceSource = .none
        self.refund = refund
        self.deliveries = deliveries
        sharedProduct = product
    }
}
