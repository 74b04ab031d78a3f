import Foundation

/// How urgent a finding is (CONTRACT.md §2).
public enum Severity: String, Sendable, CaseIterable, Comparable {
    case info, warning, critical

    var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .critical: 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// The finding kinds of CONTRACT.md §2.
public enum FindingKind: String, Sendable, CaseIterable {
    case lostDelivery = "lost_delivery"
    case duplicateDelivery = "duplicate_delivery"
    case refundedNotRevoked = "refunded_not_revoked"
    case orphanDelivery = "orphan_delivery"
    case productMismatch = "product_mismatch"
    case wrongUserDelivery = "wrong_user_delivery"
    case multiAppleIDSubscription = "multi_apple_id_subscription"
    case sharedAppleIDSubscription = "shared_apple_id_subscription"
    case sandboxDelivery = "sandbox_delivery"
    case lateDelivery = "late_delivery"
    case unverifiedAppleSales = "unverified_apple_sales"

    public var severity: Severity {
        switch self {
        case .lostDelivery, .duplicateDelivery, .refundedNotRevoked, .orphanDelivery: .critical
        case .productMismatch, .wrongUserDelivery, .multiAppleIDSubscription, .sharedAppleIDSubscription, .unverifiedAppleSales: .warning
        case .sandboxDelivery, .lateDelivery: .info
        }
    }
}

/// One row of `findings.csv`.
public struct Finding: Sendable, Equatable {
    public var kind: FindingKind
    /// What makes it unique within its kind: a transaction id, an original transaction id, user and group,
    /// or (for the Apple tie-out) Pacific day, product and country.
    public var key: String
    public var userID: String?
    public var orderID: String?
    public var transactionID: String?
    public var originalTransactionID: String?
    public var productID: String?
    public var amount: Decimal?
    public var currency: String?
    public var eventMs: Int64
    public var detail: String
    /// The input lines it rests on; formatted as `path:line` only when written (`SourceFiles`).
    public var sources: [SourceLine]
    /// The subscription chains (original transaction ids) a finding about chains is about, each
    /// once: a shared subscription's chain, every chain a multi-Apple-ID finding names. It is
    /// listed on every transaction of each (`transactions.csv`, `history`); `originalTransactionID`
    /// names the first only. Empty for a finding about one transaction or none.
    public var chainIDs: [String] = []

    /// Stable across runs: a hash of the kind and the key, never of run order.
    public var findingID: String { "F-" + StableID.hash(kind.rawValue + "|" + key) }

    public init(kind: FindingKind, key: String, eventMs: Int64, detail: String) {
        self.kind = kind
        self.key = key
        self.eventMs = eventMs
        self.detail = detail
        self.sources = []
    }
}
