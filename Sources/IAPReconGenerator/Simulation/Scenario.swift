/// What a planted user slot carries: a finding of RULES.md, or a near miss that must
/// produce no finding.
enum Scenario: String, CaseIterable {
    // Findings.
    case lostAfterReceipt = "lost_after_receipt"
    case lostNotificationOnly = "lost_notification_only"
    case lostRenewal = "lost_renewal"
    case lostRefundedAfterDue = "lost_refunded_after_due"
    case duplicateSameUser = "duplicate_same_user"
    case receiptReplay = "receipt_replay"
    case refundNotRevoked = "refund_not_revoked"
    case familyRevokeNotRevoked = "family_revoke_not_revoked"
    case orphanDelivery = "orphan_delivery"
    case productMismatch = "product_mismatch"
    case wrongUserDelivery = "wrong_user_delivery"
    case multiAppleId = "multi_apple_id"
    case multiAppleIdExtended = "multi_apple_id_extended"
    case sharedAppleId = "shared_apple_id"
    case sandboxDelivery = "sandbox_delivery"
    case lateDelivery = "late_delivery"
    // Near misses.
    case refundReversed = "refund_reversed"
    case refundThenRevoked = "refund_then_revoked"
    case deliveryInsideGrace = "delivery_inside_grace"
    case purchaseYoungerThanGrace = "purchase_younger_than_grace"
    case refundBeforeDue = "refund_before_due"
    case sequentialAppleIds = "sequential_apple_ids"
    case extendedThenSequentialAppleIds = "extended_then_sequential_apple_ids"
    case sandboxUndelivered = "sandbox_undelivered"
    case familySharedDeliveredOnce = "family_shared_delivered_once"
    case differentGroups = "different_subscription_groups"
    case familyShareOverlap = "family_share_overlap"
    case refundedOverlap = "overlap_only_refunded"
    case storefrontlessSale = "apple_storefrontless_sale"
    case latePacificEvening = "apple_late_pacific_evening"

    /// Relative frequency among planted slots.
    var weight: Int {
        switch self {
        case .lostAfterReceipt, .refundNotRevoked, .duplicateSameUser: 40
        case .productMismatch, .lateDelivery: 30
        case .receiptReplay, .orphanDelivery, .wrongUserDelivery, .multiAppleId, .sharedAppleId: 25
        case .lostNotificationOnly, .lostRenewal, .sandboxDelivery, .familyRevokeNotRevoked: 20
        case .lostRefundedAfterDue: 12
        case .refundReversed, .refundThenRevoked, .deliveryInsideGrace, .purchaseYoungerThanGrace, .refundBeforeDue,
             .familySharedDeliveredOnce: 20
        case .sequentialAppleIds, .sandboxUndelivered: 15
        case .differentGroups, .familyShareOverlap, .refundedOverlap, .storefrontlessSale, .latePacificEvening,
             .multiAppleIdExtended, .extendedThenSequentialAppleIds: 10
        }
    }

    static let weights = allCases.map(\.weight)
}

extension SlotSimulation {
    /// The whole slot: its user (planted or normal), and the noise around it.
    mutating func simulate() throws {
        if random.chance(Tuning.ghostInstallChance) { try ghostInstall() }
        let scenarios = Scenario.allCases
        var scenario: Scenario?
        if slot < scenarios.count {
            scenario = scenarios[slot]
        } else if random.chance(Tuning.scenarioShare) {
            scenario = scenarios[random.weighted(Scenario.weights)]
        }
        var planted = false
        if let scenario {
            planted = try plant(scenario)
            if planted { run.truth.scenarios[scenario.rawValue, default: 0] += 1 }
        }
        if !planted { try normalUser() }
        let badLines = BadLine.allCases
        if slot < badLines.count {
            try plantBadLine(badLines[slot])
        } else if random.chance(Tuning.badLineChance) {
            try plantBadLine(badLines[random.below(badLines.count)])
        }
        if random.chance(Tuning.blankLineChance) { try blankLine() }
    }

    /// Plants `scenario`; false (and nothing written) when the run is too short for it.
    mutating func plant(_ scenario: Scenario) throws -> Bool {
        switch scenario {
        case .lostAfterReceipt: try lostAfterReceipt()
        case .lostNotificationOnly: try lostNotificationOnly()
        case .lostRenewal: try lostRenewal()
        case .lostRefundedAfterDue: try lostRefundedAfterDue()
        case .duplicateSameUser: try duplicateSameUser()
        case .receiptReplay: try receiptReplay()
        case .refundNotRevoked: try refundNotRevoked()
        case .familyRevokeNotRevoked: try familyRevokeNotRevoked()
        case .orphanDelivery: try orphanDelivery()
        case .productMismatch: try productMismatch()
        case .wrongUserDelivery: try wrongUserDelivery()
        case .multiAppleId: try multiAppleId()
        case .multiAppleIdExtended: try multiAppleIdExtended()
        case .sharedAppleId: try sharedAppleId()
        case .sandboxDelivery: try sandboxDelivery(delivered: true)
        case .lateDelivery: try lateDelivery()
        case .refundReversed: try refundReversed()
        case .refundThenRevoked: try refundThenRevoked()
        case .deliveryInsideGrace: try deliveryInsideGrace()
        case .purchaseYoungerThanGrace: try purchaseYoungerThanGrace()
        case .refundBeforeDue: try refundBeforeDue()
        case .sequentialAppleIds: try sequentialAppleIds()
        case .extendedThenSequentialAppleIds: try sequentialAppleIds(extendedBy: random.int64(1, 3) * Clock.day)
        case .sandboxUndelivered: try sandboxDelivery(delivered: false)
        case .familySharedDeliveredOnce: try familySharedDeliveredOnce()
        case .differentGroups: try differentGroups()
        case .familyShareOverlap: try familyShareOverlap()
        case .refundedOverlap: try refundedOverlap()
        case .storefrontlessSale: try storefrontlessSale()
        case .latePacificEvening: try latePacificEvening()
        }
    }

    // MARK: Helpers for planted slots

    /// A time for a planted purchase leaving at least `tail` before as-of, or nil if the run is too short.
    mutating func anchor(tail: Millis) -> Millis? {
        let lower = start + 20 * Clock.minute
        let upper = asOf - tail
        guard upper >= lower else { return nil }
        return time(lower, upper)
    }

    /// A user who signs up before `anchor` and otherwise only uses the app (no other purchases),
    /// so nothing but the planted purchase can match their orders.
    mutating func scenarioPerson(before anchor: Millis, style: ClientStyle? = nil, method: String? = nil,
                                 country: Int? = nil) throws -> Person {
        let registeredAt = time(max(start + Clock.minute, anchor - 5 * Clock.day), anchor - 10 * Clock.minute)
        var person = try makePerson(registeredAt: registeredAt, country: country, method: method, style: style)
        try sessions(&person) { _, _, _ in }
        return person
    }

    /// A second account signing up at `registeredAt` on `owner`'s phone.
    mutating func secondAccount(of owner: Person, at registeredAt: Millis) throws -> Person {
        var person = try makePerson(registeredAt: registeredAt, secondary: true, sharedDevice: owner.device,
                                    country: owner.country)
        try sessions(&person) { _, _, _ in }
        return person
    }

    /// A consumable a planted user buys: not the catalog-less one, so amounts are unambiguous.
    mutating func plantedConsumable() -> Int {
        [Catalog.gems60, Catalog.gems300, Catalog.gems980, Catalog.gems2000, Catalog.starterPack][random.weighted([30, 30, 20, 10, 10])]
    }

    /// Order, payment seconds later, and a verified receipt naming the transaction.
    mutating func plantedPurchase(_ person: Person, product: Int, at anchor: Millis, token: Bool = false,
                                  environment: AppleEnvironment = .production, style: ClientStyle? = nil,
                                  nameOrder: Bool? = nil, verify: Bool = true) throws -> (Order, AppleTransaction, Millis) {
        guard let order = try orderCreated(person, product: product, at: anchor, uuidId: token, planted: true) else {
            throw GeneratorError("internal error: a planted order falls after as-of")
        }
        let purchase = order.time + random.int64(5_000, 40_000)
        let tx = newTransaction(person, product: product, at: purchase, environment: environment,
                                token: token ? order.id : nil)
        var verifiedAt = purchase
        if environment == .production {
            try mmpPurchase(person, tx, at: purchase + random.int64(1_000, 20_000))
        }
        if verify {
            verifiedAt = try receipt(userId: person.userId, at: purchase + random.int64(800, 5_000),
                                     orderId: (nameOrder ?? random.chance(0.5)) ? order.id : nil,
                                     namedTransaction: tx.id, current: [tx], owned: person.owned,
                                     style: style ?? person.style, environment: environment, planted: true) ?? purchase
        }
        return (order, tx, verifiedAt)
    }

    /// A V2 form (the price travels with the transaction).
    mutating func v2Form() -> NotificationForm {
        [NotificationForm.signedPayload, .decodedWithSignedInfo, .decoded][random.weighted([60, 20, 20])]
    }

    /// Records a planted finding.
    mutating func finding(_ kind: FindingKind, _ scenario: Scenario, tx: AppleTransaction? = nil, userId: String,
                          orderId: String = "", amount: String = "", detail: String = "", group: String = "",
                          transactionId: String? = nil, productId: String? = nil, currency: String? = nil) {
        var planted = PlantedFinding(kind: kind)
        planted.transactionId = transactionId ?? tx?.id ?? ""
        planted.userId = userId
        planted.originalTransactionId = tx?.originalId ?? ""
        planted.subscriptionGroup = group
        planted.detail = detail
        planted.orderId = orderId
        planted.productId = productId ?? tx?.info.id ?? ""
        planted.amount = amount
        planted.currency = currency ?? (amount.isEmpty ? "" : tx.map { Catalog.currencies[$0.currency].code } ?? "")
        planted.scenario = scenario.rawValue
        run.truth.findings.append(planted)
    }

    /// `times` × price × quantity of `tx`, in its currency, as iaprecon prints amounts.
    func amount(_ tx: AppleTransaction, times: Int64 = 1) -> String {
        var out = LineBuffer(capacity: 16)
        out.plainAmount(tx.priceMilli * Int64(tx.quantity) * times, scale: 3)
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
