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

/// One App Store transaction as the generator planned it; every payload that
/// mentions it is written from this, so all sightings agree.
struct AppleTransaction {
    var id: String
    var originalId: String
    var product: Int
    var purchase: Millis
    var originalPurchase: Millis
    var expires: Millis = 0
    var quantity = 1
    var environment = AppleEnvironment.production
    var familyShared = false
    var appAccountToken: String?
    var webOrderLineItemId = ""
    var country: Int
    var isRenewal = false
    var revocation: Revocation?

    var info: Product { Catalog.products[product] }
    var currency: Int { Catalog.countries[country].currency }
    var priceMilli: Int64 { Catalog.products[product].prices[currency] }

    /// The revocation visible at `time`: happened by then and not yet reversed.
    func revocation(at time: Millis) -> Revocation? {
        guard let revocation, revocation.time <= time else { return nil }
        if let reversed = revocation.reversedAt, reversed <= time { return nil }
        return revocation
    }
}
