import Foundation

/// `consumption_requests.jsonl`: the answer to each `CONSUMPTION_REQUEST` (CONTRACT.md §3).
///
/// When a customer asks Apple for a refund, Apple sends `CONSUMPTION_REQUEST` and gives the
/// developer 12 hours to answer through the App Store Server API's Send Consumption
/// Information endpoint. Each line holds the request's `notificationUUID` and `transactionId`
/// and the `ConsumptionRequest` body to send, filled from evidence the store holds, as of the
/// moment Apple asked:
/// - `deliveryStatus`: 0 (delivered and working) when the delivery log delivered the
///   transaction before the request, 2 (wrong item) when what it delivered was another product,
///   5 (not delivered, other reason) when it never delivered it, or took it back
///   (`delivery_revoked`) from each user it went to after their last delivery and before the request.
/// - `accountTenure`: the days since the user's first sign-up, in Apple's buckets.
/// - `lifetimeDollarsPurchased` / `lifetimeDollarsRefunded`: the user's verified production
///   purchases and refunds up to the request, in USD at fx.csv's purchase-day rate, in Apple's
///   buckets (only when the reporting currency is USD and every amount converts).
/// - `appAccountToken`: the transaction's, else the empty string Apple asks for.
/// - `platform`: 1 (Apple) when the user signed up with an IDFV, which only Apple platforms give.
/// Everything else (consumption, play time, user status, refund preference, sample content) is
/// Apple's undeclared value, and `customerConsented` is false: the store holds no consent, so
/// the app server must set it from its own record before sending. Sending is the app server's
/// job; it holds the API key.
public struct ConsumptionAnswer: Sendable, Equatable {
    public var notificationUUID: String
    public var transactionID: String
    /// When Apple asked (the notification's `signedDate`).
    public var requestedMs: Int64
    public var userID: String?
    public var deliveryStatus: Int
    public var accountTenure: Int
    public var lifetimeDollarsPurchased: Int
    public var lifetimeDollarsRefunded: Int
    public var appAccountToken: String
    public var platform: Int

    /// The request body for Send Consumption Information, keys in Apple's names, sorted.
    public var body: JSONValue {
        .object([
            ("accountTenure", .int(accountTenure)),
            ("appAccountToken", .string(appAccountToken)),
            ("consumptionStatus", .int(0)),
            ("customerConsented", .bool(false)),
            ("deliveryStatus", .int(deliveryStatus)),
            ("lifetimeDollarsPurchased", .int(lifetimeDollarsPurchased)),
            ("lifetimeDollarsRefunded", .int(lifetimeDollarsRefunded)),
            ("platform", .int(platform)),
            ("playTime", .int(0)),
            ("refundPreference", .int(0)),
            ("sampleContentProvided", .bool(false)),
            ("userStatus", .int(0)),
        ])
    }

    /// What each member of `body` says, in words, by its key: for people who read the answer
    /// (`history --transaction`), not for Apple.
    public var bodyMeanings: [String: String] {
        [
            "accountTenure": ConsumptionRequestsReport.tenureMeaning(accountTenure),
            "appAccountToken": appAccountToken.isEmpty ? "none" : "the transaction's",
            "consumptionStatus": "undeclared",
            "customerConsented": "not on record here: the app server sets it before sending",
            "deliveryStatus": [0: "delivered and working", 2: "delivered another product"][deliveryStatus] ?? "not delivered",
            "lifetimeDollarsPurchased": ConsumptionRequestsReport.dollarMeaning(lifetimeDollarsPurchased),
            "lifetimeDollarsRefunded": ConsumptionRequestsReport.dollarMeaning(lifetimeDollarsRefunded),
            "platform": platform == 1 ? "Apple (signed up with an IDFV)" : "undeclared",
            "playTime": "undeclared",
            "refundPreference": "undeclared",
            "sampleContentProvided": "no",
            "userStatus": "undeclared",
        ]
    }

    /// One line of `consumption_requests.jsonl`.
    var line: String {
        "{\"notificationUUID\":\(JSONWriter.quote(notificationUUID)),\"transactionId\":\(JSONWriter.quote(transactionID)),"
            + "\"requestDate\":\(JSONWriter.quote(Timestamp.iso8601(requestedMs))),\"consumptionRequest\":\(JSONWriter.compact(body))}"
    }
}

public enum ConsumptionRequestsReport {
    /// Apple's `accountTenure` buckets: upper bounds in days (0 is undeclared).
    static let tenureDays: [Int64] = [3, 10, 30, 90, 180, 365]
    /// Apple's lifetime-dollars buckets above 0 USD (bucket 1): upper bounds in USD.
    static let dollarBounds: [Decimal] = [50, 100, 500, 1000, 2000]

    /// What support must know of requests `answers` leaves out, at `sources` (`path:line`): they
    /// carry no uuid or signing time to answer by (a V1 notification has neither; one without its
    /// transaction is a rejected line), so Apple would hear nothing. Said once, by the ingest that reads them.
    static func unanswerableWarnings(_ sources: [String]) -> [String] {
        guard !sources.isEmpty else { return [] }
        let shown = sources.prefix(5).joined(separator: ", ") + (sources.count > 5 ? " and \(sources.count - 5) more" : "")
        let (count, verb, pronoun) = sources.count == 1 ? ("1 CONSUMPTION_REQUEST notification", "has", "it") : ("\(sources.count) CONSUMPTION_REQUEST notifications", "have", "them")
        return ["\(count) \(verb) no notificationUUID or signedDate (V1 notifications have neither), "
                + "so consumption_requests.jsonl cannot answer \(pronoun): \(shown)"]
    }

    /// The answers to every `CONSUMPTION_REQUEST` in the store (or only those about
    /// `transactionID`), by request time; a request Apple sent twice (one `notificationUUID`) is one.
    static func answers(store: some ReportStore, zone: Zone = .utc, currency: String = "USD",
                        transactionID: String? = nil) throws -> [ConsumptionAnswer] {
        let requests = try store.consumptionRequests(about: transactionID)
        guard !requests.isEmpty else { return [] }
        let fx = FXRates(rows: try store.fxRates(), reportingCurrency: currency)
        var days = DayNames(zone)
        return try requests.map { request in
            var answer = ConsumptionAnswer(
                notificationUUID: request.uuid, transactionID: request.transactionID, requestedMs: request.ms, userID: nil,
                deliveryStatus: 5, accountTenure: 0, lifetimeDollarsPurchased: 0, lifetimeDollarsRefunded: 0,
                appAccountToken: "", platform: 0)
            var appleProduct: String?
            if let merged = try store.mergedTransaction(request.transactionID) {
                appleProduct = merged.productID
                answer.appAccountToken = merged.appAccountToken ?? ""
                answer.userID = try store.resolvedUser(of: request.transactionID)
            }
            // What the log delivered of it before the request; the earliest delivery's user when the join resolved none.
            var deliveredProducts: Set<String> = []
            var earliest: (ms: Int64, userID: String)?
            var latestByUser: [String: Int64] = [:]
            for delivery in try store.deliveries(of: request.transactionID) where delivery.ms <= request.ms {
                deliveredProducts.insert(delivery.productID)
                if delivery.ms < earliest?.ms ?? .max { earliest = (delivery.ms, delivery.userID) }
                latestByUser[delivery.userID] = max(latestByUser[delivery.userID] ?? delivery.ms, delivery.ms)
            }
            if answer.userID == nil { answer.userID = earliest?.userID }
            // Taken back (`delivery_revoked`) from every user it went to, each at or after their last delivery before
            // the request: nobody had it when Apple asked (a refund reversed and asked for again, say), so never
            // "delivered and working". A user who still held it keeps it delivered.
            if !latestByUser.isEmpty {
                for revocation in try store.revocations(of: request.transactionID) where revocation.ms <= request.ms {
                    if let latest = latestByUser[revocation.userID], revocation.ms >= latest { latestByUser[revocation.userID] = nil }
                }
                if latestByUser.isEmpty { deliveredProducts = [] }
            }
            if !deliveredProducts.isEmpty {
                answer.deliveryStatus = appleProduct.map { deliveredProducts.contains($0) } ?? true ? 0 : 2
            }
            guard let user = answer.userID else { return answer }
            if let signup = try store.firstRegistration(of: user) {
                answer.accountTenure = tenureBucket(days: (request.ms - signup.ms) / 86_400_000, registered: signup.ms <= request.ms)
                // As the tenure: only a sign-up the store had seen when Apple asked says anything.
                if signup.hasIDFV, signup.ms <= request.ms { answer.platform = 1 }
            }
            if currency == "USD" {
                (answer.lifetimeDollarsPurchased, answer.lifetimeDollarsRefunded) = try lifetimeBuckets(
                    store: store, user: user, untilMs: request.ms, fx: fx, days: &days)
            }
            return answer
        }
    }

    /// Writes one line per request.
    static func write(_ answers: [ConsumptionAnswer], _ sink: inout TextSink) throws {
        for answer in answers { try sink.write(answer.line + "\n") }
    }

    static func tenureBucket(days: Int64, registered: Bool) -> Int {
        guard registered else { return 0 }
        return (tenureDays.firstIndex { days < $0 } ?? tenureDays.count) + 1
    }

    /// An `accountTenure` bucket in days since sign-up, as `tenureBucket` gives it.
    static func tenureMeaning(_ bucket: Int) -> String {
        guard bucket >= 1, bucket <= tenureDays.count + 1 else { return "undeclared (no sign-up before the request)" }
        let from = bucket == 1 ? 0 : tenureDays[bucket - 2]
        guard bucket <= tenureDays.count else { return "\(from) days or more since sign-up" }
        return "\(from) to \(tenureDays[bucket - 1]) days since sign-up"
    }

    /// A lifetime-dollars bucket in USD, as `dollarBucket` gives it.
    static func dollarMeaning(_ bucket: Int) -> String {
        guard bucket >= 1, bucket <= dollarBounds.count + 2 else { return "undeclared (not every amount converts to USD)" }
        guard bucket > 1 else { return "0 USD" }
        let cent = Decimal(sign: .plus, exponent: -2, significand: 1)
        let from = bucket == 2 ? cent : dollarBounds[bucket - 3]
        guard bucket <= dollarBounds.count + 1 else { return "\(from) USD or more" }
        return "\(from) to \(dollarBounds[bucket - 2] - cent) USD"
    }

    /// Apple's bucket for a USD amount: 1 for none, then 0.01–49.99, 50–99.99, … over 2000.
    static func dollarBucket(_ usd: Decimal) -> Int {
        guard usd > 0 else { return 1 }
        return (dollarBounds.firstIndex { usd < $0 } ?? dollarBounds.count) + 2
    }

    /// The user's verified production purchases and refunds made by `untilMs`, each rounded to the
    /// cent as the reports round a row, summed and bucketed;
    /// undeclared (0, 0) when one of them has no price or no rate, since a partial sum could
    /// put the user in too low a bucket.
    private static func lifetimeBuckets(
        store: some ReportStore, user: String, untilMs: Int64, fx: FXRates, days: inout DayNames
    ) throws -> (purchased: Int, refunded: Int) {
        var purchased = Amount.zero, refunded = Amount.zero
        var complete = true
        let usd = ReportingCurrency("USD")
        typealias Column = UserPurchaseColumn
        try store.forEachPurchase(of: user, through: untilMs) { row in
            guard let price = row.optionalString(Column.unitPrice).flatMap(Amount.parse),
                  let rate = row.optionalString(Column.currency).flatMap({ fx.rate($0, on: days(row.int(Column.purchaseMs))) }) else {
                complete = false
                return
            }
            // Each in cents, as transactions.csv and history show it, so a user they show at 50.00 USD is not under 50.
            purchased += usd.rounded(price * row.int(Column.quantity) * rate)
            if let refundMs = row.optionalInt(Column.refundMs), refundMs <= untilMs,
               let refund = row.optionalString(Column.refundAmount).flatMap(Amount.parse) {
                refunded += usd.rounded(refund * rate)
            }
        }
        guard complete else { return (0, 0) }
        return (dollarBucket(purchased.decimal), dollarBucket(refunded.decimal))
    }
}
