import Testing
@testable import IAPRecon

/// Matching rule 2 takes a receipt line naming an order and a transaction at its word. A line whose
/// verification failed verifies nothing (CONTRACT.md §1.2): anyone can send one, so it must not
/// steer which order, and so which user, a transaction belongs to.
@Suite("Receipt claims")
struct ReceiptClaimTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// A verifyReceipt answer of `status`, naming `orderID` and `transactionID` at the line's top,
    /// carrying `items` (receipt items) when Apple decoded it.
    static func answer(_ receivedAt: String, _ userID: String, status: Int, orderID: String, transactionID: String, items: [String]) -> String {
        let receipt = items.isEmpty ? "" : #","environment":"Production","receipt":{"bundle_id":"com.example.game","in_app":[\#(items.joined(separator: ","))]}"#
        return #"{"received_at":"\#(receivedAt)","user_id":"\#(userID)","order_id":"\#(orderID)","transaction_id":"\#(transactionID)","response":{"status":\#(status)\#(receipt)}}"#
    }

    static let item = #"{"quantity":"1","product_id":"gems60","transaction_id":"t1","original_transaction_id":"t1","purchase_date_ms":"\#(Line.ms("2026-11-20T10:00:00Z"))"}"#

    @Test("a failed verification naming another user's order and a transaction claims nothing: the lost delivery stays the buyer's; near miss: a verified line naming both matches them",
          arguments: [21003, 21002, 21010, 0])
    func failedVerificationClaimsNothing(status: Int) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // The buyer's order, then the purchase; nothing is delivered.
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-20T09:59:00Z", "o_buyer", "u_buyer", "gems60"),
            Line.order("2026-11-20T09:30:00Z", "o_other", "u_other", "gems60"),
        ])
        try scenario.write("receipts/r.jsonl", [
            RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_buyer", items: [Self.item]),
            Self.answer("2026-11-20T10:05:00Z", "u_other", status: status, orderID: "o_other", transactionID: "t1",
                        items: status == 0 ? [Self.item] : []),
        ])
        let lost = try scenario.reconcile(asOf: asOf).filter { $0.kind == .lostDelivery }
        #expect(lost.map(\.transactionID) == ["t1"])
        if status == 0 {
            // Verified, the line's claim is the contract's rule 2: the other user's order takes the transaction.
            #expect(lost.map(\.userID) == ["u_other"])
            #expect(lost.map(\.orderID) == ["o_other"])
        } else {
            #expect(lost.map(\.userID) == ["u_buyer"])
            #expect(lost.map(\.orderID) == ["o_buyer"])
        }
    }
}
