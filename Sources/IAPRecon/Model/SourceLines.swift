/// The lines of the sources that are not the server log's or Apple's transactions, each as its
/// parser reads it and as the store keeps it: cast already (times in UTC epoch milliseconds, or an
/// MMP export's wall time; money as exact decimal text), since a line whose time or amount does
/// not parse is a reject (CONTRACT.md §1). The store turns each into its raw table's row
/// (`Store/Ingest/RawRows.swift`).

/// A line of `receipts/*.jsonl` (CONTRACT.md §1.2): one verification the server made, with what
/// Apple answered about it; the transactions it carries are `AppleTransaction`s of their own.
public struct VerificationLine: Sendable, Equatable {
    public var receivedMs: Int64
    public var userID: String
    public var orderID: String?
    /// The transaction the line names, or the one its answer carries when it carries exactly one.
    public var transactionID: String?
    public var status: Int64
    public var environment: String?
    public var bundleID: String?
    /// Which shapes of answer the line holds, joined by `+` (`response`, `transactions`, `signed_transactions`).
    public var shape: String
}

/// A line of `notifications/*.jsonl` (CONTRACT.md §1.3): the notification itself; the
/// transactions it carries are `AppleTransaction`s of their own.
public struct NotificationLine: Sendable, Equatable {
    public var uuid: String?
    public var type: String
    public var subtype: String?
    public var signedMs: Int64?
    public var environment: String?
    /// `1` or `2`, App Store Server Notifications' version.
    public var version: String
    /// The first transaction it carries.
    public var transactionID: String?
    /// The app it is about: a V2 notification's `bundleId` (of its `data`, `summary`, `appData` or
    /// `externalPurchaseToken`, else of its transaction), a V1 body's `bid`.
    public var bundleID: String?
}

/// A line of `registrations/*.jsonl` (CONTRACT.md §1.4): a sign-up, its device ids cleaned of
/// the MMP's empty markers.
public struct RegistrationLine: Sendable, Equatable {
    public var ms: Int64
    public var userID: String
    public var method: String?
    public var idfv: String?
    public var idfa: String?
    public var appsflyerID: String?
    public var country: String?
}

/// A row of an `attribution/*.csv` export (CONTRACT.md §1.5), as far as attribution reads it
/// (`MMPEvents`): an install's own install time, campaign and device ids; a purchase's revenue;
/// of every row the ids a repeat is told by and a user is linked by. Times are the export's wall
/// time, which carries no zone (`--mmp-tz` says which).
public struct MMPEventLine: Sendable, Equatable {
    public var eventWallMs: Int64
    public var installWallMs: Int64?
    /// The event's name where attribution tells it apart: an install's or a purchase's; nil for
    /// any other event, of which attribution reads only the ids that link a user.
    public var eventName: String?
    public var mediaSource: String?
    public var campaign: String?
    public var customerUserID: String?
    public var idfv: String?
    public var idfa: String?
    public var appsflyerID: String?
    /// A purchase's revenue and its currency, where it has none in USD (`revenueUSD`).
    public var revenue: String?
    public var revenueCurrency: String?
    public var revenueUSD: String?
    public var isRetargeting: Bool
    /// A hash of the event value, which only tells an install's or a purchase's repeats apart; nil
    /// for an empty one, and for any other event (never a repeat of either).
    public var eventValueKey: [UInt8]?
}

/// A row of `spend/*.csv` (CONTRACT.md §1.6): one day's spend on a campaign.
public struct SpendLine: Sendable, Equatable {
    public var day: String
    public var mediaSource: String
    public var campaign: String?
    public var spend: String?
    public var currency: String
}

/// A row of `fx.csv` (CONTRACT.md §1.6): amount × rate is the amount in the reporting currency.
public struct FXRateLine: Sendable, Equatable {
    public var day: String
    public var currency: String
    public var rate: String
}

/// A row of an Apple Sales Report (CONTRACT.md §1.7) for an in-app product: one day (in Apple's
/// Pacific reporting zone), product and country, its amounts without their sign.
public struct SalesReportLine: Sendable, Equatable {
    public var day: String
    public var productID: String
    public var productType: String
    public var units: Int64
    public var country: String
    public var customerPrice: String
    public var customerCurrency: String
    public var proceeds: String
    public var proceedsCurrency: String
}
