/// Takes the stored facts of one closed scope (`JoinScope`) as values, one at a time: all the join
/// decides from. The store hands them over (`StoredScopeFacts`); the normalizing rules and the
/// join run on them with no database in between (`ReconciliationInput.Builder`).
///
/// Each line comes with where it is stored. The lines of one order, the delivery lines of one
/// transaction and the sightings of one transaction come one after another, in file order (files
/// in path order, then line, then item), so the rules take an order's first line, collapse a
/// delivery's copies and merge a transaction's sightings as they meet them, holding one id's lines
/// at a time.
protocol ScopeFactsReceiver {
    mutating func receive(order line: OrderLine, at source: StoredLine)
    mutating func receive(delivery line: DeliveryLine, at source: StoredLine)
    mutating func receive(revocation line: RevocationLine, at source: StoredLine)
    mutating func receive(sighting: AppleTransaction, at source: StoredLine)
    mutating func receive(claim: ScopeFacts.ReceiptClaim)
    /// Each product of the catalog (the whole of it, whatever the scope) as its last line says.
    mutating func receive(product: ScopeFacts.CatalogProduct)
}

/// A closed scope's facts held whole, in the order they were received: for tests, which build
/// them by hand, and to hand them on to another receiver (`feed`).
struct ScopeFacts: ScopeFactsReceiver {
    /// Every line of the scope's orders.
    var orders: [(line: OrderLine, source: StoredLine)] = []
    /// Every delivery line of the scope's transactions.
    var deliveries: [(line: DeliveryLine, source: StoredLine)] = []
    /// Every revocation line of the scope's transactions.
    var revocations: [(line: RevocationLine, source: StoredLine)] = []
    /// Every sighting of the scope's transactions.
    var sightings: [(transaction: AppleTransaction, source: StoredLine)] = []
    /// Every receipt line of the scope's transactions that names an order too (`ReceiptClaims`).
    var receiptClaims: [ReceiptClaim] = []
    /// Each product of the catalog (the whole of it, whatever the scope) as its last line says.
    var catalog: [CatalogProduct] = []

    /// A receipt line naming both an order and a transaction: matching rule 2's evidence.
    struct ReceiptClaim {
        var orderID: String
        var transactionID: String
        var receivedMs: Int64
        var source: StoredLine
    }

    /// A product of `catalog/products.csv` (CONTRACT.md §1.6), its price as exact decimal text.
    struct CatalogProduct {
        var productID: String
        var type: String
        var subscriptionGroup: String?
        var price: String?
        var currency: String?
    }

    mutating func receive(order line: OrderLine, at source: StoredLine) { orders.append((line, source)) }
    mutating func receive(delivery line: DeliveryLine, at source: StoredLine) { deliveries.append((line, source)) }
    mutating func receive(revocation line: RevocationLine, at source: StoredLine) { revocations.append((line, source)) }
    mutating func receive(sighting: AppleTransaction, at source: StoredLine) { sightings.append((sighting, source)) }
    mutating func receive(claim: ReceiptClaim) { receiptClaims.append(claim) }
    mutating func receive(product: CatalogProduct) { catalog.append(product) }

    /// Hands every fact to `receiver`, kind by kind in the store's order.
    func feed(into receiver: inout some ScopeFactsReceiver) {
        for (line, source) in orders { receiver.receive(order: line, at: source) }
        for (line, source) in deliveries { receiver.receive(delivery: line, at: source) }
        for (line, source) in revocations { receiver.receive(revocation: line, at: source) }
        for (sighting, source) in sightings { receiver.receive(sighting: sighting, at: source) }
        for claim in receiptClaims { receiver.receive(claim: claim) }
        for product in catalog { receiver.receive(product: product) }
    }
}
