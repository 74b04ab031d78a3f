import Testing
@testable import IAPRecon

/// The heuristic takes, for each transaction in purchase order, the latest still-unmatched order of
/// its product created within the hour before the purchase by a user who sent it or received it.
/// It finds that order by time, not by looking at every order of the user: a whale whose client
/// sends no order ids must not make the join quadratic. These tests hold it to the rule as written.
@Suite("Order matching's hour window")
struct OrderMatchingWindowTests {
    typealias Component = JoinRulesInMemoryTests.Component
    static let start = JoinRulesInMemoryTests.start

    /// The rules read straight off their words, every order of a user and product looked at for
    /// every transaction: what `OrderMatching` decides, transaction → (order, rule).
    static func reference(_ input: ReconciliationInput) -> [InternedID: (orderID: InternedID, rule: MatchRule)] {
        var orderOf: [InternedID: (orderID: InternedID, rule: MatchRule)] = [:]
        var transactionOf: [InternedID: InternedID] = [:]
        func link(_ order: InternedID, _ transaction: InternedID, _ rule: MatchRule) {
            guard input.orders[order] != nil, input.transactions[transaction] != nil,
                  transactionOf[order] == nil, orderOf[transaction] == nil else { return }
            transactionOf[order] = transaction
            orderOf[transaction] = (order, rule)
        }
        for delivery in input.orderDeliveriesInTimeOrder { link(delivery.orderID, delivery.transactionID, .delivery) }
        for claim in input.receiptClaims { link(claim.orderID, claim.transactionID, .receipt) }
        let byPurchase = input.transactions.values.map(\.value).sorted {
            $0.purchaseMs != $1.purchaseMs ? $0.purchaseMs < $1.purchaseMs : input.ids.precedes($0.transactionID, $1.transactionID)
        }
        for transaction in byPurchase {
            if let token = transaction.appAccountToken { link(token, transaction.transactionID, .appAccountToken) }
        }
        let orders = input.orderIDsInFileOrder.compactMap { input.orders[$0]?.value }
        for transaction in byPurchase where orderOf[transaction.transactionID] == nil {
            var users = Set(input.senders[transaction.transactionID] ?? [])
            users.formUnion(input.deliveries[transaction.transactionID]?.map(\.userID) ?? [])
            var best: Order?
            for order in orders where users.contains(order.userID) && order.productID == transaction.productID
                && transactionOf[order.orderID] == nil
                && order.ms <= transaction.purchaseMs && order.ms >= transaction.purchaseMs - OrderMatching.heuristicWindowMs {
                if let current = best,
                   current.ms > order.ms || (current.ms == order.ms && !input.ids.precedes(current.orderID, order.orderID)) { continue }
                best = order
            }
            if let best { link(best.orderID, transaction.transactionID, .heuristic) }
        }
        return orderOf
    }

    @Test("on seeded random components, every transaction gets the order and rule the rules as written give it")
    func asTheRulesSay() {
        var random = SplitMix64(state: 7_001)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let minute: Int64 = 60_000
        for round in 0..<300 {
            var component = Component()
            let users = ["u1", "u2", "u3"].prefix(1 + pick(3))
            let products = ["gems", "coins"].prefix(1 + pick(2))
            // Orders on a coarse clock, so equal times and the hour's edges come up often.
            let orderCount = pick(40)
            for number in 0..<orderCount {
                component.order("o\(pick(1_000))-\(number)", user: users[pick(users.count)], product: products[pick(products.count)],
                                at: Self.start + Int64(pick(36)) * 5 * minute, line: number + 1)
            }
            let orderIDs = component.input.orderIDsInFileOrder.map { component.input.ids.text($0) }
            for number in 0..<pick(30) {
                let transaction = "t\(pick(1_000))-\(number)"
                let token = !orderIDs.isEmpty && pick(8) == 0 ? orderIDs[pick(orderIDs.count)] : nil
                component.transaction(transaction, product: products[pick(products.count)],
                                      at: Self.start + Int64(pick(48)) * 5 * minute, token: token, line: number + 1)
                switch pick(4) {
                case 0:
                    // Sent by a user with a receipt, sometimes naming an order.
                    let id = component.id(transaction)
                    component.input.senders[id] = [component.id(users[pick(users.count)])]
                    if !orderIDs.isEmpty, pick(3) == 0 {
                        component.input.receiptClaims.append((component.id(orderIDs[pick(orderIDs.count)]), id))
                    }
                case 1, 2:
                    let order = !orderIDs.isEmpty && pick(4) == 0 ? orderIDs[pick(orderIDs.count)] : nil
                    component.delivery(of: transaction, to: users[pick(users.count)], order: order,
                                       at: Self.start + Int64(pick(60)) * 5 * minute, line: number + 100)
                default:
                    break
                }
            }
            let expected = Self.reference(component.input)
            let matched = OrderMatching(component.input).orderOf
            #expect(matched.count == expected.count, "round \(round)")
            for (transaction, match) in expected {
                #expect(matched[transaction]?.orderID == match.orderID && matched[transaction]?.rule == match.rule,
                        "round \(round): \(component.input.ids.text(transaction))")
            }
        }
    }

    @Test("an order matched by an earlier rule, or by the heuristic for an earlier purchase, is passed over for the next latest")
    func takenOrdersPassedOver() {
        var component = Component()
        for (line, minutes) in [10, 20, 30, 40].enumerated() {
            component.order("o\(minutes)", user: "u1", at: Self.start + Int64(minutes) * 60_000, line: line + 1)
        }
        // o40 is taken by a delivery naming it; t1 and t2 (after all four orders) take o30, then o20.
        component.transaction("t0", at: Self.start + 41 * 60_000, line: 1)
        component.delivery(of: "t0", to: "u1", order: "o40", at: Self.start + 41 * 60_000, line: 10)
        for (line, name) in ["t1", "t2"].enumerated() {
            component.transaction(name, at: Self.start + Int64(50 + line) * 60_000, line: line + 2)
            component.delivery(of: name, to: "u1", at: Self.start + 55 * 60_000, line: line + 11)
        }
        let matching = OrderMatching(component.input)
        func order(_ transaction: String) -> String? {
            matching.orderOf[component.id(transaction)].map { component.input.ids.text($0.orderID) }
        }
        #expect(order("t0") == "o40")
        #expect(order("t1") == "o30")
        #expect(order("t2") == "o20")
        // Near miss: a purchase more than an hour after every order left takes none.
        var late = component
        late.transaction("t9", at: Self.start + 81 * 60_000, line: 9)
        late.delivery(of: "t9", to: "u1", at: Self.start + 82 * 60_000, line: 19)
        #expect(OrderMatching(late.input).orderOf[late.id("t9")] == nil)
    }
}
