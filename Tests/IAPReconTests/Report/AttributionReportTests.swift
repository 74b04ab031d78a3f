import Foundation
import Testing
@testable import IAPRecon

/// `attribution.csv` and `summary.json`'s attribution block (CONTRACT.md §1.5, §3).
///
/// Small AppsFlyer exports, sign-ups and spend; each expected row is written
/// out whole: `install_date,media_source,campaign,installs,registrations,payers,
/// revenue_d0_usd,revenue_d7_usd,revenue_d30_usd,revenue_usd,refunds_usd,spend_usd,roas_d7,roas,mmp_revenue_usd`.
@Suite("attribution.csv")
struct AttributionReportTests {
    static let header = "install_date,media_source,campaign,installs,registrations,payers,revenue_d0_usd,revenue_d7_usd,revenue_d30_usd,revenue_usd,refunds_usd,spend_usd,roas_d7,roas,mmp_revenue_usd,cpi,cost_per_payer,revenue_per_payer"
    /// Late enough that every cohort of November is 31 days old.
    let asOf = "2026-12-31T00:00:00Z"

    // MARK: - Join keys

    @Test("users join installs by Customer User ID, AppsFlyer ID, IDFV and IDFA; an all-zero IDFA never joins")
    func eachJoinKey() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_cuid", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_appsflyer", campaign: "C2", appsflyerID: "af2"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_idfv", campaign: "C3", appsflyerID: "af3", idfv: "V3"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_idfa", campaign: "C4", appsflyerID: "af4", idfa: "A4"),
            // No real IDFA: the zeros are empty, so u5's zeros cannot reach this install.
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "zero_idfa", campaign: "C5", appsflyerID: "af5",
                           idfa: "00000000-0000-0000-0000-000000000000"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2", appsflyerID: "af2"),
            Fixture.signup("2026-11-10T09:00:00Z", "u3", idfv: "V3"),
            Fixture.signup("2026-11-10T09:00:00Z", "u4", idfa: "A4"),
            Fixture.signup("2026-11-10T09:00:00Z", "u5", idfa: "00000000-0000-0000-0000-000000000000"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,by_appsflyer,C2,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,by_cuid,C1,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,by_idfa,C4,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,by_idfv,C3,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,zero_idfa,C5,1,0,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario) == ["customer_user_id": 1, "appsflyer_id": 1, "idfv": 1, "idfa": 1, "unattributed": 1])
    }

    @Test("an IDFV or IDFA joins in either case, as a UUID does: an app server that keeps it lowercase still finds AppsFlyer's uppercase install; near miss: another id does not")
    func deviceIDsJoinInEitherCase() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "V", idfv: "2CD000E2-53E3-42F1-BBEB-3AEC0586E232"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "A", idfa: "931C586B-7429-4DD0-914D-BE67435210DD"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "L", idfv: "8da0aa6e-509e-45bd-8c28-1c288e4d0158"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "N", idfv: "B7DDF51A-E73A-40CD-85D4-BF51CB4D1724"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: "2cd000e2-53e3-42f1-bbeb-3aec0586e232"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2", idfa: "931c586b-7429-4dd0-914d-be67435210dd"),
            // AppsFlyer's row lowercase, the app's uppercase.
            Fixture.signup("2026-11-10T09:00:00Z", "u3", idfv: "8DA0AA6E-509E-45BD-8C28-1C288E4D0158"),
            // The near miss: one digit differs.
            Fixture.signup("2026-11-10T09:00:00Z", "u4", idfv: "b7ddf51a-e73a-40cd-85d4-bf51cb4d1725"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,A,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,Facebook Ads,L,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,Facebook Ads,N,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,Facebook Ads,V,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario) == ["customer_user_id": 0, "appsflyer_id": 0, "idfv": 2, "idfa": 1, "unattributed": 1])
    }

    @Test("the keys are tried in order: Customer User ID, then AppsFlyer ID, then IDFV, then IDFA", arguments: [
        ("u1", "by_cuid", "customer_user_id"),
        ("u2", "by_appsflyer", "appsflyer_id"),
        ("u3", "by_idfv", "idfv"),
        ("u4", "by_idfa", "idfa"),
    ])
    func keyPriority(userID: String, winner: String, key: String) throws {
        let scenario = try Scenario()
        // Four installs, each reachable by one key only; sign-ups name only the keys from `key` down.
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_cuid", campaign: "C", appsflyerID: "afC", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_appsflyer", campaign: "C", appsflyerID: "afB"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_idfv", campaign: "C", appsflyerID: "afV", idfv: "V1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_idfa", campaign: "C", appsflyerID: "afA", idfa: "A1"),
        ])
        let keys = ["customer_user_id", "appsflyer_id", "idfv", "idfa"]
        let from = try #require(keys.firstIndex(of: key))
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", userID, idfv: from <= 2 ? "V1" : nil, idfa: "A1", appsflyerID: from <= 1 ? "afB" : nil),
        ])
        _ = try scenario.run(asOf: asOf)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        #expect(rows.filter { $0["registrations"] == "1" }.map { $0["media_source"] } == [winner])
        var expected = Dictionary(uniqueKeysWithValues: (keys + ["unattributed"]).map { ($0, 0) })
        expected[key] = 1
        #expect(try Fixture.matchedBy(scenario) == expected)
    }

    @Test("the user's install is the earliest joined install at or before sign-up; later installs are ignored")
    func earliestInstallBeforeSignUp() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-05 08:00:00", mediaSource: "early", campaign: "C", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-08 08:00:00", mediaSource: "middle", campaign: "C", appsflyerID: "af2", cuid: "u1"),
            // After the sign-up of u1 (a reinstall): never u1's install.
            Fixture.MMPRow(time: "2026-11-12 08:00:00", mediaSource: "late", campaign: "C", appsflyerID: "af3", cuid: "u1"),
            // u2's only install comes after its sign-up, so u2 is unattributed.
            Fixture.MMPRow(time: "2026-11-12 08:00:00", mediaSource: "late", campaign: "C", appsflyerID: "af4", cuid: "u2"),
            // The sign-up second itself counts as "at or before".
            Fixture.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "same_second", campaign: "C", appsflyerID: "af5", cuid: "u3"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2"),
            Fixture.signup("2026-11-10T09:00:00Z", "u3"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-05,early,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-08,middle,C,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,same_second,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-12,late,C,2,0,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario)["customer_user_id"] == 2)
        #expect(try Fixture.matchedBy(scenario)["unattributed"] == 1)
    }

    @Test("a Customer User ID on any MMP event of an install joins the user to that install")
    func customerUserIDOnLaterEvent() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1"),
            Fixture.MMPRow(time: "2026-11-10 09:05:00", eventName: "af_complete_registration", mediaSource: "googleadwords_int", campaign: "C",
                           appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,C,1,1,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario)["customer_user_id"] == 1)
    }

    @Test("a user whose Customer User ID is seen with several AppsFlyer IDs joins the earliest install of any of them")
    func customerUserIDWithSeveralAppsflyerIDs() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            // u1's first link is to af1, installed last; the earliest install is af3's, linked third
            // (and twice), with af2's between. u2 is linked to af2 only: it joins af2's install, never af3's.
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "first_linked", campaign: "C", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-06 08:00:00", mediaSource: "second_linked", campaign: "C", appsflyerID: "af2"),
            Fixture.MMPRow(time: "2026-11-04 08:00:00", mediaSource: "third_linked", campaign: "C", appsflyerID: "af3"),
            Fixture.MMPRow(time: "2026-11-10 09:05:00", eventName: "af_login", appsflyerID: "af2", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 09:06:00", eventName: "af_login", appsflyerID: "af3", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 09:07:00", eventName: "af_login", appsflyerID: "af3", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 09:08:00", eventName: "af_login", appsflyerID: "af2", cuid: "u2"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"), Fixture.signup("2026-11-10T09:00:00Z", "u2"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-04,third_linked,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-06,second_linked,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,first_linked,C,1,0,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario)["customer_user_id"] == 2)
    }

    @Test("a placeholder Customer User ID on every device's rows links each AppsFlyer ID once, in the order first seen; near miss: another user's links stay theirs")
    func placeholderCustomerUserID() {
        var links = AttributionReport.LinkedAppsflyerIDs()
        let placeholder = RowFingerprint("0"), other = RowFingerprint("u1")
        let devices = (0..<5_000).map { RowFingerprint("af\($0)") }
        // Every device's install and a later event carry the placeholder; u1 logs in on two of them.
        for device in devices { links.link(placeholder, device) }
        for device in devices.reversed() { links.link(placeholder, device) }
        links.link(other, devices[7])
        links.link(other, devices[3])
        links.link(other, devices[7])
        var linked: [RowFingerprint] = []
        links.forEach(of: placeholder) { linked.append($0) }
        #expect(linked == devices)
        var own: [RowFingerprint] = []
        links.forEach(of: other) { own.append($0) }
        #expect(own == [devices[7], devices[3]])
    }

    // MARK: - Buckets

    @Test("organic (empty, null, Organic), restricted and unattributed are their own buckets")
    func buckets() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "", campaign: "", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 08:10:00", mediaSource: "Organic", campaign: "", appsflyerID: "af2", cuid: "u2"),
            Fixture.MMPRow(time: "2026-11-10 08:20:00", mediaSource: "null", campaign: "", appsflyerID: "af3", cuid: "u3"),
            Fixture.MMPRow(time: "2026-11-10 08:30:00", mediaSource: "restricted", campaign: "", appsflyerID: "af4", cuid: "u4"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2"),
            Fixture.signup("2026-11-10T09:00:00Z", "u3"),
            Fixture.signup("2026-11-10T09:00:00Z", "u4"),
            Fixture.signup("2026-11-11T09:00:00Z", "u5"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,organic,,3,3,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,restricted,,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-11,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
        ])
    }

    @Test("a retargeting install is no install, and a repeated MMP row counts once")
    func retargetingAndRepeats() throws {
        let scenario = try Scenario()
        let install = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1", cuid: "u1")
        try Fixture.mmp(scenario, [
            install,
            install,  // the export repeated the row
            Fixture.MMPRow(time: "2026-11-09 08:00:00", mediaSource: "googleadwords_int", campaign: "Lapsed", appsflyerID: "af2", cuid: "u2",
                           retargeting: true),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.attributionSummary(scenario)["install_rows"] as? Int == 1)
    }

    @Test("an install repeated after a retargeting copy of itself is that copy, no install; a repeated login links its ids once")
    func repeatsOfRetargetingAndOfLinks() throws {
        let scenario = try Scenario()
        let lapsed = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "Lapsed", appsflyerID: "af1",
                                    cuid: "u1", retargeting: true)
        // The same AppsFlyer ID, event name, time and value: a repeat of the retargeting row, which came first.
        var repeated = lapsed
        repeated.campaign = "C"
        repeated.retargeting = false
        // Near miss: another device's install at the same moment counts.
        let other = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af3", cuid: "u3")
        // An install naming no user, whose user only a login names, sent twice.
        let install = Fixture.MMPRow(time: "2026-11-10 07:00:00", mediaSource: "facebook", campaign: "D", appsflyerID: "af4")
        let login = Fixture.MMPRow(time: "2026-11-10 09:30:00", eventName: "af_login", appsflyerID: "af4", cuid: "u4",
                                   installTime: "2026-11-10 07:00:00")
        try Fixture.mmp(scenario, [lapsed, repeated, other, install, login, login])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u3"),
            Fixture.signup("2026-11-10T09:00:00Z", "u4"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,facebook,D,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,googleadwords_int,C,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.attributionSummary(scenario)["install_rows"] as? Int == 2)
    }

    @Test("an MMP row repeated across files counts once, as the file first in path order has it, whichever night each file arrives")
    func repeatAcrossFilesAndNights() throws {
        let first = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "First", appsflyerID: "af1", cuid: "u1")
        // The same row as a later export spells its campaign: a repeat, whatever its other cells say.
        var repeated = first
        repeated.campaign = "Repeat"
        // Near miss: the same device, name and time with another event value is another row.
        var other = first
        other.campaign = "Other"
        other.eventValue = #"{"af_content_id":"x"}"#
        let later = [Fixture.mmpHeader, repeated.csv, other.csv]
        let nights = try Scenario()
        try nights.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try nights.write("attribution/b.csv", later)
        _ = try nights.run(asOf: asOf)
        #expect(try Fixture.lines(nights.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,Other,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,googleadwords_int,Repeat,1,1,0,0,0,0,0,0,,,,0,,,",
        ])
        // The earlier file arrives a night late: its copy wins, as in a rebuild from both files.
        try nights.write("attribution/a.csv", [Fixture.mmpHeader, first.csv])
        _ = try nights.run(asOf: asOf)
        let expected = [
            Self.header,
            "2026-11-10,googleadwords_int,First,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,googleadwords_int,Other,1,0,0,0,0,0,0,0,,,,0,,,",
        ]
        #expect(try Fixture.lines(nights.output("attribution.csv")) == expected)
        let rebuild = try Scenario()
        try rebuild.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try rebuild.write("attribution/b.csv", later)
        try rebuild.write("attribution/a.csv", [Fixture.mmpHeader, first.csv])
        _ = try rebuild.run(asOf: asOf)
        #expect(try Fixture.lines(rebuild.output("attribution.csv")) == expected)
        for scenario in [nights, rebuild] {
            #expect(try scenario.open().scalar("""
                SELECT f.path || ':' || i.line FROM fct_user_installs i JOIN files f USING (file_id) WHERE i.user_id = 'u1'
                """) == .text("attribution/a.csv:2"))
            #expect(try Fixture.attributionSummary(scenario)["install_rows"] as? Int == 2)
        }
    }

    @Test("a night reads the earlier MMP files as the store counted them, and counts the rows of its new file against them")
    func earlierFilesReadAsCounted() throws {
        let install = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1")
        let login = Fixture.MMPRow(time: "2026-11-10 08:30:00", eventName: "af_login", appsflyerID: "af1", cuid: "u1")
        let claim = Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1", revenueUSD: "9.99")
        // The next night's export repeats the install (not counted again) and brings a new one.
        var repeated = install
        repeated.campaign = "Repeat"
        let second = Fixture.MMPRow(time: "2026-11-11 08:00:00", mediaSource: "Facebook Ads", campaign: "F", appsflyerID: "af2", cuid: "u2")
        let nights = try Scenario(), rebuild = try Scenario()
        for scenario in [nights, rebuild] {
            try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1"), Fixture.signup("2026-11-11T09:00:00Z", "u2")])
            try scenario.write("receipts/r.jsonl", [Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 9990)])
            try scenario.write("attribution/a.csv", [Fixture.mmpHeader, install.csv, login.csv, claim.csv])
        }
        _ = try nights.run(asOf: asOf)
        // What the store counted of a.csv is all a night reads of it: its rows could be gone.
        let database = try nights.open()
        #expect(try database.scalar("SELECT count(*) FROM fct_mmp_segments") == .integer(1))
        try database.execute("DELETE FROM raw_mmp__events WHERE file_id = (SELECT file_id FROM files WHERE path = 'attribution/a.csv')")
        for scenario in [nights, rebuild] { try scenario.write("attribution/b.csv", [Fixture.mmpHeader, repeated.csv, second.csv]) }
        _ = try nights.run(asOf: asOf)
        _ = try rebuild.run(asOf: asOf)
        let expected = [
            Self.header,
            "2026-11-10,googleadwords_int,C,1,1,1,9.99,9.99,9.99,9.99,0,,,,9.99,,,9.99",
            "2026-11-11,Facebook Ads,F,1,1,0,0,0,0,0,0,,,,0,,,",
        ]
        #expect(try Fixture.lines(rebuild.output("attribution.csv")) == expected)
        #expect(try Fixture.lines(nights.output("attribution.csv")) == expected)
        #expect(try nights.open().scalar("SELECT count(*) FROM fct_mmp_segments") == .integer(2))
        #expect(try Fixture.attributionSummary(nights)["install_rows"] as? Int == 2)
    }

    @Test("a night keeps of its new MMP file what a full rebuild keeps: no repeated install, no link an earlier file made, every new link")
    func nightSegmentIsTheRebuilds() throws {
        let install = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1")
        let login = Fixture.MMPRow(time: "2026-11-10 08:30:00", eventName: "af_login", appsflyerID: "af1", cuid: "u1")
        let purchase = Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1", revenueUSD: "9.99")
        // The next night's file: the install and the purchase again, the first login's link made again by
        // another event, and near misses: the purchase a second later, a login with a new pair of ids.
        var repeated = install
        repeated.campaign = "Repeat"
        let relink = Fixture.MMPRow(time: "2026-11-11 07:00:00", eventName: "af_open", appsflyerID: "af1", cuid: "u1")
        var later = purchase
        later.time = "2026-11-10 12:00:01"
        let newLink = Fixture.MMPRow(time: "2026-11-11 07:30:00", eventName: "af_login", appsflyerID: "af2", cuid: "u1")
        let nights = try Scenario(), rebuild = try Scenario()
        for scenario in [nights, rebuild] { try scenario.write("attribution/a.csv", [Fixture.mmpHeader, install.csv, login.csv, purchase.csv]) }
        _ = try nights.run(asOf: asOf)
        for scenario in [nights, rebuild] {
            try scenario.write("attribution/b.csv", [Fixture.mmpHeader, repeated.csv, purchase.csv, relink.csv, later.csv, newLink.csv])
        }
        _ = try nights.run(asOf: asOf)
        _ = try rebuild.run(asOf: asOf)
        func kept(_ scenario: Scenario) throws -> [String: [String]] {
            var kept: [String: [String]] = [:]
            try scenario.open().forEach("SELECT f.path, s.file_id, s.data FROM fct_mmp_segments s JOIN files f USING (file_id)") { stored in
                let segment = MMPSegment(fileID: stored.int(1), chain: RowFingerprint(), data: stored.withText(2) { Array($0) })
                try segment.forEachRow { row in
                    // A link keeps only its two ids.
                    let event = row.isNull(MMPEventColumn.eventName) ? "link" : row.string(MMPEventColumn.eventName) + " " + row.string(MMPEventColumn.eventWallMs)
                    kept[stored.string(0), default: []].append(event + " " + (row.optionalString(MMPEventColumn.customerUserID) ?? "-"))
                }
            }
            return kept
        }
        let expected = try kept(rebuild)
        #expect(expected["attribution/b.csv"] == ["af_purchase 1794312001000 u1", "link u1"])
        #expect(try kept(nights) == expected)
    }

    @Test("a file forgotten from among the MMP files has the files after it counted again: a repeat it held counts where it is next found")
    func forgottenFileRecountsTheLaterOnes() throws {
        let first = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "A", appsflyerID: "af1")
        let install = Fixture.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "googleadwords_int", campaign: "B", appsflyerID: "af2")
        var repeated = install
        repeated.campaign = "C"
        let other = Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af3")
        let nights = try Scenario(), rebuild = try Scenario()
        for scenario in [nights, rebuild] {
            try scenario.write("attribution/a.csv", [Fixture.mmpHeader, first.csv])
            try scenario.write("attribution/c.csv", [Fixture.mmpHeader, repeated.csv, other.csv])
        }
        try nights.write("attribution/b.csv", [Fixture.mmpHeader, install.csv])
        _ = try nights.run(asOf: asOf)
        #expect(try Fixture.lines(nights.output("attribution.csv")).filter { $0.contains(",C,") } == [
            "2026-11-10,googleadwords_int,C,1,0,0,0,0,0,0,0,,,,0,,,",
        ])
        try FileManager.default.removeItem(atPath: nights.input + "/attribution/b.csv")
        #expect(try StoredFiles.forget(paths: ["attribution/b.csv"], in: nights.open()).isEmpty)
        _ = try nights.run(asOf: asOf)
        _ = try rebuild.run(asOf: asOf)
        let expected = [
            Self.header,
            "2026-11-10,googleadwords_int,A,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,googleadwords_int,C,2,0,0,0,0,0,0,0,,,,0,,,",
        ]
        #expect(try Fixture.lines(rebuild.output("attribution.csv")) == expected)
        #expect(try Fixture.lines(nights.output("attribution.csv")) == expected)
    }

    @Test("a night whose sign-up claims an install, whose late purchase moves a payer's sign-up before their install, and whose refund lands in a cohort writes what a full rebuild writes; a night that changes no match leaves attribution.csv as it was, byte for byte")
    func nightsThatChangeMatches() throws {
        let installs = [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_idfv", campaign: "V", appsflyerID: "af1", idfv: "V1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "by_cuid", campaign: "C", appsflyerID: "af2", cuid: "u2"),
            Fixture.MMPRow(time: "2026-11-11 08:00:00", mediaSource: "payer", campaign: "P", appsflyerID: "af3", cuid: "u3"),
        ]
        // Night 1: u2 signs up and pays; u3 never signs up, so signs up at their first purchase, after their install.
        func night1(_ scenario: Scenario) throws {
            try scenario.write("attribution/a.csv", [Fixture.mmpHeader] + installs.map(\.csv))
            try scenario.write("registrations/r1.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u2")])
            try scenario.write("receipts/r1.jsonl", [
                Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u2", price: 9990),
                Fixture.purchase("t2", at: "2026-11-12T12:00:00Z", by: "u3", price: 4990),
            ])
        }
        // Night 2: u1 signs up with af1's IDFV and claims that install; a late receipt moves u3's first purchase
        // (their sign-up) before their install, so they are no longer its user; Apple refunds u2's purchase.
        func night2(_ scenario: Scenario) throws {
            try scenario.write("registrations/r2.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: "V1")])
            try scenario.write("receipts/r2.jsonl", [Fixture.purchase("t3", at: "2026-11-10T12:00:00Z", by: "u3", price: 990)])
            try scenario.write("notifications/n2.jsonl", [
                Line.notification("REFUND", uuid: "n1", signed: "2026-11-14T00:00:01Z",
                                  transaction: RevenueReportTests.Fixture.v2("t1", "gems300", purchase: "2026-11-10T12:00:00Z", price: 9990,
                                                                             revocation: "2026-11-14T00:00:00Z")),
            ])
        }
        // Night 3, the near miss: u2 signs up again later and logs in on a new device that has no install.
        func night3(_ scenario: Scenario) throws {
            try scenario.write("registrations/r3.jsonl", [Fixture.signup("2026-11-20T09:00:00Z", "u2", idfv: "V9")])
            try scenario.write("attribution/b.csv", [
                Fixture.mmpHeader, Fixture.MMPRow(time: "2026-11-20 09:05:00", eventName: "af_login", appsflyerID: "af9", cuid: "u2").csv,
            ])
        }
        func userInstalls(_ scenario: Scenario) throws -> [String] {
            var rows: [String] = []
            try scenario.open().forEach("""
                SELECT i.user_id, i.matched_by, coalesce(f.path || ':' || i.line, '-') FROM fct_user_installs i LEFT JOIN files f USING (file_id)
                ORDER BY i.user_id
                """) { rows.append([$0.string(0), $0.string(1), $0.string(2)].joined(separator: " ")) }
            return rows
        }
        let nights = try Scenario()
        try night1(nights)
        _ = try nights.run(asOf: asOf)
        #expect(try userInstalls(nights) == ["u2 customer_user_id attribution/a.csv:3", "u3 customer_user_id attribution/a.csv:4"])

        try night2(nights)
        _ = try nights.run(asOf: asOf)
        let rebuild = try Scenario()
        try night1(rebuild)
        try night2(rebuild)
        _ = try rebuild.run(asOf: asOf)
        #expect(try Fixture.lines(rebuild.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,by_cuid,C,1,1,1,9.99,9.99,9.99,9.99,9.99,,,,0,,,9.99",
            "2026-11-10,by_idfv,V,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,0,1,0.99,5.98,5.98,5.98,0,,,,0,,,5.98",
            "2026-11-11,payer,P,1,0,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try nights.output("attribution.csv") == rebuild.output("attribution.csv"))
        #expect(try userInstalls(nights) == ["u1 idfv attribution/a.csv:2", "u2 customer_user_id attribution/a.csv:3", "u3 unattributed -"])
        #expect(try userInstalls(nights) == userInstalls(rebuild))

        let before = try nights.output("attribution.csv")
        try night3(nights)
        _ = try nights.run(asOf: asOf)
        #expect(try nights.output("attribution.csv") == before)
        #expect(try userInstalls(nights) == userInstalls(rebuild))
        try night3(rebuild)
        _ = try rebuild.run(asOf: asOf)
        #expect(try nights.output("attribution.csv") == rebuild.output("attribution.csv"))
    }

    @Test("a user who signed up more than once counts once, by the earliest sign-up; at an equal time, the first in file order")
    func earliestSignup() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "A", idfv: "V1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "B", idfv: "V2"),
        ])
        // b.jsonl's sign-up ties a.jsonl's in time and comes later in file order; c.jsonl's is later in time.
        try scenario.write("registrations/b.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: "V2")])
        try scenario.write("registrations/a.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: "V1")])
        try scenario.write("registrations/c.jsonl", [Fixture.signup("2026-11-10T08:30:00Z", "u2", idfv: "V2"),
                                                       Fixture.signup("2026-11-10T07:00:00Z", "u2")])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,A,1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,googleadwords_int,B,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-11-10,unattributed,,0,1,0,0,0,0,0,0,,,,0,,,",
        ])
        let installs = try scenario.open()
        #expect(try installs.scalar("SELECT campaign FROM fct_user_installs WHERE user_id = 'u1'") == .text("A"))
        // u2's earliest sign-up (07:00) names no device and precedes every install: unattributed.
        #expect(try installs.scalar("SELECT matched_by FROM fct_user_installs WHERE user_id = 'u2'") == .text("unattributed"))
    }

    @Test("install days are days in --tz")
    func installDayInZone() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 20:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T20:30:00Z", "u1")])
        _ = try scenario.run(asOf: asOf, zone: "Asia/Tokyo")
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-11,googleadwords_int,C,1,1,0,0,0,0,0,0,,,,0,,,",
        ])
    }

    @Test("MMP times carry no offset and are read in --mmp-tz before joining and dating installs")
    func mmpTimeZone() throws {
        let scenario = try Scenario()
        // 08:00 in Tokyo is 23:00 UTC the day before, 30 minutes before the sign-up.
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-09T23:30:00Z", "u1")])
        _ = try Pipeline.run(RunOptions(
            input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(asOfMs: Line.ms(asOf), mmpZone: try #require(Zone("Asia/Tokyo"))),
            report: ReportSettings(outFolder: scenario.out)), progress: nil)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-09,googleadwords_int,C,1,1,0,0,0,0,0,0,,,,0,,,",
        ])
    }

    @Test("an MMP time the --mmp-tz skips (Santiago's midnight on 2026-09-06) installs on the day it names, not the day before")
    func mmpTimeInSkippedHour() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-09-05 23:30:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af1"),
            // Clocks go from 00:00 to 01:00: 00:30 is never shown, and reads as 01:30 (-03), 04:30Z.
            Fixture.MMPRow(time: "2026-09-06 00:30:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af2"),
            Fixture.MMPRow(time: "2026-09-06 01:30:00", mediaSource: "googleadwords_int", campaign: "C", appsflyerID: "af3"),
        ])
        let santiago = try #require(Zone("America/Santiago"))
        _ = try Pipeline.run(RunOptions(
            input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(asOfMs: Line.ms(asOf), mmpZone: santiago),
            report: ReportSettings(outFolder: scenario.out, zone: santiago)), progress: nil)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-09-05,googleadwords_int,C,1,0,0,0,0,0,0,0,,,,0,,,",
            "2026-09-06,googleadwords_int,C,2,0,0,0,0,0,0,0,,,,0,,,",
        ])
    }

    // MARK: - Revenue windows and maturity

    @Test("revenue_d0/d7/d30 are cumulative over 24-hour periods after install, with exact boundaries; ROAS divides by spend")
    func revenueWindows() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "googleadwords_int", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T10:30:00Z", "u1")])
        try scenario.write("receipts/r.jsonl", [
            Fixture.purchase("t1", at: "2026-11-11T09:59:00Z", by: "u1", price: 1000),   // 23 h 59 m after install: D0
            Fixture.purchase("t2", at: "2026-11-11T10:00:00Z", by: "u1", price: 2000),   // 24 h 00 m: not D0, D7
            Fixture.purchase("t3", at: "2026-11-18T09:59:59Z", by: "u1", price: 4000),   // 8 days less a second: D7
            Fixture.purchase("t4", at: "2026-11-18T10:00:00Z", by: "u1", price: 8000),   // 8 days: not D7, D30
            Fixture.purchase("t5", at: "2026-12-11T09:59:59Z", by: "u1", price: 16000),  // 31 days less a second: D30
            Fixture.purchase("t6", at: "2026-12-11T10:00:00Z", by: "u1", price: 32000),  // 31 days: only in revenue_usd
        ])
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,googleadwords_int,C1,100,USD"])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,C1,1,1,1,1,7,31,63,0,100,0.07,0.63,0,100,100,63",
        ])
    }

    @Test("revenue_dN cells stay empty while the cohort is younger than N+1 days at as-of", arguments: [
        ("2026-11-11T09:59:59Z", ",,", ""),
        ("2026-11-11T10:00:00Z", "5,,", ""),
        ("2026-11-18T09:59:59Z", "5,,", ""),
        ("2026-11-18T10:00:00Z", "5,5,", "0.05"),
        ("2026-12-11T09:59:59Z", "5,5,", "0.05"),
        ("2026-12-11T10:00:00Z", "5,5,5", "0.05"),
    ])
    func immatureCohorts(asOf: String, windows: String, roasD7: String) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "googleadwords_int", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T10:30:00Z", "u1")])
        try scenario.write("receipts/r.jsonl", [Fixture.purchase("t1", at: "2026-11-10T11:00:00Z", by: "u1", price: 5000)])
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,googleadwords_int,C1,100,USD"])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,googleadwords_int,C1,1,1,1,\(windows),5,0,100,\(roasD7),0.05,0,100,100,5",
        ])
    }

    @Test("a cohort with spend alone matures from its day's local midnight, on the days Sydney's clocks change too", arguments: [
        // 2026-04-05 starts at 00:00 AEDT (+11), 2026-04-04T13:00Z, and lasts 25 hours.
        ("2026-04-05", "2026-04-05T12:59:59Z", ",,"),
        ("2026-04-05", "2026-04-05T13:00:00Z", "0,,"),
        // 2026-10-04 starts at 00:00 AEST (+10), 2026-10-03T14:00Z, and lasts 23 hours.
        ("2026-10-04", "2026-10-04T13:59:59Z", ",,"),
        ("2026-10-04", "2026-10-04T14:00:00Z", "0,,"),
    ])
    func spendOnlyCohortMaturesFromLocalMidnight(day: String, asOf: String, windows: String) throws {
        let scenario = try Scenario()
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "\(day),googleadwords_int,C1,100,USD"])
        _ = try scenario.run(asOf: asOf, zone: "Australia/Sydney")
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "\(day),googleadwords_int,C1,0,0,0,\(windows),0,0,100,,0,0,,,",
        ])
    }

    // MARK: - Spend

    @Test("spend joins on day, media source and campaign in USD; spend with no installs keeps its row")
    func spendWithoutInstalls() throws {
        let scenario = try Scenario()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,EUR,1.1", "2026-11-01,KRW,0.00075"])
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "FB_KR", appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try scenario.write("spend/s.csv", [
            "date,media_source,campaign,spend,currency",
            "2026-11-10,Facebook Ads,FB_KR,200000,KRW",
            "2026-11-10,Facebook Ads,FB_DE,50,EUR",     // same day and source, another campaign, no installs
            "2026-11-12,Facebook Ads,FB_KR,20000,KRW",  // same campaign, a day with no installs
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,FB_DE,0,0,0,0,0,0,0,0,55,0,0,0,,,",
            "2026-11-10,Facebook Ads,FB_KR,1,1,0,0,0,0,0,0,150,0,0,0,150,,",
            "2026-11-12,Facebook Ads,FB_KR,0,0,0,0,0,0,0,0,15,0,0,0,,,",
        ])
    }

    @Test("a spend row's empty campaign (None, N/A, null) joins the installs whose campaign is empty, as its media source does")
    func spendEmptyCampaign() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            // AppsFlyer's API exports write None for a missing campaign: the install's campaign is empty.
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "None", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "tiktokglobal_int", campaign: "", appsflyerID: "af2", cuid: "u2"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1"), Fixture.signup("2026-11-10T09:00:00Z", "u2")])
        try scenario.write("spend/s.csv", [
            "date,media_source,campaign,spend,currency",
            "2026-11-10,Facebook Ads,None,20,USD",
            "2026-11-10,tiktokglobal_int,N/A,10,USD",
            // Near miss: a campaign that only looks empty-ish is a campaign of its own.
            "2026-11-10,tiktokglobal_int,None_US,5,USD",
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,,1,1,0,0,0,0,0,0,20,0,0,0,20,,",
            "2026-11-10,tiktokglobal_int,,1,1,0,0,0,0,0,0,10,0,0,0,10,,",
            "2026-11-10,tiktokglobal_int,None_US,0,0,0,0,0,0,0,0,5,0,0,0,,,",
        ])
    }

    @Test("spend two files give for one day, media source and campaign is all counted, and a warning names a line of each; rows of one file, or of two files on other days or sources, are not named")
    func spendFromTwoFiles() throws {
        let scenario = try Scenario()
        let header = "date,media_source,campaign,spend,currency"
        try scenario.write("spend/2026-11.csv", [
            header,
            "2026-11-10,Facebook Ads,FB_KR,100,USD",
            "2026-11-10,Facebook Ads,FB_KR,50,USD",  // one export split by country: not named
            "2026-11-11,Facebook Ads,FB_KR,70,USD",
            "2026-11-10,googleadwords_int,None,10,USD",
        ])
        // A corrected export of the 10th beside the month's; its 12th and its other source do not overlap.
        try scenario.write("spend/2026-11-10-fixed.csv", [
            header,
            "2026-11-12,Facebook Ads,FB_KR,30,USD",
            "2026-11-10,Facebook Ads,FB_KR,120,USD",
            "2026-11-10,tiktokglobal_int,TT_1,5,USD",
            "2026-11-10,googleadwords_int,,9,USD",
        ])
        let result = try scenario.run(asOf: asOf)
        let warnings = [
            "spend for 2026-11-10, Facebook Ads, FB_KR comes from two files, spend/2026-11-10-fixed.csv:3 and spend/2026-11.csv:2: all their lines are counted",
            "spend for 2026-11-10, googleadwords_int, no campaign comes from two files, spend/2026-11-10-fixed.csv:5 and spend/2026-11.csv:5: all their lines are counted",
        ]
        #expect(result.report.warnings == warnings)
        // The page says so too, to whoever reads it rather than the nightly log.
        let page = try scenario.output("report.html")
        #expect(warnings.allSatisfy { page.contains("<p class=\"warn\">Inputs: \(HTML.escape($0)).</p>") })
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,FB_KR,0,0,0,0,0,0,0,0,270,0,0,0,,,",
            "2026-11-10,googleadwords_int,,0,0,0,0,0,0,0,0,19,0,0,0,,,",
            "2026-11-10,tiktokglobal_int,TT_1,0,0,0,0,0,0,0,0,5,0,0,0,,,",
            "2026-11-11,Facebook Ads,FB_KR,0,0,0,0,0,0,0,0,70,0,0,0,,,",
            "2026-11-12,Facebook Ads,FB_KR,0,0,0,0,0,0,0,0,30,0,0,0,,,",
        ])
    }

    @Test("a young spend-only row has empty revenue windows like any young cohort")
    func youngSpendOnlyRow() throws {
        let scenario = try Scenario()
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,Facebook Ads,FB_DE,50,USD"])
        _ = try scenario.run(asOf: "2026-11-10T23:00:00Z")
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,FB_DE,0,0,0,,,,0,0,50,,0,0,,,",
        ])
    }

    // MARK: - The MMP's own claims

    @Test("mmp_revenue_usd sums the MMP's af_purchase claims: Event Revenue USD, else Event Revenue at the day's rate, else Event Value af_revenue")
    func mmpRevenue() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066", "2026-11-01,KRW,0.00075"])
        let claim = Fixture.MMPRow(time: "2026-11-10 12:00:05", eventName: "af_purchase", mediaSource: "googleadwords_int", campaign: "C1",
                                   appsflyerID: "af1", cuid: "u1", eventValue: "{\"af_revenue\":\"4.99\",\"af_currency\":\"USD\"}",
                                   revenue: "4.99", currency: "USD", revenueUSD: "4.99")
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "googleadwords_int", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "Facebook Ads", campaign: "C2", appsflyerID: "af2"),
            claim,
            claim,  // repeated with the same AppsFlyer ID, Event Name, Event Time and Event Value: one claim
            Fixture.MMPRow(time: "2026-11-12 12:00:00", eventName: "af_purchase", mediaSource: "googleadwords_int", campaign: "C1",
                           appsflyerID: "af1", cuid: "u1", eventValue: "{}", revenue: "1000", currency: "KRW"),
            // No Customer User ID and empty revenue columns: joined by AppsFlyer ID, priced from Event Value.
            Fixture.MMPRow(time: "2026-11-11 12:00:00", eventName: "af_purchase", mediaSource: "Facebook Ads", campaign: "C2",
                           appsflyerID: "af2", eventValue: "{\"af_revenue\":\"800\",\"af_currency\":\"JPY\",\"af_content_id\":\"gems300\"}"),
            // Near misses: a retargeting claim of u1's (retargeting claims no revenue), and the claim of a
            // user no registration or purchase names (only reported users' claims count).
            Fixture.MMPRow(time: "2026-11-10 13:00:00", eventName: "af_purchase", mediaSource: "googleadwords_int", campaign: "R",
                           appsflyerID: "af1", cuid: "u1", retargeting: true, eventValue: "{}", revenue: "10", currency: "USD", revenueUSD: "10"),
            Fixture.MMPRow(time: "2026-11-10 13:00:00", eventName: "af_purchase", mediaSource: "googleadwords_int", campaign: "C1",
                           appsflyerID: "af7", cuid: "u7", eventValue: "{}", revenue: "10", currency: "USD", revenueUSD: "10"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T10:30:00Z", "u1"),
            Fixture.signup("2026-11-10T10:30:00Z", "u2", appsflyerID: "af2"),
        ])
        try scenario.write("receipts/r.jsonl", [Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 990)])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,Facebook Ads,C2,1,1,0,0,0,0,0,0,,,,5.28,,,",
            "2026-11-10,googleadwords_int,C1,1,1,1,0.99,0.99,0.99,0.99,0,,,,5.74,,,0.99",
        ])
    }

    @Test("a claim goes to its Customer User ID when that is a reported user, else to the user its AppsFlyer ID's install was matched to")
    func mmpRevenueOfAPairOfIDs() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "A", appsflyerID: "af1", cuid: "u1"),
            // u2's own install is its earliest: the claim below links u2 to af1 as well.
            Fixture.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "src", campaign: "B", appsflyerID: "af2", cuid: "u2"),
            // A guest id no registration or purchase names, on u1's AppsFlyer ID: u1's (twice, summed).
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "guest",
                           eventValue: "{}", revenue: "2", currency: "USD", revenueUSD: "2"),
            Fixture.MMPRow(time: "2026-11-11 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "guest",
                           eventValue: "{}", revenue: "0.50", currency: "USD", revenueUSD: "0.50"),
            // u2's id on u1's AppsFlyer ID: the reported Customer User ID wins, u2's.
            Fixture.MMPRow(time: "2026-11-10 12:30:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u2",
                           eventValue: "{}", revenue: "3", currency: "USD", revenueUSD: "3"),
            // The near miss: the guest on an AppsFlyer ID no user was matched to is nobody's.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af9", cuid: "guest",
                           eventValue: "{}", revenue: "7", currency: "USD", revenueUSD: "7"),
        ])
        try scenario.write("registrations/r.jsonl", ["u1", "u2"].map { Fixture.signup("2026-11-10T10:30:00Z", $0) })
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")).dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)[14]
        } == ["2.5", "3"])
    }

    @Test("a claim no reported user takes goes to the cohort of its AppsFlyer ID's install, else of its Customer User ID's: the MMP's revenue for devices the app never saw pay shows beside 0 verified")
    func mmpRevenueOfAnInstallWithoutAUser() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,fraud_int,F,10,USD"])
        try Fixture.mmp(scenario, [
            // Installs whose devices nobody signed up on, or paid from, as the app's logs tell.
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "fraud_int", campaign: "F", appsflyerID: "af1"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "fraud_int", campaign: "G", appsflyerID: "af2"),
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "fraud_int", campaign: "H", cuid: "bot7"),
            // The MMP's purchase events of those devices: by AppsFlyer ID alone, with a Customer User ID nobody
            // reported, and by the Customer User ID alone that its install row names.
            Fixture.MMPRow(time: "2026-11-10 09:00:00", eventName: "af_purchase", appsflyerID: "af1",
                           eventValue: "{}", revenue: "99.99", currency: "USD", revenueUSD: "99.99"),
            Fixture.MMPRow(time: "2026-11-10 09:00:00", eventName: "af_purchase", appsflyerID: "af2", cuid: "bot2",
                           eventValue: "{}", revenue: "4.99", currency: "USD", revenueUSD: "4.99"),
            Fixture.MMPRow(time: "2026-11-10 09:00:00", eventName: "af_purchase", cuid: "bot7",
                           eventValue: "{}", revenue: "1.99", currency: "USD", revenueUSD: "1.99"),
            // Near miss: a claim whose ids reach no install and no reported user stays nobody's.
            Fixture.MMPRow(time: "2026-11-10 09:00:00", eventName: "af_purchase", appsflyerID: "af9", cuid: "bot9",
                           eventValue: "{}", revenue: "7", currency: "USD", revenueUSD: "7"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,fraud_int,F,1,0,0,0,0,0,0,0,10,0,0,99.99,10,,",
            "2026-11-10,fraud_int,G,1,0,0,0,0,0,0,0,,,,4.99,,,",
            "2026-11-10,fraud_int,H,1,0,0,0,0,0,0,0,,,,1.99,,,",
        ])
    }

    @Test("under --currency JPY the MMP's dollar claim is converted into yen at its day's rate, like every other amount")
    func mmpRevenueInTheReportingCurrency() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150", "2026-11-01,EUR,160"])
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "Facebook Ads", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
            // 4.99 USD claimed = 748.5 yen, rounded half-even to 748 (not 4.99 left as "yen").
            Fixture.MMPRow(time: "2026-11-10 12:00:05", eventName: "af_purchase", mediaSource: "Facebook Ads", campaign: "C1",
                           appsflyerID: "af1", cuid: "u1", eventValue: "{}", revenue: "4.70", currency: "EUR", revenueUSD: "4.99"),
            // No dollar figure: the local amount converts, 1.00 EUR = 160 yen.
            Fixture.MMPRow(time: "2026-11-11 12:00:05", eventName: "af_purchase", mediaSource: "Facebook Ads", campaign: "C1",
                           appsflyerID: "af1", cuid: "u1", eventValue: "{}", revenue: "1.00", currency: "EUR"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T10:30:00Z", "u1")])
        _ = try scenario.run(asOf: asOf, currency: "JPY")
        let rows = try Fixture.lines(scenario.output("attribution.csv"))
        #expect(rows.count == 2)
        #expect(rows.last?.split(separator: ",", omittingEmptySubsequences: false)[14] == "908")
    }

    /// u1, u2 and u3 installed from campaigns A, B and C and signed up; `claims` are their MMP purchase
    /// events. Reported in yen with a euro rate and no dollar rate, so AppsFlyer's Event Revenue USD
    /// cannot be converted. Returns each cohort's `mmp_revenue_jpy` and the run's warnings on MMP claims.
    func claimsInYenWithoutADollarRate(_ claims: [Fixture.MMPRow]) throws -> (mmpRevenue: [String], warnings: [String]) {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,EUR,160"])
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "A", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "B", appsflyerID: "af2", cuid: "u2"),
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "C", appsflyerID: "af3", cuid: "u3"),
        ] + claims)
        try scenario.write("registrations/r.jsonl", ["u1", "u2", "u3"].map { Fixture.signup("2026-11-10T10:30:00Z", $0) })
        let result = try scenario.run(asOf: asOf, currency: "JPY")
        let mmpRevenue = try Fixture.lines(scenario.output("attribution.csv")).dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)[14]
        }
        return (mmpRevenue, result.report.warnings.filter { $0.contains("MMP purchase claim") })
    }

    @Test("mmp_revenue is empty (unknown) when a claim's amount has no fx rate or no currency, never the smaller sum of the others, and a warning says why")
    func mmpRevenueWithoutARate() throws {
        let (mmpRevenue, warnings) = try claimsInYenWithoutADollarRate([
            // u1 claims 1 EUR without a dollar figure (160 yen) and 5 EUR with one: the second has no rate.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1",
                           eventValue: "{}", revenue: "1", currency: "EUR"),
            Fixture.MMPRow(time: "2026-11-10 13:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1",
                           eventValue: "{}", revenue: "5", currency: "EUR", revenueUSD: "5.40"),
            // u2 claims an amount in no currency at all: unknown too.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af2", cuid: "u2",
                           eventValue: "{}", revenue: "3"),
            // u3 (the near miss): only claims that convert, and one that claims no revenue at all.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af3", cuid: "u3",
                           eventValue: "{}", revenue: "2", currency: "EUR"),
            Fixture.MMPRow(time: "2026-11-10 13:00:00", eventName: "af_purchase", appsflyerID: "af3", cuid: "u3", eventValue: "{}"),
            // Near miss: u9 is no reported user (no install, no sign-up): its claim counts in no cohort, and is named nowhere.
            Fixture.MMPRow(time: "2026-11-11 12:00:00", eventName: "af_purchase", appsflyerID: "af9", cuid: "u9",
                           eventValue: "{}", revenue: "5", currency: "EUR", revenueUSD: "5.40"),
        ])
        #expect(mmpRevenue == ["", "", "320"])
        #expect(warnings == [
            "1 MMP purchase claim made on 2026-11-10 names no currency; its cohort's mmp_revenue_jpy is empty",
            "fx.csv has no rate into JPY for USD on or before 2026-11-10: 1 MMP purchase claim made on 2026-11-10 is left out; "
                + "its cohort's mmp_revenue_jpy is empty",
        ])
    }

    @Test("an MMP claim of 0 needs no fx rate: it leaves its cohort's mmp_revenue known, as a free purchase leaves revenue known")
    func mmpClaimOfNothingWithoutARate() throws {
        let (mmpRevenue, warnings) = try claimsInYenWithoutADollarRate([
            // u1: a trial logged as a purchase of 0 pounds, 0 dollars (no rate for either), beside 2 EUR.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1",
                           eventValue: "{}", revenue: "0", currency: "GBP", revenueUSD: "0"),
            Fixture.MMPRow(time: "2026-11-10 13:00:00", eventName: "af_purchase", appsflyerID: "af1", cuid: "u1",
                           eventValue: "{}", revenue: "2", currency: "EUR"),
            // u2: 0 in no currency at all is 0 in every one.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af2", cuid: "u2",
                           eventValue: "{}", revenue: "0"),
            // u3 (the near miss): 5 dollars with no dollar rate stays unknown.
            Fixture.MMPRow(time: "2026-11-10 12:00:00", eventName: "af_purchase", appsflyerID: "af3", cuid: "u3",
                           eventValue: "{}", revenue: "5", currency: "EUR", revenueUSD: "5.40"),
        ])
        #expect(mmpRevenue == ["320", "0", ""])
        // The claims of 0 are named in no warning; u3's is.
        #expect(warnings == [
            "fx.csv has no rate into JPY for USD on or before 2026-11-10: 1 MMP purchase claim made on 2026-11-10 is left out; "
                + "its cohort's mmp_revenue_jpy is empty",
        ])
    }

    @Test("a purchase fx.csv cannot convert adds nothing to its cohort, as revenue_daily.csv leaves its cell empty: the files still add up")
    func revenueWithoutARate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // No CHF rate.
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "A", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "src", campaign: "B", appsflyerID: "af2", cuid: "u2"),
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T10:30:00Z", "u1"), Fixture.signup("2026-11-10T10:30:00Z", "u2")])
        try scenario.write("receipts/r.jsonl", [
            // u1: 0.99 USD on day 0, then 5 CHF on day 3, which nothing converts: every window holds the 0.99.
            Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 990),
            Fixture.purchase("t2", at: "2026-11-13T12:00:00Z", by: "u1", price: 5000, currency: "CHF"),
            // u2 (the near miss): dollars only, every cell known.
            Fixture.purchase("t3", at: "2026-11-10T12:00:00Z", by: "u2", price: 1990),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            Self.header,
            "2026-11-10,src,A,1,1,1,0.99,0.99,0.99,0.99,0,,,,0,,,0.99",
            "2026-11-10,src,B,1,1,1,1.99,1.99,1.99,1.99,0,,,,0,,,1.99",
        ])
        let daily = try Fixture.table(scenario.output("revenue_daily.csv"))
        #expect(daily.map { [$0["date"], $0["currency"], $0["gross"], $0["gross_usd"]] } == [
            ["2026-11-10", "USD", "2.98", "2.98"], ["2026-11-13", "CHF", "5", ""],
        ])
        let transactions = try #require(RevenueReportTests.Fixture.summary(scenario)["transactions"] as? [String: Any])
        #expect(transactions["without_fx_rate"] as? Int == 1)
    }

    // MARK: - Cross-checks

    @Test("sum of revenue_usd equals summary revenue.gross_usd; sum of installs equals the distinct non-retargeting install rows")
    func crossChecks() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        let repeated = Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C1", appsflyerID: "af1", cuid: "u1")
        try Fixture.mmp(scenario, [
            repeated, repeated,
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "C2", appsflyerID: "af2"),
            Fixture.MMPRow(time: "2026-11-11 08:00:00", mediaSource: "", campaign: "", appsflyerID: "af3", cuid: "u3"),
            Fixture.MMPRow(time: "2026-11-11 08:00:00", mediaSource: "restricted", campaign: "", appsflyerID: "af4", idfa: "A4"),
            Fixture.MMPRow(time: "2026-11-12 08:00:00", mediaSource: "googleadwords_int", campaign: "R", appsflyerID: "af9", cuid: "u9",
                           retargeting: true),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T09:00:00Z", "u1"),
            Fixture.signup("2026-11-10T09:00:00Z", "u2", appsflyerID: "af2"),
            Fixture.signup("2026-11-11T09:00:00Z", "u3"),
            Fixture.signup("2026-11-11T09:00:00Z", "u4", idfa: "A4"),
            Fixture.signup("2026-11-12T09:00:00Z", "u5"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 4990),
            Fixture.purchase("t2", at: "2026-11-10T12:00:00Z", by: "u2", price: 800_000, currency: "JPY"),
            Fixture.purchase("t3", at: "2026-11-15T12:00:00Z", by: "u4", price: 990),
            Fixture.purchase("t5", at: "2026-11-13T12:00:00Z", by: "u5", price: 9990),
            // A paying user who never signed up lands in the unattributed cohort of the first purchase day.
            Fixture.purchase("t6", at: "2026-11-14T12:00:00Z", by: "u6", price: 990),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-16T00:00:01Z",
                              transaction: RevenueReportTests.Fixture.v2("t1", "gems300", purchase: "2026-11-10T12:00:00Z", price: 4990,
                                                                         revocation: "2026-11-16T00:00:00Z")),
        ])
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-13,googleadwords_int,C9,10,USD"])
        _ = try scenario.run(asOf: asOf)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        let summary = try RevenueReportTests.Fixture.summary(scenario)
        let revenue = try #require(summary["revenue"] as? [String: Any])
        #expect((revenue["gross_usd"] as? String).flatMap(Money.parse) == Fixture.sum(rows, "revenue_usd"))
        #expect((revenue["refunds_usd"] as? String).flatMap(Money.parse) == Fixture.sum(rows, "refunds_usd"))
        #expect(Fixture.sum(rows, "revenue_usd") == Money.parse("22.24"))
        #expect(Fixture.sum(rows, "installs") == 4)
        #expect(try Fixture.attributionSummary(scenario)["install_rows"] as? Int == 4)
        #expect(Fixture.sum(rows, "registrations") == 5)
        #expect(Fixture.sum(rows, "payers") == 5)
        #expect(try Fixture.matchedBy(scenario) == ["customer_user_id": 2, "appsflyer_id": 1, "idfv": 0, "idfa": 1, "unattributed": 2])
    }

    @Test("on sample-data, installs sum to the distinct non-retargeting install rows and users_matched_by is exact")
    func crossChecksOnSampleData() throws {
        let scenario = try Scenario()
        var options = RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out))
        options.lineRules = SampleDataTests.lineRules
        _ = try Pipeline.run(options, progress: nil)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        // sample-data/README.md: 25 install rows, none repeated, none retargeting.
        #expect(Fixture.sum(rows, "installs") == 25)
        // u_1031 paid without ever signing up: the fifth unattributed user.
        #expect(try Fixture.matchedBy(scenario) == ["customer_user_id": 22, "appsflyer_id": 2, "idfv": 1, "idfa": 1, "unattributed": 5])
    }
}

extension AttributionReportTests {
    @Test("a verified purchase whose user nobody knows still lands in a row, so revenue_usd sums to revenue.gross_usd")
    func userlessPurchaseLandsInARow() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try scenario.write("receipts/r.jsonl", [Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 990)])
        // Known only from Apple's notification: no order matched, never delivered, no receipt sent (sample-data's u_1023).
        try scenario.write("notifications/n.jsonl", [
            Line.notification("ONE_TIME_CHARGE", uuid: "n1", signed: "2026-11-11T07:30:01Z",
                              transaction: RevenueReportTests.Fixture.v2("t2", "gems300", purchase: "2026-11-11T07:30:00Z", price: 4990)),
            Line.notification("REFUND", uuid: "n2", signed: "2026-11-11T09:30:01Z",
                              transaction: RevenueReportTests.Fixture.v2("t2", "gems300", purchase: "2026-11-11T07:30:00Z", price: 4990,
                                                                         revocation: "2026-11-11T09:30:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        let revenue = try #require(try RevenueReportTests.Fixture.summary(scenario)["revenue"] as? [String: Any])
        #expect(revenue["gross_usd"] as? String == "5.98")
        #expect((revenue["gross_usd"] as? String).flatMap(Money.parse) == Fixture.sum(rows, "revenue_usd"))
        #expect((revenue["refunds_usd"] as? String).flatMap(Money.parse) == Fixture.sum(rows, "refunds_usd"))

        let sample = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: sample.databasePath, outFolder: sample.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: sample.out)), progress: nil)
        let sampleRevenue = try #require(try RevenueReportTests.Fixture.summary(sample)["revenue"] as? [String: Any])
        let sampleRows = try Fixture.table(sample.output("attribution.csv"))
        #expect((sampleRevenue["gross_usd"] as? String).flatMap(Money.parse) == Fixture.sum(sampleRows, "revenue_usd"))
    }
}

extension AttributionReportTests {
    @Test("spend in a currency fx.csv cannot convert still keeps its row")
    func spendWithoutRateKeepsItsRow() throws {
        let scenario = try Scenario()
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,Facebook Ads,FB_BR,500,BRL"])
        _ = try scenario.run(asOf: asOf)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        #expect(rows.map { [$0["install_date"], $0["media_source"], $0["campaign"], $0["installs"]] } == [["2026-11-10", "Facebook Ads", "FB_BR", "0"]])
    }

    @Test("a purchase with no price (no catalog entry, no V2 price) makes a payer and adds no revenue, as revenue_daily.csv leaves it empty")
    func purchaseWithoutPrice() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try Fixture.mmp(scenario, [Fixture.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "Facebook Ads", campaign: "FB", appsflyerID: "af1", cuid: "u1")])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:30:00Z", "u1")])
        // A StoreKit 1 receipt names no price, and the catalog does not know the product.
        try scenario.write("receipts/r.jsonl", [
            RevenueReportTests.Fixture.inAppReceipt("2026-11-10T10:00:05Z", "u1", items: [RevenueReportTests.Fixture.inApp("t9", "unknown.prod", purchase: "2026-11-10T10:00:00Z")]),
        ])
        _ = try scenario.run(asOf: asOf)
        let daily = try Fixture.table(scenario.output("revenue_daily.csv"))
        #expect(daily.map { $0["gross_usd"] } == [""])
        let row = try #require(try Fixture.table(scenario.output("attribution.csv")).first { $0["media_source"] == "Facebook Ads" })
        #expect(row["payers"] == "1")
        for column in ["revenue_d0_usd", "revenue_d7_usd", "revenue_d30_usd", "revenue_usd", "refunds_usd", "revenue_per_payer"] {
            #expect(row[column] == "0", "\(column)")
        }
        let transactions = try #require(RevenueReportTests.Fixture.summary(scenario)["transactions"] as? [String: Any])
        #expect((transactions["price_source"] as? [String: Any])?["none"] as? Int == 1)
    }
}

extension AttributionReportTests {
    @Test("spend fx.csv cannot convert is named in a warning with its first line, not only counted; spend it converts warns nothing")
    func spendWithoutRateWarning() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("spend/s.csv", [
            "date,media_source,campaign,spend,currency",
            "2026-11-10,Facebook Ads,FB_US,50,USD",
            "2026-11-10,Facebook Ads,FB_BR,500,BRL",
            "2026-11-12,Facebook Ads,FB_BR,700,BRL",
            // Near miss: a campaign that spent nothing, in a currency fx.csv has no rate for either: 0 in any currency.
            "2026-11-11,Facebook Ads,FB_AR,0,ARS",
        ])
        let result = try scenario.run(asOf: asOf)
        #expect(result.report.warnings == [
            "fx.csv has no rate into USD for BRL on or before 2026-11-12: 2 spend rows (the first spend/s.csv:3) "
                + "are left out; their cohorts' spend_usd and ROAS are empty",
        ])
        let cohorts = RevenueReportTests.Fixture.table(try scenario.output("attribution.csv"))
        #expect(cohorts.first { $0["campaign"] == "FB_AR" }?["spend_usd"] == "0")
        #expect(cohorts.first { $0["campaign"] == "FB_BR" }?["spend_usd"] == "")
    }

    @Test("cpi, cost_per_payer and revenue_per_payer share spend and revenue by head; empty with no spend, no rate or nobody to share it")
    func growthColumns() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "Facebook Ads", campaign: "FB_US", appsflyerID: "af1", cuid: "u1"),
            Fixture.MMPRow(time: "2026-11-10 08:10:00", mediaSource: "Facebook Ads", campaign: "FB_US", appsflyerID: "af2", cuid: "u2"),
            Fixture.MMPRow(time: "2026-11-10 08:20:00", mediaSource: "Facebook Ads", campaign: "FB_US", appsflyerID: "af3"),
            Fixture.MMPRow(time: "2026-11-10 08:30:00", mediaSource: "Facebook Ads", campaign: "FB_US", appsflyerID: "af4"),
            Fixture.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "Facebook Ads", campaign: "FB_BR", appsflyerID: "af5", cuid: "u5"),
            Fixture.MMPRow(time: "2026-11-10 09:30:00", mediaSource: "tiktokglobal_int", campaign: "TT", appsflyerID: "af6"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Fixture.signup("2026-11-10T08:05:00Z", "u1"), Fixture.signup("2026-11-10T08:15:00Z", "u2"), Fixture.signup("2026-11-10T09:05:00Z", "u5"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Fixture.purchase("t1", at: "2026-11-10T12:00:00Z", by: "u1", price: 9990),
            Fixture.purchase("t5", at: "2026-11-10T13:00:00Z", by: "u5", price: 4990),
        ])
        try scenario.write("spend/s.csv", [
            "date,media_source,campaign,spend,currency",
            "2026-11-10,Facebook Ads,FB_US,50,USD",
            "2026-11-10,Facebook Ads,FB_BR,500,BRL",       // fx.csv has no BRL: spend unknown
            "2026-11-10,tiktokglobal_int,TT,30,USD",      // an install, nobody paid
        ])
        _ = try scenario.run(asOf: asOf)
        let rows = try Fixture.table(scenario.output("attribution.csv"))
        #expect(rows.map { [$0["campaign"], $0["cpi"], $0["cost_per_payer"], $0["revenue_per_payer"]] } == [
            ["FB_BR", "", "", "4.99"],
            ["FB_US", "12.5", "50", "9.99"],
            ["TT", "30", "", ""],
        ])
    }
}

extension AttributionReportTests {
    /// Input builders and output readers for these tests.
    enum Fixture {
        static let mmpHeader = "Attributed Touch Type,Attributed Touch Time,Install Time,Event Time,Event Name,Event Value,Event Revenue,Event Revenue Currency,Event Revenue USD,Media Source,Channel,Campaign,Campaign ID,Adset,Ad,Country Code,AppsFlyer ID,IDFA,IDFV,Customer User ID,Platform,Is Retargeting"

        /// One AppsFlyer raw-data row; times are `yyyy-MM-dd HH:mm:ss` UTC.
        struct MMPRow {
            var time: String
            var eventName = "install"
            var mediaSource = ""
            var campaign = ""
            var appsflyerID = ""
            var idfa = ""
            var idfv = ""
            var cuid = ""
            var retargeting = false
            var eventValue = ""
            var revenue = ""
            var currency = ""
            var revenueUSD = ""
            /// For in-app events, the install they belong to (defaults to the event time).
            var installTime: String?

            var csv: String {
                let touch = mediaSource.isEmpty || mediaSource.lowercased() == "organic" ? "" : "click"
                let cells = [
                    touch, touch.isEmpty ? "" : time, installTime ?? time, time, eventName, eventValue, revenue, currency, revenueUSD,
                    mediaSource, "", campaign, "", "", "", "US", appsflyerID, idfa, idfv, cuid, "ios", retargeting ? "true" : "false",
                ]
                return cells.map(Fixture.quoted).joined(separator: ",")
            }
        }

        static func quoted(_ cell: String) -> String {
            guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return cell }
            return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }

        static func mmp(_ scenario: Scenario, _ rows: [MMPRow]) throws {
            try scenario.write("attribution/af.csv", [mmpHeader] + rows.map(\.csv))
        }

        static func signup(_ ts: String, _ userID: String, idfv: String? = nil, idfa: String? = nil, appsflyerID: String? = nil) -> String {
            var fields = "\"ts\":\"\(ts)\",\"user_id\":\"\(userID)\",\"method\":\"apple\""
            if let idfv { fields += ",\"idfv\":\"\(idfv)\"" }
            if let idfa { fields += ",\"idfa\":\"\(idfa)\"" }
            if let appsflyerID { fields += ",\"appsflyer_id\":\"\(appsflyerID)\"" }
            return "{\(fields)}"
        }

        /// A receipts line: `userID` sent a verified production purchase of `gems300` (price in milliunits).
        static func purchase(_ transactionID: String, at time: String, by userID: String, price: Int, currency: String = "USD") -> String {
            let received = Timestamp.iso8601(Line.ms(time) + 5000)
            return Line.v2Receipt(received, userID, transaction: RevenueReportTests.Fixture.v2(
                transactionID, "gems300", purchase: time, price: price, currency: currency, storefront: currency == "USD" ? "USA" : "JPN"))
        }

        static func lines(_ text: String) -> [String] { RevenueReportTests.Fixture.lines(text) }
        static func table(_ text: String) -> [[String: String]] { RevenueReportTests.Fixture.table(text) }
        static func sum(_ rows: [[String: String]], _ column: String) -> Decimal { RevenueReportTests.Fixture.sum(rows, column) }

        static func attributionSummary(_ scenario: Scenario) throws -> [String: Any] {
            try #require(try RevenueReportTests.Fixture.summary(scenario)["attribution"] as? [String: Any])
        }

        static func matchedBy(_ scenario: Scenario) throws -> [String: Int] {
            try #require(try attributionSummary(scenario)["users_matched_by"] as? [String: Int])
        }
    }
}
