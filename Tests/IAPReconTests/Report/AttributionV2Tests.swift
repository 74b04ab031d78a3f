import Foundation
import Testing
@testable import IAPRecon

/// Attribution rules contract version 2 added (CONTRACT.md §1.5, §3): API column names, the
/// Customer User ID on event rows, retargeting left out entirely, `no_user` revenue, and a
/// purchase before its install in no window.
@Suite("attribution.csv, contract v2")
struct AttributionV2Tests {
    typealias Fixture = AttributionReportTests.Fixture
    let asOf = "2026-12-31T00:00:00Z"

    @Test("an export with AppsFlyer's API column names reads like one with display names; None is empty")
    func apiColumnNames() throws {
        let scenario = try Scenario()
        try scenario.write("attribution/pull-api.csv", [
            "attributed_touch_type,install_time,event_time,event_name,event_value,event_revenue,event_revenue_currency,event_revenue_usd,media_source,af_channel,campaign,af_c_id,af_adset,af_ad,country_code,appsflyer_id,idfa,idfv,customer_user_id,platform,is_retargeting",
            "click,2026-11-10 08:00:00,2026-11-10 08:00:00,install,None,None,None,None,googleadwords_int,Search,Brand_JP,123,None,None,JP,1764321234567-1234567,None,None,None,ios,false",
            "click,2026-11-10 08:00:00,2026-11-10 09:30:00,af_purchase,\"{\"\"af_revenue\"\":\"\"4.99\"\",\"\"af_currency\"\":\"\"USD\"\"}\",4.99,USD,4.99,googleadwords_int,Search,Brand_JP,123,None,None,JP,1764321234567-1234567,None,None,u_2001,ios,false",
        ])
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u_2001")])
        try scenario.write("receipts/r.jsonl", [Fixture.purchase("t1", at: "2026-11-10T09:30:00Z", by: "u_2001", price: 4990)])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            AttributionReportTests.header,
            "2026-11-10,googleadwords_int,Brand_JP,1,1,1,4.99,4.99,4.99,4.99,0,,,,4.99,,,4.99",
        ])
        // The install row has no Customer User ID: the purchase row's links u_2001 to it.
        #expect(try Fixture.matchedBy(scenario)["customer_user_id"] == 1)
    }

    @Test("a retargeting row is left out entirely: no install, no id link, no MMP revenue claim")
    func retargetingLeftOut() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "organic", appsflyerID: "af1"),
            Fixture.MMPRow(time: "2026-11-12 08:00:00", mediaSource: "retarget_net", campaign: "R", appsflyerID: "af2", retargeting: true),
            // A re-engagement purchase row names u1 with the retargeted device and claims 9.99.
            Fixture.MMPRow(time: "2026-11-12 09:00:00", eventName: "af_purchase", mediaSource: "retarget_net", campaign: "R",
                           appsflyerID: "af2", cuid: "u1", retargeting: true, revenue: "9.99", currency: "USD", revenueUSD: "9.99",
                           installTime: "2026-11-12 08:00:00"),
        ])
        // u1 signed up on af1's device; only the retargeting row ties u1 to af2.
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-12T10:00:00Z", "u1", appsflyerID: "af1")])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            AttributionReportTests.header,
            "2026-11-10,organic,,1,1,0,0,0,0,0,0,,,,0,,,",
        ])
        #expect(try Fixture.matchedBy(scenario)["appsflyer_id"] == 1)
    }

    @Test("revenue whose transaction has no user is the no_user row of its purchase day, in every window")
    func noUserRow() throws {
        let scenario = try Scenario()
        // A notification alone: Apple charged, nobody in the app's logs.
        try scenario.write("notifications/n.jsonl", [
            Line.notification("ONE_TIME_CHARGE", uuid: "n1", signed: "2026-11-14T12:00:05Z",
                              transaction: RevenueReportTests.Fixture.v2("t9", "gems300", purchase: "2026-11-14T12:00:00Z", price: 4990)),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            AttributionReportTests.header,
            "2026-11-14,no_user,,0,0,0,4.99,4.99,4.99,4.99,0,,,,0,,,",
        ])
    }

    @Test("a purchase made before its user's install counts in revenue_usd but in no window")
    func purchaseBeforeInstall() throws {
        let scenario = try Scenario()
        try Fixture.mmp(scenario, [
            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "tiktok_int", campaign: "T", appsflyerID: "af1", cuid: "u1"),
        ])
        // u1 bought on an earlier device, then reinstalled through an ad and signed up again.
        try scenario.write("registrations/r.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try scenario.write("receipts/r.jsonl", [
            Fixture.purchase("t1", at: "2026-11-09T12:00:00Z", by: "u1", price: 990),
            Fixture.purchase("t2", at: "2026-11-10T12:00:00Z", by: "u1", price: 4990),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try Fixture.lines(scenario.output("attribution.csv")) == [
            AttributionReportTests.header,
            "2026-11-10,tiktok_int,T,1,1,1,4.99,4.99,4.99,5.98,0,,,,0,,,5.98",
        ])
    }
}
