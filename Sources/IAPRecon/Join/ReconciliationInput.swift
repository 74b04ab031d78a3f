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
        let sightings = try AppleTransactions.Cursor(database, where: JoinScope.transactions("a.transaction_id"))
        while let merged = try sightings.next() {
            func line(_ stored: AppleTransactions.StoredLine) -> SourceLine { files.line(file: stored.file, stored.line) }
            let transactionID = ids.intern(merged.transactionID)
            input.transactions[transactionID] = Shared(VerifiedTransaction(
                transactionID: transactionID, originalTransactionID: ids.intern(merged.originalTransactionID),
                productID: ids.intern(merged.productID), purchaseMs: merged.purchaseMs, expiresMs: merged.expiresMs,
                environment: pool(merged.environment), priceMilliunits: merged.priceMilliunits, currency: pool(merged.currency),
                storefront: pool(merged.storefront), appAccountToken: merged.appAccountToken.map { ids.intern($0) }, type: pool(merged.type),
                quantity: merged.quantity, ownership: pool(merged.ownership), subscriptionGroup: merged.subscriptionGroup.map { ids.intern($0) },
                sources: merged.sources.map(line), offer: merged.offer))
            if !merged.refunds.isEmpty {
                input.refunds[transactionID] = merged.refunds.map {
                    RefundEvent(kind: $0.kind, ms: $0.ms, revocationType: $0.revocationType, revocationPercentage: $0.revocationPercentage,
                                source: line($0.source))
                }
            }
            if !merged.senders.isEmpty {
                // Earliest first; at one time, the first in file order; then by user id.
                input.senders[transactionID] = merged.senders.map { (ms: $0.firstMs, source: line($0.source), userID: ids.intern($0.userID)) }
                    .sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map(\.userID)
            }
        }
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
