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
}
