/// Apple's environments (apple-formats.md §0).
enum AppleEnvironment: String {
    case production = "Production"
    case sandbox = "Sandbox"
    case xcode = "Xcode"

    /// The V1 notification root spelling.
    var v1Name: String { self == .production ? "PROD" : "Sandbox" }
}

/// How Apple took a transaction back (V2 `revocationType`).
enum RevocationType {
    case full
    /// `revocationPercentage` in milli-percent (50000 = 50 %).
    case prorated(Int)
    /// Family Sharing withdrawn: access must go, no money moves.
    case familyRevoke

    var appleName: String {
        switch self {
        case .full: "REFUND_FULL"
        case .prorated: "REFUND_PRORATED"
        case .familyRevoke: "FAMILY_REVOKE"
        }
    }
}

/// A refund or revocation, and when (if ever) Apple reversed it.
struct Revocation {
    var time: Millis
    var reason: Int
    var type: RevocationType
    var showsType: Bool
    var reversedAt: Millis?
}

/// Apple's extension of a subscription period's renewal date (`RENEWAL_EXTENDED`, the App Store
/// Server API's "Extend a subscription renewal date"): when Apple granted it, and the expiry the
/// period had until then.
struct RenewalExtension {
    var grantedAt: Millis
    var previousExpires: Millis
}

/// One App Store transaction as the generator planned it; every payload that
/// mentions it is written from this, so all sightings agree.
struct AppleTransaction {
    var id: String
    var originalId: String
    var product: Int
    var purchase: Millis
    var originalPurchase: Millis
    /// Where the period ends: after an extension, the extended date (payloads written before the
    /// extension show `expires(at:)`).
    var expires: Millis = 0
    var quantity = 1
    var environment = AppleEnvironment.production
    var familyShared = false
    var appAccountToken: String?
    var webOrderLineItemId = ""
    var country: Int
    var isRenewal = false
    var revocation: Revocation?
    var renewalExtension: RenewalExtension?

    var info: Product { Catalog.products[product] }
    var currency: Int { Catalog.countries[country].currency }
    var priceMilli: Int64 { Catalog.products[product].prices[currency] }

    /// The revocation visible at `time`: happened by then and not yet reversed.
    func revocation(at time: Millis) -> Revocation? {
        guard let revocation, revocation.time <= time else { return nil }
        if let reversed = revocation.reversedAt, reversed <= time { return nil }
        return revocation
    }

    /// The expiry a payload written at `time` shows: the old one until Apple extended the period.
    func expires(at time: Millis) -> Millis {
        guard let renewalExtension, time < renewalExtension.grantedAt else { return expires }
        return renewalExtension.previousExpires
    }

    /// Apple extends the period by `length` at `time`; Apple never shortens one.
    mutating func extend(by length: Millis, at time: Millis) {
        renewalExtension = RenewalExtension(grantedAt: time, previousExpires: renewalExtension?.previousExpires ?? expires)
        expires += length
    }
}
