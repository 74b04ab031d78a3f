import Foundation
import Testing
@testable import IAPRecon

/// Identities across accounts: one Apple ID on several users, one user on several Apple IDs,
/// family sharing, and links that arrive on a later night (CONTRACT.md §2).
@Suite("Findings across accounts")
struct AccountFindingTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// A decoded V2 SUBSCRIBED notification carrying `transaction`, its uuid made from `uuid`.
    private func notification(_ uuid: Int, _ signed: String, _ transaction: String) -> String {
        Line.notification("SUBSCRIBED", uuid: "00000000-0000-4000-8000-" + String(format: "%012d", uuid), signed: signed, transaction: transaction)
    }

    @Test("a family-shared transaction lost or delivered to two users puts no money at risk (its holder paid nothing); a purchased one does",
          arguments: ["FAMILY_SHARED", "PURCHASED"])
    func familySharedPutsNothingAtRisk(ownership: String) throws {
        let scenario = try Scenario()
        try scenario.write("catalog.csv", [
            "product_id,type,subscription_group,price,currency",
            "removeads,non_consumable,,4.99,USD",
            "pro.monthly,auto_renewable,premium,9.99,USD",
        ])
        // A family member's share of a subscription, which Apple notified and the member's app sent, and the
        // app never delivered, and a family-shared one-time purchase restored onto a second account.
        let share = Line.v2("pf1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990, ownership: ownership)
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-05T10:00:09Z", "u31", "nf1", "removeads"),
            Line.delivered("2026-11-06T10:00:09Z", "u32", "nf1", "removeads"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-05T10:00:05Z", "u31", transaction: Line.v2("nf1", "removeads", purchase: "2026-11-05T10:00:00Z", price: 4990, ownership: ownership)),
            Line.v2Receipt("2026-11-01T10:00:05Z", "u33", transaction: share),
        ])
        try scenario.write("notifications/n.jsonl", [notification(1, "2026-11-01T10:00:02Z", share)])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.duplicateDelivery, .lostDelivery])
        let purchased = ownership == "PURCHASED"
        #expect(findings.map(\.amount) == (purchased ? [Decimal(string: "4.99"), Decimal(string: "9.99")] : [0, 0]))
        #expect(findings.map(\.currency) == ["USD", "USD"])
    }

    @Test("a family member's copy known only from Apple's notifications is no lost delivery (no app user is owed it); near misses: a purchase known only from a notification is lost, and so is a copy a member's app sent, or a renewal of a copy the app delivered to a member, at no money")
    func familyCopyOnlyNotified() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func family(_ id: String, _ purchase: String, original: String? = nil, expires: String) -> String {
            Line.v2(id, "pro.monthly", purchase: purchase, original: original, expires: expires, price: 9990, ownership: "FAMILY_SHARED")
        }
        // f3 is u42's copy, delivered; f4 renews it and Apple notified it alone.
        try scenario.write("server/s.jsonl", [Line.delivered("2026-10-01T10:00:09Z", "u42", "f3", "pro.monthly")])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u41", transaction: family("f2", "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z")),
            Line.v2Receipt("2026-10-01T10:00:05Z", "u42", transaction: family("f3", "2026-10-01T10:00:00Z", expires: "2026-11-01T10:00:00Z")),
        ])
        try scenario.write("notifications/n.jsonl", [
            notification(1, "2026-11-01T10:00:02Z", family("f1", "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z")),
            notification(2, "2026-11-01T10:00:02Z", family("f2", "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z")),
            notification(3, "2026-11-01T10:00:03Z", family("f4", "2026-11-01T10:00:00Z", original: "f3", expires: "2026-12-01T10:00:00Z")),
            notification(4, "2026-11-01T10:00:04Z", Line.v2("p1", "gems300", purchase: "2026-11-01T10:00:00Z", price: 4990)),
        ])
        let findings = try scenario.reconcile(asOf: asOf)
        #expect(findings.map(\.kind) == [.lostDelivery, .lostDelivery, .lostDelivery])
        #expect(findings.map(\.transactionID) == ["f2", "f4", "p1"])
        #expect(findings.map(\.amount) == [0, 0, Decimal(string: "4.99")])
    }

    @Test("a restore arriving on a later night joins two users' histories: that night finds what a full rebuild finds")
    func lateRestoreJoinsHistories() throws {
        func purchase(_ user: String, _ id: String, _ product: String, _ day: String, expires: String, price: Int) -> String {
            Line.v2Receipt("2026-11-\(day)T10:00:05Z", user, transaction: Line.v2(id, product, purchase: "2026-11-\(day)T10:00:00Z", expires: expires, price: price))
        }
        let night1 = [
            "server/2026-11-10.jsonl": [
                Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
                Line.delivered("2026-11-05T10:00:09Z", "u2", "b1", "pro.yearly"),
            ],
            "receipts/2026-11-10.jsonl": [
                purchase("u1", "a1", "pro.monthly", "01", expires: "2026-12-01T10:00:00Z", price: 9990),
                purchase("u2", "b1", "pro.yearly", "05", expires: "2027-11-05T10:00:00Z", price: 79990),
            ],
        ]
        // u1 restores u2's Apple ID on their phone: b1 is delivered to u1 as well.
        let night2 = ["server/2026-11-20.jsonl": [Line.delivered("2026-11-20T10:00:09Z", "u1", "b1", "pro.yearly")]]
        let nights = try Scenario()
        try nights.catalog()
        for (path, lines) in night1 { try nights.write(path, lines) }
        #expect(try nights.reconcile(asOf: asOf).isEmpty)
        for (path, lines) in night2 { try nights.write(path, lines) }
        let incremental = try nights.reconcile(asOf: asOf)

        let full = try Scenario()
        try full.catalog()
        for (path, lines) in night1.merging(night2, uniquingKeysWith: +) { try full.write(path, lines) }
        let rebuilt = try full.reconcile(asOf: asOf)

        #expect(incremental.map(\.kind) == [.multiAppleIDSubscription, .sharedAppleIDSubscription])
        #expect(incremental.map(\.userID) == ["u1", "u2"])
        #expect(incremental.map(\.detail) == rebuilt.map(\.detail))
        #expect(incremental.map(\.sources) == rebuilt.map(\.sources))
        #expect(incremental.map(\.eventMs) == rebuilt.map(\.eventMs))
    }

    @Test("in another holder's story, a finding of a chain they share says whose finding it is; in its own user's story it does not")
    func historyNamesAnotherUsersFinding() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-05T10:00:09Z", "u2", "b1", "pro.yearly"),
            Line.delivered("2026-11-20T10:00:09Z", "u1", "b1", "pro.yearly"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990)),
            Line.v2Receipt("2026-11-05T10:00:05Z", "u2", transaction: Line.v2("b1", "pro.yearly", purchase: "2026-11-05T10:00:00Z", expires: "2027-11-05T10:00:00Z", price: 79990)),
        ])
        _ = try scenario.run(asOf: asOf)
        let database = try scenario.open()
        func findingLines(_ user: String) throws -> [String] {
            try UserHistory.load(database, .user(user)).events.filter { $0.event.hasPrefix("FINDING") }.map { "\($0.event) \($0.shownDetail)" }
        }
        // u1 pays from a1 and holds b1 through the restore: the multi-Apple-ID finding is u1's, not u2's.
        #expect(try findingLines("u2") == [
            "FINDING multi_apple_id_subscription warning: 2 Apple IDs pay for group premium at once: chains a1, b1 (finding of user u1)",
            "FINDING shared_apple_id_subscription warning: one Apple ID's subscription delivered to 2 users: u2, u1",
        ])
        #expect(try findingLines("u1") == [
            "FINDING multi_apple_id_subscription warning: 2 Apple IDs pay for group premium at once: chains a1, b1",
            "FINDING shared_apple_id_subscription warning: one Apple ID's subscription delivered to 2 users: u2, u1 (finding of user u2)",
        ])
        // Scripts keep findings.csv's words.
        #expect(try UserHistory.load(database, .user("u2")).events.filter { $0.event.hasPrefix("FINDING") }.map(\.detail) == [
            "warning: 2 Apple IDs pay for group premium at once: chains a1, b1",
            "warning: one Apple ID's subscription delivered to 2 users: u2, u1",
        ])
    }
}
