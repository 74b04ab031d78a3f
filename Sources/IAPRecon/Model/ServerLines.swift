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

    func rawRow() -> RawRow {
        RawRow(.orders, [
            .integer(ms), .text(orderID), .text(userID), .text(productID), SQLValue(price), SQLValue(currency), SQLValue(storefront),
        ])
    }
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
    /// equal when their bytes are, as everywhere ids are compared (not by Unicode equivalence).
    enum Key: Hashable {
        case id(String)
        case line(ms: Int64, userID: String, productID: String, quantity: Int64)

        static func == (lhs: Key, rhs: Key) -> Bool {
            switch (lhs, rhs) {
            case let (.id(left), .id(right)): left.utf8.elementsEqual(right.utf8)
            case let (.line(leftMs, leftUser, leftProduct, leftQuantity), .line(rightMs, rightUser, rightProduct, rightQuantity)):
                leftMs == rightMs && leftQuantity == rightQuantity && leftUser.utf8.elementsEqual(rightUser.utf8)
                    && leftProduct.utf8.elementsEqual(rightProduct.utf8)
            default: false
            }
        }

        func hash(into hasher: inout Hasher) {
            func bytes(_ text: String) {
                var text = text
                text.withUTF8 { utf8 in
                    hasher.combine(utf8.count)
                    hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
                }
            }
            switch self {
            case .id(let id):
                hasher.combine(0)
                bytes(id)
            case let .line(ms, userID, productID, quantity):
                hasher.combine(1)
                hasher.combine(ms)
                bytes(userID)
                bytes(productID)
                hasher.combine(quantity)
            }
        }
    }

    var key: Key {
        deliveryID.map(Key.id) ?? .line(ms: ms, userID: userID, productID: productID, quantity: quantity)
    }

    func rawRow() -> RawRow {
        RawRow(.deliveries, [
            .integer(ms), .text(userID), .text(transactionID), .text(productID), SQLValue(orderID), .integer(quantity),
            SQLValue(deliveryID),
        ])
    }
}

/// A `delivery_revoked` line of the server log, as parsed and as stored (`raw_server__revocations`).
public struct RevocationLine: Sendable, Equatable {
    public var ms: Int64
    public var userID: String
    public var transactionID: String
    public var reason: String?

    func rawRow() -> RawRow {
        RawRow(.revocations, [.integer(ms), .text(userID), .text(transactionID), SQLValue(reason)])
    }
}
