import Foundation
import Testing
@testable import IAPRecon

/// A finding about subscription chains is listed on every transaction of every chain it is about:
/// `transactions.csv`'s `finding_ids` and `history` by transaction, chain and user; `findings.csv`
/// keeps one row, naming the first chain.
@Suite("Findings linked to their chains")
struct FindingLinksTests {
    static let asOf = "2026-11-30T00:00:00Z"

    /// The finding tests' catalog, and a subscription of another group.
    static func catalog(_ scenario: Scenario) throws {
        try scenario.write("catalog.csv", [
            "product_id,type,subscription_group,price,currency",
            "gems60,consumable,,0.99,USD",
            "pro.monthly,auto_renewable,premium,9.99,USD",
            "pro.yearly,auto_renewable,premium,79.99,USD",
            "vip.monthly,auto_renewable,vip,4.99,USD",
        ])
    }

    /// u1 pays for chain a (a1, renewed as a2) and chain b (b1) of the premium group at once from
    /// 2026-11-10; u2 for chain c (premium) and chain d (vip) at once: two groups, no finding.
    static func twoUsers(_ scenario: Scenario, withB: Bool = true) throws {
        try catalog(scenario)
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-10-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a2", "pro.monthly"),
            Line.delivered("2026-11-01T11:00:09Z", "u2", "c1", "pro.monthly"),
            Line.delivered("2026-11-05T11:00:09Z", "u2", "d1", "vip.monthly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-10-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-10-01T10:00:00Z", expires: "2026-11-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a2", "pro.monthly", purchase: "2026-11-01T10:00:00Z", original: "a1", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-01T11:00:05Z", "u2", transaction: Line.v2("c1", "pro.monthly", purchase: "2026-11-01T11:00:00Z", expires: "2026-12-01T11:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-05T11:00:05Z", "u2", transaction: Line.v2("d1", "vip.monthly", purchase: "2026-11-05T11:00:00Z", expires: "2026-12-05T11:00:00Z", price: 4990)),
        ])
        if withB { try chainB(scenario) }
    }

    /// u1's second chain of the premium group.
    static func chainB(_ scenario: Scenario) throws {
        try scenario.write("server/b.jsonl", [Line.delivered("2026-11-10T10:00:09Z", "u1", "b1", "pro.yearly")])
        try scenario.write("receipts/b.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2(
                "b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2027-11-10T10:00:00Z", price: 79990)),
        ])
    }

    /// b1 refunded and its delivery revoked: it pays for nothing, and no other finding comes of it.
    static func refundB(_ scenario: Scenario) throws {
        try scenario.write("notifications/refund.jsonl", [
            Line.notification("REFUND", uuid: "5f0c3d4e-0000-4000-8000-000000000001", signed: "2026-11-12T10:00:00Z", transaction: Line.v2(
                "b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2027-11-10T10:00:00Z", price: 79990,
                revocation: "2026-11-12T10:00:00Z")),
        ])
        try scenario.write("server/revoked.jsonl", [Line.revoked("2026-11-12T10:05:00Z", "u1", "b1")])
    }

    /// `transactions.csv`'s finding ids by transaction id.
    static func findingIDs(_ scenario: Scenario) throws -> [String: String] {
        var ids: [String: String] = [:]
        for row in GeneratedTruthTests.table(try scenario.output("transactions.csv")) {
            ids[row["transaction_id"] ?? ""] = row["finding_ids"] ?? ""
        }
        return ids
    }

    static func findings(_ scenario: Scenario) throws -> [[String: String]] {
        GeneratedTruthTests.table(try scenario.output("findings.csv"))
    }

    @Test("a multi-Apple-ID finding is on every transaction of each chain it names, in transactions.csv and every history; near miss: two chains of two groups, no finding, no link")
    func multiAppleIDOnEveryChain() throws {
        let scenario = try Scenario()
        try Self.twoUsers(scenario)
        _ = try scenario.run(asOf: Self.asOf)
        let findings = try Self.findings(scenario)
        #expect(findings.map { $0["kind"] } == ["multi_apple_id_subscription"])
        let finding = try #require(findings.first)
        let id = try #require(finding["finding_id"])
        // Its own row is as before: one row, the first chain, no transaction.
        #expect(finding["original_transaction_id"] == "a1")
        #expect(finding["transaction_id"] == "")
        #expect(finding["detail"] == "2 Apple IDs pay for group premium at once: chains a1, b1")

        let listed = try Self.findingIDs(scenario)
        #expect(listed["a1"] == id)
        #expect(listed["a2"] == id)
        #expect(listed["b1"] == id, "the second chain's transaction carries the finding too")
        // Near miss: u2's chains are of two groups.
        #expect(listed["c1"] == "")
        #expect(listed["d1"] == "")

        let database = try scenario.open()
        for lookup in [UserHistory.Lookup.transaction("b1"), .originalTransaction("b1"), .transaction("a2"), .originalTransaction("a1"), .user("u1")] {
            #expect(try UserHistory.load(database, lookup).findingIDs == [id], "\(lookup)")
        }
        for lookup in [UserHistory.Lookup.transaction("c1"), .originalTransaction("d1"), .user("u2")] {
            #expect(try UserHistory.load(database, lookup).findingIDs.isEmpty, "\(lookup)")
        }
    }

    @Test("a shared subscription's finding names the first holder's transaction and its order, and is listed once on each transaction of its chain")
    func sharedNamesItsTransactionAndOrder() throws {
        let scenario = try Scenario()
        try Self.catalog(scenario)
        try scenario.write("server/s.jsonl", [
            Line.order("2026-10-01T09:59:00Z", "o1", "u1", "pro.monthly", price: "9.99"),
            Line.delivered("2026-10-01T10:00:09Z", "u1", "a1", "pro.monthly", orderID: "o1"),
            // u2 restores the renewal on another account: the chain's later holder.
            Line.delivered("2026-11-02T10:00:09Z", "u2", "a2", "pro.monthly"),
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a2", "pro.monthly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-10-01T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-10-01T10:00:00Z", expires: "2026-11-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a2", "pro.monthly", purchase: "2026-11-01T10:00:00Z", original: "a1", expires: "2026-12-01T10:00:00Z", price: 9990)),
        ])
        _ = try scenario.run(asOf: Self.asOf)
        let findings = try Self.findings(scenario)
        #expect(findings.map { $0["kind"] } == ["shared_apple_id_subscription"])
        let finding = try #require(findings.first)
        #expect(finding["user_id"] == "u1")
        #expect(finding["transaction_id"] == "a1")
        #expect(finding["order_id"] == "o1")
        #expect(finding["original_transaction_id"] == "a1")
        // The id is the chain's, as before.
        #expect(finding["finding_id"] == "F-" + StableID.hash("shared_apple_id_subscription|a1"))
        let id = try #require(finding["finding_id"])
        let listed = try Self.findingIDs(scenario)
        #expect(listed["a1"] == id, "once, though it names a1 and a1's chain")
        #expect(listed["a2"] == id)
        let database = try scenario.open()
        for lookup in [UserHistory.Lookup.transaction("a2"), .originalTransaction("a1"), .user("u2"), .user("u1")] {
            #expect(try UserHistory.load(database, lookup).findingIDs == [id], "\(lookup)")
        }
    }

    @Test("a shared subscription first delivered as a renewal names that renewal, and no order when it has none")
    func sharedFirstHeldByARenewal() throws {
        let scenario = try Scenario()
        try Self.catalog(scenario)
        try scenario.write("server/s.jsonl", [
            Line.order("2026-10-01T09:59:00Z", "o1", "u1", "pro.monthly", price: "9.99"),
            // a1 (matched to o1) is never delivered: u2 holds the chain first, by its renewal.
            Line.delivered("2026-11-01T10:00:09Z", "u2", "a2", "pro.monthly"),
            Line.delivered("2026-11-01T10:30:09Z", "u3", "a2", "pro.monthly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-10-01T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-10-01T10:00:00Z", expires: "2026-11-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-01T10:00:05Z", "u2", transaction: Line.v2("a2", "pro.monthly", purchase: "2026-11-01T10:00:00Z", original: "a1", expires: "2026-12-01T10:00:00Z", price: 9990)),
        ])
        _ = try scenario.run(asOf: Self.asOf)
        let shared = try #require(try Self.findings(scenario).first { $0["kind"] == "shared_apple_id_subscription" })
        #expect(shared["user_id"] == "u2")
        #expect(shared["transaction_id"] == "a2")
        #expect(shared["order_id"] == "")
        #expect(shared["original_transaction_id"] == "a1")
    }

    @Test("nights that add the second chain, then refund it, give transactions.csv and history as a full rebuild does")
    func nightsEqualFullRebuilds() throws {
        let night = try Scenario()
        try Self.twoUsers(night, withB: false)
        _ = try night.run(asOf: Self.asOf)
        #expect(try Self.findings(night).isEmpty)

        func full(refunded: Bool) throws -> Scenario {
            let full = try Scenario()
            try Self.twoUsers(full)
            if refunded { try Self.refundB(full) }
            _ = try full.run(asOf: Self.asOf)
            return full
        }
        for refunded in [false, true] {
            if refunded { try Self.refundB(night) } else { try Self.chainB(night) }
            let result = try night.run(asOf: Self.asOf)
            #expect(result.join.recomputedTransactions != nil, "an incremental join")
            let rebuilt = try full(refunded: refunded)
            for name in ["transactions.csv", "findings.csv"] {
                #expect(SampleDataTests.withoutHistory(name, try night.output(name)) == SampleDataTests.withoutHistory(name, try rebuilt.output(name)),
                        "\(name), refunded: \(refunded)")
            }
            #expect(try Self.findings(night).map { $0["kind"] } == (refunded ? [] : ["multi_apple_id_subscription"]))
            let b1 = try UserHistory.load(night.open(), .transaction("b1")).findingIDs
            #expect(b1 == (try UserHistory.load(rebuilt.open(), .transaction("b1")).findingIDs))
            #expect(b1.isEmpty == refunded)
            let linked = try night.open().scalar("SELECT count(*) FROM fct_finding_chains")
            #expect(linked == .integer(refunded ? 0 : 2))
        }
    }

    @Test("results an older iaprecon wrote (no links) still show a chain's findings in history, with the caveat; the next run links them")
    func olderResults() throws {
        let scenario = try Scenario()
        try Self.twoUsers(scenario)
        _ = try scenario.run(asOf: Self.asOf)
        do {
            let database = try scenario.open()
            try database.execute("DROP TABLE fct_finding_chains")
            try database.run("DELETE FROM schema_migrations WHERE id = 36")
            try database.run("UPDATE fct_findings SET transaction_id = NULL")
        }
        // Migrated by a writer (history refuses an older schema), its results are still the older iaprecon's.
        _ = try scenario.open()
        let migrated = try Store.open(path: scenario.databasePath, readOnly: true)
        let story = try UserHistory.load(migrated, .originalTransaction("a1"))
        #expect(story.findings.map(\.kind) == ["multi_apple_id_subscription"])
        #expect(story.caveat?.contains("older iaprecon") == true)
        // The next run migrates the store and rebuilds its results in full.
        let result = try scenario.run(asOf: Self.asOf)
        #expect(result.join.recomputedTransactions == nil)
        let database = try scenario.open()
        #expect(try UserHistory.load(database, .transaction("b1")).findings.map(\.kind) == ["multi_apple_id_subscription"])
        #expect(try UserHistory.load(database, .transaction("b1")).caveat == nil)
    }
}
