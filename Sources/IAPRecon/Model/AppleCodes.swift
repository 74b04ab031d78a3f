/// How the store keeps a column of one of Apple's enumerations in the raw sightings: a small
/// integer code for each value listed, and the text itself for any other value.
///
/// The same few long texts recur in every sighting; a code takes a byte where its text took up to
/// thirty. Apple extends its enumerations: a value this build does not list is kept as Apple sent it,
/// never refused or changed, and reads back exactly (the columns have no type affinity, so an
/// integer and a text never turn into each other: the text `"1"` stays a text).
///
/// The codes are part of the stored format. Once shipped, a code never changes its value and is
/// never reused. A value may get a new code only together with a migration that converts the
/// rows stored as its text: readers' SQL compares with the code alone, and that migration is also
/// what keeps an older iaprecon, which could not read the code, off the store (`Schema`).
public struct AppleCodes: Sendable {
    /// The column, for errors.
    public let column: String
    /// Each code and its value, codes 1, 2, 3, ... in order.
    public let values: [(code: Int64, text: String)]
    private let codes: [String: Int64]

    /// `values` must number codes from 1 with no gap: a code is also its text's place.
    init(column: String, _ values: [(code: Int64, text: String)]) {
        precondition(values.map(\.code) == Array(1...Int64(values.count)), "\(column): codes must run 1, 2, 3, ...")
        self.column = column
        self.values = values
        codes = Dictionary(uniqueKeysWithValues: values.map { ($0.text, $0.code) })
    }

    /// The code of `text`; nil for a value not listed.
    public func code(_ text: String) -> Int64? { codes[text] }

    /// The value of `code`; nil for a code not listed.
    public func text(_ code: Int64) -> String? {
        code >= 1 && code <= Int64(values.count) ? values[Int(code - 1)].text : nil
    }

    /// The SQL literal a query compares the column with to find `text`: its code, or the quoted
    /// text when it has none.
    public func sqlLiteral(_ text: String) -> String {
        code(text).map(String.init) ?? "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

/// Apple's product type of a V2 transaction (`type`); receipts do not say.
public enum AppleProductType {
    /// Stored codes (`AppleCodes`): never change one.
    public static let codes = AppleCodes(column: "type", [
        (1, "Auto-Renewable Subscription"),
        (2, "Non-Consumable"),
        (3, "Consumable"),
        (4, "Non-Renewing Subscription"),
    ])
}

/// Whether the buyer or a family member holds a transaction (`inAppOwnershipType`, `in_app_ownership_type`).
public enum AppleOwnership {
    /// Stored codes (`AppleCodes`): never change one.
    public static let codes = AppleCodes(column: "ownership", [
        (1, "PURCHASED"),
        (2, "FAMILY_SHARED"),
    ])
}

/// The type of the notification a sighting came in: V2's `notificationType` or V1's `notification_type`.
public enum AppleNotificationType {
    /// Stored codes (`AppleCodes`): never change one. V2's types, then those only V1 sends.
    public static let codes = AppleCodes(column: "notification_type", [
        (1, "CONSUMPTION_REQUEST"),
        (2, "DID_CHANGE_RENEWAL_PREF"),
        (3, "DID_CHANGE_RENEWAL_STATUS"),
        (4, "DID_FAIL_TO_RENEW"),
        (5, "DID_RENEW"),
        (6, "EXPIRED"),
        (7, "EXTERNAL_PURCHASE_TOKEN"),
        (8, "GRACE_PERIOD_EXPIRED"),
        (9, "OFFER_REDEEMED"),
        (10, "ONE_TIME_CHARGE"),
        (11, "PRICE_INCREASE"),
        (12, "REFUND"),
        (13, "REFUND_DECLINED"),
        (14, "REFUND_REVERSED"),
        (15, "RENEWAL_EXTENDED"),
        (16, "RENEWAL_EXTENSION"),
        (17, "REVOKE"),
        (18, "SUBSCRIBED"),
        (19, "TEST"),
        (20, "CANCEL"),
        (21, "DID_RECOVER"),
        (22, "INITIAL_BUY"),
        (23, "INTERACTIVE_RENEWAL"),
        (24, "PRICE_INCREASE_CONSENT"),
        (25, "RENEWAL"),
    ])
}
