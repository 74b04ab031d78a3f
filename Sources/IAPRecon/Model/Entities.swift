import Foundation

/// One immutable value shared by reference, so the many places that hold it cost a pointer each.
public final class Shared<Value: Sendable>: Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// An `order_created` line: the app's order, made before payment.
///
/// Here and in the join's other facts below, ids are `InternedID`s: numbers in the `IDTable` of
/// the batch that read them, which holds their text.
public struct Order: Sendable, Equatable {
    public var orderID: InternedID
    public var ms: Int64
    public var userID: InternedID
    public var productID: InternedID
    public var price: Decimal?
    public var currency: String?
    public var storefront: String?
    public var source: SourceLine
}

/// A distinct `delivered` line (shipper repeats collapsed, counted in `copies`).
public struct Delivery: Sendable, Equatable {
    public var ms: Int64
    public var userID: InternedID
    public var transactionID: InternedID
    public var productID: InternedID
    public var orderID: InternedID?
    public var quantity: Int64
    public var deliveryID: String?
    public var copies: Int
    public var source: SourceLine
}

/// A `delivery_revoked` line.
public struct Revocation: Sendable, Equatable {
    public var ms: Int64
    public var userID: InternedID
    public var transactionID: InternedID
    public var source: SourceLine
}

/// One verified Apple transaction, merged from all its sightings.
public struct VerifiedTransaction: Sendable, Equatable {
    public var transactionID: InternedID
    public var originalTransactionID: InternedID
    public var productID: InternedID
    public var purchaseMs: Int64
    public var expiresMs: Int64?
    public var environment: String?
    public var priceMilliunits: Int64?
    public var currency: String?
    public var storefront: String?
    /// The order id the app set as the purchase's `appAccountToken`, if any.
    public var appAccountToken: InternedID?
    public var type: String?
    public var quantity: Int64
    public var ownership: String?
    public var subscriptionGroup: InternedID?
    /// The input lines it was first seen on (up to three), in file order.
    public var sources: [SourceLine]
    /// A free trial or intro offer, if any sighting said so.
    public var offer: OfferTerms? = nil

    public var isProduction: Bool { AppleEnvironment.isProduction(environment) }
    public var isFamilyShared: Bool { ownership == "FAMILY_SHARED" }
}

/// A refund or a refund reversal of one transaction.
public struct RefundEvent: Sendable, Equatable {
    public enum Kind: String, Sendable { case refund, reversal }
    public var kind: Kind
    public var ms: Int64
    public var revocationType: String?
    public var revocationPercentage: Int64?
    public var source: SourceLine
}

/// The refund that stands for a transaction after reversals (CONTRACT.md §2, "refund").
public struct EffectiveRefund: Sendable, Equatable {
    public var ms: Int64
    public var revocationType: String?
    public var revocationPercentage: Int64?
    public var source: SourceLine

    /// The share of the price given back: `REFUND_PRORATED` gives `percentage / 100000`,
    /// `FAMILY_REVOKE` gives nothing back (access only), any other refund all of it.
    public var share: Decimal {
        switch revocationType {
        case "FAMILY_REVOKE": return 0
        case "REFUND_PRORATED":
            guard let percentage = revocationPercentage else { return 1 }
            return Decimal(sign: .plus, exponent: -5, significand: Decimal(percentage))
        default: return 1
        }
    }

    /// The latest refund, unless a reversal signed after it undoes it.
    ///
    /// Several lines tell of one refund (its notification, then every receipt listing the
    /// transaction), and only Apple's V2 payload says its `revocationType`: of the sightings at
    /// the latest time, one with a type speaks for the refund, whichever line was read last, so a
    /// prorated refund does not become a full one with the order of the files.
    public static func resolve(_ events: [RefundEvent]) -> EffectiveRefund? {
        let refunds = events.filter { $0.kind == .refund }
        func rank(_ refund: RefundEvent) -> (Int64, Int, SourceLine) {
            (refund.ms, refund.revocationType == nil ? 0 : 1, refund.source)
        }
        guard let latest = refunds.max(by: { rank($0) < rank($1) }) else { return nil }
        if events.contains(where: { $0.kind == .reversal && $0.ms > latest.ms }) { return nil }
        return EffectiveRefund(ms: latest.ms, revocationType: latest.revocationType,
                               revocationPercentage: latest.revocationPercentage, source: latest.source)
    }
}

/// A catalog product.
public struct Product: Sendable, Equatable {
    public var productID: InternedID
    public var type: String
    public var subscriptionGroup: InternedID?
    public var price: Decimal?
    public var currency: String?

    public var isAutoRenewable: Bool { type == "auto_renewable" }
}
