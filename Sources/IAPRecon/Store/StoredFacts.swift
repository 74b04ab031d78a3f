/// How the store's fact rows read back into values: the one place that knows their columns.
///
/// A reader selects rows here and gets the parser's own values (`AppleTransaction`, `OrderLine`,
/// `DeliveryLine`, `RevocationLine`), each with where it is stored; the rules that normalize and
/// decide them run on the values (`AppleTransactions`, `ServerDeliveries`, `Sources/IAPRecon/Join`).
enum StoredSightings {
    /// The sightings `condition` selects (on the sightings as `a`), a transaction's together in file
    /// order (files in path order, then line, then item): the order `AppleTransactions` merges them in.
    static func selection(where condition: String) -> String {
        """
        SELECT a.transaction_id, a.original_transaction_id, a.product_id, a.purchase_ms, a.expires_ms, a.environment,
               a.price_milli_n, a.currency, a.storefront, a.app_account_token, a.type, a.quantity_n, a.ownership,
               a.subscription_group, a.event_ms, a.file_id, a.notification_uuid, a.notification_type,
               a.revocation_ms, a.revocation_type, a.revocation_percentage_n, a.origin, a.user_id, a.line, a.offer,
               a.claimed_order_id, a.revocation_reason
        FROM raw_apple__transactions a JOIN files f USING (file_id)
        WHERE \(condition)
        ORDER BY a.transaction_id, f.path, a.line, a.item
        """
    }
}

extension AppleTransaction {
    /// The sighting in a row of `StoredSightings.selection`, its codes read back to their text.
    /// - Throws: `UnknownStoredCode` for a code column this build cannot read (`AppleCodes`).
    init(_ row: Row) throws(UnknownStoredCode) {
        self.init(origin: try TransactionOrigin.read(row, 21), transactionID: row.string(0), productID: row.string(2), purchaseMs: row.int(3))
        eventMs = row.optionalInt(14)
        userID = row.optionalString(22)
        claimedOrderID = row.optionalString(25)
        originalTransactionID = row.optionalString(1)
        expiresMs = row.optionalInt(4)
        revocationMs = row.optionalInt(18)
        revocationReason = row.optionalString(26)
        revocationType = row.optionalString(19)
        revocationPercentage = row.optionalInt(20)
        priceMilliunits = row.optionalInt(6)
        currency = row.optionalString(7)
        storefront = row.optionalString(8)
        environment = try AppleEnvironment.codes.read(row, 5)
        appAccountToken = row.optionalString(9)
        type = try AppleProductType.codes.read(row, 10)
        // Every iaprecon has stored one; were one missing, it is Apple's default.
        quantity = row.optionalInt(11) ?? 1
        ownership = try AppleOwnership.codes.read(row, 12)
        subscriptionGroup = row.optionalString(13)
        notificationUUID = row.optionalString(16)
        notificationType = try AppleNotificationType.codes.read(row, 17)
        offer = row.optionalString(24).flatMap(OfferTerms.init(rawValue:))
    }
}

extension StoredLine {
    /// Where the sighting in a row of `StoredSightings.selection` is stored.
    init(_ row: Row) {
        self.init(file: row.int(15), line: row.int(23))
    }

    /// The stored line in columns `column` (file id) and `column + 1` (line) of `row`.
    init(_ row: Row, at column: Int) {
        self.init(file: row.int(column), line: row.int(column + 1))
    }
}
