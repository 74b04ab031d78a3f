/// `server/*.jsonl`: the app server's purchase log (CONTRACT.md §1.1).
enum ServerLogParser {
    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let event = try fields.requiredString("event")
        let known = ["order_created", "delivered", "delivery_revoked"]
        guard known.contains(event) else { return .ignored }
        let ts = try fields.requiredTime("ts")
        let rows: [RawRow]
        switch event {
        case "order_created":
            let price = try fields.amount("price")
            let order = OrderLine(
                ms: ts, orderID: try fields.requiredString("order_id"), userID: try fields.requiredString("user_id"),
                productID: try fields.requiredString("product_id"), price: price.map(Money.format),
                currency: try fields.currency("currency"), storefront: try fields.string("storefront"))
            try checkPricePair(price: order.price, currency: order.currency)
            rows = [order.rawRow()]
        case "delivered":
            let quantity = try fields.integer("quantity") ?? 1
            try checkQuantity(quantity, field: "quantity")
            rows = [DeliveryLine(
                ms: ts, userID: try fields.requiredString("user_id"), transactionID: try fields.requiredAppleString("transaction_id"),
                productID: try fields.requiredString("product_id"), orderID: try fields.string("order_id"), quantity: quantity,
                deliveryID: try fields.appleString("delivery_id")).rawRow()]
        default:
            rows = [RevocationLine(
                ms: ts, userID: try fields.requiredString("user_id"), transactionID: try fields.requiredAppleString("transaction_id"),
                reason: try fields.string("reason")).rawRow()]
        }
        try rules.checkEventTime(ts, field: "ts")
        return .accepted(rows)
    }

    /// An order's price is its `price` in its `currency` (CONTRACT.md §1.1, §1.6): one without the
    /// other is no price, and the transaction would take the catalog's, maybe in another currency,
    /// with nothing to tell anyone. So either alone rejects the line.
    static func checkPricePair(price: String?, currency: String?) throws(LineReject) {
        switch (price, currency) {
        case (let price?, nil): throw LineReject("price without a currency: 'price' is \(price)")
        case (nil, let currency?): throw LineReject("currency without a price: 'currency' is \(currency)")
        default: return
        }
    }
}

/// `registrations/*.jsonl`: user sign-ups (CONTRACT.md §1.4).
enum RegistrationParser {
    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let ts = try fields.requiredTime("ts")
        let row = RegistrationLine(
            ms: ts, userID: try fields.requiredString("user_id"), method: try fields.string("method"),
            idfv: MMPValue.cleanIDFV(try fields.string("idfv")), idfa: MMPValue.cleanIDFA(try fields.string("idfa")),
            appsflyerID: MMPValue.clean(try fields.string("appsflyer_id")), country: try fields.string("country")
        ).rawRow()
        try rules.checkEventTime(ts, field: "ts")
        return .accepted([row])
    }
}
