import Foundation
import Testing
@testable import IAPRecon

/// One focused scenario per finding kind of CONTRACT.md §2.
@Suite("Finding kinds")
struct FindingKindTests {
    let asOf = "2026-11-30T00:00:00Z"

    @Test("a production purchase older than grace and never delivered is a lost delivery")
    func lostDelivery() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60")])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lostDelivery])
        let lost = try #require(findings.first)
        #expect(lost.transactionID == "t1")
        #expect(lost.userID == "u1")
        #expect(lost.orderID == "o1")
        #expect(lost.amount == Money.parse("0.99"))
        #expect(lost.currency == "USD")
        #expect(lost.sources == ["receipts/r.jsonl:1", "server/s.jsonl:1"])
    }

    @Test("a transaction delivered twice to one user is a same_user duplicate worth one extra price")
    func duplicateSameUser() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", deliveryID: "d1"),
            Line.delivered("2026-11-28T11:30:00Z", "u1", "t1", "gems60", deliveryID: "d2"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T11:29:59Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        #expect(findings.first?.detail.hasPrefix("same_user") == true)
        #expect(findings.first?.amount == Money.parse("0.99"))
    }

    @Test("a receipt replayed by a second user is a cross_user duplicate, not a wrong-user delivery")
    func duplicateCrossUser() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems300", price: "4.99"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems300", orderID: "o1", deliveryID: "d1"),
            Line.delivered("2026-11-29T08:00:00Z", "u2", "t1", "gems300", deliveryID: "d2"),
            Line.delivered("2026-11-29T08:05:00Z", "u2", "t1", "gems300", deliveryID: "d3"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("t1", "gems300", purchase: "2026-11-28T10:00:03Z", price: 4990)),
            Line.v2Receipt("2026-11-29T07:59:59Z", "u2", transaction: Line.v2("t1", "gems300", purchase: "2026-11-28T10:00:03Z", price: 4990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        #expect(findings.first?.detail.hasPrefix("cross_user") == true)
        #expect(findings.first?.amount == Money.parse("9.98"))
        #expect(findings.first?.userID == "u1")
    }

    @Test("a refunded delivery with no revocation after the refund is refunded_not_revoked, for its refunded amount")
    func refundedNotRevoked() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-20T10:00:09Z", "u1", "t1", "gems300"),
            Line.delivered("2026-11-20T10:00:09Z", "u2", "t2", "gems300"),
            Line.delivered("2026-11-20T10:00:09Z", "u3", "t3", "gems300"),
            // A revocation before the refund does not count.
            Line.revoked("2026-11-21T00:00:00Z", "u1", "t1"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990)),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u2", transaction: Line.v2("t2", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990)),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u3", transaction: Line.v2("t3", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990)),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-22T00:00:01Z",
                              transaction: Line.v2("t1", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990, revocation: "2026-11-22T00:00:00Z")),
            Line.notification("REFUND", uuid: "n2", signed: "2026-11-22T00:00:01Z",
                              transaction: Line.v2("t2", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990, revocation: "2026-11-22T00:00:00Z",
                                                   revocationType: "REFUND_PRORATED", percentage: 50000)),
            Line.notification("REVOKE", uuid: "n3", signed: "2026-11-22T00:00:01Z",
                              transaction: Line.v2("t3", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990, revocation: "2026-11-22T00:00:00Z",
                                                   revocationType: "FAMILY_REVOKE")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.refundedNotRevoked, .refundedNotRevoked, .refundedNotRevoked])
        #expect(findings.map(\.transactionID) == ["t1", "t2", "t3"])
        #expect(findings.map(\.amount) == [Money.parse("4.99"), Money.parse("2.495"), 0])
    }

    @Test("a plan upgraded to a higher one is no refund: no refunded_not_revoked, no refund in transactions.csv; near miss: a refund is")
    func upgradeIsNoRefund() throws {
        for upgraded in [true, false] {
            let scenario = try Scenario()
            try scenario.catalog()
            try scenario.write("server/s.jsonl", [
                Line.delivered("2026-11-01T10:00:09Z", "u_1050", "2000000900000010", "com.example.vip.monthly"),
                Line.delivered("2026-11-11T10:00:09Z", "u_1050", "2000000900000011", "com.example.vip.yearly"),
            ])
            try scenario.write("receipts/r.jsonl", [ContractV2LineTests.upgradedReceipt(upgraded: upgraded)])
            _ = try scenario.run(asOf: asOf)
            let kinds = try Scenario.findings(scenario.open()).map(\.kind)
            let monthly = try #require(try scenario.output("transactions.csv").split(separator: "\r\n").first { $0.hasPrefix("2000000900000010,") })
            if upgraded {
                #expect(!kinds.contains(.refundedNotRevoked))
                // Purchase, expiry at the upgrade, no refund time, type or amount.
                #expect(monthly.contains(",2026-11-01T10:00:00.000Z,2026-11-11T10:00:00.000Z,,,,true,"))
            } else {
                #expect(kinds.contains(.refundedNotRevoked))
                #expect(monthly.contains(",2026-11-01T10:00:00.000Z,2026-12-01T10:00:00.000Z,2026-11-11T10:00:00.000Z,"))
            }
        }
    }

    @Test("a store an older iaprecon wrote, with an upgrade kept as a refund, reads its receipts with cancellations again; others stay unread")
    func upgradeMigrated() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-01T10:00:09Z", "u_1050", "2000000900000010", "com.example.vip.monthly")])
        try scenario.write("receipts/r.jsonl", [ContractV2LineTests.upgradedReceipt(upgraded: true)])
        try scenario.write("receipts/s.jsonl", [Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:03Z"))])
        _ = try scenario.run(asOf: asOf)
        let expected = try scenario.output("transactions.csv")
        // What an older iaprecon kept: the upgrade's cancellation as a refund, schema 20.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for upgrades") }?.id)
        let database = try scenario.open()
        try database.execute("""
            UPDATE raw_apple__transactions SET revocation_ms = 1794391200000, expires_ms = 1796119200000 WHERE transaction_id = '2000000900000010';
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try scenario.run(asOf: asOf)
        #expect(night.ingest.files.first { $0.path == "receipts/r.jsonl" }?.status == .replaced)
        #expect(night.ingest.files.first { $0.path == "receipts/s.jsonl" }?.status == .unchanged)
        #expect(try scenario.output("transactions.csv") == expected)
        #expect(try !Scenario.findings(scenario.open()).map(\.kind).contains(.refundedNotRevoked))
    }

    @Test("a delivery of a transaction no verified source knows is an orphan, priced from the catalog")
    func orphanDelivery() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-28T10:00:09Z", "u1", "t404", "gems300", quantity: 2)])
        try scenario.write("receipts/r.jsonl", [
            // A failed verification names the transaction but verifies nothing.
            "{\"received_at\":\"2026-11-28T10:00:05Z\",\"user_id\":\"u1\",\"transaction_id\":\"t404\",\"response\":{\"status\":21003}}",
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.orphanDelivery])
        #expect(findings.first?.amount == Money.parse("9.98"))
        #expect(findings.first?.userID == "u1")
    }

    @Test("a delivered product or matched order product that differs from Apple's is a product mismatch")
    func productMismatch() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems300", orderID: "o1"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.productMismatch])
        #expect(findings.first?.detail == "Apple sold gems60; server used gems300")
    }

    @Test("an undelivered transaction whose matched order names another product is a product mismatch too; an unmatched order is not")
    func productMismatchUndelivered() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems300", price: "4.99"),
            Line.order("2026-11-28T10:00:00Z", "o2", "u2", "gems60"),
            // u3's order of another product is never matched: the heuristic only takes the same product.
            Line.order("2026-11-28T10:00:00Z", "o3", "u3", "gems300", price: "4.99"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", orderID: "o2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u3", transaction: Line.v2("t3", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lostDelivery, .lostDelivery, .lostDelivery, .productMismatch])
        #expect(findings.map(\.transactionID) == ["t1", "t2", "t3", "t1"])
        let mismatch = try #require(findings.last)
        #expect(mismatch.orderID == "o1")
        #expect(mismatch.userID == "u1")
        #expect(mismatch.detail == "Apple sold gems60; server used gems300")
        #expect(mismatch.amount == Money.parse("0.99"))
        #expect(mismatch.eventMs == Line.ms("2026-11-28T10:00:03Z"))
    }

    @Test("a purchase finished after another account logged in is a wrong-user delivery")
    func wrongUserDelivery() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.delivered("2026-11-28T12:00:00Z", "u2", "t1", "gems60"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T11:59:59Z", "u2", orderID: "o1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:30Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.wrongUserDelivery])
        #expect(findings.first?.userID == "u1")
        #expect(findings.first?.detail == "ordered by u1, delivered to u2")
    }

    @Test("one user paying for two overlapping chains of one group is multi_apple_id_subscription")
    func multiAppleID() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-10T10:00:09Z", "u1", "b1", "pro.yearly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2027-11-10T10:00:00Z", price: 79990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.multiAppleIDSubscription])
        #expect(findings.first?.userID == "u1")
        #expect(findings.first?.eventMs == Line.ms("2026-11-10T10:00:00Z"))
    }

    @Test("Apple's extended expiry counts wherever its notification sorts: the paid period then overlaps the second chain",
          arguments: ["notifications/2026-11-07.jsonl", "notifications/0-extended.jsonl"])
    func extendedExpiryCounts(extensionFile: String) throws {
        let scenario = try Scenario()
        try scenario.writeTwoChainsOfOneGroup()
        try scenario.write("notifications/2026-11-01.jsonl", [
            Line.notification("SUBSCRIBED", uuid: "n1", signed: "2026-11-01T10:00:02Z", transaction: Scenario.chainA1(expires: "2026-11-08T10:00:00Z")),
        ])
        // The near miss: until Apple extends it, a1 ends before b1 begins.
        #expect(try scenario.reconcile(asOf: asOf).isEmpty)

        // Apple extends a1 by a week (for a service outage, say): its period now overlaps b1's.
        try scenario.write(extensionFile, [
            Line.notification("RENEWAL_EXTENDED", uuid: "n2", signed: "2026-11-07T09:00:00Z", transaction: Scenario.chainA1(expires: "2026-11-15T10:00:00Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.multiAppleIDSubscription])
        #expect(findings.first?.userID == "u1")
        #expect(findings.first?.eventMs == Line.ms("2026-11-10T10:00:00Z"))
    }

    @Test("a product missing from the catalog is consumable, whatever Apple's payload calls it: delivered to two users, a duplicate, and it forms no chain")
    func missingFromCatalogIsConsumable() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // new.sub is not in the catalog; Apple's payloads call it an auto-renewable subscription of group G1.
        func sub(_ id: String, _ purchase: String, _ expires: String) -> String {
            String(Line.v2(id, "new.sub", purchase: purchase, expires: expires, price: 9990).dropLast())
                + ",\"type\":\"Auto-Renewable Subscription\",\"subscriptionGroupIdentifier\":\"G1\"}"
        }
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "new.sub"),
            Line.delivered("2026-11-02T10:00:09Z", "u2", "a1", "new.sub"),
            Line.delivered("2026-11-05T10:00:09Z", "u1", "b1", "new.sub"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: sub("a1", "2026-11-01T10:00:00Z", "2026-12-01T10:00:00Z")),
            // A second chain of the same group overlapping the first, for u1: no multi_apple_id_subscription either.
            Line.v2Receipt("2026-11-05T10:00:05Z", "u1", transaction: sub("b1", "2026-11-05T10:00:00Z", "2026-12-05T10:00:00Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery])
        #expect(findings.first?.transactionID == "a1")
        #expect(findings.first?.detail.hasPrefix("cross_user") == true)
    }

    @Test("one chain delivered to two users is shared_apple_id_subscription and not a duplicate")
    func sharedAppleID() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-02T10:00:09Z", "u2", "a1", "pro.monthly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.sharedAppleIDSubscription])
        #expect(findings.first?.originalTransactionID == "a1")
        // The transaction that made u1, the first holder, hold it; no order was matched to it.
        #expect(findings.first?.transactionID == "a1")
        #expect(findings.first?.orderID == nil)
        #expect(findings.first?.detail == "one Apple ID's subscription delivered to 2 users: u1, u2")
    }

    @Test("a finding's detail names ten users at most and counts the rest, so the cell stays readable (and within a spreadsheet's limit)")
    func longUserListsAreCut() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let users = (1...12).map { String(format: "u%02d", $0) }
        try scenario.write("server/s.jsonl", users.enumerated().map { index, user in
            Line.delivered("2026-11-0\(1 + index / 6)T10:\(String(format: "%02d", index)):09Z", user, "a1", "pro.monthly")
        } + users.prefix(10).enumerated().map { index, user in
            // The near miss: ten users are named in full.
            Line.delivered("2026-11-01T11:\(String(format: "%02d", index)):09Z", user, "t2", "gems300")
        })
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u01", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-01T11:00:05Z", "u01", transaction: Line.v2("t2", "gems300", purchase: "2026-11-01T11:00:00Z", price: 4990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        let shared = try #require(findings.first { $0.kind == .sharedAppleIDSubscription })
        #expect(shared.detail == "one Apple ID's subscription delivered to 12 users: u01, u02, u03, u04, u05, u06, u07, u08, u09, u10 and 2 more")
        let duplicate = try #require(findings.first { $0.kind == .duplicateDelivery })
        #expect(duplicate.detail == "cross_user: delivered 10 times to u01, u02, u03, u04, u05, u06, u07, u08, u09, u10")
    }

    @Test("a chain of 3,000 hourly renewals, each delivered to one of two users, is one shared subscription naming both, its first ten deliveries as sources, and nothing else")
    func longSharedChain() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let startMs = Line.ms("2026-10-01T00:00:00Z")
        let renewals = (0..<3_000).map { n in
            (id: "r\(n)", user: n % 2 == 0 ? "u1" : "u2", purchaseMs: startMs + Int64(n) * 3_600_000)
        }
        try scenario.write("server/s.jsonl", renewals.map { renewal in
            Line.delivered(Timestamp.iso8601(renewal.purchaseMs + 60_000), renewal.user, renewal.id, "pro.monthly")
        })
        try scenario.write("receipts/r.jsonl", renewals.map { renewal in
            Line.v2Receipt(Timestamp.iso8601(renewal.purchaseMs + 30_000), renewal.user, transaction: Line.v2(
                renewal.id, "pro.monthly", purchase: Timestamp.iso8601(renewal.purchaseMs), original: "r0",
                expires: Timestamp.iso8601(renewal.purchaseMs + 3_600_000), price: 9990))
        })
        let findings = try scenario.reconcile(asOf: "2026-12-31T00:00:00Z")
        #expect(findings.map(\.kind) == [.sharedAppleIDSubscription])
        let shared = try #require(findings.first)
        #expect(shared.originalTransactionID == "r0")
        #expect(shared.transactionID == "r0")
        #expect(shared.detail == "one Apple ID's subscription delivered to 2 users: u1, u2")
        #expect(shared.eventMs == startMs + 3_600_000 + 60_000, "u2's first delivery")
        #expect(shared.sources == (1...10).map { "server/s.jsonl:\($0)" })
    }

    @Test("a delivered test purchase is sandbox_delivery and nothing else")
    func sandboxDelivery() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60"),
            Line.delivered("2026-11-28T10:00:10Z", "u1", "t1", "gems60"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z", environment: "Sandbox")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.sandboxDelivery])
        #expect(findings.first?.amount == nil)
    }

    @Test("a first delivery more than grace after purchase is a late delivery")
    func lateDelivery() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-27T10:00:04Z", "u1", "t1", "gems60")])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-26T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-26T10:00:03Z")),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lateDelivery])
        // 24 h 0 m 1 s after purchase: past the 24 h grace, and never written as 24 h.
        #expect(findings.first?.detail == "first delivered 24 h 0 m 1 s after purchase")
    }

    @Test("a delay is written exactly: hours past a day, minutes, seconds, and milliseconds where there are any")
    func delaysAreExact() {
        #expect(FindingRules.delay(94_465_000) == "26 h 14 m 25 s")
        #expect(FindingRules.delay(86_400_000 + 1) == "24 h 0 m 0.001 s")
        #expect(FindingRules.delay(86_400_000 + 500) == "24 h 0 m 0.5 s")
        #expect(FindingRules.delay(86_400_000 + 1_040) == "24 h 0 m 1.04 s")
        #expect(FindingRules.delay(3 * 86_400_000 + 2 * 3_600_000 + 5_000) == "74 h 0 m 5 s")
        // The near miss: exactly the grace is written as such (and is not late).
        #expect(FindingRules.delay(86_400_000) == "24 h 0 m 0 s")
    }
}
