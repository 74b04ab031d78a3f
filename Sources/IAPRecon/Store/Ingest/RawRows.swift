/// The rows ingest stores for the parsed lines of the server log and Apple's sightings, in
/// their tables' `columns` order.
extension AppleTransaction {
    func rawRow(item: Int) -> RawRow {
        RawRow(.appleTransactions, item: item, [
            .integer(origin.code), SQLValue(eventMs), SQLValue(userID), SQLValue(claimedOrderID), .text(transactionID),
            SQLValue(originalTransactionID), .text(productID), .integer(purchaseMs), SQLValue(expiresMs),
            SQLValue(revocationMs), SQLValue(revocationReason), SQLValue(revocationType), SQLValue(revocationPercentage),
            SQLValue(priceMilliunits), SQLValue(currency), SQLValue(storefront), AppleEnvironment.codes.stored(environment),
            SQLValue(appAccountToken), AppleProductType.codes.stored(type), .integer(quantity), AppleOwnership.codes.stored(ownership),
            SQLValue(subscriptionGroup), SQLValue(notificationUUID), AppleNotificationType.codes.stored(notificationType),
            SQLValue(offer?.rawValue),
        ])
    }
}

extension OrderLine {
    func rawRow() -> RawRow {
        RawRow(.orders, [
            .integer(ms), .text(orderID), .text(userID), .text(productID), SQLValue(price), SQLValue(currency), SQLValue(storefront),
        ])
    }
}

extension DeliveryLine {
    func rawRow() -> RawRow {
        RawRow(.deliveries, [
            .integer(ms), .text(userID), .text(transactionID), .text(productID), SQLValue(orderID), .integer(quantity),
            SQLValue(deliveryID),
        ])
    }
}

extension RevocationLine {
    func rawRow() -> RawRow {
        RawRow(.revocations, [.integer(ms), .text(userID), .text(transactionID), SQLValue(reason)])
    }
}
