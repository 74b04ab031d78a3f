import Testing
@testable import IAPRecon

/// The join decides from plain values: a component's orders, deliveries and transactions, with no
/// store in between. These tests build that input by hand, so a rule can be checked line by line.
@Suite("Join rules over values, without a store")
struct JoinRulesInMemoryTests {
    static let day: Int64 = 86_400_000
    /// 2026-10-01T00:00:00Z.
    static let start: Int64 = 1_790_812_800_000

    struct Component {
        var input = ReconciliationInput()
        /// The component's files, by their places in path order: `notifications/a.jsonl`, `receipts/a.jsonl`, `server/a.jsonl`.
        static let notifications: Int32 = 0, receipts: Int32 = 1, server: Int32 = 2

        /// The id `text` in the component's table, as the join reads it from a row.
        mutating func id(_ text: String) -> InternedID { input.ids.intern(text) }

        mutating func order(_ text: String, user: String, product: String = "gems", at ms: Int64, line: Int) {
            let id = id(text)
            let order = Order(orderID: id, ms: ms, userID: self.id(user), productID: self.id(product), price: 4.99, currency: "USD",
                              storefront: "USA", source: SourceLine(file: Self.server, line: Int64(line)))
            input.orders[id] = Shared(order)
            input.orderIDsInFileOrder.append(id)
        }

        mutating func transaction(_ text: String, product: String = "gems", at ms: Int64, token: String? = nil, line: Int) {
            let id = id(text)
            let productID = self.id(product)
            let token = token.map { self.id($0) }
            input.transactions[id] = Shared(VerifiedTransaction(
                transactionID: id, originalTransactionID: id, productID: productID, purchaseMs: ms, expiresMs: nil,
                environment: "Production", priceMilliunits: 4_990, currency: "USD", storefront: "USA", appAccountToken: token,
                type: "Consumable", quantity: 1, ownership: "PURCHASED", subscriptionGroup: nil, sources: [SourceLine(file: Self.receipts, line: Int64(line))]))
        }

        mutating func delivery(of transaction: String, to user: String, order: String? = nil, at ms: Int64, id: String? = nil, line: Int) {
            let (transaction, user, product, order) = (self.id(transaction), self.id(user), self.id("gems"), order.map { self.id($0) })
            input.deliveries[transaction, default: []].append(Delivery(
                ms: ms, userID: user, transactionID: transaction, productID: product, orderID: order, quantity: 1, deliveryID: id,
                copies: 1, source: SourceLine(file: Self.server, line: Int64(line))))
            if let order { input.orderDeliveriesInTimeOrder.append((order, transaction)) }
        }

        mutating func refund(of transaction: String, at ms: Int64, line: Int) {
            input.refunds[id(transaction), default: []].append(RefundEvent(kind: .refund, ms: ms, revocationType: nil, revocationPercentage: nil,
                                                                       source: SourceLine(file: Self.notifications, line: Int64(line))))
        }

        mutating func revocation(of transaction: String, by user: String, at ms: Int64, line: Int) {
            let (transaction, user) = (id(transaction), id(user))
            input.revocations[transaction, default: []].append(Revocation(ms: ms, userID: user, transactionID: transaction,
                                                                          source: SourceLine(file: Self.server, line: Int64(line))))
        }

        /// What the join decides for this component as of `asOfMs`: findings as `kind transaction`.
        func findings(asOf asOfMs: Int64) -> [String] {
            let matching = OrderMatching(input)
            let resolved = ResolvedTransaction.resolve(input, matching)
            return FindingRules(asOfMs: asOfMs, graceMs: JoinRulesInMemoryTests.day).findings(resolved, input)
                .map { "\($0.kind.rawValue) \($0.transactionID ?? "-")" }
        }
    }

    @Test("an undelivered purchase is lost once a whole grace lies between it and the as-of, and not a millisecond before")
    func lostAfterGrace() {
        var component = Component()
        component.order("o1", user: "u1", at: Self.start, line: 1)
        component.transaction("t1", at: Self.start + 1_000, token: "o1", line: 1)
        #expect(component.findings(asOf: Self.start + Self.day + 999) == [])
        #expect(component.findings(asOf: Self.start + Self.day + 1_000) == ["lost_delivery t1"])
    }

    @Test("two deliveries of one purchase are a duplicate; a shipper's repeat of one delivery is not")
    func duplicateOrRepeat() {
        var once = Component()
        once.order("o1", user: "u1", at: Self.start, line: 1)
        once.transaction("t1", at: Self.start + 1_000, token: "o1", line: 1)
        once.delivery(of: "t1", to: "u1", order: "o1", at: Self.start + 2_000, id: "d1", line: 2)
        var repeated = once
        // Normalize collapses a repeated line into one delivery with two copies: never a finding.
        repeated.input.deliveries[repeated.id("t1")]?[0].copies = 2
        #expect(once.findings(asOf: Self.start + 10 * Self.day) == [])
        #expect(repeated.findings(asOf: Self.start + 10 * Self.day) == [])
        var twice = once
        twice.delivery(of: "t1", to: "u1", order: "o1", at: Self.start + 60_000, id: "d2", line: 3)
        #expect(twice.findings(asOf: Self.start + 10 * Self.day) == ["duplicate_delivery t1"])
    }

    @Test("a refund after delivery is a finding until the server revokes the goods")
    func refundedNotRevoked() {
        var component = Component()
        component.order("o1", user: "u1", at: Self.start, line: 1)
        component.transaction("t1", at: Self.start + 1_000, token: "o1", line: 1)
        component.delivery(of: "t1", to: "u1", order: "o1", at: Self.start + 2_000, line: 2)
        component.refund(of: "t1", at: Self.start + Self.day, line: 1)
        #expect(component.findings(asOf: Self.start + 10 * Self.day) == ["refunded_not_revoked t1"])
        component.revocation(of: "t1", by: "u1", at: Self.start + Self.day + 5_000, line: 3)
        #expect(component.findings(asOf: Self.start + 10 * Self.day) == [])
    }

    @Test("a delivery of a transaction Apple never confirmed is an orphan; the same delivery of a verified one is not")
    func orphan() {
        var component = Component()
        component.delivery(of: "t9", to: "u1", at: Self.start + 2_000, line: 2)
        #expect(component.findings(asOf: Self.start + 10 * Self.day) == ["orphan_delivery t9"])
        component.transaction("t9", at: Self.start + 1_000, line: 1)
        #expect(component.findings(asOf: Self.start + 10 * Self.day) == [])
    }
}

/// Ids are numbered in whatever order a batch reads them; where the rules break a tie by id, they
/// must break it by the id's text, whichever was read first.
@Suite("Join ties broken by id text, not by read order")
struct JoinTieOrderTests {
    typealias Component = JoinRulesInMemoryTests.Component
    static let start = JoinRulesInMemoryTests.start

    /// The order the heuristic gives `t1`, with the two orders read in the order given.
    private func heuristicMatch(reading orders: [String]) -> String? {
        var component = Component()
        for (line, order) in orders.enumerated() {
            component.order(order, user: "u1", at: Self.start, line: line + 1)
        }
        component.transaction("t1", at: Self.start + 1_000, line: 1)
        component.delivery(of: "t1", to: "u1", at: Self.start + 2_000, line: 3)
        return OrderMatching(component.input).orderOf[component.id("t1")].map { component.input.ids.text($0.orderID) }
    }

    @Test("of two orders created in the same millisecond, the heuristic takes the one whose id sorts last, whichever was read first")
    func sameMillisecondOrders() {
        #expect(heuristicMatch(reading: ["o-a", "o-b"]) == "o-b")
        #expect(heuristicMatch(reading: ["o-b", "o-a"]) == "o-b")
    }

    /// Which of `t-1` and `t-2`, bought in the same millisecond, the one order goes to, reading them in the order given.
    private func matchedTransaction(reading transactions: [String]) -> [String] {
        var component = Component()
        component.order("o1", user: "u1", at: Self.start, line: 1)
        for (line, transaction) in transactions.enumerated() {
            component.transaction(transaction, at: Self.start + 1_000, line: line + 1)
            component.delivery(of: transaction, to: "u1", at: Self.start + 2_000, line: line + 2)
        }
        let matching = OrderMatching(component.input)
        return matching.transactionOf.values.map { component.input.ids.text($0) }
    }

    @Test("of two purchases in the same millisecond, the one whose id sorts first takes the only order; the other stays unmatched")
    func sameMillisecondPurchases() {
        #expect(matchedTransaction(reading: ["t-1", "t-2"]) == ["t-1"])
        #expect(matchedTransaction(reading: ["t-2", "t-1"]) == ["t-1"])
    }

    @Test("resolved transactions come in the order of their ids' text, not in the order they were read")
    func resolvedOrder() {
        var component = Component()
        for (line, id) in ["t9", "t10", "t1"].enumerated() {
            component.transaction(id, at: Self.start + Int64(line), line: line + 1)
        }
        let resolved = ResolvedTransaction.resolve(component.input, OrderMatching(component.input))
        #expect(resolved.map { component.input.ids.text($0.transaction.transactionID) } == ["t1", "t10", "t9"])
    }
}
