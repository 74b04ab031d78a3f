import Foundation

/// Where a sighting of an Apple transaction came from.
public enum TransactionOrigin: String, Sendable, CaseIterable {
    /// An item of a verifyReceipt `in_app[]` or `latest_receipt_info[]` (status 0 only).
    case receipt
    /// A decoded or JWS App Store Server API transaction in a receipts line.
    case serverAPI = "v2"
    /// The transaction inside an App Store Server Notification (V2 or V1).
    case notification

    /// The origins a user's app sends, so the sighting's user sent the transaction: receipt items
    /// and V2 transactions in a receipts line.
    static let sentByUser: [TransactionOrigin] = [.receipt, .serverAPI]

    /// `sentByUser` as a condition on a raw sighting's `origin` column.
    static let sentByUserSQL = "origin IN (" + sentByUser.map { String($0.code) }.joined(separator: ", ") + ")"

    /// What the store's `origin` column holds for it. Part of the stored format: a code never
    /// changes or is reused (a new origin takes the next number).
    public var code: Int64 {
        switch self {
        case .receipt: 1
        case .serverAPI: 2
        case .notification: 3
        }
    }

    /// The origin of a stored `code`; nil for a code this build does not know.
    public init?(code: Int64) {
        guard let origin = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = origin
    }
}

/// A period Apple sold at other than the product's price (CONTRACT.md §1.2).
///
/// Apple marks trials inconsistently between `in_app` and `latest_receipt_info`,
/// so any sighting's mark counts; a free trial outranks an intro offer.
public enum OfferTerms: String, Sendable, Comparable {
    /// `is_trial_period` = "true", V2 `offerDiscountType` `FREE_TRIAL`, or a V2 offer priced 0 (merged so,
    /// `AppleTransactions.Merging.offer(of:)`): priced 0, never revenue.
    case freeTrial = "free_trial"
    /// `is_in_intro_offer_period` = "true" or a V2 `offerType`: Apple's or the order's price, never the catalog's.
    case introOffer = "intro_offer"

    private var rank: Int { self == .freeTrial ? 2 : 1 }
    public static func < (lhs: OfferTerms, rhs: OfferTerms) -> Bool { lhs.rank < rhs.rank }
}

/// One sighting of an Apple transaction in one input line.
///
/// The same transaction appears in many receipts and notifications; the
/// normalize stage merges sightings by `transactionID`. Enum-like fields
/// (`environment`, `type`, `ownership`, `revocationType`) are kept as Apple
/// spells them; ingest accepts only the documented spellings of those that
/// change money or findings (`AppleSpellings`), and keeps any `type`. The
/// store keeps the values it knows as codes (`AppleCodes`), any other as text.
public struct AppleTransaction: Sendable, Equatable {
    public var origin: TransactionOrigin
    /// When the server saw it: the receipt's `received_at` or the notification's `signedDate`.
    public var eventMs: Int64?
    /// The user who sent the receipt (receipts only).
    public var userID: String?
    /// The order the client named in the receipts line.
    public var claimedOrderID: String?
    public var transactionID: String
    public var originalTransactionID: String?
    public var productID: String
    public var purchaseMs: Int64
    public var expiresMs: Int64?
    /// When an upgrade to another plan of its group ended it, as this sighting tells: an end no
    /// other sighting's later expiry moves (`AppleTransactions`).
    public var upgradedMs: Int64?
    public var revocationMs: Int64?
    public var revocationReason: String?
    public var revocationType: String?
    public var revocationPercentage: Int64?
    /// Apple's V2 price in milliunits of `currency`.
    public var priceMilliunits: Int64?
    public var currency: String?
    public var storefront: String?
    public var environment: String?
    public var appAccountToken: String?
    public var type: String?
    public var quantity: Int64
    public var ownership: String?
    public var subscriptionGroup: String?
    public var notificationUUID: String?
    public var notificationType: String?
    /// A free trial or an intro offer, as this sighting says (`OfferTerms`).
    public var offer: OfferTerms?
    /// The app a V2 transaction names where its line (a receipts line or a notification) names
    /// another: `summary.json` lists every app the input names, whichever line names it.
    public var bundleApartFromLine: String?

    public init(origin: TransactionOrigin, transactionID: String, productID: String, purchaseMs: Int64) {
        self.origin = origin
        self.transactionID = transactionID
        self.productID = productID
        self.purchaseMs = purchaseMs
        self.quantity = 1
    }
}
