/// The knobs of the simulated user base, in one place.
///
/// With these values one user contributes about 12 lines over a 60-day run (see
/// `InputGenerator.users(forLines:days:)`), mixed like the reference sample: about 40 %
/// MMP rows, 29 % server lines, 14 % receipts, 8 % registrations and 8 % notifications.
enum Tuning {
    /// Share of users who ever buy consumables, and their chance to buy per session.
    static let payerShare = 0.45
    static let whaleShare = 0.06
    static let payerBuyChance = 0.25
    static let whaleBuyChance = 0.45
    static let subscriberShare = 0.10
    static let vipShare = 0.015
    static let removeAdsShare = 0.05

    /// Sessions: a session of a day a user is active.
    static let unknownEventChance = 0.02
    static let loginEventChance = 0.09
    static let levelEventChance = 0.04
    static let subscriberReceiptCheckChance = 0.10

    /// Share of purchases the MMP reports, of MMP rows repeated, of installs never signing up.
    static let mmpPurchaseShare = 0.85
    static let mmpRepeatChance = 0.012
    static let ghostInstallChance = 0.20
    static let lostInstallChance = 0.07
    static let reinstallChance = 0.03
    static let retargetChance = 0.04

    /// Noise: repeated delivered lines, repeated V2 notifications, organic refunds (always revoked).
    static let shipperRepeatChance = 0.012
    static let duplicateNotificationChance = 0.02
    static let refundChance = 0.006
    static let failedVerificationChance = 0.015
    static let oneTimeChargeChance = 0.4
    static let abandonedOrderChance = 0.07
    /// Share of subscription periods whose renewal date Apple extends (`RENEWAL_EXTENDED`, for a
    /// service outage, say), and the longest extension in days (Apple allows 90).
    static let renewalExtensionChance = 0.01
    static let renewalExtensionMaxDays: Int64 = 14

    /// Planted findings and near misses: share of users carrying one.
    static let scenarioShare = 0.07
    /// Planted bad lines and blank lines: chance per user.
    static let badLineChance = 0.004
    static let blankLineChance = 0.003
}
