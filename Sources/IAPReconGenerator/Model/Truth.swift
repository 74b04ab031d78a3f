/// The finding kinds of RULES.md / CONTRACT.md §2.
enum FindingKind: String, CaseIterable, Comparable {
    case lostDelivery = "lost_delivery"
    case duplicateDelivery = "duplicate_delivery"
    case refundedNotRevoked = "refunded_not_revoked"
    case orphanDelivery = "orphan_delivery"
    case productMismatch = "product_mismatch"
    case wrongUserDelivery = "wrong_user_delivery"
    case multiAppleIdSubscription = "multi_apple_id_subscription"
    case sharedAppleIdSubscription = "shared_apple_id_subscription"
    case sandboxDelivery = "sandbox_delivery"
    case lateDelivery = "late_delivery"
    case unverifiedAppleSales = "unverified_apple_sales"

    static func < (lhs: FindingKind, rhs: FindingKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A finding the generator planted on purpose, with the key RULES.md makes unique.
struct PlantedFinding {
    var kind: FindingKind
    var transactionId = ""
    var userId = ""
    var originalTransactionId = ""
    var subscriptionGroup = ""
    var detail = ""
    var orderId = ""
    var productId = ""
    /// The finding's amount as iaprecon prints it (no trailing zeros), empty where RULES.md gives none.
    var amount = ""
    var currency = ""
    /// For `unverified_apple_sales`: the Pacific day (`yyyy-MM-dd`) and the country (alpha-2).
    var day = ""
    var country = ""
    /// Which planting produced it (for people reading truth.json; not part of the key).
    var scenario = ""

    /// transaction_id for transaction-level kinds, user_id + subscription_group for
    /// multi_apple_id_subscription, original_transaction_id for shared_apple_id_subscription,
    /// Pacific day + product + country for unverified_apple_sales.
    var key: String {
        switch kind {
        case .multiAppleIdSubscription: userId + "\u{1F}" + subscriptionGroup
        case .sharedAppleIdSubscription: originalTransactionId
        case .unverifiedAppleSales: day + "|" + productId + "|" + country
        default: transactionId
        }
    }
}

/// What a run planted: findings, rejected lines, near misses, and the counts a
/// reader's accounting must reproduce (CONTRACT.md §1: read = accepted + rejected +
/// blank + ignored).
struct Truth {
    var asOf: Millis = 0
    var findings: [PlantedFinding] = []
    var rejectsByFile: [String: Int] = [:]
    var rejectsByReason: [String: Int] = [:]
    var blankLinesByFile: [String: Int] = [:]
    var nearMisses: [String: Int] = [:]
    var ignoredUnknownEvents = 0
    var scenarios: [String: Int] = [:]

    var rejects: Int { rejectsByFile.values.reduce(0, +) }

    mutating func reject(file: String, reason: String) {
        rejectsByFile[file, default: 0] += 1
        rejectsByReason[reason, default: 0] += 1
    }

    mutating func nearMiss(_ name: String, _ count: Int = 1) {
        nearMisses[name, default: 0] += count
    }

    /// `truth.json`, deterministic: findings sorted by kind then key, objects with sorted keys.
    func json(files: [String], lines: Int, bytes: Int) -> [UInt8] {
        var out = LineBuffer()
        out.raw("{\n  \"as_of\": \"")
        out.isoTime(asOf, millis: false)
        out.raw("\",\n  \"findings\": [")
        let sorted = findings.sorted { $0.kind != $1.kind ? $0.kind < $1.kind : $0.key < $1.key }
        for (index, finding) in sorted.enumerated() {
            out.raw(index == 0 ? "\n    {" : ",\n    {")
            out.raw("\"kind\":"); out.string(finding.kind.rawValue)
            out.raw(",\"transaction_id\":"); out.string(finding.transactionId)
            out.raw(",\"user_id\":"); out.string(finding.userId)
            out.raw(",\"original_transaction_id\":"); out.string(finding.originalTransactionId)
            out.raw(",\"subscription_group\":"); out.string(finding.subscriptionGroup)
            out.raw(",\"detail\":"); out.string(finding.detail)
            out.raw(",\"order_id\":"); out.string(finding.orderId)
            out.raw(",\"product_id\":"); out.string(finding.productId)
            out.raw(",\"amount\":"); out.string(finding.amount)
            out.raw(",\"currency\":"); out.string(finding.currency)
            out.raw(",\"day\":"); out.string(finding.day)
            out.raw(",\"country\":"); out.string(finding.country)
            out.raw(",\"scenario\":"); out.string(finding.scenario)
            out.byte(UInt8(ascii: "}"))
        }
        out.raw("\n  ],\n  \"findings_by_kind\": ")
        var byKind: [String: Int] = [:]
        for kind in FindingKind.allCases { byKind[kind.rawValue] = 0 }
        for finding in findings { byKind[finding.kind.rawValue, default: 0] += 1 }
        Self.object(byKind, into: &out)
        out.raw(",\n  \"rejects\": "); out.int(rejects)
        out.raw(",\n  \"rejects_by_file\": "); Self.object(rejectsByFile, into: &out)
        out.raw(",\n  \"rejects_by_reason\": "); Self.object(rejectsByReason, into: &out)
        out.raw(",\n  \"blank_lines\": "); out.int(blankLinesByFile.values.reduce(0, +))
        out.raw(",\n  \"blank_lines_by_file\": "); Self.object(blankLinesByFile, into: &out)
        out.raw(",\n  \"ignored_unknown_events\": "); out.int(ignoredUnknownEvents)
        out.raw(",\n  \"near_misses\": "); Self.object(nearMisses, into: &out)
        out.raw(",\n  \"scenarios\": "); Self.object(scenarios, into: &out)
        out.raw(",\n  \"input_lines\": "); out.int(lines)
        out.raw(",\n  \"input_bytes\": "); out.int(bytes)
        out.raw(",\n  \"files\": [")
        for (index, file) in files.enumerated() {
            out.raw(index == 0 ? "\n    " : ",\n    ")
            out.string(file)
        }
        out.raw("\n  ]\n}\n")
        return out.bytes
    }

    private static func object(_ counts: [String: Int], into out: inout LineBuffer) {
        out.byte(UInt8(ascii: "{"))
        for (index, key) in counts.keys.sorted().enumerated() {
            if index > 0 { out.raw(", ") }
            out.string(key)
            out.raw(": ")
            out.int(counts[key] ?? 0)
        }
        out.byte(UInt8(ascii: "}"))
    }
}
