import Foundation
import Testing
@testable import IAPRecon

/// `iaprecon history` as support reads it: a finding's times in the history's zone, and the input
/// line each purchase and refund cites.
@Suite("history times and sources")
struct HistoryTimesAndSourcesTests {
    @Test("with --tz, the UTC times inside a finding's detail are shown in that zone as the time column shows them; scripts keep them in UTC")
    func findingTimesInZone() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let stored = "critical: refunded 2026-11-27T05:12:00.000Z (REFUND_PRORATED 50000), delivery never revoked"
        let zone = try #require(Zone("America/Los_Angeles"))
        let local = try #require(try UserHistory.load(database, .user("u_1008"), zone: zone).events.first { $0.event == "FINDING refunded_not_revoked" })
        #expect(local.shownDetail == "critical: refunded 2026-11-26 21:12:00 (REFUND_PRORATED 50000), delivery never revoked")
        #expect(local.detail == stored)
        // Near miss: in UTC the detail is shown as stored, its times saying Z.
        let utc = try #require(try UserHistory.load(database, .user("u_1008")).events.first { $0.event == "FINDING refunded_not_revoked" })
        #expect((utc.detail, utc.shownDetail) == (stored, stored))
    }

    @Test("every ISO 8601 UTC time of a detail is shown in the zone, a day ahead where the zone is; other text and other forms are kept", arguments: [
        ("purchased 2026-11-20T10:00:00.000Z, never delivered (due by 2026-11-21T16:30:05.123Z)",
         "purchased 2026-11-20 19:00:00, never delivered (due by 2026-11-22 01:30:05)"),
        ("refunded 2026-11-27T05:12:00.000Z (REFUND_FULL), delivery never revoked", "refunded 2026-11-27 14:12:00 (REFUND_FULL), delivery never revoked"),
        // Not a time as iaprecon writes one: kept as it is.
        ("day 2026-11-20, id 2026-11-20T10:00:00Z, 2026-11-20T10:00:00.000", "day 2026-11-20, id 2026-11-20T10:00:00Z, 2026-11-20T10:00:00.000"),
        ("cross_user: delivered 2 times to u_1005, u_1006", "cross_user: delivered 2 times to u_1005, u_1006"),
        ("x2026-11-20T10:00:00.000Zy", "x2026-11-20 19:00:00y"),
        ("", ""),
    ])
    func timesInZone(text: String, shown: String) throws {
        let tokyo = try #require(Zone("Asia/Tokyo"))
        #expect(UserHistory.shownTimes(text, tokyo) == shown)
        #expect(UserHistory.shownTimes(text, .utc) == text)
    }

    @Test("a time in the hour a zone shows twice carries its offset, so two instants an hour apart read apart; other times do not", arguments: [
        ("America/Los_Angeles", "2026-11-01T07:30:00Z", "2026-11-01 00:30:00"),
        ("America/Los_Angeles", "2026-11-01T08:30:00Z", "2026-11-01 01:30:00 -07:00"),
        ("America/Los_Angeles", "2026-11-01T09:30:00Z", "2026-11-01 01:30:00 -08:00"),
        ("America/Los_Angeles", "2026-11-01T10:30:00Z", "2026-11-01 02:30:00"),
        ("America/Los_Angeles", "2026-03-08T10:30:00Z", "2026-03-08 03:30:00"),
        ("Australia/Lord_Howe", "2026-04-04T14:45:00Z", "2026-04-05 01:45:00 +11:00"),
        ("Australia/Lord_Howe", "2026-04-04T15:15:00Z", "2026-04-05 01:45:00 +10:30"),
        ("Asia/Kathmandu", "2026-11-01T08:30:00Z", "2026-11-01 14:15:00"),
    ])
    func repeatedHourShowsOffset(zone: String, utc: String, shown: String) throws {
        let zone = try #require(Zone(zone))
        #expect(UserHistory.localTime(try #require(Timestamp.parse(utc)), zone) == shown)
        #expect(UserHistory.shownTimes(Timestamp.iso8601(try #require(Timestamp.parse(utc))), zone) == shown)
    }

    @Test("a refund Apple told of in one notification cites that line, as a reversed one does")
    func refundCitesItsNotification() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        // u_1008's prorated refund: one REFUND notification, line 22.
        let refund = try #require(try UserHistory.load(database, .user("u_1008")).events.first { $0.event == "refund" })
        #expect(refund.source == "notifications/asn-2026-11.jsonl:22")
        // Near miss: u_1019's refund Apple reversed cites each of its lines, as before.
        let reversed = try UserHistory.load(database, .user("u_1019")).events.filter { $0.event.hasPrefix("refund") }
        #expect(reversed.map { "\($0.event) \($0.source)" } == [
            "refund notifications/asn-2026-11.jsonl:13", "refund reversed notifications/asn-2026-11.jsonl:19",
        ])
    }

    @Test("a refund told in a receipt and in a notification cites the notification that says what kind it is; told in receipts alone, the first")
    func refundCitesTheLineThatSaysItsKind() throws {
        let scenario = try Scenario()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-20T08:00:05Z", "u_1", transaction: Line.v2("2000000000000001", "gems", purchase: "2026-11-20T08:00:00Z")),
            Line.v2Receipt("2026-11-21T08:00:05Z", "u_1", transaction: Line.v2("2000000000000001", "gems", purchase: "2026-11-20T08:00:00Z",
                                                                              revocation: "2026-11-21T07:00:00Z")),
            Line.v2Receipt("2026-11-20T09:00:05Z", "u_2", transaction: Line.v2("2000000000000002", "gems", purchase: "2026-11-20T09:00:00Z")),
            Line.v2Receipt("2026-11-21T09:00:05Z", "u_2", transaction: Line.v2("2000000000000002", "gems", purchase: "2026-11-20T09:00:00Z",
                                                                              revocation: "2026-11-21T07:00:00Z")),
            Line.v2Receipt("2026-11-21T09:10:05Z", "u_2", transaction: Line.v2("2000000000000002", "gems", purchase: "2026-11-20T09:00:00Z",
                                                                              revocation: "2026-11-21T07:00:00Z")),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "1b2c3d4e-0000-4000-8000-000000000001", signed: "2026-11-21T07:00:01Z",
                              transaction: Line.v2("2000000000000001", "gems", purchase: "2026-11-20T08:00:00Z", revocation: "2026-11-21T07:00:00Z",
                                                   revocationType: "REFUND_FULL")),
        ])
        // Delivered, so the refund is a refunded_not_revoked finding, which cites the line the join took.
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-20T09:00:09Z", "u_2", "2000000000000002", "gems")])
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let database = try scenario.open()
        let told = try #require(try UserHistory.load(database, .user("u_1")).events.first { $0.event == "refund" })
        #expect((told.detail, told.source) == ("REFUND_FULL", "notifications/n.jsonl:1"))
        // Two receipt lines tell the same refund: the last, as the join takes it and the finding cites it.
        let receipts = try #require(try UserHistory.load(database, .user("u_2")).events.first { $0.event == "refund" })
        #expect(receipts.source == "receipts/r.jsonl:5")
        let cited = try database.scalar("SELECT sources FROM fct_findings WHERE kind = 'refunded_not_revoked'")
        #expect(cited.map { "\($0)".contains("receipts/r.jsonl:5") } == true, "\(String(describing: cited))")
    }

    @Test("a purchase cites the line that first verified it, not the REFUND, REVOKE or CANCEL notification that comes first in path order")
    func purchaseCitesItsVerification() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        func source(_ user: String, _ transactionID: String) throws -> String? {
            try UserHistory.load(database, .user(user)).events.first { $0.event == "apple purchase" && $0.id == transactionID }?.source
        }
        #expect(try source("u_1019", "2000000629678430") == "receipts/verify-2026-11.jsonl:10")   // REFUND at notifications line 13
        #expect(try source("u_1009", "2000000629373294") == "receipts/verify-2026-11.jsonl:5")    // REVOKE at line 23
        #expect(try source("u_1031", "2000000631000101") == "receipts/verify-2026-11.jsonl:31")   // CANCEL at line 27
        // Near misses: a SUBSCRIBED or INITIAL_BUY notification verifies the purchase, first in path order.
        #expect(try source("u_1008", "2000000629057412") == "notifications/asn-2026-11.jsonl:3")
        let initialBuy = try #require(try database.scalar("""
            SELECT user_id FROM int_transactions_resolved WHERE transaction_id = '2000000628871100'
            """).flatMap { if case .text(let user) = $0 { user } else { nil } })
        #expect(try source(initialBuy, "2000000628871100") == "notifications/asn-2026-11.jsonl:2")
    }

    @Test("a purchase known only from its refund notification cites it; one a purchase notification told first cites that")
    func purchaseKnownOnlyFromItsRefund() throws {
        let scenario = try Scenario()
        let purchase = { (id: String, revoked: Bool) in
            Line.v2(id, "gems", purchase: "2026-11-20T08:00:00Z", revocation: revoked ? "2026-11-21T07:00:00Z" : nil,
                    revocationType: revoked ? "REFUND_FULL" : nil)
        }
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "1b2c3d4e-0000-4000-8000-000000000001", signed: "2026-11-21T07:00:01Z",
                              transaction: purchase("2000000000000001", true)),
            Line.notification("ONE_TIME_CHARGE", uuid: "1b2c3d4e-0000-4000-8000-000000000002", signed: "2026-11-20T08:00:01Z",
                              transaction: purchase("2000000000000002", false)),
            Line.notification("REFUND", uuid: "1b2c3d4e-0000-4000-8000-000000000003", signed: "2026-11-21T07:00:01Z",
                              transaction: purchase("2000000000000002", true)),
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-20T08:00:05Z", "u_1", "2000000000000001", "gems"),
            Line.delivered("2026-11-20T08:00:05Z", "u_1", "2000000000000002", "gems"),
        ])
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let story = try UserHistory.load(try scenario.open(), .user("u_1"))
        #expect(story.events.filter { $0.event == "apple purchase" }.map { "\($0.id) \($0.source)" } == [
            "2000000000000001 notifications/n.jsonl:1", "2000000000000002 notifications/n.jsonl:2",
        ])
    }

    @Test("a multi_apple_id_subscription finding at the instant of the purchase that began the overlap comes after it, read at once or in runs")
    func multiAppleIDFindingAfterItsPurchase() throws {
        let scenario = try Scenario()
        try scenario.writeTwoChainsOfOneGroup()
        // a1 runs to December: b1, bought 2026-11-10T10:00:00Z, overlaps it from its purchase on.
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Scenario.chainA1(expires: "2026-12-01T10:00:00Z")),
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z",
                                                                             expires: "2027-11-10T10:00:00Z", price: 79990)),
        ])
        _ = try scenario.run(asOf: "2026-11-20T00:00:00Z")
        let database = try scenario.open()
        let expected = ["apple purchase a1", "delivered a1", "apple purchase b1", "FINDING multi_apple_id_subscription", "delivered b1"]
        for (memoryBytes, atOnce) in [(HistoryEvents.memoryBytes, UserHistory.transactionsReadAtOnce), (64, 1)] {
            let story = try UserHistory.load(SQLiteHistoryStore(database), .user("u1"), memoryBytes: memoryBytes, transactionsAtOnce: atOnce)
            #expect(story.events.map { $0.event.hasPrefix("FINDING") ? $0.event : "\($0.event) \($0.id)" } == expected, "\(memoryBytes)")
            let finding = try #require(story.events.first { $0.event.hasPrefix("FINDING") })
            #expect(finding.ms == Line.ms("2026-11-10T10:00:00Z"))
        }
        // Each chain's own story: b1's shows its purchase before the finding.
        let chain = try UserHistory.load(database, .originalTransaction("b1"))
        #expect(chain.events.map(\.event) == ["apple purchase", "FINDING multi_apple_id_subscription", "delivered"])
    }
}
