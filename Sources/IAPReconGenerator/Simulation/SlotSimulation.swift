/// Simulates one user slot: a user (sometimes with a second account), their device,
/// purchases and everything the server, Apple and the MMP logged about them.
///
/// Every slot has its own random stream and its own id ranges, so slots are
/// independent. Lines are emitted in whatever order is convenient; each file is
/// sorted by time when the run finishes. Anything that would happen after as-of
/// has not happened yet and is not written.
struct SlotSimulation {
    let run: GeneratorRun
    let slot: Int
    var random: SeededRandom
    var line = LineBuffer(capacity: 16_384)
    var scratch = PayloadScratch()
    var transactionCount = 0
    var orderCount = 0
    var deliveryCount = 0

    var start: Millis { run.start }
    var asOf: Millis { run.asOf }
    var grace: Millis { Clock.day }

    init(run: GeneratorRun, slot: Int) {
        self.run = run
        self.slot = slot
        random = SeededRandom(seed: run.seed, stream: UInt64(slot))
    }

    // MARK: Identifiers

    /// A production-looking 16-digit transaction id, unique to this slot.
    mutating func newTransactionId() -> String {
        transactionCount += 1
        return String(2_000_000_000_000_000 + Int64(slot) * 20_000 + Int64(transactionCount) * 3 + Int64(random.below(3)))
    }

    /// An id no App Store ever issued (cracked clients, hand-made grants).
    mutating func fakeTransactionId() -> String {
        transactionCount += 1
        return String(1_000_000_000_000_000 + Int64(slot) * 20_000 + Int64(transactionCount))
    }

    mutating func newWebOrderLineItemId() -> String {
        String(290_000_000_000_000 + Int64(slot) * 20_000 + Int64(transactionCount))
    }

    mutating func newDeliveryId() -> String {
        deliveryCount += 1
        return "d_" + String(slot, radix: 36) + "_" + String(deliveryCount)
    }

    mutating func uuid(uppercase: Bool = false) -> String {
        let high = random.next()
        let low = random.next()
        let table = uppercase ? LineBuffer.upperHex : LineBuffer.hex
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for index in 0..<32 {
            var nibble: UInt64
            if index < 16 { nibble = high >> UInt64(60 - index * 4) & 15 } else { nibble = low >> UInt64(60 - (index - 16) * 4) & 15 }
            if index == 12 { nibble = 4 }
            if index == 16 { nibble = 8 | nibble & 3 }
            if index == 8 || index == 12 || index == 16 || index == 20 { out.append(UInt8(ascii: "-")) }
            out.append(table[Int(nibble)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    func userId(secondary: Bool = false) -> String {
        "u_" + String(100_000 + (secondary ? run.users : 0) + slot)
    }

    // MARK: Times

    /// A time style for a server or receipts line, mixed the way several app servers log.
    mutating func serverTimeStyle() -> TimeStyle {
        Self.serverTimeStyles[random.below(Self.serverTimeStyles.count)]
    }

    /// 46 % ISO with ms, 20 % ISO seconds, 8 + 4 % Tokyo offsets, 8 % spaced, 8 + 6 % epoch ms.
    static let serverTimeStyles: [TimeStyle] = {
        let weights: [(TimeStyle, Int)] = [(.isoMillisZ, 23), (.isoSecondsZ, 10), (.isoMillisTokyo, 4), (.isoSecondsTokyo, 2),
                                           (.spaced, 4), (.epochNumber, 4), (.epochString, 3)]
        return weights.flatMap { Array(repeating: $0.0, count: $0.1) }
    }()

    static let unknownEventNames = ["session_start", "session_start", "app_open", "level_up", "client_error", "push_opened"]

    /// A uniform time in `[lower, upper]`.
    mutating func time(_ lower: Millis, _ upper: Millis) -> Millis {
        random.int64(lower, max(lower, upper))
    }

    // MARK: Writing lines

    /// Writes `line` to `source` at `time` if that is not after as-of; clears `line`.
    @discardableResult
    mutating func emit(_ source: Source, at time: Millis) throws -> Bool {
        defer { line.clear() }
        guard time <= asOf else { return false }
        try run.folder.emit(source, at: time, line)
        return true
    }

    /// Like `emit`, for a line a planted finding depends on: it must fit before as-of.
    mutating func emitPlanted(_ source: Source, at time: Millis) throws {
        guard try emit(source, at: time) else {
            throw GeneratorError("internal error: a planted \(source.folder) line falls after as-of")
        }
    }

    // MARK: Server log

    /// `order_created`; nil (and nothing written) after as-of.
    mutating func orderCreated(_ person: Person, product: Int, at time: Millis, uuidId: Bool,
                               showPrice: Bool = true, planted: Bool = false) throws -> Order? {
        guard time <= asOf else { return nil }
        orderCount += 1
        let id: String
        if uuidId {
            id = uuid()
        } else {
            id = "OrderID_" + String(time) + "_" + String(slot, radix: 36) + String(orderCount) + "_" + Catalog.products[product].short
        }
        let style = serverTimeStyle()
        line.raw("{\"ts\":")
        line.jsonTime(time, style)
        line.raw(",\"event\":\"order_created\",\"order_id\":")
        line.string(id)
        line.raw(",\"user_id\":")
        line.string(person.userId)
        line.raw(",\"product_id\":")
        line.string(Catalog.products[product].id)
        if showPrice {
            let currency = Catalog.countries[person.country].currency
            line.raw(",\"price\":\"")
            line.money(Catalog.products[product].prices[currency], currency: currency)
            line.raw("\",\"currency\":\"")
            line.text(Catalog.currencies[currency].code)
            line.raw("\",\"storefront\":\"")
            line.text(Catalog.countries[person.country].storefront)
            line.byte(UInt8(ascii: "\""))
        }
        line.byte(UInt8(ascii: "}"))
        let effective = style.effective(time)
        if planted { try emitPlanted(.server, at: effective) } else { try emit(.server, at: effective) }
        return Order(id: id, product: product, userId: person.userId, time: effective)
    }

    /// `delivered`; returns the logged time, or nil after as-of.
    @discardableResult
    mutating func delivered(userId: String, transactionId: String, product: Int, quantity: Int = 1, at time: Millis,
                            orderId: String?, deliveryId mode: DeliveryIdMode = .random, shipperRepeats: Bool = true,
                            style fixedStyle: TimeStyle? = nil, planted: Bool = false) throws -> Millis? {
        guard time <= asOf else {
            if planted { throw GeneratorError("internal error: a planted delivery falls after as-of") }
            return nil
        }
        let style = fixedStyle ?? serverTimeStyle()
        let withId: Bool
        switch mode {
        case .random: withId = random.chance(0.6)
        case .always: withId = true
        case .never: withId = false
        }
        let deliveryId = withId ? newDeliveryId() : nil
        let orderStyle = random.below(10)
        func write(_ buffer: inout LineBuffer, _ time: Millis) {
            buffer.raw("{\"ts\":")
            buffer.jsonTime(time, style)
            buffer.raw(",\"event\":\"delivered\"")
            if let orderId {
                buffer.raw(",\"order_id\":")
                buffer.string(orderId)
            } else if orderStyle < 5 {
                buffer.raw(",\"order_id\":null")
            }
            buffer.raw(",\"user_id\":")
            buffer.string(userId)
            buffer.raw(",\"transaction_id\":\"")
            buffer.text(transactionId)
            buffer.raw("\",\"product_id\":")
            buffer.string(Catalog.products[product].id)
            if quantity != 1 || orderStyle < 7 {
                buffer.raw(",\"quantity\":")
                buffer.int(quantity)
            }
            if let deliveryId {
                buffer.raw(",\"delivery_id\":\"")
                buffer.text(deliveryId)
                buffer.byte(UInt8(ascii: "\""))
            }
            buffer.byte(UInt8(ascii: "}"))
        }
        let effective = style.effective(time)
        write(&line, time)
        if planted { try emitPlanted(.server, at: effective) } else { try emit(.server, at: effective) }
        if shipperRepeats, !planted, random.chance(Tuning.shipperRepeatChance) {
            // The log shipper sends the line again: byte for byte, or (same delivery_id) a little later.
            var repeatTime = time
            if deliveryId != nil, random.chance(0.3) { repeatTime = time + random.int64(1_000, 20_000) }
            write(&line, repeatTime)
            if try emit(.server, at: style.effective(repeatTime)) { run.truth.nearMiss("shipper_repeat") }
        }
        return effective
    }

    mutating func deliveryRevoked(userId: String, transactionId: String, at time: Millis, reason: String = "refund",
                                  style fixedStyle: TimeStyle? = nil, planted: Bool = false) throws {
        let style = fixedStyle ?? serverTimeStyle()
        line.raw("{\"ts\":")
        line.jsonTime(time, style)
        line.raw(",\"event\":\"delivery_revoked\",\"user_id\":")
        line.string(userId)
        line.raw(",\"transaction_id\":\"")
        line.text(transactionId)
        line.raw("\",\"reason\":")
        line.string(reason)
        line.byte(UInt8(ascii: "}"))
        if planted { try emitPlanted(.server, at: style.effective(time)) } else { try emit(.server, at: style.effective(time)) }
    }

    /// A server event iaprecon does not know (`session_start`, …): ignored, never rejected.
    mutating func unknownEvent(_ person: Person, at time: Millis) throws {
        let style = serverTimeStyle()
        line.raw("{\"ts\":")
        line.jsonTime(time, style)
        line.raw(",\"event\":")
        line.string(random.pick(Self.unknownEventNames))
        line.raw(",\"user_id\":")
        line.string(person.userId)
        line.raw(",\"app_version\":\"4.12.0\",\"platform\":\"ios\"}")
        if try emit(.server, at: style.effective(time)) { run.truth.ignoredUnknownEvents += 1 }
    }

    // MARK: Receipts

    /// One receipts line with status 0 (or V2 transactions). `current` are the transactions
    /// being finished; `owned` the Apple ID's persistent ones (filtered to `time`).
    @discardableResult
    mutating func receipt(userId: String, at time: Millis, orderId: String?, namedTransaction: String?,
                          current: [AppleTransaction], owned: [AppleTransaction], autoRenewOff: [String: Millis] = [:],
                          style: ClientStyle, environment: AppleEnvironment = .production,
                          planted: Bool = false) throws -> Millis? {
        guard time <= asOf else {
            if planted { throw GeneratorError("internal error: a planted receipt falls after as-of") }
            return nil
        }
        let timeStyle = serverTimeStyle()
        let visible = owned.filter { $0.purchase <= time }
        line.raw("{\"received_at\":")
        line.jsonTime(time, timeStyle)
        line.raw(",\"user_id\":")
        line.string(userId)
        if orderId != nil || random.chance(0.5) {
            line.raw(",\"order_id\":")
            line.stringOrNull(orderId)
        }
        if let namedTransaction {
            line.raw(",\"transaction_id\":\"")
            line.text(namedTransaction)
            line.byte(UInt8(ascii: "\""))
        }
        var shown: [AppleTransaction] = []
        switch style {
        case .legacyReceipt:
            // The server asks with exclude-old-transactions: each subscription shows its latest renewal only.
            var pending: [(AppleTransaction, Bool)] = []
            for tx in visible where tx.info.isSubscription {
                if let index = pending.firstIndex(where: { $0.0.originalId == tx.originalId }) {
                    if tx.purchase > pending[index].0.purchase { pending[index].0 = tx }
                } else {
                    pending.append((tx, true))
                }
            }
            for index in pending.indices {
                if let off = autoRenewOff[pending[index].0.originalId], off <= time { pending[index].1 = false }
            }
            let latest = pending.map(\.0)
            var inApp = visible.filter { !$0.info.isSubscription } + latest
            for tx in current where !inApp.contains(where: { $0.id == tx.id }) { inApp.append(tx) }
            line.raw(",\"response\":")
            line.verifyReceiptResponse(environment: environment, inApp: inApp, latest: latest, pending: pending,
                                       at: time)
            shown = inApp
        case .storeKit2, .storeKit2Signed:
            var listed = current
            if current.isEmpty {
                for tx in visible {
                    if tx.info.isSubscription {
                        if let index = listed.firstIndex(where: { $0.originalId == tx.originalId }) {
                            if tx.purchase > listed[index].purchase { listed[index] = tx }
                        } else {
                            listed.append(tx)
                        }
                    } else {
                        listed.append(tx)
                    }
                }
            }
            guard !listed.isEmpty else {
                line.clear()
                return nil
            }
            line.raw(style == .storeKit2 ? ",\"transactions\":[" : ",\"signed_transactions\":[")
            for (index, tx) in listed.enumerated() {
                if index > 0 { line.byte(UInt8(ascii: ",")) }
                let signedDate = max(tx.purchase, time - random.int64(200, 1_500))
                if style == .storeKit2 {
                    line.v2Transaction(tx, signedDate: signedDate, at: time)
                } else {
                    scratch.inner.clear()
                    scratch.inner.v2Transaction(tx, signedDate: signedDate, at: time)
                    line.byte(UInt8(ascii: "\""))
                    line.jws(scratch.inner, random: &random)
                    line.byte(UInt8(ascii: "\""))
                }
            }
            line.byte(UInt8(ascii: "]"))
            shown = listed
        }
        line.byte(UInt8(ascii: "}"))
        let effective = timeStyle.effective(time)
        if planted { try emitPlanted(.receipts, at: effective) } else if !(try emit(.receipts, at: effective)) { return effective }
        if environment == .production {
            for tx in shown { run.sales.sighted(tx, at: time, storefrontKnown: style != .legacyReceipt) }
        }
        return effective
    }

    /// A verification Apple answered with an error status: it verifies nothing.
    mutating func failedReceipt(userId: String, at time: Millis, orderId: String?, transactionId: String?,
                                status: Int) throws {
        let style = serverTimeStyle()
        line.raw("{\"received_at\":")
        line.jsonTime(time, style)
        line.raw(",\"user_id\":")
        line.string(userId)
        line.raw(",\"order_id\":")
        line.stringOrNull(orderId)
        if let transactionId {
            line.raw(",\"transaction_id\":\"")
            line.text(transactionId)
            line.byte(UInt8(ascii: "\""))
        }
        line.raw(",\"response\":{\"status\":")
        line.int(status)
        if (21100...21199).contains(status) { line.raw(",\"is-retryable\":true") }
        line.raw("}}")
        try emit(.receipts, at: style.effective(time))
    }

    // MARK: Notifications

    /// A notification form: mostly V2 as Apple posts it; V1 only where V1 has the type.
    mutating func notificationForm(for spec: NotificationSpec, v2Only: Bool = false) -> NotificationForm {
        let v1Allowed = !v2Only && spec.v1Type != nil && spec.tx.environment == .production
        let draw = random.below(v1Allowed ? 100 : 80)
        return draw < 25 ? .signedPayload : (draw < 37 ? .decodedWithSignedInfo : (draw < 80 ? .decoded : .v1))
    }

    /// Writes a notification (and sometimes Apple's retry of it with the same notificationUUID).
    @discardableResult
    mutating func notify(_ spec: NotificationSpec, form fixedForm: NotificationForm? = nil, v2Only: Bool = false,
                         duplicate: Bool? = nil, planted: Bool = false) throws -> Bool {
        guard spec.signedDate <= asOf else {
            if planted { throw GeneratorError("internal error: a planted notification falls after as-of") }
            return false
        }
        let form = fixedForm ?? notificationForm(for: spec, v2Only: v2Only)
        line.notification(spec, form: form, scratch: &scratch, random: &random)
        let copy = line
        try emit(.notifications, at: spec.signedDate)
        if spec.tx.environment == .production {
            // What the notification shows: V1 bodies list up to three of the chain's transactions.
            let shown = form != .v1 || spec.chain.isEmpty ? [spec.tx] : Array(spec.chain.filter { $0.purchase <= spec.signedDate }.suffix(3))
            for tx in shown { run.sales.sighted(tx, at: spec.signedDate, storefrontKnown: form != .v1) }
            if spec.type == "REFUND_REVERSED" { run.sales.refundReversed(spec.tx.id) }
        }
        let repeatIt = duplicate ?? random.chance(Tuning.duplicateNotificationChance)
        if repeatIt, form != .v1 {
            line = copy
            try emit(.notifications, at: spec.signedDate)
            run.truth.nearMiss("duplicate_notification")
        }
        return true
    }

    /// A notification spec with a fresh notificationUUID.
    mutating func spec(_ type: String, _ subtype: String? = nil, tx: AppleTransaction, at time: Millis,
                       renewal: (autoRenew: Bool, chainStart: Millis)? = nil, chain: [AppleTransaction] = [],
                       consumptionReason: String? = nil) -> NotificationSpec {
        NotificationSpec(type: type, subtype: subtype, uuid: uuid(), signedDate: time, tx: tx, renewal: renewal,
                         consumptionReason: consumptionReason, chain: chain)
    }

    // MARK: Transactions

    mutating func newTransaction(_ person: Person, product: Int, at time: Millis, quantity: Int = 1,
                                 environment: AppleEnvironment = .production, token: String? = nil) -> AppleTransaction {
        let id = newTransactionId()
        var tx = AppleTransaction(id: id, originalId: id, product: product, purchase: time, originalPurchase: time,
                                  quantity: quantity, environment: environment, appAccountToken: token,
                                  country: person.country)
        if Catalog.products[product].isSubscription {
            tx.expires = time + Catalog.products[product].period
            tx.webOrderLineItemId = newWebOrderLineItemId()
        }
        return tx
    }
}
