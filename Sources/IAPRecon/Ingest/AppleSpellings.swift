/// The values Apple documents for an enumerated field of its payloads whose value changes money or
/// findings (CONTRACT.md §1.2, §1.3, §2), spelled as Apple spells them.
///
/// Each is compared as sent: `production`, `PRODUCTION` or `Prod` would otherwise read as a test
/// purchase (no revenue, no lost delivery), `Family_Shared` as a purchase (revenue), and
/// `refund_prorated` as a full refund, with nothing to tell anyone. So a value not listed rejects
/// its line, naming the field, the value and the spellings accepted. Fields that change neither
/// (Apple's product `type`, `revocationReason`) are kept as sent, and a notification type Apple adds
/// is kept and named by ingest's warning (`NotificationParser.knownV2Types`).
struct AppleSpellings: Sendable {
    let values: [String]
    /// The values as a reason lists them: `Production, Sandbox, Xcode or LocalTesting`.
    let listed: String

    init(_ values: [String]) {
        self.values = values
        listed = values.count < 2 ? values.joined() : values.dropLast().joined(separator: ", ") + " or " + (values.last ?? "")
    }

    /// `environment` of V2 transactions and notifications, of a verifyReceipt answer and of a
    /// receipts line (the endpoint called): the App Store's two, and StoreKit testing's in Xcode.
    static let environment = AppleSpellings(["Production", "Sandbox", "Xcode", "LocalTesting"])
    /// A V1 notification body's own `environment`: `PROD` for Production, and `Sandbox`, which
    /// Apple's documentation spells `SANDBOX`.
    static let v1Environment = AppleSpellings(["PROD", "Sandbox", "SANDBOX"])
    /// `inAppOwnershipType` (V2), `in_app_ownership_type` (verifyReceipt): family-shared ones are no revenue.
    static let ownership = AppleSpellings(["PURCHASED", "FAMILY_SHARED"])
    /// `revocationType`: how much of the price a refund gives back.
    static let revocationType = AppleSpellings(["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"])
    /// `offerDiscountType`: a free trial is priced 0 and never revenue.
    static let offerDiscountType = AppleSpellings(["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"])
    /// verifyReceipt's flags (`is_trial_period`, `is_in_intro_offer_period`, `is_upgraded`), strings.
    static let flag = AppleSpellings(["true", "false"])
}

extension Fields {
    /// An optional enumerated Apple field: nil when absent, null or empty, else one of `spellings`;
    /// any other value (another spelling, a number) is rejected as
    /// `bad value in '<field>' (Production, Sandbox, Xcode or LocalTesting): "production"`.
    func appleValue(_ key: String, _ spellings: AppleSpellings) throws(LineReject) -> String? {
        guard let element = try element(key) else { return nil }
        switch element.kind {
        case .string:
            if element.isEmptyString { return nil }
            if let text = element.text, spellings.values.contains(text) { return text }
        case .number: break
        default: throw .wrongType(path + key, expected: "a string", got: element)
        }
        throw LineReject("bad value in '\(path + key)' (\(spellings.listed)): \(Redaction.quoted(element.value))")
    }

    /// A verifyReceipt flag: whether `key` is `"true"` (absent is false).
    func appleFlag(_ key: String) throws(LineReject) -> Bool {
        try appleValue(key, .flag) == "true"
    }
}
