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
        let familyChainsWithUser = Set(resolved.lazy.filter { $0.transaction.isFamilyShared && $0.userID != nil }
            .map(\.transaction.originalTransactionID))
        for transaction in resolved {
            findings += transactionFindings(transaction, input, familyChainsWithUser: familyChainsWithUser)
        }
        findings += orphanDeliveries(input)
        findings += chainFindings(resolved, input.ids)
        return findings.sorted { ($0.kind.rawValue, $0.key) < ($1.kind.rawValue, $1.key) }
    }

    // MARK: - One transaction

    private func base(_ kind: FindingKind, _ resolved: ResolvedTransaction, _ ids: IDTable, eventMs: Int64, detail: String) -> Finding {
        let transaction = resolved.transaction
        var finding = Finding(kind: kind, key: ids.text(transaction.transactionID), eventMs: eventMs, detail: detail)
        finding.userID = resolved.userID.map(ids.text)
        finding.orderID = resolved.order.map { ids.text($0.orderID) }
        finding.transactionID = finding.key
        finding.originalTransactionID = ids.text(transaction.originalTransactionID)
        finding.productID = ids.text(transaction.productID)
        finding.currency = resolved.currency
        var sources = transaction.sources
        if let order = resolved.order { sources.append(order.source) }
        sources += resolved.deliveries.prefix(10).map(\.source)
        if let refund = resolved.refund { sources.append(refund.source) }
        finding.sources = sources
        return finding
    }

    /// `familyChainsWithUser`: the family-shared chains (`original_transaction_id`s) the app knows a user of, by
    /// an order, a delivery or a receipt of one of their transactions.
    private func transactionFindings(_ resolved: ResolvedTransaction, _ input: ReconciliationInput,
                                     familyChainsWithUser: Set<InternedID>) -> [Finding] {
        let ids = input.ids
        let transaction = resolved.transaction
        let deliveries = resolved.deliveries
        var findings: [Finding] = []
        guard transaction.isProduction else {
            if let first = deliveries.first {
                var finding = base(.sandboxDelivery, resolved, ids, eventMs: first.ms,
                                   detail: "delivered to \(ids.text(first.userID)) but Apple knows it only as a \(transaction.environment ?? "test") purchase")
                finding.currency = nil
                findings.append(finding)
            }
            return findings
        }
        let dueMs = transaction.purchaseMs + graceMs
        let users = orderedUnique(deliveries.map(\.userID))
        // Named only in the findings that name them: most transactions have none.
        func userNames() -> String { named(users.map(ids.text)) }

        // The delivered product or the matched order's: an undelivered transaction's order counts too
        // (CONTRACT.md §2), dated by the purchase then.
        let productIDs = deliveries.map(\.productID) + [resolved.order?.productID].compactMap { $0 }
        if productIDs.contains(where: { $0 != transaction.productID }) {
            let mismatched = orderedUnique(productIDs).filter { $0 != transaction.productID }
            var finding = base(.productMismatch, resolved, ids, eventMs: deliveries.first?.ms ?? transaction.purchaseMs,
                               detail: "Apple sold \(ids.text(transaction.productID)); server used \(mismatched.map(ids.text).joined(separator: ", "))")
            finding.amount = resolved.amountAtRisk
            findings.append(finding)
        }

        if deliveries.isEmpty {
            let refundedBeforeDue = resolved.refund.map { $0.ms < dueMs } ?? false
            // A family member's copy is owed only to a member the app knows: Apple notifies the copies of every
            // member, also of those who never opened the app, who paid nothing and whom nothing could be delivered to.
            let owed = !transaction.isFamilyShared || familyChainsWithUser.contains(transaction.originalTransactionID)
            if owed, transaction.purchaseMs <= asOfMs - graceMs, !refundedBeforeDue {
                var finding = base(.lostDelivery, resolved, ids, eventMs: transaction.purchaseMs,
                                   detail: "purchased \(Timestamp.iso8601(transaction.purchaseMs)), never delivered (due by \(Timestamp.iso8601(dueMs)))")
                finding.amount = resolved.amountAtRisk
                findings.append(finding)
            }
            return findings
        }

        if deliveries.count > 1, !(resolved.isAutoRenewable && users.count > 1) {
            let scope = users.count == 1 ? "same_user" : "cross_user"
            var finding = base(.duplicateDelivery, resolved, ids, eventMs: deliveries[1].ms,
                               detail: "\(scope): delivered \(deliveries.count) times to \(userNames())")
            finding.amount = resolved.unitPriceAtRisk.map { $0 * Decimal(transaction.quantity) * Decimal(deliveries.count - 1) }
            findings.append(finding)
        }

        if let refund = resolved.refund {
            let revocations = input.revocations[transaction.transactionID] ?? []
            if !revocations.contains(where: { $0.ms >= refund.ms }) {
                let what = refund.revocationType.map { " (\($0)" + (refund.revocationPercentage.map { " \($0)" } ?? "") + ")" } ?? ""
                // Revoked on the refund request, say: the goods are back already, and whoever acts
                // on "never revoked" would take them a second time.
                let revoked = revocations.map(\.ms).max().map { "delivery revoked only before the refund (last \(Timestamp.iso8601($0)))" }
                var finding = base(.refundedNotRevoked, resolved, ids, eventMs: refund.ms,
                                   detail: "refunded \(Timestamp.iso8601(refund.ms))\(what), \(revoked ?? "delivery never revoked")")
                finding.amount = resolved.refundAmount
                findings.append(finding)
            }
        }

        if let order = resolved.order, !users.contains(order.userID) {
            var finding = base(.wrongUserDelivery, resolved, ids, eventMs: deliveries[0].ms,
                               detail: "ordered by \(ids.text(order.userID)), delivered to \(userNames())")
            finding.amount = resolved.amountAtRisk
            findings.append(finding)
        }

        if deliveries[0].ms > dueMs {
            findings.append(base(.lateDelivery, resolved, ids, eventMs: deliveries[0].ms,
                                 detail: "first delivered \(Self.delay(deliveries[0].ms - transaction.purchaseMs)) after purchase"))
        }
        return findings
    }

    /// A delay exactly, as `26 h 14 m 25 s`: whole hours (never folded into days, so it reads
    /// against a grace given in hours), minutes, and seconds with the milliseconds where there are
    /// any (`24 h 0 m 0.5 s`). Never rounded: a delivery flagged for coming after a 24 h grace
    /// must never read as 24 h.
    static func delay(_ ms: Int64) -> String {
        let sign = ms < 0 ? "-" : ""
        let magnitude = ms.magnitude
        let (hours, rest) = magnitude.quotientAndRemainder(dividingBy: 3_600_000)
        let (minutes, milliseconds) = rest.quotientAndRemainder(dividingBy: 60_000)
        let (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1_000)
        var secondsText = String(seconds)
        if fraction > 0 {
            // Three digits ("004"), less trailing zeros.
            var digits = String(fraction + 1_000).dropFirst()
            while digits.last == "0" { digits = digits.dropLast() }
            secondsText += "." + digits
        }
        return "\(sign)\(hours) h \(minutes) m \(secondsText) s"
    }

    // MARK: - Deliveries with no verified transaction

    private func orphanDeliveries(_ input: ReconciliationInput) -> [Finding] {
        let ids = input.ids
        var findings: [Finding] = []
        for (transactionID, deliveries) in input.deliveries where input.transactions[transactionID] == nil {
            guard let first = deliveries.first else { continue }
            var finding = Finding(kind: .orphanDelivery, key: ids.text(transactionID), eventMs: first.ms,
                                  detail: "delivered \(deliveries.count) time(s); no receipt or notification knows this transaction")
            finding.userID = ids.text(first.userID)
            finding.orderID = deliveries.lazy.compactMap(\.orderID).first.map(ids.text)
            finding.transactionID = finding.key
            finding.productID = ids.text(first.productID)
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

    private func chainFindings(_ resolved: [ResolvedTransaction], _ ids: IDTable) -> [Finding] {
        struct Chain {
            var originalID: InternedID
            var group: InternedID?
            var productID: InternedID
            /// Each delivery of a transaction of the chain: to whom, when, its line, and which
            /// transaction it delivered, with the order matched to that transaction.
            var holders: [(userID: InternedID, ms: Int64, source: SourceLine, transactionID: InternedID, orderID: InternedID?)] = []
            var periods: [(start: Int64, end: Int64)] = []
            var sources: [SourceLine] = []
        }
        /// A user's chains in one subscription group.
        struct UserGroup: Hashable {
            var userID: InternedID
            var group: InternedID
        }
        var chains: [InternedID: Chain] = [:]
        /// Adds one transaction of the chain, in place: a copy taken out of `chains` and put back
        /// would copy its lists at every renewal, time growing with the square of a chain's renewals
        /// and deliveries (an account-sharing Apple ID's subscription restored by thousands of users).
        func add(_ item: ResolvedTransaction, to chain: inout Chain) {
            let transaction = item.transaction
            for delivery in item.deliveries {
                chain.holders.append((delivery.userID, delivery.ms, delivery.source, transaction.transactionID, item.order?.orderID))
            }
            // Paid periods only: a family member's copy and a free trial are nobody's payment, and a refund gave it back.
            if !transaction.isFamilyShared, transaction.offer != .freeTrial, item.refund == nil,
               let expires = transaction.expiresMs, expires > transaction.purchaseMs {
                chain.periods.append((transaction.purchaseMs, expires))
            }
            chain.sources += transaction.sources.prefix(1)
        }
        for item in resolved where item.transaction.isProduction && item.isAutoRenewable {
            let transaction = item.transaction
            add(item, to: &chains[transaction.originalTransactionID,
                                  default: Chain(originalID: transaction.originalTransactionID, group: item.subscriptionGroup,
                                                 productID: transaction.productID)])
        }
        var findings: [Finding] = []
        var chainsByUserGroup: [UserGroup: [Chain]] = [:]
        for chain in chains.values.sorted(by: { ids.precedes($0.originalID, $1.originalID) }) {
            let holders = chain.holders.sorted { ($0.ms, $0.source) < ($1.ms, $1.source) }
            let users = orderedUnique(holders.map(\.userID))
            if users.count > 1, let second = holders.first(where: { $0.userID == users[1] }) {
                var finding = Finding(kind: .sharedAppleIDSubscription, key: ids.text(chain.originalID), eventMs: second.ms,
                                      detail: "one Apple ID's subscription delivered to \(users.count) users: \(named(users.map(ids.text)))")
                finding.userID = ids.text(users[0])
                // The transaction that made users[0] hold the chain: the one the chain's first
                // delivery delivered. Holders are in time order (then line order), and users[0] is
                // the user of the first of them, so holders[0] is users[0]'s first delivery of the
                // chain: most often its first purchase, which the owner ordered and the other users
                // restored. Its matched order, if any, is the finding's order. The key (and so the
                // finding id) stays the chain.
                finding.transactionID = ids.text(holders[0].transactionID)
                finding.orderID = holders[0].orderID.map(ids.text)
                finding.originalTransactionID = finding.key
                finding.chainIDs = [finding.key]
                finding.productID = ids.text(chain.productID)
                finding.sources = Array(holders.map(\.source).prefix(10))
                findings.append(finding)
            }
            if let group = chain.group {
                for user in users { chainsByUserGroup[UserGroup(userID: user, group: group), default: []].append(chain) }
            }
        }
        for (key, held) in chainsByUserGroup where held.count > 1 {
            guard let overlap = Self.overlap(held.map(\.periods)) else { continue }
            let overlapStart = overlap.start
            let overlapping = Set(overlap.chains.map { held[$0].originalID })
            let chainIDs = overlapping.sorted { ids.precedes($0, $1) }
            let (user, group) = (ids.text(key.userID), ids.text(key.group))
            var finding = Finding(kind: .multiAppleIDSubscription, key: user + "|" + group, eventMs: overlapStart,
                                  detail: "\(chainIDs.count) Apple IDs pay for group \(group) at once: chains \(named(chainIDs.map(ids.text)))")
            finding.userID = user
            // findings.csv names the first chain; the finding is listed on every transaction of each.
            finding.originalTransactionID = chainIDs.first.map(ids.text)
            finding.chainIDs = chainIDs.map(ids.text)
            finding.productID = held.first { $0.originalID == chainIDs.first }.map { ids.text($0.productID) }
            // Every line of the chains; past ten chains (where `detail` stops naming them), the
            // first ten lines in file order, each once, as a shared subscription lists its first
            // ten deliveries: a user paying from thousands of Apple IDs would otherwise make a
            // cell past what a spreadsheet opens.
            let limit = chainIDs.count > Self.sourcesListed ? Self.sourcesListed : .max
            for source in held.filter({ overlapping.contains($0.originalID) }).flatMap(\.sources).sorted()
            where finding.sources.last != source {
                if finding.sources.count == limit { break }
                finding.sources.append(source)
            }
            findings.append(finding)
        }
        return findings
    }

    /// The most input lines a finding about more deliveries or chains than its detail names lists as its sources.
    static let sourcesListed = 10

    /// Where paid periods of different chains overlap: the earliest moment two chains are paid for
    /// at once, and (by index into `chains`, ascending) each chain with a period that overlaps a
    /// period of another chain; nil when none do. A chain's own periods never count against it.
    /// Periods are `[start, end)`, and only those with `start < end` count (a chain's paid periods
    /// all are): one ending as another starts does not overlap.
    ///
    /// One sweep over all the periods sorted by start: a period overlaps an earlier-or-equal
    /// starting one of another chain when the latest end among those is after its start, and a
    /// later starting one of another chain when the earliest such start is before its end.
    static func overlap(_ chains: [[(start: Int64, end: Int64)]]) -> (start: Int64, chains: [Int])? {
        var periods: [(start: Int64, end: Int64, chain: Int)] = []
        for (chain, spans) in chains.enumerated() {
            for span in spans where span.start < span.end { periods.append((span.start, span.end, chain)) }
        }
        periods.sort { ($0.start, $0.end, $0.chain) < ($1.start, $1.end, $1.chain) }
        var overlapping = [Bool](repeating: false, count: chains.count)
        var overlapStart: Int64?
        // The two best values seen so far from two different chains: the best, and the best of
        // any chain but the best's.
        struct Best {
            var first: (value: Int64, chain: Int)?
            var second: (value: Int64, chain: Int)?
            let better: (Int64, Int64) -> Bool
            mutating func add(_ value: Int64, _ chain: Int) {
                if let top = first, top.chain == chain {
                    if better(value, top.value) { first = (value, chain) }
                } else if first.map({ better(value, $0.value) }) ?? true {
                    second = first
                    first = (value, chain)
                } else if second.map({ better(value, $0.value) }) ?? true {
                    second = (value, chain)
                }
            }
            /// The best value of a chain other than `chain`.
            func other(than chain: Int) -> Int64? {
                first?.chain == chain ? second?.value : first?.value
            }
        }
        // Periods starting at or before the current start: their latest ends.
        var ends = Best(better: >)
        var index = 0
        while index < periods.count {
            var next = index
            while next < periods.count, periods[next].start == periods[index].start { next += 1 }
            for period in periods[index..<next] { ends.add(period.end, period.chain) }
            for period in periods[index..<next] {
                if let end = ends.other(than: period.chain), end > period.start {
                    overlapping[period.chain] = true
                    overlapStart = min(overlapStart ?? period.start, period.start)
                }
            }
            index = next
        }
        // Periods starting strictly after the current start: their earliest starts.
        var starts = Best(better: <)
        var end = periods.count
        while end > 0 {
            var first = end - 1
            while first > 0, periods[first - 1].start == periods[end - 1].start { first -= 1 }
            for period in periods[first..<end] {
                if let start = starts.other(than: period.chain), start < period.end { overlapping[period.chain] = true }
            }
            for period in periods[first..<end] { starts.add(period.start, period.chain) }
            end = first
        }
        guard let overlapStart else { return nil }
        return (overlapStart, overlapping.indices.filter { overlapping[$0] })
    }
}

/// The first ten of `names` and a count of the rest: an Apple ID restored by thousands of users
/// would otherwise make one cell of every id, past what a spreadsheet opens; `history` of the
/// transaction lists every delivery.
private func named(_ names: [String]) -> String {
    let shown = names.prefix(10).joined(separator: ", ")
    return names.count > 10 ? shown + " and \(names.count - 10) more" : shown
}

/// The elements of `values` in first-seen order, without repeats.
func orderedUnique<Element: Hashable>(_ values: [Element]) -> [Element] {
    // Most lists the join makes unique have one element or none: no set to build.
    guard values.count > 1 else { return values }
    var seen = Set<Element>()
    return values.filter { seen.insert($0).inserted }
}
