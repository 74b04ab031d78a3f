/// How the store's fact rows read back into values: the one place that knows their columns.
///
/// A reader selects rows here and gets the parser's own values (`AppleTransaction`, `OrderLine`,
/// `DeliveryLine`, `RevocationLine`), each with where it is stored; the rules that normalize and
/// decide them run on the values (`AppleTransactions`, `ServerDeliveries`, `Sources/IAPRecon/Join`).
enum StoredSightings {
    /// What `selection` selects of a sighting.
    enum Column: Int, SelectedColumn {
        case transactionID, originalTransactionID, productID, purchaseMs, expiresMs, environment, priceMilliunits, currency
        case storefront, appAccountToken, type, quantity, ownership, subscriptionGroup, eventMs, fileID, notificationUUID
        case notificationType, revocationMs, revocationType, revocationPercentage, origin, userID, line, offer, claimedOrderID
        case revocationReason, upgradedMs

        var sql: String {
            switch self {
            // A row beside the few sightings that tell of an upgrade, not a column of every sighting.
            case .upgradedMs:
                "(SELECT u.upgraded_ms FROM raw_apple__transaction_upgrades u WHERE u.file_id = a.file_id AND u.line = a.line AND u.item = a.item)"
            default: "a." + Self.names[rawValue]
            }
        }

        private static let names = [
            "transaction_id", "original_transaction_id", "product_id", "purchase_ms", "expires_ms", "environment", "price_milli_n",
            "currency", "storefront", "app_account_token", "type", "quantity_n", "ownership", "subscription_group", "event_ms",
            "file_id", "notification_uuid", "notification_type", "revocation_ms", "revocation_type", "revocation_percentage_n",
            "origin", "user_id", "line", "offer", "claimed_order_id", "revocation_reason",
        ]
    }

    /// Made once: a caller may select one transaction at a time.
    private static let selectList = Column.selectList

    /// The sightings `condition` selects (on the sightings as `a`), a transaction's together in file
    /// order (files in path order, then line, then item): the order `AppleTransactions` merges them in.
    static func selection(where condition: String) -> String {
        """
        SELECT \(selectList)
        FROM raw_apple__transactions a JOIN files f USING (file_id)
        WHERE \(condition)
        ORDER BY a.transaction_id, f.path, a.line, a.item
        """
    }
}

extension AppleTransaction {
    /// The sighting in a row of `StoredSightings.selection`, its codes read back to their text.
    /// - Throws: `UnknownStoredCode` for a code column this build cannot read (`AppleCodes`).
    init(_ row: some StoredRow) throws(UnknownStoredCode) {
        typealias Column = StoredSightings.Column
        self.init(origin: try TransactionOrigin.read(row, Column.origin.rawValue), transactionID: row.string(Column.transactionID),
                  productID: row.string(Column.productID), purchaseMs: row.int(Column.purchaseMs))
        eventMs = row.optionalInt(Column.eventMs)
        userID = row.optionalString(Column.userID)
        claimedOrderID = row.optionalString(Column.claimedOrderID)
        originalTransactionID = row.optionalString(Column.originalTransactionID)
        expiresMs = row.optionalInt(Column.expiresMs)
        upgradedMs = row.optionalInt(Column.upgradedMs)
        revocationMs = row.optionalInt(Column.revocationMs)
        revocationReason = row.optionalString(Column.revocationReason)
        revocationType = row.optionalString(Column.revocationType)
        revocationPercentage = row.optionalInt(Column.revocationPercentage)
        priceMilliunits = row.optionalInt(Column.priceMilliunits)
        currency = row.optionalString(Column.currency)
        storefront = row.optionalString(Column.storefront)
        environment = try AppleEnvironment.codes.read(row, Column.environment.rawValue)
        appAccountToken = row.optionalString(Column.appAccountToken)
        type = try AppleProductType.codes.read(row, Column.type.rawValue)
        // Every iaprecon has stored one; were one missing, it is Apple's default.
        quantity = row.optionalInt(Column.quantity) ?? 1
        ownership = try AppleOwnership.codes.read(row, Column.ownership.rawValue)
        subscriptionGroup = row.optionalString(Column.subscriptionGroup)
        notificationUUID = row.optionalString(Column.notificationUUID)
        notificationType = try AppleNotificationType.codes.read(row, Column.notificationType.rawValue)
        offer = row.optionalString(Column.offer).flatMap(OfferTerms.init(rawValue:))
    }
}

extension StoredLine {
    /// Where the sighting in a row of `StoredSightings.selection` is stored.
    init(_ row: some StoredRow) {
        self.init(file: row.int(StoredSightings.Column.fileID), line: row.int(StoredSightings.Column.line))
    }
}
