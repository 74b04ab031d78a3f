import Foundation
import Testing
@testable import IAPRecon

/// The near misses of the reconcile issue: each must produce no finding (or only the one named).
@Suite("Near misses that must not be flagged")
struct NearMissTests {
    let asOf = "2026-11-30T00:00:00Z"

    private func scenario(server: [String], receipts: [String], notifications: [String] = []) throws -> [Scenario.StoredFinding] {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", server)
        try scenario.write("receipts/r.jsonl", receipts)
        if !notifications.isEmpty { try scenario.write("notifications/n.jsonl", notifications) }
        return try scenario.reconcile(asOf: asOf)
    }

    private func purchase(_ id: String, _ user: String = "u1", at purchase: String = "2026-11-28T10:00:03Z", price: Int = 990) -> String {
        Line.v2Receipt("2026-11-28T10:00:05Z", user, transaction: Line.v2(id, "gems60", purchase: purchase, price: price))
    }

    @Test("a log line repeated by the shipper, with and without delivery_id, is one delivery")
    func shipperRepeats() throws {
        let findings = try scenario(server: [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t2", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t2", "gems60"),
        ], receipts: [purchase("t1"), purchase("t2")])
        #expect(findings.isEmpty)
    }

    @Test("two transactions' deliveries sharing a delivery_id stay two deliveries: no false lost_delivery")
    func deliveryIDUniqueWithinTransaction() throws {
        // The server numbers deliveries per purchase: both transactions' first delivery is "1".
        let findings = try scenario(server: [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "2000000812345678", "gems60", deliveryID: "1"),
            Line.delivered("2026-11-28T10:20:41Z", "u2", "2000000812345699", "gems60", deliveryID: "1"),
        ], receipts: [purchase("2000000812345678"), purchase("2000000812345699", "u2", at: "2026-11-28T10:20:38Z")])
        #expect(findings.isEmpty)
    }

    @Test("a refund later reversed is no refund")
    func refundReversed() throws {
        let transaction = Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z")
        let refunded = Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z", revocation: "2026-11-21T00:00:00Z")
        let findings = try scenario(
            server: [Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "gems60")],
            receipts: [Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: transaction)],
            notifications: [
                Line.notification("REFUND", uuid: "n1", signed: "2026-11-21T00:00:01Z", transaction: refunded),
                Line.notification("REFUND_REVERSED", uuid: "n2", signed: "2026-11-23T00:00:00Z", transaction: transaction),
            ])
        #expect(findings.isEmpty)
    }

    @Test("a refund followed by a revocation is handled")
    func refundThenRevocation() throws {
        let refunded = Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z", revocation: "2026-11-21T00:00:00Z")
        let findings = try scenario(
            server: [Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "gems60"), Line.revoked("2026-11-21T00:05:00Z", "u1", "t1")],
            receipts: [purchase("t1", at: "2026-11-20T10:00:03Z")],
            notifications: [Line.notification("REFUND", uuid: "n1", signed: "2026-11-21T00:00:01Z", transaction: refunded)])
        #expect(findings.isEmpty)
    }

    @Test("a delivery just inside the grace period is not late")
    func justInsideGrace() throws {
        let findings = try scenario(server: [Line.delivered("2026-11-27T09:59:03Z", "u1", "t1", "gems60")],
                                    receipts: [purchase("t1", at: "2026-11-26T10:00:03Z")])
        #expect(findings.isEmpty)
    }

    @Test("a purchase younger than the grace period at as-of is not lost yet")
    func youngerThanGrace() throws {
        let findings = try scenario(server: [], receipts: [purchase("t1", at: "2026-11-29T01:00:00Z")])
        #expect(findings.isEmpty)
    }

    @Test("a purchase refunded before delivery was due is not lost")
    func refundBeforeDue() throws {
        let refunded = Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z", revocation: "2026-11-20T12:00:00Z")
        let findings = try scenario(
            server: [], receipts: [purchase("t1", at: "2026-11-20T10:00:03Z")],
            notifications: [Line.notification("REFUND", uuid: "n1", signed: "2026-11-20T12:00:01Z", transaction: refunded)])
        #expect(findings.isEmpty)
    }

    @Test("a renewal chain of one Apple ID is one chain: no multi-Apple-ID finding")
    func renewalChain() throws {
        func renewal(_ id: String, _ start: String, _ end: String) -> String {
            Line.v2Receipt(start, "u1", transaction: Line.v2(id, "pro.monthly", purchase: start, original: "a1", expires: end, price: 9990))
        }
        let findings = try scenario(server: [
            Line.delivered("2026-09-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-10-01T10:00:09Z", "u1", "a2", "pro.monthly"),
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a3", "pro.monthly"),
        ], receipts: [
            renewal("a1", "2026-09-01T10:00:00Z", "2026-10-01T10:00:00Z"),
            renewal("a2", "2026-10-01T10:00:00Z", "2026-11-01T10:00:00Z"),
            renewal("a3", "2026-11-01T10:00:00Z", "2026-12-01T10:00:00Z"),
        ])
        #expect(findings.isEmpty)
    }

    @Test("two Apple IDs subscribing one after the other without overlap are fine")
    func sequentialAppleIDs() throws {
        let findings = try scenario(server: [
            Line.delivered("2026-09-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-10-01T10:00:09Z", "u1", "b1", "pro.monthly"),
        ], receipts: [
            Line.v2Receipt("2026-09-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-09-01T10:00:00Z", expires: "2026-10-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-10-01T10:00:05Z", "u1", transaction: Line.v2("b1", "pro.monthly", purchase: "2026-10-01T10:00:00Z", expires: "2026-11-01T10:00:00Z", price: 9990)),
        ])
        #expect(findings.isEmpty)
    }

    @Test("an auto-renewable transaction delivered to two users is shared, not a duplicate")
    func sharedNotDuplicate() throws {
        let findings = try scenario(server: [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-02T10:00:09Z", "u2", "a1", "pro.monthly"),
        ], receipts: [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
        ])
        #expect(findings.map(\.kind) == [.sharedAppleIDSubscription])
    }

    @Test("a receipt replayed by a second user is a cross_user duplicate, never a wrong-user delivery")
    func replayIsNotWrongUser() throws {
        let findings = try scenario(server: [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o1"),
            Line.delivered("2026-11-29T10:00:09Z", "u2", "t1", "gems60"),
        ], receipts: [purchase("t1"), purchase("t1", "u2")])
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        #expect(findings.first?.detail.hasPrefix("cross_user") == true)
    }

    @Test("the same notification received twice is one notification")
    func notificationTwice() throws {
        let refunded = Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z", revocation: "2026-11-21T00:00:00Z")
        let findings = try scenario(
            server: [Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "gems60"), Line.revoked("2026-11-21T00:05:00Z", "u1", "t1")],
            receipts: [purchase("t1", at: "2026-11-20T10:00:03Z")],
            notifications: [
                Line.notification("REFUND", uuid: "n1", signed: "2026-11-21T00:00:01Z", transaction: refunded),
                Line.notification("REFUND", uuid: "n1", signed: "2026-11-21T00:00:01Z", transaction: refunded),
            ])
        #expect(findings.isEmpty)
    }

    @Test("a sandbox purchase never delivered is no finding")
    func sandboxPurchase() throws {
        let findings = try scenario(server: [], receipts: [
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z", environment: "Sandbox")),
        ])
        #expect(findings.isEmpty)
    }

    @Test("a family-shared transaction delivered once is no finding")
    func familyShared() throws {
        let findings = try scenario(server: [Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "pro.monthly")], receipts: [
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("t1", "pro.monthly", purchase: "2026-11-20T10:00:03Z",
                                                                              expires: "2026-12-20T10:00:03Z", ownership: "FAMILY_SHARED")),
        ])
        #expect(findings.isEmpty)
    }
}
