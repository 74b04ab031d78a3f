/// The sightings ingest decodes from Apple's payloads.
extension AppleTransaction {
    /// Decodes a V2 `JWSTransactionDecodedPayload`, in its own `environment`, else `fallback` (the
    /// carrying line's). Its revocation date goes to `reported`, for the line's clock to judge.
    /// `refund`: it is the transaction of a refund notification (`REFUND`, `REVOKE`), whose
    /// revocation date is a refund's even on a plan later upgraded.
    init(v2 fields: Fields, origin: TransactionOrigin, environment fallback: String? = nil, refund: Bool = false,
         reported: inout [ReportedTime]) throws(LineReject) {
        self.init(
            origin: origin,
            transactionID: try fields.requiredAppleString("transactionId"),
            productID: try fields.requiredAppleString("productId"),
            purchaseMs: try fields.requiredTime("purchaseDate"))
        originalTransactionID = try fields.appleString("originalTransactionId")
        expiresMs = try fields.time("expiresDate")
        revocationMs = try fields.time("revocationDate")
        revocationReason = try fields.appleString("revocationReason")
        revocationType = try fields.appleValue("revocationType", .revocationType)
        revocationPercentage = try fields.integer("revocationPercentage")
        // A share of the price in thousandths of a percent: beyond 100000 a refund would give back more
        // than was paid, below 0 it would take money back.
        if let percentage = revocationPercentage, !(0...100_000).contains(percentage) {
            throw LineReject("bad number in '\(fields.path)revocationPercentage' (0 to 100000): \(percentage)")
        }
        priceMilliunits = try fields.milliunits("price")
        currency = try fields.currency("currency")
        // Apple sends its price with its currency: a price alone would give way to the order's or
        // the catalog's, maybe in another currency, with nothing to tell anyone.
        if let priceMilliunits, currency == nil {
            throw LineReject("price without a currency: '\(fields.path)price' is \(priceMilliunits)")
        }
        storefront = try fields.appleString("storefront")
        environment = try fields.appleValue("environment", .environment) ?? fallback
        appAccountToken = try fields.appleString("appAccountToken")
        type = try fields.appleString("type")
        quantity = try fields.integer("quantity") ?? 1
        try checkQuantity(quantity, field: fields.path + "quantity")
        ownership = try fields.appleValue("inAppOwnershipType", .ownership)
        subscriptionGroup = try fields.appleString("subscriptionGroupIdentifier")
        if try fields.appleValue("offerDiscountType", .offerDiscountType) == "FREE_TRIAL" {
            offer = .freeTrial
        } else if try fields.appleString("offerType") != nil {
            offer = .introOffer
        }
        try Self.checkProductionDate(purchaseMs, fields, "purchaseDate", environment: environment)
        try Self.checkProductionDate(revocationMs, fields, "revocationDate", environment: environment)
        if let revocationMs { reported.append(ReportedTime(field: fields.path + "revocationDate", ms: revocationMs)) }
        // A plan an upgrade replaced (`isUpgraded`), as a receipt's `is_upgraded` item: its revocation
        // date is the upgrade's, which ends its period, and no refund (the goods go on under the new plan).
        // A refund notification, a `revocationType` (Apple's refunds carry one) or the refund reason of an
        // issue in the app (`revocationReason` 1) says it was refunded after all.
        if !refund, revocationType == nil, revocationReason != "1", try Self.isUpgradedV2(fields) {
            if let upgradeMs = revocationMs { endPeriod(atUpgrade: upgradeMs) }
            (revocationMs, revocationReason, revocationType, revocationPercentage) = (nil, nil, nil, nil)
        }
    }

    /// Whether a V2 transaction says `isUpgraded` (a JSON boolean; Apple sends it only when true).
    static func isUpgradedV2(_ fields: Fields) throws(LineReject) -> Bool {
        guard let element = try fields.element("isUpgraded") else { return false }
        switch element.kind {
        case .true: return true
        case .false: return false
        default: throw .wrongType(fields.path + "isUpgraded", expected: "a boolean", got: element)
        }
    }

    /// Decodes a verifyReceipt `in_app[]` / `latest_receipt_info[]` item (Apple sends numbers as
    /// strings). Its cancellation date, a refund's or an upgrade's, goes to `reported`, for the
    /// line's clock to judge.
    init(receiptItem fields: Fields, origin: TransactionOrigin, environment: String?, reported: inout [ReportedTime]) throws(LineReject) {
        guard let purchase = try Self.receiptTime(fields, "purchase_date", milliseconds: "purchase_date_ms") else {
            throw .missing(fields.path + "purchase_date_ms")
        }
        self.init(
            origin: origin,
            transactionID: try fields.requiredAppleString("transaction_id"),
            productID: try fields.requiredAppleString("product_id"),
            purchaseMs: purchase.ms)
        originalTransactionID = try fields.appleString("original_transaction_id")
        expiresMs = try Self.receiptTime(fields, "expires_date", milliseconds: "expires_date_ms")?.ms
        let cancelled = try Self.receiptTime(fields, "cancellation_date", milliseconds: "cancellation_date_ms")
        let cancelledMs = cancelled?.ms
        if try Self.isUpgraded(fields) {
            if let cancelledMs { endPeriod(atUpgrade: cancelledMs) }
        } else {
            revocationMs = cancelledMs
            revocationReason = try fields.appleString("cancellation_reason")
        }
        appAccountToken = try fields.appleString("app_account_token")
        quantity = try fields.integer("quantity") ?? 1
        try checkQuantity(quantity, field: fields.path + "quantity")
        ownership = try fields.appleValue("in_app_ownership_type", .ownership)
        subscriptionGroup = try fields.appleString("subscription_group_identifier")
        self.environment = environment
        if try fields.appleFlag("is_trial_period") {
            offer = .freeTrial
        } else if try fields.appleFlag("is_in_intro_offer_period") {
            offer = .introOffer
        } else if try Self.redeemsOffer(fields) {
            offer = .introOffer
        }
        try Self.checkProductionDate(purchase.ms, fields, purchase.field, environment: environment)
        if let cancelled { try Self.checkProductionDate(cancelled.ms, fields, cancelled.field, environment: environment) }
        if let cancelled { reported.append(ReportedTime(field: fields.path + cancelled.field, ms: cancelled.ms)) }
    }

    /// Whether a receipt item was bought under an offer code (`offer_code_ref_name`) or a
    /// promotional offer (`promotional_offer_id`): what a V2 `offerType` of 3 or 2 says, so its
    /// price is an offer's, never the catalog's full price.
    private static func redeemsOffer(_ fields: Fields) throws(LineReject) -> Bool {
        if try fields.appleString("offer_code_ref_name") != nil { return true }
        return try fields.appleString("promotional_offer_id") != nil
    }

    /// Rejects a date of this transaction's, read from `key` of `fields`, before the App Store
    /// opened if it is a Production transaction of `environment` (`LineRules.checkProductionDate`).
    private static func checkProductionDate(_ ms: Int64?, _ fields: Fields, _ key: String, environment: String?) throws(LineReject) {
        try LineRules.checkProductionDate(ms, field: fields.path + key, environment: environment)
    }

    /// Whether a receipt item was cancelled by an upgrade to a plan of its subscription group
    /// (`is_upgraded`): its cancellation date is then the upgrade's, not a refund's. The user goes on
    /// under the new plan, so the goods stay; Apple's prorated credit for the old plan's unused time
    /// goes toward the new one (StoreKit 2 gives such a transaction no `revocationDate`).
    static func isUpgraded(_ fields: Fields) throws(LineReject) -> Bool {
        try fields.appleFlag("is_upgraded")
    }

    /// Ends an upgraded item's period at the upgrade, where the new plan's begins.
    mutating func endPeriod(atUpgrade upgradeMs: Int64) {
        expiresMs = min(expiresMs ?? upgradeMs, upgradeMs)
        upgradedMs = min(upgradedMs ?? upgradeMs, upgradeMs)
    }

    /// A receipt date and the field it was read from: `milliseconds` (`<name>_ms`), else `<name>` itself,
    /// which iOS 6 receipts send as epoch milliseconds (`"1448346881000"`) and others as
    /// `2013-07-31 23:09:39 Etc/GMT`. Both names are given, as literals: each item reads three dates.
    fileprivate static func receiptTime(_ fields: Fields, _ name: String, milliseconds: String) throws(LineReject) -> (field: String, ms: Int64)? {
        if let ms = try fields.time(milliseconds) { return (milliseconds, ms) }
        guard let value = try fields.value(name) else { return nil }
        if case .string(let text) = value, text.hasSuffix(" Etc/GMT"), let ms = Timestamp.parse(String(text.dropLast(8))) {
            return (name, ms)
        }
        return try fields.time(name).map { (name, $0) }
    }
}
