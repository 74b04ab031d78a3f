import Testing
@testable import IAPRecon

/// The join's input is built from the store's facts held as values (`ScopeFacts`), the lines of
/// one id together and in file order, as any backend hands them over: these tests build the facts
/// by hand, with no database, and check what the join makes of them.
@Suite("The join's input from facts as values")
struct ScopeFactsTests {
    static let day: Int64 = 86_400_000
    /// 2026-10-01T00:00:00Z.
    static let start: Int64 = 1_790_812_800_000
    /// The ledger: file ids in another order than their paths, so file order is the paths'.
    static let files = SourceFiles(paths: [7: "server/b.jsonl", 3: "receipts/a.jsonl", 5: "notifications/a.jsonl", 4: "server/a.jsonl"])
    static let (notifications, receiptsFile, serverA, serverB): (Int64, Int64, Int64, Int64) = (5, 3, 4, 7)

    static func order(_ id: String, user: String, at ms: Int64 = start) -> OrderLine {
        OrderLine(ms: ms, orderID: id, userID: user, productID: "gems", price: "4.99", currency: "USD", storefront: "USA")
    }

    static func delivery(_ transaction: String, to user: String, order: String? = "o1", at ms: Int64, id: String?) -> DeliveryLine {
        DeliveryLine(ms: ms, userID: user, transactionID: transaction, productID: "gems", orderID: order, quantity: 1, deliveryID: id)
    }

    /// A receipt's sighting of `id`, sent by `user`, for order `token`.
    static func receipt(_ id: String, by user: String, token: String? = "o1", at ms: Int64) -> AppleTransaction {
        var sighting = AppleTransaction(origin: .receipt, transactionID: id, productID: "gems", purchaseMs: start + 1_000)
        sighting.userID = user
        sighting.eventMs = ms
        sighting.environment = "Production"
        sighting.appAccountToken = token
        sighting.type = "Consumable"
        sighting.priceMilliunits = 4_990
        sighting.currency = "USD"
        return sighting
    }

    /// A REFUND notification of `id`.
    static func refund(_ id: String, at ms: Int64, uuid: String) -> AppleTransaction {
        var sighting = AppleTransaction(origin: .notification, transactionID: id, productID: "gems", purchaseMs: start + 1_000)
        sighting.eventMs = ms
        sighting.revocationMs = ms
        sighting.notificationType = "REFUND"
        sighting.notificationUUID = uuid
        return sighting
    }

    static func line(_ file: Int64, _ line: Int64) -> StoredLine { StoredLine(file: file, line: line) }

    /// An order, its transaction, and two delivery lines of it: `secondID` nil repeats the first line (a shipper's copy).
    static func purchase(secondDeliveryID: String?) -> ScopeFacts {
        var facts = ScopeFacts()
        facts.receive(order: order("o1", user: "u1"), at: line(serverA, 1))
        facts.receive(delivery: delivery("t1", to: "u1", at: start + 2_000, id: "d1"), at: line(serverA, 2))
        let second = secondDeliveryID.map { delivery("t1", to: "u1", at: start + 60_000, id: $0) }
            ?? delivery("t1", to: "u1", at: start + 2_000, id: "d1")
        facts.receive(delivery: second, at: line(serverB, 1))
        facts.receive(sighting: receipt("t1", by: "u1", at: start + 1_500), at: line(receiptsFile, 1))
        return facts
    }

    static func findings(_ facts: ScopeFacts, asOf asOfMs: Int64 = start + 10 * day) -> [String] {
        let input = ReconciliationInput(facts, files: files)
        let resolved = ResolvedTransaction.resolve(input, OrderMatching(input))
        return FindingRules(asOfMs: asOfMs, graceMs: day).findings(resolved, input).map { "\($0.kind.rawValue) \($0.transactionID ?? "-")" }
    }

    @Test("an order is its first line; a later line of it naming another user is a copy, while an id spelled with other bytes is another order")
    func orders() throws {
        var facts = ScopeFacts()
        let composed = "o-caf\u{E9}", decomposed = "o-cafe\u{301}"
        facts.receive(order: Self.order("o1", user: "u1"), at: Self.line(Self.serverA, 3))
        facts.receive(order: Self.order("o1", user: "u2", at: Self.start + 5_000), at: Self.line(Self.serverB, 1))
        // One text to Swift's `==`, two ids to the store: its lines come in byte order, decomposed first.
        facts.receive(order: Self.order(decomposed, user: "u3"), at: Self.line(Self.serverA, 5))
        facts.receive(order: Self.order(composed, user: "u4"), at: Self.line(Self.serverA, 4))
        let input = ReconciliationInput(facts, files: Self.files)
        #expect(input.orders.count == 3)
        let o1 = try #require(input.ids.id(of: "o1").flatMap { input.orders[$0]?.value })
        #expect(input.ids.text(o1.userID) == "u1")
        #expect(o1.ms == Self.start)
        #expect(input.orderIDsInFileOrder.map(input.ids.text) == ["o1", composed, decomposed])
    }

    @Test("a transaction's delivery lines collapse by delivery id, copies counted; the next transaction's lines are its own")
    func deliveries() throws {
        var facts = ScopeFacts()
        facts.receive(delivery: Self.delivery("t1", to: "u1", at: Self.start + 2_000, id: "d1"), at: Self.line(Self.serverA, 2))
        facts.receive(delivery: Self.delivery("t1", to: "u1", at: Self.start + 9_000, id: "d2"), at: Self.line(Self.serverA, 7))
        facts.receive(delivery: Self.delivery("t1", to: "u1", at: Self.start + 2_000, id: "d1"), at: Self.line(Self.serverB, 1))
        // Another transaction with the same delivery id: ids are unique within a transaction only.
        facts.receive(delivery: Self.delivery("t2", to: "u1", at: Self.start + 3_000, id: "d1"), at: Self.line(Self.serverA, 4))
        let input = ReconciliationInput(facts, files: Self.files)
        let t1 = try #require(input.ids.id(of: "t1").flatMap { input.deliveries[$0] })
        #expect(t1.map(\.deliveryID) == ["d1", "d2"])
        #expect(t1.map(\.copies) == [2, 1])
        #expect(t1.map(\.source.line) == [2, 7])
        let t2 = try #require(input.ids.id(of: "t2").flatMap { input.deliveries[$0] })
        #expect(t2.map(\.copies) == [1])
        // Matching rule 1 reads every line naming an order, a delivery's copy too (it may name the
        // order its first line left out): d1's copy in server B comes right after its first line.
        #expect(input.orderDeliveriesInTimeOrder.map { input.ids.text($0.transactionID) } == ["t1", "t1", "t2", "t1"])
    }

    @Test("a transaction's sightings merge into one, with its refund and its sender; a notification received twice is one refund")
    func sightings() throws {
        var facts = ScopeFacts()
        facts.receive(sighting: Self.refund("t1", at: Self.start + Self.day, uuid: "n-1"), at: Self.line(Self.notifications, 2))
        facts.receive(sighting: Self.refund("t1", at: Self.start + Self.day, uuid: "n-1"), at: Self.line(Self.notifications, 9))
        facts.receive(sighting: Self.receipt("t1", by: "u1", at: Self.start + 1_500), at: Self.line(Self.receiptsFile, 1))
        facts.receive(sighting: Self.receipt("t2", by: "u2", token: nil, at: Self.start + 1_600), at: Self.line(Self.receiptsFile, 2))
        let input = ReconciliationInput(facts, files: Self.files)
        #expect(input.transactions.count == 2)
        let t1 = try #require(input.ids.id(of: "t1"))
        let merged = try #require(input.transactions[t1]?.value)
        // The notification's file sorts first; the receipt still gives what the notification lacks.
        #expect(merged.environment == "Production")
        #expect(merged.appAccountToken.map(input.ids.text) == "o1")
        #expect(input.refunds[t1]?.count == 1)
        #expect(input.senders[t1]?.map(input.ids.text) == ["u1"])
        let t2 = try #require(input.ids.id(of: "t2"))
        #expect(input.refunds[t2] == nil)
        #expect(input.senders[t2]?.map(input.ids.text) == ["u2"])
    }

    @Test("two deliveries of one purchase are a duplicate; a shipper's copy of one delivery line is not")
    func duplicateFromFacts() {
        #expect(Self.findings(Self.purchase(secondDeliveryID: "d2")) == ["duplicate_delivery t1"])
        #expect(Self.findings(Self.purchase(secondDeliveryID: nil)) == [])
    }

    @Test("a refund after delivery is flagged until a revocation line of the transaction arrives")
    func refundFromFacts() {
        var facts = Self.purchase(secondDeliveryID: nil)
        facts.receive(sighting: Self.refund("t1", at: Self.start + Self.day, uuid: "n-1"), at: Self.line(Self.notifications, 1))
        #expect(Self.findings(facts) == ["refunded_not_revoked t1"])
        facts.receive(revocation: RevocationLine(ms: Self.start + Self.day + 5_000, userID: "u1", transactionID: "t1", reason: "refund"),
                      at: Self.line(Self.serverB, 2))
        #expect(Self.findings(facts) == [])
    }
}
