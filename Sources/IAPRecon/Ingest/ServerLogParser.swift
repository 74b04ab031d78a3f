/// `server/*.jsonl`: the app server's purchase log (CONTRACT.md §1.1).
enum ServerLogParser {
    static func parse(_ object: JSONObject, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let fields = Fields(object)
        let event = try fields.requiredString("event")
        let known = ["order_created", "delivered", "delivery_revoked"]
        guard known.contains(event) else { return .ignored }
        let ts = try fields.requiredTime("ts")
        try rules.checkEventTime(ts, field: "ts")
        switch event {
        case "order_created":
            let price = try fields.amount("price")
            return .accepted([RawRow(.orders, [
                .integer(ts), .text(try fields.requiredString("order_id")), .text(try fields.requiredString("user_id")),
                .text(try fields.requiredString("product_id")), SQLValue(price.map(Money.format)),
                SQLValue(try fields.string("currency")), SQLValue(try fields.string("storefront")),
            ])])
        case "delivered":
            let quantity = try fields.integer("quantity") ?? 1
            try checkQuantity(quantity, field: "quantity")
            guard quantity <= 1_000_000 else { throw LineReject("bad number in 'quantity': \(quantity)") }
            return .accepted([RawRow(.deliveries, [
                .integer(ts), .text(try fields.requiredString("user_id")), .text(try fields.requiredAppleString("transaction_id")),
                .text(try fields.requiredString("product_id")), SQLValue(try fields.string("order_id")), .integer(quantity),
                SQLValue(try fields.appleString("delivery_id")),
            ])])
        default:
            return .accepted([RawRow(.revocations, [
                .integer(ts), .text(try fields.requiredString("user_id")), .text(try fields.requiredAppleString("transaction_id")),
                SQLValue(try fields.string("reason")),
            ])])
        }
    }
}

/// `registrations/*.jsonl`: user sign-ups (CONTRACT.md §1.4).
enum RegistrationParser {
    static func parse(_ object: JSONObject, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let fields = Fields(object)
        let ts = try fields.requiredTime("ts")
        try rules.checkEventTime(ts, field: "ts")
        return .accepted([RawRow(.registrations, [
            .integer(ts), .text(try fields.requiredString("user_id")),
            SQLValue(try fields.string("method")), SQLValue(MMPValue.clean(try fields.string("idfv"))),
            SQLValue(MMPValue.cleanIDFA(try fields.string("idfa"))), SQLValue(MMPValue.clean(try fields.string("appsflyer_id"))),
            SQLValue(try fields.string("country")),
        ])])
    }
}
