import Foundation

/// Everything the join stage reads of one closed scope, normalized and grouped for lookups.
///
/// Every id in it is a number in `ids`, the batch's one table of id texts: the rules look ids up
/// and compare them as integers, and ask `ids` for the text only to write it or to order by it.
struct ReconciliationInput {
    var ids = IDTable()
    var orders: [InternedID: Shared<Order>] = [:]
    /// Order ids in file order (the orders themselves live once, in `orders`).
    var orderIDsInFileOrder: [InternedID] = []
    var deliveries: [InternedID: [Delivery]] = [:]
    /// Deliveries that name an order, in time order: matching rule 1 (only the two ids are kept).
    var orderDeliveriesInTimeOrder: [(orderID: InternedID, transactionID: InternedID)] = []
    var revocations: [InternedID: [Revocation]] = [:]
    var transactions: [InternedID: Shared<VerifiedTransaction>] = [:]
    var refunds: [InternedID: [RefundEvent]] = [:]
    /// transaction id → users who sent a receipt with it, earliest first.
    var senders: [InternedID: [InternedID]] = [:]
    /// Receipt lines naming both an order and a transaction, in time order.
    var receiptClaims: [(orderID: InternedID, transactionID: InternedID)] = []
    var catalog: [InternedID: Shared<Product>] = [:]

    /// The rows of one closed scope, which the caller has put in the `temp.join_*` tables; the catalog whole.
    /// `files` names the rows' sources; what comes "first" at an equal time is the earlier in file
    /// order (`SourceLine`), so line 6 of a file before its line 50.
    static func load(_ database: Database, files: inout SourceFiles) throws -> ReconciliationInput {
        var input = ReconciliationInput()
        // Ids recur across orders, deliveries, receipts and transactions: each numbered once, in `ids`.
        var ids = IDTable()
        // Codes (currency, storefront, type...) recur too: one copy of each that does not fit in a `String` itself.
        var pool = StringPool()
        var orderSources: [(source: SourceLine, orderID: InternedID)] = []
        typealias O = ServerOrders.Column
        try ServerOrders.forEachFirst(in: database, where: JoinScope.orders("o.order_id")) { row in
            let order = Order(orderID: ids.intern(row, O.orderID), ms: row.int(O.ms), userID: ids.intern(row, O.userID),
                              productID: ids.intern(row, O.productID), price: row.optionalString(O.price).flatMap(Money.parse),
                              currency: pool(row.optionalString(O.currency)), storefront: pool(row.optionalString(O.storefront)),
                              source: files.line(row, at: O.fileID))
            input.orders[order.orderID] = Shared(order)
            orderSources.append((order.source, order.orderID))
        }
        input.orderIDsInFileOrder = orderSources.sorted { $0.source < $1.source }.map(\.orderID)
        var deliveries: [Delivery] = []
        typealias D = ServerDeliveries.Column
        let lines = try ServerDeliveries.Cursor(database, where: JoinScope.transactions("d.transaction_id"))
        while lines.hasDelivery {
            let row = lines.row
            var delivery = Delivery(ms: row.int(D.ms), userID: ids.intern(row, D.userID), transactionID: ids.intern(row, D.transactionID),
                                    productID: ids.intern(row, D.productID), orderID: ids.internUnlessNull(row, D.orderID),
                                    quantity: row.int(D.quantity), deliveryID: row.optionalString(D.deliveryID), copies: 0,
                                    source: files.line(row, at: D.fileID))
            delivery.copies = try lines.advance()
            deliveries.append(delivery)
        }
        deliveries.sort { ($0.ms, $0.source) < ($1.ms, $1.source) }
        for delivery in deliveries {
            input.deliveries[delivery.transactionID, default: []].append(delivery)
            if let orderID = delivery.orderID { input.orderDeliveriesInTimeOrder.append((orderID, delivery.transactionID)) }
        }
        deliveries = []
        try database.forEach("""
            SELECT ts_ms, user_id, transaction_id, file_id, line FROM raw_server__revocations
            WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            let revocation = Revocation(ms: row.int(0), userID: ids.intern(row, 1), transactionID: ids.intern(row, 2),
                                        source: files.line(row, at: 3))
            input.revocations[revocation.transactionID, default: []].append(revocation)
        }
        try database.forEach("""
            SELECT transaction_id, original_transaction_id, product_id, purchase_ms, expires_ms, environment, price_milli, currency,
                   storefront, app_account_token, type, quantity, ownership, subscription_group, offer,
                   file_id, line, file_id_2, line_2, file_id_3, line_3
            FROM stg_apple__transactions WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            var sources = [files.line(row, at: 15)]
            for column in [17, 19] where !row.isNull(column) { sources.append(files.line(row, at: column)) }
            let transaction = VerifiedTransaction(
                transactionID: ids.intern(row, 0), originalTransactionID: ids.intern(row, 1), productID: ids.intern(row, 2),
                purchaseMs: row.int(3), expiresMs: row.optionalInt(4), environment: pool(row.optionalString(5)),
                priceMilliunits: row.optionalInt(6), currency: pool(row.optionalString(7)), storefront: pool(row.optionalString(8)),
                appAccountToken: ids.internUnlessNull(row, 9), type: pool(row.optionalString(10)), quantity: row.int(11),
                ownership: pool(row.optionalString(12)), subscriptionGroup: ids.internUnlessNull(row, 13),
                sources: sources, offer: row.optionalString(14).flatMap(OfferTerms.init(rawValue:)))
            input.transactions[transaction.transactionID] = Shared(transaction)
        }
        try database.forEach("""
            SELECT transaction_id, kind, event_ms, revocation_type, revocation_percentage, file_id, line FROM stg_apple__refunds
            WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            let event = RefundEvent(kind: RefundEvent.Kind(rawValue: row.string(1)) ?? .refund, ms: row.int(2),
                                    revocationType: row.optionalString(3), revocationPercentage: row.optionalInt(4), source: files.line(row, at: 5))
            input.refunds[ids.intern(row, 0), default: []].append(event)
        }
        var senders: [InternedID: [(ms: Int64, source: SourceLine, userID: InternedID)]] = [:]
        try database.forEach("""
            SELECT transaction_id, user_id, first_ms, file_id, line FROM stg_receipts__senders WHERE \(JoinScope.transactions("transaction_id"))
            """) { row in
            senders[ids.intern(row, 0), default: []].append((row.int(2), files.line(row, at: 3), ids.intern(row, 1)))
        }
        for (transactionID, users) in senders {
            input.senders[transactionID] = users.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map(\.userID)
        }
        senders = [:]
        var claims: [(ms: Int64, source: SourceLine, orderID: InternedID, transactionID: InternedID)] = []
        try database.forEach("""
            SELECT order_id, transaction_id, received_ms, file_id, line FROM raw_receipts__verifications
            WHERE \(ReceiptClaims.condition) AND \(JoinScope.transactions("transaction_id"))
            """) { row in
            claims.append((row.int(2), files.line(row, at: 3), ids.intern(row, 0), ids.intern(row, 1)))
        }
        input.receiptClaims = claims.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map { ($0.orderID, $0.transactionID) }
        try database.forEach("""
            SELECT product_id, type, subscription_group, price, currency FROM (
              SELECT c.*, row_number() OVER (PARTITION BY product_id ORDER BY f.path DESC, c.line DESC) AS n
              FROM raw_catalog__products c JOIN files f USING (file_id)
            ) WHERE n = 1
            """) { row in
            let productID = ids.intern(row, 0)
            input.catalog[productID] = Shared(Product(productID: productID, type: row.string(1), subscriptionGroup: ids.internUnlessNull(row, 2),
                                                      price: row.optionalString(3).flatMap(Money.parse), currency: row.optionalString(4)))
        }
        input.ids = ids
        return input
    }
}

extension IDTable {
    /// The id in column `column` of `row`, numbered from SQLite's bytes (a `String` is made only
    /// for a text the table has not seen).
    mutating func intern(_ row: Row, _ column: Int) -> InternedID {
        row.statement.withText(Int32(column)) { intern($0) }
    }

    /// The id in column `column` of `row`, or nil when it is NULL.
    mutating func internUnlessNull(_ row: Row, _ column: Int) -> InternedID? {
        row.isNull(column) ? nil : intern(row, column)
    }
}

/// Hands out one shared copy of each distinct string, so a million repeats of a code cost one allocation.
struct StringPool {
    private var strings: Set<String> = []

    /// A text of up to 15 UTF-8 bytes is stored inside the `String` itself: there is no copy to share.
    mutating func callAsFunction(_ text: String) -> String {
        text.utf8.count <= 15 ? text : strings.insert(text).memberAfterInsert
    }

    mutating func callAsFunction(_ text: String?) -> String? { text.map { self($0) } }
}
