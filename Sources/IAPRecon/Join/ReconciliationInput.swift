import Foundation

/// Everything the join stage reads from the `stg_*` tables, grouped for lookups.
struct ReconciliationInput {
    var orders: [String: Shared<Order>] = [:]
    /// Order ids in file order (the orders themselves live once, in `orders`).
    var orderIDsInFileOrder: [String] = []
    var deliveries: [String: [Delivery]] = [:]
    /// Deliveries that name an order, in time order: matching rule 1 (only the two ids are kept).
    var orderDeliveriesInTimeOrder: [(orderID: String, transactionID: String)] = []
    var revocations: [String: [Revocation]] = [:]
    var transactions: [String: Shared<VerifiedTransaction>] = [:]
    var refunds: [String: [RefundEvent]] = [:]
    /// transaction id → users who sent a receipt with it, earliest first.
    var senders: [String: [String]] = [:]
    /// Receipt lines naming both an order and a transaction, in time order.
    var receiptClaims: [(orderID: String, transactionID: String)] = []
    var catalog: [String: Shared<Product>] = [:]

    /// The rows of one closed scope, which the caller has put in the `temp.join_*` tables; the catalog whole.
    static func load(_ database: Database) throws -> ReconciliationInput {
        var input = ReconciliationInput()
        // Ids and codes recur across orders, deliveries, receipts and transactions: one copy of each.
        var pool = StringPool()
        try database.forEach("""
            SELECT order_id, ts_ms, user_id, product_id, price, currency, storefront, source FROM stg_server__orders
            WHERE \(JoinScope.orders("order_id")) ORDER BY source
            """) { row in
            let order = Order(orderID: pool(row.string(0)), ms: row.int(1), userID: pool(row.string(2)), productID: pool(row.string(3)),
                              price: row.optionalString(4).flatMap(Money.parse), currency: pool(row.optionalString(5)),
                              storefront: pool(row.optionalString(6)), source: row.string(7))
            input.orders[order.orderID] = Shared(order)
            input.orderIDsInFileOrder.append(order.orderID)
        }
        try database.forEach("""
            SELECT ts_ms, user_id, transaction_id, product_id, order_id, quantity, delivery_id, copies, source
            FROM stg_server__deliveries WHERE \(JoinScope.transactions("transaction_id")) ORDER BY ts_ms, source
            """) { row in
            let delivery = Delivery(ms: row.int(0), userID: pool(row.string(1)), transactionID: pool(row.string(2)),
                                    productID: pool(row.string(3)), orderID: pool(row.optionalString(4)), quantity: row.int(5),
                                    deliveryID: row.optionalString(6),
                                    copies: Int(row.int(7)), source: row.string(8))
            input.deliveries[delivery.transactionID, default: []].append(delivery)
            if let orderID = delivery.orderID { input.orderDeliveriesInTimeOrder.append((orderID, delivery.transactionID)) }
        }
        try database.forEach("""
            SELECT r.ts_ms, r.user_id, r.transaction_id, f.path || ':' || r.line FROM raw_server__revocations r JOIN files f USING (file_id)
            WHERE \(JoinScope.transactions("r.transaction_id"))
            ORDER BY r.ts_ms, f.path, r.line
            """) { row in
            let revocation = Revocation(ms: row.int(0), userID: row.string(1), transactionID: row.string(2), source: row.string(3))
            input.revocations[revocation.transactionID, default: []].append(revocation)
        }
        try database.forEach("""
            SELECT transaction_id, original_transaction_id, product_id, purchase_ms, expires_ms, environment, price_milli, currency,
                   storefront, app_account_token, type, quantity, ownership, subscription_group, sources, offer
            FROM stg_apple__transactions WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            let transaction = VerifiedTransaction(
                transactionID: pool(row.string(0)), originalTransactionID: pool(row.string(1)), productID: pool(row.string(2)),
                purchaseMs: row.int(3), expiresMs: row.optionalInt(4), environment: pool(row.optionalString(5)),
                priceMilliunits: row.optionalInt(6), currency: pool(row.optionalString(7)), storefront: pool(row.optionalString(8)),
                appAccountToken: row.optionalString(9), type: pool(row.optionalString(10)), quantity: row.int(11),
                ownership: pool(row.optionalString(12)), subscriptionGroup: pool(row.optionalString(13)),
                sourceList: row.string(14), offer: row.optionalString(15).flatMap(OfferTerms.init(rawValue:)))
            input.transactions[transaction.transactionID] = Shared(transaction)
        }
        try database.forEach("""
            SELECT transaction_id, kind, event_ms, revocation_type, revocation_percentage, source FROM stg_apple__refunds
            WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            let event = RefundEvent(kind: RefundEvent.Kind(rawValue: row.string(1)) ?? .refund, ms: row.int(2),
                                    revocationType: row.optionalString(3), revocationPercentage: row.optionalInt(4), source: row.string(5))
            input.refunds[row.string(0), default: []].append(event)
        }
        try database.forEach("""
            SELECT transaction_id, user_id, first_ms, source FROM stg_receipts__senders WHERE \(JoinScope.transactions("transaction_id"))
            ORDER BY first_ms, source
            """) { row in
            input.senders[pool(row.string(0)), default: []].append(pool(row.string(1)))
        }
        try database.forEach("""
            SELECT order_id, transaction_id FROM stg_receipts__claims WHERE \(JoinScope.transactions("transaction_id"))
            ORDER BY received_ms, path, line
            """) { row in
            input.receiptClaims.append((pool(row.string(0)), pool(row.string(1))))
        }
        try database.forEach("""
            SELECT product_id, type, subscription_group, price, currency FROM (
              SELECT c.*, row_number() OVER (PARTITION BY product_id ORDER BY f.path DESC, c.line DESC) AS n
              FROM raw_catalog__products c JOIN files f USING (file_id)
            ) WHERE n = 1
            """) { row in
            input.catalog[row.string(0)] = Shared(Product(productID: row.string(0), type: row.string(1), subscriptionGroup: row.optionalString(2),
                                                          price: row.optionalString(3).flatMap(Money.parse), currency: row.optionalString(4)))
        }
        return input
    }
}

/// Hands out one shared copy of each distinct string, so a million repeats of an id cost one allocation.
struct StringPool {
    private var strings: Set<String> = []

    mutating func callAsFunction(_ text: String) -> String {
        strings.insert(text).memberAfterInsert
    }

    mutating func callAsFunction(_ text: String?) -> String? { text.map { self($0) } }
}
