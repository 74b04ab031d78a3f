import Testing
@testable import IAPRecon

/// A transaction's delivery lines collapse into deliveries by CONTRACT.md §1.1's rule, as plain
/// values: one delivery per `delivery_id`, else per identical line but for its order.
@Suite("Delivery lines collapsed as values")
struct DeliveryCollapseTests {
    private func line(_ user: String, at ms: Int64 = 1_000, product: String = "gems", order: String? = nil, quantity: Int64 = 1,
                      id: String? = nil) -> DeliveryLine {
        DeliveryLine(ms: ms, userID: user, transactionID: "t_1", productID: product, orderID: order, quantity: quantity, deliveryID: id)
    }

    /// Each delivery as its user, source line and copies.
    private func collapsed(_ lines: [DeliveryLine]) -> [String] {
        ServerDeliveries.collapsed(lines.enumerated().map { (line: $0.element, source: $0.offset + 1) })
            .map { "\($0.line.userID) :\($0.source) ×\($0.copies)" }
    }

    @Test("one delivery per delivery id, whatever else its lines say; the first line gives its fields")
    func byDeliveryID() {
        #expect(collapsed([line("u_1", id: "d_1"), line("u_9", at: 5_000, id: "d_1"), line("u_1", id: "d_2")])
            == ["u_1 :1 ×2", "u_1 :3 ×1"])
    }

    @Test("without a delivery id, identical lines are one delivery, whatever order they name")
    func identicalLines() {
        #expect(collapsed([line("u_1", order: "o_1"), line("u_1"), line("u_1", order: "o_2")]) == ["u_1 :1 ×3"])
    }

    @Test("near misses: another time, user, product or quantity is another delivery, and so is a line with an id")
    func nearMisses() {
        #expect(collapsed([
            line("u_1"), line("u_1", at: 1_001), line("u_2"), line("u_1", product: "coins"), line("u_1", quantity: 2),
            line("u_1", id: "d_1"),
        ]) == ["u_1 :1 ×1", "u_1 :2 ×1", "u_2 :3 ×1", "u_1 :4 ×1", "u_1 :5 ×1", "u_1 :6 ×1"])
    }

    @Test("ids that read the same when joined are apart: auth0|u and gems against auth0 and u|gems")
    func joinedIDs() {
        #expect(collapsed([line("auth0|u"), line("auth0", product: "u|gems")]) == ["auth0|u :1 ×1", "auth0 :2 ×1"])
    }

    @Test("ids are equal when their bytes are: é precomposed and decomposed are two users")
    func idBytes() {
        #expect(collapsed([line("\u{E9}"), line("e\u{301}"), line("\u{E9}")]) == ["\u{E9} :1 ×2", "e\u{301} :2 ×1"])
    }
}
