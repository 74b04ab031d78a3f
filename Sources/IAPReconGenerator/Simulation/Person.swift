/// How a user's app talks to the server about purchases.
enum ClientStyle {
    /// StoreKit 1: the server calls `verifyReceipt` and logs Apple's `response`.
    case legacyReceipt
    /// StoreKit 2: the server logs decoded `transactions`.
    case storeKit2
    /// StoreKit 2: the server logs the `signed_transactions` JWS strings.
    case storeKit2Signed
}

/// One app account (a `user_id`) and the phone and Apple ID it uses.
struct Person {
    var userId: String
    var country: Int
    var registeredAt: Millis
    var device: Device
    var style: ClientStyle
    /// The Apple ID's non-consumables and subscription transactions, for receipts.
    var owned: [AppleTransaction] = []
    /// original_transaction_id → when auto-renew was turned off.
    var autoRenewOff: [String: Millis] = [:]
    /// A re-engagement campaign that also claims this user's purchases after `retargetFrom`.
    var retargetProfile: MMPProfile?
    var retargetFrom: Millis = .max
}

/// An `order_created` line: the app's order before StoreKit is asked to pay.
struct Order {
    var id: String
    var product: Int
    var userId: String
    var time: Millis
}

/// Whether a `delivered` line carries a `delivery_id`.
enum DeliveryIdMode {
    case random, always, never
}
