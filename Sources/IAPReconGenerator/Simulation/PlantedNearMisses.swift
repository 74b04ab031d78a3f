/// Slots that plant a near miss of RULES.md: data that looks like a finding and must not be one.
extension SlotSimulation {
    /// Refunded, then Apple reversed the refund (REFUND_REVERSED signed after the refund time).
    mutating func refundReversed() throws -> Bool {
        guard let anchor = anchor(tail: 5 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        var (order, tx, verifiedAt) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        let deliveredAt = try delivered(userId: person.userId, transactionId: tx.id, product: tx.product,
                                        at: verifiedAt + random.int64(500, 30_000), orderId: order.id, planted: true)
            ?? verifiedAt
        let refundAt = time(deliveredAt + Clock.hour, min(deliveredAt + 5 * Clock.day, asOf - 2 * Clock.hour))
        let reversedAt = time(refundAt + Clock.hour, min(refundAt + 3 * Clock.day, asOf - Clock.minute))
        tx.revocation = Revocation(time: refundAt, reason: 0, type: .full, showsType: random.chance(0.5),
                                   reversedAt: reversedAt)
        try notify(spec("REFUND", tx: tx, at: refundAt + random.int64(1_000, 60_000)), planted: true)
        try notify(spec("REFUND_REVERSED", tx: tx, at: reversedAt), form: v2Form(), planted: true)
        run.truth.nearMiss("refund_reversed")
        return true
    }

    /// Refunded and revoked afterwards; sometimes the revocation carries the refund's exact millisecond.
    mutating func refundThenRevoked() throws -> Bool {
        guard let anchor = anchor(tail: 5 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        var (order, tx, verifiedAt) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        let deliveredAt = try delivered(userId: person.userId, transactionId: tx.id, product: tx.product,
                                        at: verifiedAt + random.int64(500, 30_000), orderId: order.id, planted: true)
            ?? verifiedAt
        let refundAt = time(deliveredAt + Clock.hour, min(deliveredAt + 5 * Clock.day, asOf - Clock.hour))
        tx.revocation = Revocation(time: refundAt, reason: 1, type: .full, showsType: random.chance(0.5))
        if random.chance(0.3) {
            try notify(spec("REFUND", tx: tx, at: refundAt + random.int64(1_000, 60_000)), planted: true)
            try deliveryRevoked(userId: person.userId, transactionId: tx.id, at: refundAt, style: .isoMillisZ, planted: true)
            run.truth.nearMiss("revoked_at_refund_millisecond")
            run.truth.nearMiss("refund_then_revoked")
        } else {
            try refundAndRevoke(tx, revocation: tx.revocation ?? Revocation(time: refundAt, reason: 1, type: .full, showsType: true),
                                userId: person.userId)
        }
        return true
    }

    /// Delivered a little under 24 h after purchase.
    mutating func deliveryInsideGrace() throws -> Bool {
        guard let anchor = anchor(tail: grace + Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        let (order, tx, _) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        try delivered(userId: person.userId, transactionId: tx.id, product: tx.product,
                      at: tx.purchase + grace - random.int64(Clock.minute, 30 * Clock.minute),
                      orderId: random.chance(0.5) ? order.id : nil, planted: true)
        run.truth.nearMiss("delivery_inside_grace")
        return true
    }

    /// Verified, not delivered yet, younger than grace at as-of.
    mutating func purchaseYoungerThanGrace() throws -> Bool {
        let lower = max(start + 20 * Clock.minute, asOf - grace + Clock.hour)
        let upper = asOf - 15 * Clock.minute
        guard upper > lower else { return false }
        let anchor = time(lower, upper)
        let person = try scenarioPerson(before: anchor)
        _ = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        run.truth.nearMiss("purchase_younger_than_grace")
        return true
    }

    /// Never delivered, refunded before the delivery was due.
    mutating func refundBeforeDue() throws -> Bool {
        guard let anchor = anchor(tail: grace + 2 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        var (_, tx, _) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        let refundAt = tx.purchase + random.int64(10 * Clock.minute, 20 * Clock.hour)
        tx.revocation = Revocation(time: refundAt, reason: 1, type: .full, showsType: random.chance(0.5))
        try notify(spec("REFUND", tx: tx, at: refundAt + random.int64(1_000, 60_000)), planted: true)
        run.truth.nearMiss("refund_before_due")
        return true
    }

    /// Two Apple IDs subscribing one after the other: the second chain begins after the first one's
    /// period ends, so they never overlap. With `extension` (ms), Apple first extended that period
    /// (`RENEWAL_EXTENDED`), and the second begins after the extended expiry.
    mutating func sequentialAppleIds(extendedBy extensionMs: Int64? = nil) throws -> Bool {
        guard let anchor = anchor(tail: Catalog.week + (extensionMs ?? 0) + 5 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        guard let firstOrder = try orderCreated(person, product: Catalog.premiumWeekly, at: anchor, uuidId: false,
                                                planted: true) else { return false }
        var first = planChain(person, product: Catalog.premiumWeekly,
                              firstPurchase: firstOrder.time + random.int64(5_000, 40_000), churn: 0, maxTransactions: 1)
        if let extensionMs, !extendRenewalDate(&first.transactions[0], by: extensionMs) {
            throw GeneratorError("internal error: a planted renewal extension falls after as-of")
        }
        var firstOwned: [AppleTransaction] = []
        try emitChain(first, person: &person, order: firstOrder, owned: &firstOwned, plantedThrough: 0) { _ in [userId] }
        let ended = first.transactions[0].expires
        let latestGap = (extensionMs == nil ? 3 : 2) * Clock.day
        let secondAt = time(ended + Clock.hour, min(ended + latestGap, asOf - 2 * Clock.hour))
        let product = random.chance(0.5) ? Catalog.premiumMonthly : Catalog.premiumWeekly
        guard try secondAppleIdChain(&person, product: product, at: secondAt) else { return false }
        run.truth.nearMiss(extensionMs == nil ? "sequential_apple_ids" : "extended_then_sequential_apple_ids")
        return true
    }

    /// A family-shared purchase delivered once: never revenue, no finding.
    mutating func familySharedDeliveredOnce() throws -> Bool {
        guard let anchor = anchor(tail: Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let product = random.chance(0.6) ? Catalog.removeAds : Catalog.premiumMonthly
        var tx = newTransaction(person, product: product, at: anchor)
        tx.familyShared = true
        person.owned.append(tx)
        let verifiedAt = try receipt(userId: person.userId, at: anchor + random.int64(Clock.minute, 30 * Clock.minute),
                                     orderId: nil, namedTransaction: tx.id, current: [tx], owned: person.owned,
                                     style: person.style, planted: true) ?? anchor
        try delivered(userId: person.userId, transactionId: tx.id, product: product,
                      at: verifiedAt + random.int64(500, 30_000), orderId: nil, planted: true)
        run.truth.nearMiss("family_shared_delivered_once")
        return true
    }

    /// Two overlapping subscriptions in different groups.
    mutating func differentGroups() throws -> Bool {
        guard let anchor = anchor(tail: 3 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        guard let firstOrder = try orderCreated(person, product: Catalog.premiumMonthly, at: anchor, uuidId: false,
                                                planted: true) else { return false }
        let first = planChain(person, product: Catalog.premiumMonthly,
                              firstPurchase: firstOrder.time + random.int64(5_000, 40_000), churn: 0.1)
        var owned: [AppleTransaction] = []
        try emitChain(first, person: &person, order: firstOrder, owned: &owned, plantedThrough: 0) { _ in [userId] }
        let start0 = first.transactions[0].purchase
        let secondAt = time(start0 + Clock.hour, min(start0 + 5 * Clock.day, asOf - Clock.hour))
        guard let secondOrder = try orderCreated(person, product: Catalog.vipMonthly, at: secondAt, uuidId: false,
                                                 planted: true) else { return false }
        let second = planChain(person, product: Catalog.vipMonthly,
                               firstPurchase: secondOrder.time + random.int64(5_000, 40_000), churn: 0.2)
        try emitChain(second, person: &person, order: secondOrder, owned: &owned, plantedThrough: 0) { _ in [userId] }
        run.truth.nearMiss("different_subscription_groups")
        return true
    }

    /// An own subscription overlapping a family-shared one of the same group (family sharing is not a paid period).
    mutating func familyShareOverlap() throws -> Bool {
        guard let anchor = anchor(tail: 3 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        guard let order = try orderCreated(person, product: Catalog.premiumMonthly, at: anchor, uuidId: false,
                                           planted: true) else { return false }
        let own = planChain(person, product: Catalog.premiumMonthly,
                            firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0.1)
        var owned: [AppleTransaction] = []
        try emitChain(own, person: &person, order: order, owned: &owned, plantedThrough: 0) { _ in [userId] }
        let start0 = own.transactions[0].purchase
        var shared = newTransaction(person, product: Catalog.premiumMonthly,
                                    at: time(start0 + Clock.hour, min(start0 + 5 * Clock.day, asOf - Clock.hour)))
        shared.familyShared = true
        owned.append(shared)
        let verifiedAt = try receipt(userId: userId, at: shared.purchase + random.int64(Clock.minute, 20 * Clock.minute),
                                     orderId: nil, namedTransaction: shared.id, current: [shared], owned: owned,
                                     autoRenewOff: person.autoRenewOff, style: person.style, planted: true) ?? shared.purchase
        try delivered(userId: userId, transactionId: shared.id, product: shared.product,
                      at: verifiedAt + random.int64(500, 30_000), orderId: nil, planted: true)
        run.truth.nearMiss("family_share_overlap")
        run.truth.nearMiss("family_shared_delivered_once")
        return true
    }

    /// Two Apple IDs' chains of one group overlapping only through a refunded (and revoked) period.
    mutating func refundedOverlap() throws -> Bool {
        guard let anchor = anchor(tail: 6 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        guard let order = try orderCreated(person, product: Catalog.premiumMonthly, at: anchor, uuidId: false,
                                           planted: true) else { return false }
        let own = planChain(person, product: Catalog.premiumMonthly,
                            firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0.1)
        var owned: [AppleTransaction] = []
        try emitChain(own, person: &person, order: order, owned: &owned, plantedThrough: 0) { _ in [userId] }
        let start0 = own.transactions[0].purchase
        let secondAt = time(start0 + Clock.hour, min(start0 + 3 * Clock.day, asOf - 4 * Clock.hour))
        guard let secondOrder = try orderCreated(person, product: Catalog.premiumWeekly, at: secondAt, uuidId: false,
                                                 planted: true) else { return false }
        var second = planChain(person, product: Catalog.premiumWeekly,
                               firstPurchase: secondOrder.time + random.int64(5_000, 40_000), churn: 0, maxTransactions: 1)
        let purchase = second.transactions[0].purchase
        let refundAt = time(purchase + Clock.hour, min(purchase + 2 * Clock.day, asOf - 2 * Clock.hour))
        let revocation = Revocation(time: refundAt, reason: 1, type: .full, showsType: true)
        second.transactions[0].revocation = revocation
        if let cancelAt = second.cancelAt, cancelAt > refundAt { second.cancelAt = refundAt + Clock.minute }
        var secondOwned: [AppleTransaction] = []
        try emitChain(second, person: &person, order: secondOrder, owned: &secondOwned, plantedThrough: 0) { _ in [userId] }
        try refundAndRevoke(second.transactions[0], revocation: revocation, userId: userId, chain: second.transactions)
        run.truth.nearMiss("overlap_only_refunded")
        return true
    }

    // MARK: Apple's Sales Report

    /// A purchase verified only by a verifyReceipt response (no storefront) for an order that named
    /// no storefront: iaprecon counts it in country `??`, Apple's report in the buyer's country, and
    /// the `??` unit covers that country's gap instead of a finding.
    mutating func storefrontlessSale() throws -> Bool {
        guard let anchor = anchor(tail: 2 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor, style: .legacyReceipt)
        guard let order = try orderCreated(person, product: plantedConsumable(), at: anchor, uuidId: false, showPrice: false,
                                           planted: true) else { return false }
        let tx = newTransaction(person, product: order.product, at: order.time + random.int64(5_000, 40_000))
        let verifiedAt = try receipt(userId: person.userId, at: tx.purchase + random.int64(800, 5_000), orderId: order.id,
                                     namedTransaction: tx.id, current: [tx], owned: [], style: .legacyReceipt, planted: true)
            ?? tx.purchase
        try delivered(userId: person.userId, transactionId: tx.id, product: tx.product, at: verifiedAt + random.int64(500, 30_000),
                      orderId: order.id, planted: true)
        if SalesLedger.coveredDays(start: start, asOf: asOf)?.contains(SalesLedger.pacificDay(tx.purchase)) == true {
            run.truth.nearMiss("apple_storefrontless_purchase")
        }
        return true
    }

    /// A purchase at 23:30 Pacific, already the next day in UTC: Apple's report counts it on the
    /// Pacific day, and so must the tie-out.
    mutating func latePacificEvening() throws -> Bool {
        guard let days = SalesLedger.coveredDays(start: start, asOf: asOf) else { return false }
        let day = days.lowerBound + Int64(random.below(days.count))
        let purchase = SalesLedger.instant(pacificDay: day, minutes: 23 * 60 + 30)
        let person = try scenarioPerson(before: purchase - 2 * Clock.minute, style: .storeKit2)
        guard let order = try orderCreated(person, product: plantedConsumable(), at: purchase - random.int64(5_000, 40_000),
                                           uuidId: false, planted: true) else { return false }
        let tx = newTransaction(person, product: order.product, at: purchase)
        let verifiedAt = try receipt(userId: person.userId, at: purchase + random.int64(800, 5_000), orderId: order.id,
                                     namedTransaction: tx.id, current: [tx], owned: [], style: .storeKit2, planted: true)
            ?? purchase
        try delivered(userId: person.userId, transactionId: tx.id, product: tx.product, at: verifiedAt + random.int64(500, 30_000),
                      orderId: order.id, planted: true)
        run.truth.nearMiss("apple_purchase_2330_pacific_next_utc_day")
        return true
    }
}
