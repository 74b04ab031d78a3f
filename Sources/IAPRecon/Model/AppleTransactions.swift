/// Apple's sightings of a transaction → one verified transaction, its refund events and who sent it.
///
/// The same transaction is seen in many places: every receipt that lists it, V2 transactions and
/// notifications. Its sightings are merged in file order (files in path order, then line, then
/// item): the first sighting that has a field gives it, except that any `Production` sighting
/// makes it Production and the latest expiry any sighting gives holds, unless a sighting tells of
/// an upgrade that ended it earlier. A notification received twice (one `notificationUUID`) is one
/// sighting.
///
/// The store keeps every accepted sighting once (`raw_apple__transactions`); they are merged by
/// these rules each time a stage reads them (`AppleTransactions.Cursor`, in the store's normalize
/// part), so a replaced or late file changes the merge with no staged copy to rebuild.
enum AppleTransactions {
    /// One transaction, merged from its sightings.
    struct Merged {
        var transactionID: String
        /// Its own id when no sighting names another.
        var originalTransactionID: String
        /// The first sighting's: ingest accepts no sighting without a product and a purchase date.
        var productID: String
        var purchaseMs: Int64
        /// The latest any sighting gives: Apple extends an expiry (`RENEWAL_EXTENDED`) and never
        /// shortens one, so the latest is Apple's last word whichever file sorts first. An upgrade
        /// ends the plan for good, though: the earliest upgrade any sighting tells of, if earlier.
        var expiresMs: Int64?
        var environment: String?
        var priceMilliunits: Int64?
        var currency: String?
        var storefront: String?
        var appAccountToken: String?
        var type: String?
        /// 1 when no sighting says.
        var quantity: Int64
        var ownership: String?
        var subscriptionGroup: String?
        /// The earliest time any sighting was received.
        var firstSeenMs: Int64?
        var sightings: Int
        /// The strongest offer any sighting names: a trial in `in_app` counts though `latest_receipt_info` omits it.
        var offer: OfferTerms?
        /// Where it was first seen, and its second and third sightings, as file ids and lines (in file order).
        var sources: [StoredLine]
        /// The refunds and reversals its sightings tell of, by kind, time and place: each distinct one
        /// once, at the last line in file order that tells of it (`Merging`).
        var refunds: [Refund]
        /// Who sent a receipt with it, each user with their earliest such sighting, by user id.
        var senders: [Sender]
    }

    struct Refund {
        var kind: RefundEvent.Kind
        var ms: Int64
        var revocationType: String?
        var revocationPercentage: Int64?
        var source: StoredLine
    }

    struct Sender {
        var userID: String
        var firstMs: Int64
        var source: StoredLine
    }

    /// `sightings`, all of one transaction and in file order (files in path order, then line, then
    /// item), each with the line it is stored at, merged into it: what a `Cursor` does with each
    /// transaction's stored sightings, for sightings that are values already. Nil when there are none.
    static func merged(_ sightings: some Sequence<(transaction: AppleTransaction, source: StoredLine)>) -> Merged? {
        var iterator = sightings.makeIterator()
        guard let first = iterator.next() else { return nil }
        var merging = Merging(first: first.transaction, at: first.source)
        while let sighting = iterator.next() { merging.add(sighting.transaction, at: sighting.source) }
        return merging.finished()
    }
}

extension AppleTransactions {
    /// The merge of one transaction's sightings so far, fed in file order (by a `Cursor` over the
    /// stored sightings, or `merged(_:)` over values).
    struct Merging {
        private(set) var merged: Merged
        private var seenNotifications = Set<String>()
        private var hasOriginal = false
        /// The latest expiry and the earliest upgrade the sightings give, which `merged.expiresMs` is
        /// the earlier of: a sighting from before the upgrade gives the plan's full period.
        private var latestExpiresMs: Int64?
        private var upgradedMs: Int64?
        /// Where each sender is in `merged.senders`, once there are more than a few: one Apple ID
        /// restored by many users is sent by all of them, and a search of the list for each sighting
        /// would grow with their square. Nearly every transaction has one or two senders, which a
        /// search finds without a table to build.
        private var senderIndex: [StoredText: Int] = [:]
        private static let sendersSearched = 8
        /// Where each distinct refund is in `merged.refunds`, once there are more than a few (as
        /// for senders).
        private var refundIndex: [RefundFact: Int] = [:]
        private static let refundsSearched = 8
        /// The line of the last refund inserted and the refunds it told of: the first item of a
        /// line that tells of a refund (kind and time) speaks for the line.
        private var refundLine: StoredLine?
        private var refundLineFacts: [RefundFact] = []

        /// The first sighting gives the transaction's id, product, purchase date and quantity:
        /// ingest accepts no sighting without them, and a quantity Apple leaves out is 1.
        init(first: AppleTransaction, at source: StoredLine) {
            merged = Merged(transactionID: first.transactionID, originalTransactionID: first.transactionID, productID: first.productID,
                            purchaseMs: first.purchaseMs, quantity: first.quantity, sightings: 0, sources: [], refunds: [], senders: [])
            add(first, at: source)
        }

        /// The merge, its senders in user id order (bytes, as SQLite orders text).
        func finished() -> Merged {
            var merged = merged
            merged.senders.sort { $0.userID.utf8.lexicographicallyPrecedes($1.userID.utf8) }
            merged.refunds.sort { RefundFact.placeKey($0) < RefundFact.placeKey($1) }
            return merged
        }

        mutating func add(_ sighting: AppleTransaction, at source: StoredLine) {
            // The same notification received twice is one notification (CONTRACT.md §1.3).
            if let uuid = sighting.notificationUUID, !seenNotifications.insert(uuid).inserted { return }
            merged.sightings += 1
            if !hasOriginal, let original = sighting.originalTransactionID {
                merged.originalTransactionID = original
                hasOriginal = true
            }
            if let expires = sighting.expiresMs { latestExpiresMs = max(latestExpiresMs ?? expires, expires) }
            if let upgraded = sighting.upgradedMs { upgradedMs = min(upgradedMs ?? upgraded, upgraded) }
            merged.expiresMs = switch (latestExpiresMs, upgradedMs) {
            case let (expires?, upgraded?): min(expires, upgraded)
            case let (expires, upgraded): expires ?? upgraded
            }
            let environment = AppleEnvironment.canonical(sighting.environment)
            if merged.environment == nil || environment == "Production" { merged.environment = environment ?? merged.environment }
            fill(&merged.priceMilliunits, sighting.priceMilliunits)
            fill(&merged.currency, sighting.currency)
            fill(&merged.storefront, sighting.storefront)
            fill(&merged.appAccountToken, sighting.appAccountToken)
            fill(&merged.type, sighting.type)
            fill(&merged.ownership, sighting.ownership)
            fill(&merged.subscriptionGroup, sighting.subscriptionGroup)
            let eventMs = sighting.eventMs
            if let eventMs { merged.firstSeenMs = min(merged.firstSeenMs ?? eventMs, eventMs) }
            if let sighted = Self.offer(of: sighting), merged.offer.map({ $0 < sighted }) ?? true {
                merged.offer = sighted
            }
            if merged.sources.count < 3 { merged.sources.append(source) }
            // Who sent a receipt with it: sightings come in file order, so a later one wins only with an earlier time.
            if let userID = sighting.userID, TransactionOrigin.sentByUser.contains(sighting.origin) {
                let ms = eventMs ?? .min
                let key = StoredText(userID)
                let index = merged.senders.count <= Self.sendersSearched
                    ? merged.senders.firstIndex { StoredText($0.userID) == key }
                    : senderIndex[key]
                if let index {
                    if ms < merged.senders[index].firstMs { merged.senders[index] = Sender(userID: userID, firstMs: ms, source: source) }
                } else {
                    merged.senders.append(Sender(userID: userID, firstMs: ms, source: source))
                    if merged.senders.count == Self.sendersSearched + 1 {
                        for (place, sender) in merged.senders.enumerated() { senderIndex[StoredText(sender.userID)] = place }
                    } else if merged.senders.count > Self.sendersSearched + 1 {
                        senderIndex[key] = merged.senders.count - 1
                    }
                }
            }
            let refund: Refund? = if sighting.notificationType == "REFUND_REVERSED" {
                (eventMs ?? sighting.revocationMs).map { Refund(kind: .reversal, ms: $0, source: source) }
            } else if let revocationMs = sighting.revocationMs {
                Refund(kind: .refund, ms: revocationMs, revocationType: sighting.revocationType,
                       revocationPercentage: sighting.revocationPercentage, source: source)
            } else {
                nil
            }
            if let refund { insert(refund) }
        }

        /// Keeps each distinct refund once, at the last line that tells of it; `finished()` orders
        /// them by kind, time and place.
        ///
        /// A receipt lists every refunded purchase of the Apple ID, and a client may send it again on
        /// every launch: thousands of lines tell of one refund. What stands (`EffectiveRefund`) is
        /// the latest refund, a typed one first, then the last line in file order; a refund told
        /// alike (kind, time, type and share) by an earlier line can never stand, so only its last
        /// line is kept, and a reversal counts only by its time. Several items of one line can tell
        /// of one refund (kind and time): the line's first item speaks for it, as the items of a
        /// line come together in file order.
        private mutating func insert(_ refund: Refund) {
            let fact = RefundFact(refund)
            if refundLine == refund.source {
                if refundLineFacts.contains(where: { $0.kind == fact.kind && $0.ms == fact.ms }) { return }
            } else {
                refundLine = refund.source
                refundLineFacts.removeAll(keepingCapacity: true)
            }
            refundLineFacts.append(fact)
            let index = merged.refunds.count <= Self.refundsSearched
                ? merged.refunds.firstIndex { RefundFact($0) == fact }
                : refundIndex[fact]
            if let index {
                merged.refunds[index].source = refund.source
                return
            }
            merged.refunds.append(refund)
            if merged.refunds.count == Self.refundsSearched + 1 {
                for (place, known) in merged.refunds.enumerated() { refundIndex[RefundFact(known)] = place }
            } else if merged.refunds.count > Self.refundsSearched + 1 {
                refundIndex[fact] = merged.refunds.count - 1
            }
        }

        /// The offer a sighting tells of. An offer Apple priced at 0 is a free trial: its payloads from before
        /// `offerDiscountType` say so only by an `offerType` and a `price` of 0, and no paid offer costs nothing.
        static func offer(of sighting: AppleTransaction) -> OfferTerms? {
            sighting.offer == .introOffer && sighting.priceMilliunits == 0 ? .freeTrial : sighting.offer
        }

        private func fill<Value>(_ field: inout Value?, _ value: Value?) {
            if field == nil { field = value }
        }
    }
}

extension AppleTransactions {
    /// What a refund tells, apart from the line that tells it: refunds alike in these are one refund.
    struct RefundFact: Hashable {
        var kind: RefundEvent.Kind
        var ms: Int64
        var revocationType: String?
        var revocationPercentage: Int64?

        init(_ refund: Refund) {
            (kind, ms, revocationType, revocationPercentage) = (refund.kind, refund.ms, refund.revocationType, refund.revocationPercentage)
        }

        /// The order `Merged.refunds` keeps: by kind, time and place.
        static func placeKey(_ refund: Refund) -> (String, Int64, Int64, Int64) {
            (refund.kind.rawValue, refund.ms, refund.source.file, refund.source.line)
        }
    }
}
