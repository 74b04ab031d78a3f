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
            rows = [OrderLine(
                ms: ts, orderID: try fields.requiredString("order_id"), userID: try fields.requiredString("user_id"),
                productID: try fields.requiredString("product_id"), price: price.map(Money.format),
                currency: try fields.currency("currency"), storefront: try fields.string("storefront")).rawRow()]
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
}

/// `registrations/*.jsonl`: user sign-ups (CONTRACT.md §1.4).
enum RegistrationParser {
    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let ts = try fields.requiredTime("ts")
        let row = RegistrationLine(
            ms: ts, userID: try fields.requiredString("user_id"), method: try fields.string("method"),
            idfv: MMPValue.clean(try fields.string("idfv")), idfa: MMPValue.cleanIDFA(try fields.string("idfa")),
            appsflyerID: MMPValue.clean(try fields.string("appsflyer_id")), country: try fields.string("country")
        ).rawRow()
        try rules.checkEventTime(ts, field: "ts")
        return .accepted([row])
    }
}
