/// Slots that plant one finding each (RULES.md "Findings"), with the truth row it must produce.
extension SlotSimulation {
    /// Verified, never delivered, older than grace at as-of (掉单): the server crashed after verifying.
    mutating func lostAfterReceipt() throws -> Bool {
        guard let anchor = anchor(tail: grace + 2 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        let (order, tx, _) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        if random.chance(0.5) {
            try notify(spec("ONE_TIME_CHARGE", tx: tx, at: tx.purchase + random.int64(3_000, 30_000)), planted: true)
        }
        finding(.lostDelivery, .lostAfterReceipt, tx: tx, userId: person.userId, orderId: order.id, amount: amount(tx))
        return true
    }

    /// Apple told the server (ONE_TIME_CHARGE) but the client never sent the receipt; the
    /// order is known through appAccountToken.
    mutating func lostNotificationOnly() throws -> Bool {
        guard let anchor = anchor(tail: grace + 2 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor, style: .storeKit2)
        let (order, tx, _) = try plantedPurchase(person, product: plantedConsumable(), at: anchor, token: true,
                                                 verify: false)
        try notify(spec("ONE_TIME_CHARGE", tx: tx, at: tx.purchase + random.int64(3_000, 30_000)), form: v2Form(),
                   planted: true)
        finding(.lostDelivery, .lostNotificationOnly, tx: tx, userId: person.userId, orderId: order.id,
                amount: amount(tx))
        return true
    }

    /// A weekly subscription's first renewal: DID_RENEW arrived, the grant job failed, and the
    /// app's next receipt check shows the renewal.
    mutating func lostRenewal() throws -> Bool {
        guard let anchor = anchor(tail: Catalog.week + grace + 4 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        guard let order = try orderCreated(person, product: Catalog.premiumWeekly, at: anchor, uuidId: false,
                                           planted: true) else { return false }
        let plan = planChain(person, product: Catalog.premiumWeekly, firstPurchase: order.time + random.int64(5_000, 40_000),
                             churn: 0, maxTransactions: 2)
        guard plan.transactions.count == 2 else {
            throw GeneratorError("internal error: lost renewal chain has no renewal")
        }
        var owned: [AppleTransaction] = []
        let userId = person.userId
        try emitChain(plan, person: &person, order: order, owned: &owned, v2Only: true, plantedThrough: 1) { index in
            index == 0 ? [userId] : []
        }
        let renewal = plan.transactions[1]
        try receipt(userId: userId, at: renewal.purchase + random.int64(Clock.hour, 3 * Clock.hour), orderId: nil,
                    namedTransaction: nil, current: [], owned: owned, autoRenewOff: person.autoRenewOff,
                    style: person.style, planted: true)
        finding(.lostDelivery, .lostRenewal, tx: renewal, userId: userId, amount: amount(renewal))
        return true
    }

    /// Never delivered; refunded only after the delivery was due, so still lost.
    mutating func lostRefundedAfterDue() throws -> Bool {
        guard let anchor = anchor(tail: grace + 3 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        var (order, tx, _) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
        let earliest = tx.purchase + grace + Clock.hour
        let refundAt = time(earliest, min(earliest + 2 * Clock.day, asOf - 5 * Clock.minute))
        tx.revocation = Revocation(time: refundAt, reason: 0, type: .full, showsType: random.chance(0.5))
        try notify(spec("REFUND", tx: tx, at: min(refundAt + random.int64(1_000, 60_000), asOf)), planted: true)
        finding(.lostDelivery, .lostRefundedAfterDue, tx: tx, userId: person.userId, orderId: order.id, amount: amount(tx))
        return true
    }

    /// One transaction granted twice or more to the same account.
    mutating func duplicateSameUser() throws -> Bool {
        guard let anchor = anchor(tail: 5 * Clock.hour) else { return false }
        let room = asOf - anchor
        var variant = random.below(4)
        if variant == 2, room < 2 * Clock.day { variant = 0 }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        switch variant {
        case 0, 1:
            // Client retried finishTransaction and the server granted again (with or without delivery ids).
            let (order, tx, verifiedAt) = try plantedPurchase(person, product: plantedConsumable(), at: anchor)
            let mode: DeliveryIdMode = variant == 0 ? .always : .never
            var at = verifiedAt + random.int64(1_000, 30_000)
            let count = variant == 0 && random.chance(0.15) ? 3 : 2
            for index in 0..<count {
                try delivered(userId: userId, transactionId: tx.id, product: tx.product, at: at,
                              orderId: index == 0 || random.chance(0.5) ? order.id : nil, deliveryId: mode, planted: true)
                at += variant == 0 ? random.int64(Clock.minute, 15 * Clock.minute) : random.int64(2_000, 30_000)
            }
            finding(.duplicateDelivery, .duplicateSameUser, tx: tx, userId: userId, orderId: order.id,
                    amount: amount(tx, times: Int64(count - 1)), detail: "same_user")
        case 2:
            // A non-consumable restored on a new phone and granted again.
            let (order, tx, verifiedAt) = try plantedPurchase(person, product: Catalog.removeAds, at: anchor)
            person.owned.append(tx)
            try delivered(userId: userId, transactionId: tx.id, product: tx.product,
                          at: verifiedAt + random.int64(1_000, 30_000), orderId: order.id, planted: true)
            let restoreAt = time(tx.purchase + Clock.day, min(tx.purchase + 4 * Clock.day, asOf - 10 * Clock.minute))
            let restoredAt = try receipt(userId: userId, at: restoreAt, orderId: nil, namedTransaction: nil, current: [],
                                         owned: person.owned, style: person.style,
                                         planted: true) ?? restoreAt
            try delivered(userId: userId, transactionId: tx.id, product: tx.product,
                          at: restoredAt + random.int64(500, 5_000), orderId: nil, planted: true)
            finding(.duplicateDelivery, .duplicateSameUser, tx: tx, userId: userId, orderId: order.id, amount: amount(tx),
                    detail: "same_user")
        default:
            // A subscription's first period granted by both the webhook and the client path.
            guard let order = try orderCreated(person, product: Catalog.premiumMonthly, at: anchor, uuidId: false,
                                               planted: true) else { return false }
            let plan = planChain(person, product: Catalog.premiumMonthly,
                                 firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0, maxTransactions: 1)
            var owned: [AppleTransaction] = []
            try emitChain(plan, person: &person, order: order, owned: &owned, plantedThrough: 0) { _ in [userId, userId] }
            let tx = plan.transactions[0]
            finding(.duplicateDelivery, .duplicateSameUser, tx: tx, userId: userId, orderId: order.id, amount: amount(tx),
                    detail: "same_user")
        }
        return true
    }

    /// A receipt replayed by a second account (another phone): granted to both; duplicate
    /// cross_user, and not wrong_user_delivery (the order's user got it too).
    mutating func receiptReplay() throws -> Bool {
        guard let anchor = anchor(tail: 22 * Clock.hour) else { return false }
        let owner = try scenarioPerson(before: anchor)
        let (order, tx, verifiedAt) = try plantedPurchase(owner, product: [Catalog.gems980, Catalog.gems2000, Catalog.gems6480][random.below(3)],
                                                          at: anchor)
        try delivered(userId: owner.userId, transactionId: tx.id, product: tx.product,
                      at: verifiedAt + random.int64(500, 20_000), orderId: order.id, planted: true)
        let replayAt = time(tx.purchase + Clock.hour, min(tx.purchase + 20 * Clock.hour, asOf - 10 * Clock.minute))
        let attackerSignUp = time(max(start + Clock.minute, replayAt - 3 * Clock.day), replayAt - 5 * Clock.minute)
        var attacker = try makePerson(registeredAt: attackerSignUp, secondary: true)
        try sessions(&attacker) { _, _, _ in }
        let replayedAt = try receipt(userId: attacker.userId, at: replayAt, orderId: nil, namedTransaction: tx.id,
                                     current: [tx], owned: [], style: random.chance(0.6) ? .legacyReceipt : .storeKit2Signed, planted: true) ?? replayAt
        try delivered(userId: attacker.userId, transactionId: tx.id, product: tx.product,
                      at: replayedAt + random.int64(500, 10_000), orderId: nil, planted: true)
        finding(.duplicateDelivery, .receiptReplay, tx: tx, userId: owner.userId, orderId: order.id, amount: amount(tx),
                detail: "cross_user")
        run.truth.nearMiss("receipt_replay_not_wrong_user")
        return true
    }

    /// Refunded after delivery and never taken back, through every refund source.
    mutating func refundNotRevoked() throws -> Bool {
        guard let anchor = anchor(tail: 6 * Clock.hour) else { return false }
        let room = asOf - anchor
        var variant = random.below(7)
        if (variant == 2 || variant == 3), room < Clock.day { variant = 0 }
        var person = try scenarioPerson(before: anchor, style: variant == 4 ? .legacyReceipt : (variant == 5 ? .storeKit2 : nil))
        let userId = person.userId
        switch variant {
        case 2, 3:
            // A monthly subscription refunded: prorated (V2) or through V1 CANCEL.
            guard let order = try orderCreated(person, product: Catalog.premiumMonthly, at: anchor, uuidId: false,
                                               planted: true) else { return false }
            var plan = planChain(person, product: Catalog.premiumMonthly,
                                 firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0, maxTransactions: 1)
            let first = plan.transactions[0]
            let refundAt = time(first.purchase + 2 * Clock.hour, min(first.purchase + 10 * Clock.day, asOf - 5 * Clock.minute))
            let type: RevocationType = variant == 2 ? .prorated([50_000, 25_000, 37_500, 80_000][random.below(4)]) : .full
            plan.transactions[0].revocation = Revocation(time: refundAt, reason: 1, type: type, showsType: true)
            let tx = plan.transactions[0]
            var owned: [AppleTransaction] = []
            try emitChain(plan, person: &person, order: order, owned: &owned, v2Only: variant == 2, plantedThrough: 0) { _ in [userId] }
            try notify(spec("REFUND", tx: tx, at: min(refundAt + random.int64(1_000, 60_000), asOf), renewal: (false, first.purchase),
                            chain: plan.transactions),
                       form: variant == 2 ? v2Form() : .v1, planted: true)
            var refunded = LineBuffer(capacity: 16)
            if case .prorated(let percentage) = type {
                refunded.plainAmount(tx.priceMilli * Int64(percentage), scale: 8)
            } else {
                refunded.plainAmount(tx.priceMilli, scale: 3)
            }
            finding(.refundedNotRevoked, .refundNotRevoked, tx: tx, userId: userId, orderId: order.id,
                    amount: String(decoding: refunded.bytes, as: UTF8.self))
            return true
        default:
            break
        }
        let product = variant == 4 ? Catalog.removeAds : plantedConsumable()
        var (order, tx, verifiedAt) = try plantedPurchase(person, product: product, at: anchor)
        let deliveredAt = try delivered(userId: userId, transactionId: tx.id, product: product,
                                        at: verifiedAt + random.int64(500, 30_000), orderId: order.id, planted: true)
            ?? verifiedAt
        let latestRefund = asOf - (variant >= 4 ? Clock.hour + 5 * Clock.minute : 5 * Clock.minute)
        let refundAt = time(deliveredAt + 2 * Clock.hour, min(deliveredAt + 5 * Clock.day, latestRefund))
        tx.revocation = Revocation(time: refundAt, reason: random.below(2), type: .full, showsType: random.chance(0.6))
        switch variant {
        case 0, 6:
            // V2 REFUND; in variant 6 the server revoked before the refund (on the refund request), which does not count.
            if variant == 6 {
                var asked = tx
                asked.revocation = nil
                let askedAt = time(deliveredAt + Clock.minute, refundAt - Clock.hour)
                try notify(spec("CONSUMPTION_REQUEST", tx: asked, at: askedAt, consumptionReason: "UNINTENDED_PURCHASE"),
                           planted: true)
                try deliveryRevoked(userId: userId, transactionId: tx.id,
                                    at: time(askedAt + Clock.minute, refundAt - 10 * Clock.minute),
                                    reason: "refund_requested", planted: true)
            }
            try notify(spec("REFUND", tx: tx, at: refundAt + random.int64(1_000, 60_000)), form: v2Form(), planted: true)
        case 1:
            try notify(spec("REFUND", tx: tx, at: refundAt + random.int64(1_000, 60_000)), form: .v1, planted: true)
        case 4:
            // Only a later receipt shows the cancellation.
            person.owned.append(tx)
            try receipt(userId: userId, at: time(refundAt + Clock.minute, min(refundAt + Clock.day, asOf - Clock.minute)),
                        orderId: nil, namedTransaction: nil, current: [], owned: person.owned, style: .legacyReceipt, planted: true)
        default:
            // Only a later App Store Server API lookup (a V2 transaction with revocationDate) shows it.
            try receipt(userId: userId, at: time(refundAt + Clock.minute, min(refundAt + Clock.day, asOf - Clock.minute)),
                        orderId: nil, namedTransaction: tx.id, current: [tx], owned: [], style: .storeKit2, planted: true)
        }
        finding(.refundedNotRevoked, .refundNotRevoked, tx: tx, userId: userId, orderId: order.id, amount: amount(tx))
        return true
    }

    /// A family-shared purchase withdrawn (REVOKE / FAMILY_REVOKE) while the server keeps the grant:
    /// access must go, though no money moves (amount 0).
    mutating func familyRevokeNotRevoked() throws -> Bool {
        guard let anchor = anchor(tail: 4 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        var tx = newTransaction(person, product: Catalog.removeAds, at: anchor)
        tx.familyShared = true
        person.owned.append(tx)
        let verifiedAt = try receipt(userId: person.userId, at: anchor + random.int64(Clock.minute, Clock.hour),
                                     orderId: nil, namedTransaction: tx.id, current: [tx], owned: person.owned,
                                     style: person.style, planted: true) ?? anchor
        let deliveredAt = try delivered(userId: person.userId, transactionId: tx.id, product: tx.product,
                                        at: verifiedAt + random.int64(500, 30_000), orderId: nil, planted: true) ?? verifiedAt
        let revokeAt = time(deliveredAt + Clock.hour, min(deliveredAt + 10 * Clock.day, asOf - 5 * Clock.minute))
        tx.revocation = Revocation(time: revokeAt, reason: 0, type: .familyRevoke, showsType: true)
        try notify(spec("REVOKE", tx: tx, at: min(revokeAt + random.int64(1_000, 60_000), asOf)), form: v2Form(),
                   planted: true)
        finding(.refundedNotRevoked, .familyRevokeNotRevoked, tx: tx, userId: person.userId, amount: "0",
                currency: Catalog.currencies[tx.currency].code)
        return true
    }

    /// Delivered with a transaction id no verified source knows.
    mutating func orphanDelivery() throws -> Bool {
        guard let anchor = anchor(tail: 30 * Clock.minute) else { return false }
        let person = try scenarioPerson(before: anchor)
        let variant = random.below(3)
        let product = variant == 2 ? Catalog.halloween : (variant == 0 ? Catalog.gems2000 : Catalog.gems300)
        let fakeId = fakeTransactionId()
        var at = anchor
        if variant != 1 {
            // A cracked client: Apple rejects the receipt, the server grants anyway.
            let order = try orderCreated(person, product: product, at: anchor, uuidId: false, planted: true)
            at = (order?.time ?? anchor) + random.int64(5_000, 40_000)
            try failedReceipt(userId: person.userId, at: at, orderId: random.chance(0.5) ? order?.id : nil,
                              transactionId: fakeId, status: random.pick([21002, 21003]))
        }
        try delivered(userId: person.userId, transactionId: fakeId, product: product, at: at + random.int64(500, 10_000),
                      orderId: nil, planted: true)
        let info = Catalog.products[product]
        var price = LineBuffer(capacity: 16)
        price.plainAmount(info.usdMilli, scale: 3)
        finding(.orphanDelivery, .orphanDelivery, userId: person.userId,
                amount: info.inCatalog ? String(decoding: price.bytes, as: UTF8.self) : "",
                transactionId: fakeId, productId: info.id, currency: info.inCatalog ? "USD" : "")
        return true
    }

    /// The delivered product, or the matched order's product, is not the product paid for.
    mutating func productMismatch() throws -> Bool {
        guard let anchor = anchor(tail: 30 * Clock.minute) else { return false }
        let person = try scenarioPerson(before: anchor)
        let variant = random.below(3)
        let paid = [Catalog.gems60, Catalog.gems300, Catalog.gems980][random.below(3)]
        let other = paid == Catalog.gems300 ? Catalog.gems980 : Catalog.gems300
        guard let order = try orderCreated(person, product: variant == 0 ? paid : other, at: anchor, uuidId: false,
                                           planted: true) else { return false }
        let tx = newTransaction(person, product: paid, at: order.time + random.int64(5_000, 40_000))
        let verifiedAt = try receipt(userId: person.userId, at: tx.purchase + random.int64(800, 5_000),
                                     orderId: variant == 2 ? order.id : nil, namedTransaction: tx.id, current: [tx],
                                     owned: [], style: person.style, planted: true) ?? tx.purchase
        // A V2 sighting fixes the transaction's price, whatever the order says.
        try notify(spec("ONE_TIME_CHARGE", tx: tx, at: tx.purchase + random.int64(3_000, 30_000)), form: v2Form(),
                   planted: true)
        try delivered(userId: person.userId, transactionId: tx.id, product: variant == 0 ? other : paid,
                      at: verifiedAt + random.int64(500, 30_000), orderId: variant == 2 ? nil : order.id, planted: true)
        finding(.productMismatch, .productMismatch, tx: tx, userId: person.userId, orderId: order.id, amount: amount(tx))
        return true
    }

    /// A purchase left unfinished by one account and finished after another logged in on the
    /// same phone: matched to the first account's order (rule 1, 2 or 3), delivered only to the second.
    mutating func wrongUserDelivery() throws -> Bool {
        guard let anchor = anchor(tail: 8 * Clock.hour) else { return false }
        let owner = try scenarioPerson(before: anchor)
        let rule = random.int(1, 3)
        let (order, tx, _) = try plantedPurchase(owner, product: plantedConsumable(), at: anchor, token: rule == 3,
                                                 verify: false)
        let deliverAt = tx.purchase + random.int64(40 * Clock.minute, 6 * Clock.hour)
        let other = try secondAccount(of: owner, at: time(tx.purchase + 5 * Clock.minute, deliverAt - 10 * Clock.minute))
        let verifiedAt = try receipt(userId: other.userId, at: deliverAt - random.int64(1_000, 10_000),
                                     orderId: rule == 2 ? order.id : nil, namedTransaction: tx.id, current: [tx],
                                     owned: [], style: rule == 3 ? .storeKit2Signed : other.style, planted: true) ?? deliverAt
        try delivered(userId: other.userId, transactionId: tx.id, product: tx.product, at: max(deliverAt, verifiedAt + 500),
                      orderId: rule == 1 ? order.id : nil, planted: true)
        finding(.wrongUserDelivery, .wrongUserDelivery, tx: tx, userId: owner.userId, orderId: order.id, amount: amount(tx))
        return true
    }

    /// One account holding two Apple IDs' subscriptions of one group at the same time.
    mutating func multiAppleId() throws -> Bool {
        guard let anchor = anchor(tail: 3 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        let firstProduct = random.chance(0.6) ? Catalog.premiumMonthly : Catalog.premiumWeekly
        guard let firstOrder = try orderCreated(person, product: firstProduct, at: anchor, uuidId: false, planted: true) else {
            return false
        }
        let first = planChain(person, product: firstProduct, firstPurchase: firstOrder.time + random.int64(5_000, 40_000),
                              churn: 0.1)
        var firstOwned: [AppleTransaction] = []
        try emitChain(first, person: &person, order: firstOrder, owned: &firstOwned, plantedThrough: 0) { _ in [userId] }
        let start0 = first.transactions[0].purchase
        let period = Catalog.products[firstProduct].period
        let secondAt = time(start0 + Clock.hour, min(start0 + min(period - Clock.hour, 5 * Clock.day), asOf - Clock.hour))
        let secondProduct = [Catalog.premiumMonthly, Catalog.premiumWeekly, Catalog.premiumYearly][random.below(3)]
        guard try secondAppleIdChain(&person, product: secondProduct, at: secondAt) else { return false }
        finding(.multiAppleIdSubscription, .multiAppleId, userId: userId, group: "premium", productId: "")
        return true
    }

    /// The same account's chain of another Apple ID, of `product`, ordered at `at`: false when that
    /// falls after as-of.
    mutating func secondAppleIdChain(_ person: inout Person, product: Int, at: Millis) throws -> Bool {
        let userId = person.userId
        guard let order = try orderCreated(person, product: product, at: at, uuidId: false, planted: true) else { return false }
        let chain = planChain(person, product: product, firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0.2)
        var owned: [AppleTransaction] = []
        try emitChain(chain, person: &person, order: order, owned: &owned, plantedThrough: 0) { _ in [userId] }
        return true
    }

    /// One account holding two Apple IDs' chains of one group that overlap only because Apple
    /// extended the first one's renewal date (`RENEWAL_EXTENDED`): the second begins after the first
    /// period's original expiry and before its extended one. The first's receipt and SUBSCRIBED,
    /// sent before the extension, show the original expiry.
    mutating func multiAppleIdExtended() throws -> Bool {
        guard let anchor = anchor(tail: Catalog.week + 4 * Clock.hour) else { return false }
        var person = try scenarioPerson(before: anchor)
        let userId = person.userId
        guard let firstOrder = try orderCreated(person, product: Catalog.premiumWeekly, at: anchor, uuidId: false,
                                                planted: true) else { return false }
        var first = planChain(person, product: Catalog.premiumWeekly, firstPurchase: firstOrder.time + random.int64(5_000, 40_000),
                              churn: 0, maxTransactions: 1)
        let originalExpiry = first.transactions[0].expires
        guard extendRenewalDate(&first.transactions[0], by: random.int64(1, 7) * Clock.day) else {
            throw GeneratorError("internal error: a planted renewal extension falls after as-of")
        }
        let extendedExpiry = first.transactions[0].expires
        var firstOwned: [AppleTransaction] = []
        try emitChain(first, person: &person, order: firstOrder, owned: &firstOwned, plantedThrough: 0) { _ in [userId] }
        let secondAt = time(originalExpiry + Clock.hour, min(extendedExpiry - 2 * Clock.hour, asOf - Clock.hour))
        let secondProduct = [Catalog.premiumMonthly, Catalog.premiumWeekly, Catalog.premiumYearly][random.below(3)]
        guard try secondAppleIdChain(&person, product: secondProduct, at: secondAt) else { return false }
        finding(.multiAppleIdSubscription, .multiAppleIdExtended, userId: userId, group: "premium", productId: "")
        return true
    }

    /// One Apple ID's subscription delivered to two accounts on the same phone.
    mutating func sharedAppleId() throws -> Bool {
        guard let anchor = anchor(tail: 3 * Clock.hour) else { return false }
        var owner = try scenarioPerson(before: anchor)
        let ownerId = owner.userId
        let product = random.chance(0.5) ? Catalog.premiumWeekly : Catalog.premiumMonthly
        guard let order = try orderCreated(owner, product: product, at: anchor, uuidId: false, planted: true) else {
            return false
        }
        let plan = planChain(owner, product: product, firstPurchase: order.time + random.int64(5_000, 40_000), churn: 0.1)
        let first = plan.transactions[0]
        let renewalInTime = plan.transactions.count >= 2 && plan.transactions[1].purchase + 10 * Clock.minute <= asOf
            && plan.transactions[1].purchase - first.purchase > 3 * Clock.hour
        let movesToSecond = renewalInTime && random.chance(0.5)
        let restoreLimit = min(movesToSecond ? plan.transactions[1].purchase - Clock.hour : first.expires - Clock.hour,
                               asOf - 10 * Clock.minute)
        let restoreAt = time(first.purchase + Clock.hour, restoreLimit)
        let other = try secondAccount(of: owner, at: restoreAt - random.int64(Clock.minute, 30 * Clock.minute))
        let otherId = other.userId
        var owned: [AppleTransaction] = []
        try emitChain(plan, person: &owner, order: order, owned: &owned, plantedThrough: movesToSecond ? 1 : 0) { index in
            index == 0 || !movesToSecond ? [ownerId] : [otherId]
        }
        let restoredAt = try receipt(userId: otherId, at: restoreAt, orderId: nil, namedTransaction: nil, current: [],
                                     owned: owned, autoRenewOff: owner.autoRenewOff, style: other.style, planted: true) ?? restoreAt
        if !movesToSecond {
            try delivered(userId: otherId, transactionId: first.id, product: first.product,
                          at: restoredAt + random.int64(500, 10_000), orderId: nil, planted: true)
            run.truth.nearMiss("shared_not_duplicate")
        }
        finding(.sharedAppleIdSubscription, .sharedAppleId, tx: first, userId: ownerId, orderId: order.id, productId: first.info.id)
        return true
    }

    /// A tester's sandbox (or Xcode) purchase: delivered gives sandbox_delivery only, even when
    /// delivered twice; undelivered and old gives nothing (a near miss).
    mutating func sandboxDelivery(delivered deliver: Bool) throws -> Bool {
        guard let anchor = anchor(tail: deliver ? 30 * Clock.minute : grace + 2 * Clock.hour) else { return false }
        let variant = random.below(3)
        let style: ClientStyle = [.legacyReceipt, .storeKit2, .storeKit2Signed][variant]
        let environment: AppleEnvironment = variant == 1 ? .xcode : .sandbox
        let tester = try scenarioPerson(before: anchor, style: style, method: "email")
        let product = random.chance(0.7) ? Catalog.gems60 : Catalog.removeAds
        guard let order = try orderCreated(tester, product: product, at: anchor, uuidId: false, planted: true) else {
            return false
        }
        let tx = newTransaction(tester, product: product, at: order.time + random.int64(5_000, 40_000), environment: environment)
        var verifyAt = tx.purchase + random.int64(800, 3_000)
        if style == .legacyReceipt {
            // Production first answers 21007; the server retries against the sandbox.
            try failedReceipt(userId: tester.userId, at: verifyAt, orderId: order.id, transactionId: tx.id, status: 21007)
            verifyAt += random.int64(300, 2_000)
        }
        let verifiedAt = try receipt(userId: tester.userId, at: verifyAt, orderId: order.id, namedTransaction: tx.id,
                                     current: [tx], owned: [], style: style, environment: environment, planted: true) ?? verifyAt
        if environment == .sandbox, random.chance(0.5) {
            try notify(spec("ONE_TIME_CHARGE", tx: tx, at: tx.purchase + random.int64(3_000, 30_000)), form: v2Form(),
                       planted: true)
        }
        guard deliver else {
            run.truth.nearMiss("sandbox_undelivered")
            return true
        }
        var at = verifiedAt + random.int64(500, 20_000)
        for _ in 0..<(variant == 2 ? 2 : 1) {
            try delivered(userId: tester.userId, transactionId: tx.id, product: product, at: at, orderId: order.id,
                          deliveryId: .always, planted: true)
            at += random.int64(Clock.minute, 10 * Clock.minute)
        }
        if variant == 2 { run.truth.nearMiss("sandbox_delivered_twice") }
        finding(.sandboxDelivery, .sandboxDelivery, tx: tx, userId: tester.userId, orderId: order.id)
        return true
    }

    /// First delivered more than 24 h after purchase.
    mutating func lateDelivery() throws -> Bool {
        guard let anchor = anchor(tail: grace + 2 * Clock.hour) else { return false }
        let person = try scenarioPerson(before: anchor)
        let variant = random.below(3)
        let product = plantedConsumable()
        let (order, tx, _) = try plantedPurchase(person, product: product, at: anchor, verify: variant != 0)
        let earliest = tx.purchase + grace + 20 * Clock.minute
        let deliverAt = time(earliest, min(tx.purchase + 3 * Clock.day, asOf - 5 * Clock.minute))
        if variant == 0 {
            // Apple's verification was down at purchase time; the app retried the next day.
            try failedReceipt(userId: person.userId, at: tx.purchase + random.int64(800, 5_000), orderId: order.id,
                              transactionId: tx.id, status: random.pick([21005, 21104]))
            try receipt(userId: person.userId, at: deliverAt - random.int64(1_000, 5_000), orderId: order.id,
                        namedTransaction: tx.id, current: [tx], owned: [], style: person.style, planted: true)
        }
        let deliveredProduct = variant == 2 ? (product == Catalog.gems300 ? Catalog.gems980 : Catalog.gems300) : product
        if variant == 2 {
            try notify(spec("ONE_TIME_CHARGE", tx: tx, at: tx.purchase + random.int64(3_000, 30_000)), form: v2Form(),
                       planted: true)
        }
        try delivered(userId: person.userId, transactionId: tx.id, product: deliveredProduct, at: deliverAt,
                      orderId: order.id, planted: true)
        finding(.lateDelivery, .lateDelivery, tx: tx, userId: person.userId, orderId: order.id)
        if variant == 2 {
            finding(.productMismatch, .lateDelivery, tx: tx, userId: person.userId, orderId: order.id, amount: amount(tx))
        }
        return true
    }

    /// The server's side of a sale Apple reports and no receipt shows: the buyer's orders (one per
    /// unit), paid in the App Store, and then nothing: no receipt, no notification, no delivery.
    mutating func ordersWithoutReceipt(_ sale: SalesLedger.Unverified) throws {
        let paidAt = SalesLedger.instant(pacificDay: sale.day, minutes: random.int64(60, 22 * 60))
        let person = try scenarioPerson(before: paidAt - Clock.minute, country: sale.country)
        for unit in 0..<sale.units {
            _ = try orderCreated(person, product: sale.product, at: paidAt + Int64(unit) * random.int64(60_000, 600_000) - random.int64(5_000, 40_000),
                             uuidId: false, planted: true)
        }
    }
}
