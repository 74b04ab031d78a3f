import Foundation

/// The finding rules of CONTRACT.md §2 over resolved transactions.
///
/// Test purchases only ever give `sandbox_delivery`; deliveries of a
/// transaction no verified source knows give `orphan_delivery`; everything
/// else is about Production transactions. See README "Findings" for the
/// precedence choices (shared subscription over duplicate, duplicate
/// `cross_user` over wrong user).
struct FindingRules {
    let asOfMs: Int64
    let graceMs: Int64

    func findings(_ resolved: [ResolvedTransaction], _ input: ReconciliationInput) -> [Finding] {
        var findings: [Finding] = []
        for transaction in resolved {
            findings += transactionFindings(transaction, input)
        }
        findings += orphanDeliveries(input)
        findings += chainFindings(resolved)
        return findings.sorted { ($0.kind.rawValue, $0.key) < ($1.kind.rawValue, $1.key) }
    }

    // MARK: - One transaction

    private func base(_ kind: FindingKind, _ resolved: ResolvedTransaction, eventMs: Int64, detail: String) -> Finding {
        let transaction = resolved.transaction
        var finding = Finding(kind: kind, key: transaction.transactionID, eventMs: eventMs, detail: detail)
        finding.userID = resolved.userID
        finding.orderID = resolved.order?.orderID
        finding.transactionID = transaction.transactionID
        finding.originalTransactionID = transaction.originalTransactionID
        finding.productID = transaction.productID
        finding.currency = resolved.currency
        var sources = transaction.sources
        if let order = resolved.order { sources.append(order.source) }
        sources += resolved.deliveries.prefix(10).map(\.source)
        if let refund = resolved.refund { sources.append(refund.source) }
        finding.sources = sources
        return finding
    }

    private func transactionFindings(_ resolved: ResolvedTransaction, _ input: ReconciliationInput) -> [Finding] {
        let transaction = resolved.transaction
        let deliveries = resolved.deliveries
        var findings: [Finding] = []
        guard transaction.isProduction else {
            if let first = deliveries.first {
                var finding = base(.sandboxDelivery, resolved, eventMs: first.ms,
                                   detail: "delivered to \(first.userID) but Apple knows it only as a \(transaction.environment ?? "test") purchase")
                finding.currency = nil
                findings.append(finding)
            }
            return findings
        }
        let dueMs = transaction.purchaseMs + graceMs
        let users = orderedUnique(deliveries.map(\.userID))

        if deliveries.isEmpty {
            let refundedBeforeDue = resolved.refund.map { $0.ms < dueMs } ?? false
            if transaction.purchaseMs <= asOfMs - graceMs, !refundedBeforeDue {
                var finding = base(.lostDelivery, resolved, eventMs: transaction.purchaseMs,
                                   detail: "purchased \(Timestamp.iso8601(transaction.purchaseMs)), never delivered (due by \(Timestamp.iso8601(dueMs)))")
                finding.amount = resolved.amount
                findings.append(finding)
            }
            return findings
        }

        if deliveries.count > 1, !(resolved.isAutoRenewable && users.count > 1) {
            let scope = users.count == 1 ? "same_user" : "cross_user"
            var finding = base(.duplicateDelivery, resolved, eventMs: deliveries[1].ms,
                               detail: "\(scope): delivered \(deliveries.count) times to \(users.joined(separator: ", "))")
            finding.amount = resolved.unitPrice.map { $0 * Decimal(transaction.quantity) * Decimal(deliveries.count - 1) }
            findings.append(finding)
        }

        if let refund = resolved.refund {
            let revoked = (input.revocations[transaction.transactionID] ?? []).contains { $0.ms >= refund.ms }
            if !revoked {
                let what = refund.revocationType.map { " (\($0)" + (refund.revocationPercentage.map { " \($0)" } ?? "") + ")" } ?? ""
                var finding = base(.refundedNotRevoked, resolved, eventMs: refund.ms,
                                   detail: "refunded \(Timestamp.iso8601(refund.ms))\(what), delivery never revoked")
                finding.amount = resolved.refundAmount
                findings.append(finding)
            }
        }

        let mismatched = orderedUnique(deliveries.map(\.productID) + [resolved.order?.productID].compactMap { $0 })
            .filter { $0 != transaction.productID }
        if !mismatched.isEmpty {
            var finding = base(.productMismatch, resolved, eventMs: deliveries[0].ms,
                               detail: "Apple sold \(transaction.productID); server used \(mismatched.joined(separator: ", "))")
            finding.amount = resolved.amount
            findings.append(finding)
        }

        if let order = resolved.order, !users.contains(order.userID) {
            var finding = base(.wrongUserDelivery, resolved, eventMs: deliveries[0].ms,
                               detail: "ordered by \(order.userID), delivered to \(users.joined(separator: ", "))")
            finding.amount = resolved.amount
            findings.append(finding)
        }

        if deliveries[0].ms > dueMs {
            let hours = Decimal(deliveries[0].ms - transaction.purchaseMs) / Decimal(3_600_000)
            findings.append(base(.lateDelivery, resolved, eventMs: deliveries[0].ms,
                                 detail: "first delivered \(Money.format(hours, scale: 1))h after purchase"))
        }
        return findings
    }

    // MARK: - Deliveries with no verified transaction

    private func orphanDeliveries(_ input: ReconciliationInput) -> [Finding] {
        var findings: [Finding] = []
        for (transactionID, deliveries) in input.deliveries where input.transactions[transactionID] == nil {
            guard let first = deliveries.first else { continue }
            var finding = Finding(kind: .orphanDelivery, key: transactionID, eventMs: first.ms,
                                  detail: "delivered \(deliveries.count) time(s); no receipt or notification knows this transaction")
            finding.userID = first.userID
            finding.orderID = deliveries.compactMap(\.orderID).first
            finding.transactionID = transactionID
            finding.productID = first.productID
            if let product = input.catalog[first.productID]?.value, let price = product.price {
                finding.amount = price * Decimal(first.quantity)
                finding.currency = product.currency
            }
            finding.sources = deliveries.prefix(10).map(\.source)
            findings.append(finding)
        }
        return findings
    }

    // MARK: - Subscription chains

    private func chainFindings(_ resolved: [ResolvedTransaction]) -> [Finding] {
        struct Chain {
            var originalID: String
            var group: String?
            var productID: String
            var holders: [(userID: String, ms: Int64, source: SourceLine)] = []
            var periods: [(start: Int64, end: Int64)] = []
            var sources: [SourceLine] = []
        }
        var chains: [String: Chain] = [:]
        for item in resolved where item.transaction.isProduction && item.isAutoRenewable {
            let transaction = item.transaction
            var chain = chains[transaction.originalTransactionID]
                ?? Chain(originalID: transaction.originalTransactionID, group: item.subscriptionGroup, productID: transaction.productID)
            for delivery in item.deliveries { chain.holders.append((delivery.userID, delivery.ms, delivery.source)) }
            if !transaction.isFamilyShared, item.refund == nil, let expires = transaction.expiresMs, expires > transaction.purchaseMs {
                chain.periods.append((transaction.purchaseMs, expires))
            }
            chain.sources += transaction.sources.prefix(1)
            chains[transaction.originalTransactionID] = chain
        }
        var findings: [Finding] = []
        var chainsByUserGroup: [String: [Chain]] = [:]
        for chain in chains.values.sorted(by: { $0.originalID < $1.originalID }) {
            let holders = chain.holders.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }
            let users = orderedUnique(holders.map(\.userID))
            if users.count > 1, let second = holders.first(where: { $0.userID == users[1] }) {
                var finding = Finding(kind: .sharedAppleIDSubscription, key: chain.originalID, eventMs: second.ms,
                                      detail: "one Apple ID's subscription delivered to \(users.count) users: \(users.joined(separator: ", "))")
                finding.userID = users[0]
                finding.originalTransactionID = chain.originalID
                finding.productID = chain.productID
                finding.sources = Array(holders.map(\.source).prefix(10))
                findings.append(finding)
            }
            if let group = chain.group {
                for user in users { chainsByUserGroup[user + "\u{1F}" + group, default: []].append(chain) }
            }
        }
        for (key, held) in chainsByUserGroup where held.count > 1 {
            let parts = key.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
            var overlapStart: Int64?
            var overlapping = Set<String>()
            for i in 0..<held.count {
                for j in (i + 1)..<held.count {
                    for a in held[i].periods {
                        for b in held[j].periods where a.start < b.end && b.start < a.end {
                            let start = max(a.start, b.start)
                            overlapStart = min(overlapStart ?? start, start)
                            overlapping.formUnion([held[i].originalID, held[j].originalID])
                        }
                    }
                }
            }
            guard let overlapStart else { continue }
            let ids = overlapping.sorted()
            var finding = Finding(kind: .multiAppleIDSubscription, key: parts[0] + "|" + parts[1], eventMs: overlapStart,
                                  detail: "\(ids.count) Apple IDs pay for group \(parts[1]) at once: chains \(ids.joined(separator: ", "))")
            finding.userID = parts[0]
            finding.originalTransactionID = ids.first
            finding.productID = held.first { $0.originalID == ids.first }?.productID
            finding.sources = held.filter { overlapping.contains($0.originalID) }.flatMap(\.sources).sorted()
            findings.append(finding)
        }
        return findings
    }
}

/// The elements of `values` in first-seen order, without repeats.
func orderedUnique(_ values: [String]) -> [String] {
    var seen = Set<String>()
    return values.filter { seen.insert($0).inserted }
}
