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
    /// Delivery lines that name an order, each copy of a delivery too, in time order: matching
    /// rule 1 (only the two ids are kept).
    var orderDeliveriesInTimeOrder: [(orderID: InternedID, transactionID: InternedID)] = []
    var revocations: [InternedID: [Revocation]] = [:]
    var transactions: [InternedID: Shared<VerifiedTransaction>] = [:]
    var refunds: [InternedID: [RefundEvent]] = [:]
    /// transaction id → users who sent a receipt with it, earliest first.
    var senders: [InternedID: [InternedID]] = [:]
    /// Receipt lines naming both an order and a transaction, in time order.
    var receiptClaims: [(orderID: InternedID, transactionID: InternedID)] = []
    var catalog: [InternedID: Shared<Product>] = [:]

    init() {}

    /// `facts` normalized (`Builder`); `files` names their sources.
    init(_ facts: ScopeFacts, files: SourceFiles) {
        var builder = Builder(files: files)
        facts.feed(into: &builder)
        self = builder.finished()
    }

    /// Normalizes a closed scope's facts as they are received: each order's first line, each
    /// delivery once with its copies counted, each transaction merged from its sightings
    /// (`ServerOrders`, `ServerDeliveries`, `AppleTransactions`), holding one id's lines at a time.
    /// What comes "first" at an equal time is the earlier in file order (`SourceLine`), so line 6
    /// of a file before its line 50.
    struct Builder: ScopeFactsReceiver {
        private var input = ReconciliationInput()
        /// Names the facts' sources (`finding.sources`): the caller's once the input is finished.
        private(set) var files: SourceFiles
        // Ids recur across orders, deliveries, receipts and transactions: each numbered once, in `ids`.
        private var ids = IDTable()
        // Codes (currency, storefront, type...) recur too: one copy of each that does not fit in a `String` itself.
        private var pool = StringPool()
        private var orderRuns = KeyRuns()
        private var orderSources: [(source: SourceLine, orderID: InternedID)] = []
        /// The delivery lines of one transaction, and the merge of one's sightings, until another's come.
        /// Sightings are merged as they come: one receipt replayed many times is many sightings of each transaction.
        private var deliveryLines: [(line: DeliveryLine, source: StoredLine)] = []
        private var merging: AppleTransactions.Merging?
        private var deliveries: [Delivery] = []
        /// Every delivery line naming an order, copies too: a copy may name the order its first line left out.
        private var orderLines: [(ms: Int64, source: SourceLine, orderID: InternedID, transactionID: InternedID)] = []
        private var claims: [(ms: Int64, source: SourceLine, orderID: InternedID, transactionID: InternedID)] = []

        init(files: SourceFiles) {
            self.files = files
        }

        private mutating func source(_ stored: StoredLine) -> SourceLine { files.line(file: stored.file, stored.line) }

        mutating func receive(order line: OrderLine, at stored: StoredLine) {
            var orderID = line.orderID
            guard orderID.withUTF8({ orderRuns.starts($0) }) else { return }
            let order = Order(orderID: ids.intern(line.orderID), ms: line.ms, userID: ids.intern(line.userID),
                              productID: ids.intern(line.productID), price: line.price.flatMap(Money.parse),
                              currency: pool(line.currency), storefront: pool(line.storefront), source: source(stored))
            input.orders[order.orderID] = Shared(order)
            orderSources.append((order.source, order.orderID))
        }

        mutating func receive(delivery line: DeliveryLine, at source: StoredLine) {
            if let last = deliveryLines.last, !last.line.transactionID.hasSameUTF8(as: line.transactionID) { collapseDeliveries() }
            deliveryLines.append((line, source))
        }

        private mutating func collapseDeliveries() {
            for (line, stored, copies) in ServerDeliveries.collapsed(deliveryLines) {
                deliveries.append(Delivery(ms: line.ms, userID: ids.intern(line.userID), transactionID: ids.intern(line.transactionID),
                                           productID: ids.intern(line.productID), orderID: line.orderID.map { ids.intern($0) },
                                           quantity: line.quantity, deliveryID: line.deliveryID, copies: copies, source: source(stored)))
            }
            for (line, stored) in deliveryLines {
                guard let orderID = line.orderID else { continue }
                orderLines.append((line.ms, source(stored), ids.intern(orderID), ids.intern(line.transactionID)))
            }
            deliveryLines.removeAll(keepingCapacity: true)
        }

        mutating func receive(revocation line: RevocationLine, at stored: StoredLine) {
            let revocation = Revocation(ms: line.ms, userID: ids.intern(line.userID), transactionID: ids.intern(line.transactionID),
                                        source: source(stored))
            input.revocations[revocation.transactionID, default: []].append(revocation)
        }

        mutating func receive(sighting: AppleTransaction, at source: StoredLine) {
            if merging?.merged.transactionID.hasSameUTF8(as: sighting.transactionID) == true {
                merging?.add(sighting, at: source)
                return
            }
            merge()
            merging = AppleTransactions.Merging(first: sighting, at: source)
        }

        private mutating func merge() {
            defer { merging = nil }
            guard let merged = merging?.finished() else { return }
            let transactionID = ids.intern(merged.transactionID)
            var sources: [SourceLine] = []
            for stored in merged.sources { sources.append(source(stored)) }
            input.transactions[transactionID] = Shared(VerifiedTransaction(
                transactionID: transactionID, originalTransactionID: ids.intern(merged.originalTransactionID),
                productID: ids.intern(merged.productID), purchaseMs: merged.purchaseMs, expiresMs: merged.expiresMs,
                environment: pool(merged.environment), priceMilliunits: merged.priceMilliunits, currency: pool(merged.currency),
                storefront: pool(merged.storefront), appAccountToken: merged.appAccountToken.map { ids.intern($0) }, type: pool(merged.type),
                quantity: merged.quantity, ownership: pool(merged.ownership), subscriptionGroup: merged.subscriptionGroup.map { ids.intern($0) },
                sources: sources, offer: merged.offer))
            if !merged.refunds.isEmpty {
                var refunds: [RefundEvent] = []
                for refund in merged.refunds {
                    refunds.append(RefundEvent(kind: refund.kind, ms: refund.ms, revocationType: refund.revocationType,
                                               revocationPercentage: refund.revocationPercentage, source: source(refund.source)))
                }
                input.refunds[transactionID] = refunds
            }
            if !merged.senders.isEmpty {
                // Earliest first; at one time, the first in file order; then by user id.
                var senders: [(ms: Int64, source: SourceLine, userID: InternedID)] = []
                for sender in merged.senders { senders.append((sender.firstMs, source(sender.source), ids.intern(sender.userID))) }
                input.senders[transactionID] = senders.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map(\.userID)
            }
        }

        mutating func receive(claim: ScopeFacts.ReceiptClaim) {
            claims.append((claim.receivedMs, source(claim.source), ids.intern(claim.orderID), ids.intern(claim.transactionID)))
        }

        mutating func receive(product: ScopeFacts.CatalogProduct) {
            let productID = ids.intern(product.productID)
            input.catalog[productID] = Shared(Product(productID: productID, type: product.type,
                                                      subscriptionGroup: product.subscriptionGroup.map { ids.intern($0) },
                                                      price: product.price.flatMap(Money.parse), currency: product.currency))
        }

        /// The input, once every fact is in.
        mutating func finished() -> ReconciliationInput {
            collapseDeliveries()
            merge()
            input.orderIDsInFileOrder = orderSources.sorted { $0.source < $1.source }.map(\.orderID)
            deliveries.sort { ($0.ms, $0.source) < ($1.ms, $1.source) }
            for delivery in deliveries {
                input.deliveries[delivery.transactionID, default: []].append(delivery)
            }
            deliveries = []
            input.orderDeliveriesInTimeOrder = orderLines.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map { ($0.orderID, $0.transactionID) }
            orderLines = []
            input.receiptClaims = claims.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }.map { ($0.orderID, $0.transactionID) }
            input.ids = ids
            return input
        }
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
