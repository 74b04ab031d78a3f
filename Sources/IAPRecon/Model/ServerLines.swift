/// An `order_created` line of the server log (CONTRACT.md §1.1), as parsed and as stored
/// (`raw_server__orders`).
public struct OrderLine: Sendable, Equatable {
    public var ms: Int64
    public var orderID: String
    public var userID: String
    public var productID: String
    /// Exact decimal text (`Money.format`).
    public var price: String?
    public var currency: String?
    public var storefront: String?
}

/// A `delivered` line of the server log, as parsed and as stored (`raw_server__deliveries`).
public struct DeliveryLine: Sendable, Equatable {
    public var ms: Int64
    public var userID: String
    public var transactionID: String
    public var productID: String
    public var orderID: String?
    public var quantity: Int64
    public var deliveryID: String?

    /// What makes lines of one transaction one delivery (CONTRACT.md §1.1): its `delivery_id`,
    /// unique within its transaction only; without one, all the line says but its order. Ids are
    /// equal when their bytes are.
    enum Key: Hashable {
        case id(StoredText)
        case line(ms: Int64, userID: StoredText, productID: StoredText, quantity: Int64)
    }

    var key: Key {
        deliveryID.map { Key.id(StoredText($0)) }
            ?? .line(ms: ms, userID: StoredText(userID), productID: StoredText(productID), quantity: quantity)
    }
}

/// A `delivery_revoked` line of the server log, as parsed and as stored (`raw_server__revocations`).
public struct RevocationLine: Sendable, Equatable {
    public var ms: Int64
    public var userID: String
    public var transactionID: String
    public var reason: String?
}
