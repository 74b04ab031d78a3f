import Foundation
import Testing
@testable import IAPRecon

/// A server that withdrew the goods on the refund request, before Apple's refund, still has a
/// `refunded_not_revoked` finding (CONTRACT.md §2: no `delivery_revoked` after the refund), but
/// its detail must not say the delivery was never revoked: whoever acts on it would take the
/// goods back a second time.
@Suite("Refunded, revoked only before the refund")
struct RevokedBeforeRefundTests {
    private func finding(revoked: [String]) throws -> Scenario.StoredFinding? {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "gems300")]
            + revoked.map { Line.revoked($0, "u1", "t1") })
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-22T00:00:01Z",
                              transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990, revocation: "2026-11-22T00:00:00Z")),
        ])
        let findings = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        #expect(findings.count <= 1)
        return findings.first
    }

    @Test("revoked before the refund: still flagged, and the detail names the last revocation before it")
    func revokedBefore() throws {
        let finding = try #require(try finding(revoked: ["2026-11-21T00:00:00Z", "2026-11-21T06:00:00Z"]))
        #expect(finding.kind == .refundedNotRevoked)
        #expect(finding.amount == Money.parse("4.99"))
        #expect(finding.detail == "refunded 2026-11-22T00:00:00.000Z, delivery revoked only before the refund (last 2026-11-21T06:00:00.000Z)")
    }

    @Test("near miss: never revoked says so")
    func neverRevoked() throws {
        let finding = try #require(try finding(revoked: []))
        #expect(finding.detail == "refunded 2026-11-22T00:00:00.000Z, delivery never revoked")
    }

    @Test("near miss: revoked after the refund is no finding")
    func revokedAfter() throws {
        #expect(try finding(revoked: ["2026-11-21T00:00:00Z", "2026-11-22T00:05:00Z"]) == nil)
    }
}
