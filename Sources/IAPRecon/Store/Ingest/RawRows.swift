/// The row ingest stores for each kind of parsed line, its values in its table's `columns`
/// order: the one place that order is spelled out beside the table.
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

    /// Appends its sighting's row and, when it names another app than its line or tells of an upgrade,
    /// the row keeping that to `rows`: a line's rows are built in one array, not one per transaction.
    func appendRawRows(item: Int, to rows: inout [RawRow]) {
        rows.append(rawRow(item: item))
        if let bundleApartFromLine { rows.append(RawRow(.transactionBundles, item: item, [.text(bundleApartFromLine)])) }
        if let upgradedMs { rows.append(RawRow(.transactionUpgrades, item: item, [.integer(upgradedMs)])) }
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

extension VerificationLine {
    func rawRow() -> RawRow {
        RawRow(.verifications, [
            .integer(receivedMs), .text(userID), SQLValue(orderID), SQLValue(transactionID), .integer(status), SQLValue(environment),
            SQLValue(bundleID), .text(shape),
        ])
    }
}

extension NotificationLine {
    func rawRow() -> RawRow {
        RawRow(.notifications, [
            SQLValue(uuid), .text(type), SQLValue(subtype), SQLValue(signedMs), SQLValue(environment), .text(version), SQLValue(transactionID),
            SQLValue(bundleID),
        ])
    }

    /// The type and version of a row `rawRow()` made, or nil for a row of another table.
    static func typeAndVersion(of row: RawRow) -> (type: String, version: String)? {
        guard row.table == .notifications, case .text(let type) = row.values[1], case .text(let version) = row.values[5] else { return nil }
        return (type, version)
    }
}

extension RegistrationLine {
    func rawRow() -> RawRow {
        RawRow(.registrations, [
            .integer(ms), .text(userID), SQLValue(method), SQLValue(idfv), SQLValue(idfa), SQLValue(appsflyerID), SQLValue(country),
        ])
    }
}

extension MMPEventLine {
    func rawRow() -> RawRow {
        RawRow(.mmpEvents, [
            .integer(eventWallMs), SQLValue(installWallMs), SQLValue(eventName), SQLValue(mediaSource), SQLValue(campaign),
            SQLValue(customerUserID), SQLValue(idfv), SQLValue(idfa), SQLValue(appsflyerID), SQLValue(revenue), SQLValue(revenueCurrency),
            SQLValue(revenueUSD), .integer(isRetargeting ? 1 : 0), eventValueKey.map { .blob($0) } ?? .null,
        ])
    }
}

extension SpendLine {
    func rawRow() -> RawRow {
        RawRow(.spend, [.text(day), .text(mediaSource), SQLValue(campaign), SQLValue(spend), .text(currency)])
    }
}

extension ScopeFacts.CatalogProduct {
    func rawRow() -> RawRow {
        RawRow(.catalog, [.text(productID), .text(type), SQLValue(subscriptionGroup), SQLValue(price), SQLValue(currency)])
    }
}

extension FXRateLine {
    func rawRow() -> RawRow {
        RawRow(.fx, [.text(day), .text(currency), .text(rate)])
    }
}

extension SalesReportLine {
    /// What a report row of the app itself keeps: only its day, which the report covers (no
    /// product, no units: the tie-out compares in-app rows alone).
    static func coverageRow(day: String, productType: String) -> RawRow {
        RawRow(.appleSales, [.text(day), .null, .text(productType), .null, .null, .null, .null, .null, .null])
    }

    /// Beside a kept row, the SKU of the app it belongs to (its `Parent Identifier`).
    static func appRow(parentSKU: String) -> RawRow {
        RawRow(.salesApps, [.text(parentSKU)])
    }

    /// The Product Type Identifier of a `coverageRow` (an app row of the report), or nil for any other row.
    static func productType(ofCoverage row: RawRow) -> String? {
        guard row.table == .appleSales, row.values[1] == .null, case .text(let productType) = row.values[2] else { return nil }
        return productType
    }

    func rawRow() -> RawRow {
        RawRow(.appleSales, [
            .text(day), .text(productID), .text(productType), .integer(units), .text(country), .text(customerPrice),
            .text(customerCurrency), .text(proceeds), .text(proceedsCurrency),
        ])
    }
}
