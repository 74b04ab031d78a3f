/// A subscription chain: one Apple ID's transactions of one original_transaction_id.
struct ChainPlan {
    var transactions: [AppleTransaction] = []
    /// When the subscriber turned auto-renew off (the chain ends with the last transaction).
    var cancelAt: Millis?
    var chainStart: Millis = 0

    var originalId: String { transactions.first?.originalId ?? "" }
}

/// The purchase flows every user goes through: consumables, non-consumables,
/// subscriptions with renewals, and refunds the server handles correctly.
extension SlotSimulation {
    // MARK: Consumables and non-consumables

    /// A purchase as it normally goes: order, payment seconds later, verification, delivery
    /// within a minute or so (far inside the 24 h grace), sometimes refunded and then revoked.
    mutating func buyOneTime(_ person: inout Person, product: Int, at time: Millis) throws {
        let info = Catalog.products[product]
        let quantity = info.type == .consumable && product <= Catalog.gems300 && random.chance(0.05) ? random.int(2, 3) : 1
        let useToken = person.style != .legacyReceipt && random.chance(0.3)
        guard let order = try orderCreated(person, product: product, at: time, uuidId: useToken,
                                           showPrice: random.chance(0.95)) else { return }
        // Some payment sheets are dismissed: the order stays without a transaction.
        guard !random.chance(Tuning.abandonedOrderChance) else { return }
        let purchase = order.time + random.int64(4_000, 45_000)
        guard purchase <= asOf else { return }
        var tx = newTransaction(person, product: product, at: purchase, quantity: quantity, token: useToken ? order.id : nil)
        if random.chance(Tuning.refundChance) {
            let refundAt = purchase + random.int64(2 * Clock.hour, 10 * Clock.day)
            if refundAt + 40 * Clock.minute <= asOf {
                tx.revocation = Revocation(time: refundAt, reason: random.below(2), type: .full, showsType: random.chance(0.5))
            }
        }
        if info.type == .nonConsumable { person.owned.append(tx) }
        var verifyAt = purchase + random.int64(800, 6_000)
        if random.chance(Tuning.failedVerificationChance) {
            try failedReceipt(userId: person.userId, at: verifyAt, orderId: random.chance(0.5) ? order.id : nil,
                              transactionId: tx.id, status: random.pick([21002, 21005, 21104]))
            verifyAt += random.int64(2_000, 30_000)
        }
        guard let verifiedAt = try receipt(userId: person.userId, at: verifyAt,
                                           orderId: random.chance(0.5) ? order.id : nil,
                                           namedTransaction: random.chance(0.7) ? tx.id : nil, current: [tx],
                                           owned: person.owned, autoRenewOff: person.autoRenewOff, style: person.style) else { return }
        if random.chance(Tuning.oneTimeChargeChance) {
            try notify(spec("ONE_TIME_CHARGE", tx: tx, at: purchase + random.int64(3_000, 40_000)))
        }
        let deliverAt = verifiedAt + (random.chance(0.05) ? random.int64(60_000, 20 * Clock.minute) : random.int64(300, 60_000))
        let deliveredAt = try delivered(userId: person.userId, transactionId: tx.id, product: product, quantity: quantity,
                                        at: deliverAt, orderId: random.chance(0.7) ? order.id : nil)
        try mmpPurchase(person, tx, at: purchase + random.int64(1_000, 20_000))
        if deliveredAt != nil, let revocation = tx.revocation {
            try refundAndRevoke(tx, revocation: revocation, userId: person.userId)
        }
    }

    /// Apple refunds a delivered purchase and the server takes the goods back after it
    /// (a near miss: refund followed by a revocation).
    mutating func refundAndRevoke(_ tx: AppleTransaction, revocation: Revocation, userId: String,
                                  chain: [AppleTransaction] = []) throws {
        if tx.info.type == .consumable, random.chance(0.5) {
            let asked = max(tx.purchase + 10 * Clock.minute, revocation.time - random.int64(Clock.hour, 2 * Clock.day))
            if asked < revocation.time {
                var before = tx
                before.revocation = nil
                try notify(spec("CONSUMPTION_REQUEST", tx: before, at: asked, consumptionReason: "UNINTENDED_PURCHASE"))
            }
        }
        let noticeAt = revocation.time + random.int64(1_000, 60_000)
        let refund = spec(tx.familyShared ? "REVOKE" : "REFUND", tx: tx, at: noticeAt,
                          renewal: tx.info.isSubscription ? (false, tx.originalPurchase) : nil, chain: chain)
        try notify(refund, planted: true)
        try deliveryRevoked(userId: userId, transactionId: tx.id, at: noticeAt + random.int64(5_000, 30 * Clock.minute),
                            planted: true)
        run.truth.nearMiss("refund_then_revoked")
    }

    // MARK: Subscriptions

    /// Plans a chain from `firstPurchase`: renewals every period until the subscriber
    /// churns, `maxTransactions` is reached, or the next renewal lies after as-of. With
    /// `extensionChance`, Apple extends that share of the periods, and the next renewal follows
    /// the extended date.
    mutating func planChain(_ person: Person, product: Int, firstPurchase: Millis, churn: Double,
                            maxTransactions: Int = 1_000, token: String? = nil,
                            environment: AppleEnvironment = .production, resuming: ChainPlan? = nil,
                            extensionChance: Double = 0) -> ChainPlan {
        var plan = ChainPlan()
        var tx = newTransaction(person, product: product, at: firstPurchase, environment: environment, token: token)
        if let resuming, let first = resuming.transactions.first {
            tx.originalId = first.originalId
            tx.originalPurchase = first.originalPurchase
        }
        plan.chainStart = firstPurchase
        let period = Catalog.products[product].period
        while true {
            if extensionChance > 0, random.chance(extensionChance) {
                extendRenewalDate(&tx, by: random.int64(1, Tuning.renewalExtensionMaxDays) * Clock.day)
            }
            plan.transactions.append(tx)
            if plan.transactions.count >= maxTransactions || random.chance(churn) {
                let lower = tx.purchase + Clock.hour
                let upper = tx.expires - Clock.hour
                plan.cancelAt = upper > lower ? time(lower, upper) : lower
                break
            }
            let next = tx.expires - random.int64(0, 20 * Clock.minute)
            if next > asOf { break }
            var renewal = newTransaction(person, product: product, at: next, environment: environment, token: token)
            renewal.originalId = tx.originalId
            renewal.originalPurchase = tx.originalPurchase
            renewal.expires = tx.expires + period
            renewal.isRenewal = true
            tx = renewal
        }
        return plan
    }

    /// Apple extends `tx`'s period by `length` (the App Store Server API's "Extend a subscription
    /// renewal date") at a time inside the period; false, and nothing changed, when that time
    /// lies after as-of (Apple has not extended it yet).
    @discardableResult
    mutating func extendRenewalDate(_ tx: inout AppleTransaction, by length: Millis) -> Bool {
        let grantedAt = time(tx.purchase + Clock.hour, tx.expires - Clock.hour)
        guard grantedAt <= asOf else { return false }
        tx.extend(by: length, at: grantedAt)
        return true
    }

    /// Writes a chain: the first purchase (receipt, SUBSCRIBED, delivery naming the order),
    /// each renewal (DID_RENEW, delivery), an extension of a period (RENEWAL_EXTENDED: payloads
    /// written before it show the old expiry, later ones the new), and the end (auto-renew off, EXPIRED).
    /// `recipients(index)` are the accounts the server delivers transaction `index` to.
    mutating func emitChain(_ plan: ChainPlan, person: inout Person, order: Order?, owned: inout [AppleTransaction],
                            v2Only: Bool = false, plantedThrough: Int = -1, subtype: String = "INITIAL_BUY",
                            recipients: (Int) -> [String]) throws {
        for tx in plan.transactions where !owned.contains(where: { $0.id == tx.id }) { owned.append(tx) }
        if let cancelAt = plan.cancelAt { person.autoRenewOff[plan.originalId] = cancelAt }
        let chain = plan.transactions
        for (index, tx) in chain.enumerated() {
            let planted = index <= plantedThrough
            let autoRenew = plan.cancelAt.map { tx.purchase < $0 } ?? true
            let renewal = (autoRenew: autoRenew, chainStart: plan.chainStart)
            var deliverAfter: Millis
            if index == 0 {
                guard let verifiedAt = try receipt(userId: person.userId, at: tx.purchase + random.int64(800, 5_000),
                                                   orderId: random.chance(0.5) ? order?.id : nil,
                                                   namedTransaction: random.chance(0.7) ? tx.id : nil, current: [tx],
                                                   owned: owned, autoRenewOff: person.autoRenewOff, style: person.style,
                                                   environment: tx.environment,
                                                   planted: planted) else { return }
                if v2Only || random.chance(0.9) {
                    try notify(spec("SUBSCRIBED", subtype, tx: tx, at: tx.purchase + random.int64(2_000, 40_000),
                                    renewal: renewal, chain: Array(chain[0...index])), v2Only: v2Only, planted: planted)
                }
                try mmpPurchase(person, tx, at: tx.purchase + random.int64(1_000, 20_000))
                deliverAfter = verifiedAt
            } else {
                let noticeAt = tx.purchase + random.int64(5_000, 90_000)
                guard try notify(spec("DID_RENEW", tx: tx, at: noticeAt, renewal: renewal, chain: Array(chain[0...index])),
                                 v2Only: v2Only, planted: planted) else { return }
                deliverAfter = noticeAt
            }
            for userId in recipients(index) {
                deliverAfter += random.int64(1_000, 120_000)
                try delivered(userId: userId, transactionId: tx.id, product: tx.product, at: deliverAfter,
                              orderId: index == 0 && userId == order?.userId ? order?.id : nil,
                              deliveryId: index == 0 ? .random : .always, planted: planted)
            }
            if let extended = tx.renewalExtension {
                let autoRenew = plan.cancelAt.map { extended.grantedAt < $0 } ?? true
                if try notify(spec("RENEWAL_EXTENDED", tx: tx, at: extended.grantedAt, renewal: (autoRenew, plan.chainStart),
                                   chain: Array(chain[0...index])), planted: planted), !planted {
                    run.truth.nearMiss("renewal_extended_one_chain")
                }
            }
        }
        if let cancelAt = plan.cancelAt, let last = chain.last {
            let offTx = chain.last { $0.purchase <= cancelAt } ?? last
            try notify(spec("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", tx: offTx, at: cancelAt,
                            renewal: (false, plan.chainStart), chain: chain.filter { $0.purchase <= cancelAt }),
                       v2Only: v2Only)
            if last.revocation == nil {
                try notify(spec("EXPIRED", "VOLUNTARY", tx: last, at: last.expires + random.int64(1_000, 60_000),
                                renewal: (false, plan.chainStart)))
            }
        }
        if chain.count > 1, chain[1].purchase + 10 * Clock.minute <= asOf { run.truth.nearMiss("renewal_chain_one_apple_id") }
    }

    /// A normal subscriber: order, first period, renewals until churn, sometimes a
    /// resubscription (same Apple ID, same chain) after a lapse.
    mutating func subscribe(_ person: inout Person, product: Int, at time: Millis) throws {
        guard let order = try orderCreated(person, product: product, at: time, uuidId: false) else { return }
        let first = order.time + random.int64(5_000, 40_000)
        guard first <= asOf else { return }
        let churn = Catalog.products[product].period <= Catalog.week ? 0.12 : 0.25
        let plan = planChain(person, product: product, firstPurchase: first, churn: churn,
                             extensionChance: Tuning.renewalExtensionChance)
        var owned = person.owned
        let userId = person.userId
        try emitChain(plan, person: &person, order: order, owned: &owned) { _ in [userId] }
        person.owned = owned
        guard plan.cancelAt != nil, let last = plan.transactions.last, random.chance(0.2) else { return }
        let again = last.expires + random.int64(Clock.hour, 10 * Clock.day)
        guard again + 10 * Clock.minute < asOf,
              let second = try orderCreated(person, product: product, at: again, uuidId: false) else { return }
        let resumed = planChain(person, product: product, firstPurchase: second.time + random.int64(5_000, 30_000),
                                churn: churn, resuming: plan, extensionChance: Tuning.renewalExtensionChance)
        var ownedAgain = person.owned
        try emitChain(resumed, person: &person, order: second, owned: &ownedAgain, subtype: "RESUBSCRIBE") { _ in [userId] }
        person.owned = ownedAgain
    }

    /// A subscriber's app checking its receipt at launch.
    mutating func receiptCheck(_ person: Person, at time: Millis) throws {
        guard person.owned.contains(where: { $0.purchase <= time }) else { return }
        try receipt(userId: person.userId, at: time + random.int64(500, 5_000), orderId: nil, namedTransaction: nil,
                    current: [], owned: person.owned, autoRenewOff: person.autoRenewOff, style: person.style)
    }

    // MARK: A normal user

    mutating func normalUser() throws {
        let registeredAt = time(start + Clock.minute, asOf - 30 * Clock.minute)
        var person = try makePerson(registeredAt: registeredAt)
        let payer = random.chance(Tuning.payerShare)
        let buyChance = payer && random.chance(Tuning.whaleShare / Tuning.payerShare) ? Tuning.whaleBuyChance : Tuning.payerBuyChance
        if random.chance(Tuning.subscriberShare) {
            let product = [Catalog.premiumWeekly, Catalog.premiumMonthly, Catalog.premiumYearly][random.weighted([45, 45, 10])]
            try subscribe(&person, product: product, at: registeredAt + random.int64(2 * Clock.minute, 5 * Clock.day))
        }
        if random.chance(Tuning.vipShare) {
            try subscribe(&person, product: Catalog.vipMonthly, at: registeredAt + random.int64(Clock.hour, 10 * Clock.day))
        }
        var wantsRemoveAds = random.chance(Tuning.removeAdsShare)
        try sessions(&person) { sim, person, at in
            if !person.owned.isEmpty, sim.random.chance(Tuning.subscriberReceiptCheckChance) {
                try sim.receiptCheck(person, at: at)
            }
            if wantsRemoveAds, sim.random.chance(0.3) {
                wantsRemoveAds = false
                try sim.buyOneTime(&person, product: Catalog.removeAds, at: at + sim.random.int64(30_000, 600_000))
            }
            if payer, sim.random.chance(buyChance) {
                let product = Catalog.consumables[sim.random.weighted(Catalog.consumableWeights)]
                try sim.buyOneTime(&person, product: product, at: at + sim.random.int64(30_000, 900_000))
            }
        }
    }
}
