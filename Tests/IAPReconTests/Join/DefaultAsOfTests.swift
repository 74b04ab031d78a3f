import Foundation
import Testing
@testable import IAPRecon

/// The as-of a run judges by when none is given and no input line carries an event time (CONTRACT.md §2
/// names them): the end of the latest day the dated inputs cover, in the zone whose days they are.
@Suite("Default as-of without event times")
struct DefaultAsOfTests {
    static let spendHeader = "date,media_source,campaign,spend,currency"
    static let fxHeader = "date,currency,rate"

    /// A V1 notification of one purchase: V1 bodies carry no time of their own.
    static func v1(_ transactionID: String, purchase: String) -> String {
        #"{"notification_type":"INITIAL_BUY","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":""#
            + transactionID + #"","product_id":"gems300","purchase_date_ms":""# + String(Line.ms(purchase)) + #"","quantity":"1"}]}}"#
    }

    @Test("spend alone is judged as of the end of its latest day in --tz, not 1970")
    func spendAlone() throws {
        for (zone, asOf) in [("UTC", "2026-11-24T23:59:59.999Z"), ("Asia/Tokyo", "2026-11-24T14:59:59.999Z")] {
            let scenario = try Scenario()
            try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-24,Facebook Ads,FB_US,120.50,USD", "2026-11-23,Facebook Ads,FB_US,80,USD"])
            let run = try scenario.run(now: "2026-12-01T00:00:00Z", zone: zone)
            #expect(Timestamp.iso8601(run.join.asOfMs) == asOf, "\(zone)")
            #expect(try scenario.output("summary.json").contains("\"as_of\": \"\(asOf)\""), "\(zone)")
        }
    }

    @Test("V1 notifications with spend are judged as of the end of the latest spend day: a purchase never delivered is a lost delivery, first seen then")
    func v1NotificationsWithSpend() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-20,Facebook Ads,FB_US,10,USD", "2026-11-25,Facebook Ads,FB_US,12,USD"])
        try scenario.write("notifications/n.jsonl", [Self.v1("t_v1", purchase: "2026-11-20T08:00:00Z")])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-25T23:59:59.999Z")
        let findings = try scenario.output("findings.csv").split(separator: "\r\n").dropFirst()
        #expect(findings.count == 1)
        #expect(findings.allSatisfy { $0.contains(",lost_delivery,critical,") && $0.hasSuffix(",2026-11-25T23:59:59.999Z,true") })
    }

    @Test("near miss: fx.csv's days date nothing: a rate is valid from its day on, and finance loads rates for days still to come")
    func ratesDateNothing() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", [Self.fxHeader, "2026-11-20,USD,1", "2026-12-31,USD,1", "2026-12-31,EUR,1.05"])
        try scenario.write("notifications/n.jsonl", [Self.v1("t_v1", purchase: "2026-11-20T08:00:00Z")])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        #expect(run.join.asOfMs == 0)
        // Judged as of 1970, before the purchase's grace ends: not yet lost.
        #expect(try scenario.output("findings.csv").split(separator: "\r\n").dropFirst().isEmpty)
    }

    @Test("Sales Reports beside spend: the later end of their latest days, each a day of its own zone")
    func salesReportsAndSpend() throws {
        let scenario = try Scenario()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "US")])
        // 2026-11-24 in Los Angeles ends at 2026-11-25T07:59:59.999Z; the spend's 2026-11-25, a UTC day, ends later.
        try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-25,Facebook Ads,FB_US,10,USD"])
        #expect(Timestamp.iso8601(try scenario.run(now: "2026-12-01T00:00:00Z").join.asOfMs) == "2026-11-25T23:59:59.999Z")
        // Near miss: a report of the same day as the spend ends later, in Los Angeles, and dates the input instead.
        try scenario.write("apple/S_D_2.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-25", "gems60", units: 1, country: "US")])
        #expect(Timestamp.iso8601(try scenario.run(now: "2026-12-01T00:00:00Z").join.asOfMs) == "2026-11-26T07:59:59.999Z")
    }

    @Test("near miss: beside an event time, later spend and fx.csv days do not move the as-of")
    func datedDaysBesideEventTimes() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-29,Facebook Ads,FB_US,10,USD"])
        try scenario.write("fx.csv", [Self.fxHeader, "2026-11-30,USD,1"])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        // The receipt line's received_at.
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-28T10:00:05.000Z")
    }

    /// A Sales Report row of the app itself (a download), which sells nothing but says the report covers `day`.
    static func appRow(_ day: String) -> String {
        AppleTieOutTests.sales(day, "com.example.game", units: 40, country: "US").replacingOccurrences(of: "\tIA1\t", with: "\t1F\t")
    }

    @Test("a spend day years after the run's clock (2062 typed for 2026) is rejected, naming its file and line, and dates no as-of")
    func spendDayYearsAhead() throws {
        let scenario = try Scenario()
        try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-24,Facebook Ads,FB_US,120.50,USD", "2062-11-25,Facebook Ads,FB_US,80,USD"])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-24T23:59:59.999Z")
        #expect(try scenario.output("rejects.csv").contains(
            #"spend/s.csv,3,"time in the future: 'date' is 2062-11-25, which starts in no zone before 2062-11-24T10:00:00.000Z","#))
        #expect(run.ingest.files.map(\.counts) == [LineCounts(read: 2, accepted: 1, rejected: 1)])
        // Nor does the rejected row's spend count in any cohort.
        #expect(try !scenario.output("attribution.csv").contains("2062"))
    }

    @Test("a Sales Report day years after the run's clock is rejected, an in-app row and an app row alike, naming file and line, and dates no as-of nor a tie-out day")
    func salesReportDayYearsAhead() throws {
        let scenario = try Scenario()
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "US"),
            AppleTieOutTests.sales("2062-11-25", "gems60", units: 1, country: "US"), Self.appRow("2062-11-25"),
        ])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-25T07:59:59.999Z")
        let rejects = try scenario.output("rejects.csv")
        for line in [3, 4] {
            #expect(rejects.contains(
                #"apple/S_D_1.txt,\#(line),"time in the future: 'Begin Date' is 11/25/2062, which starts in Los Angeles at 2062-11-25T08:00:00.000Z","#))
        }
        #expect(run.ingest.files.map(\.counts) == [LineCounts(read: 3, accepted: 1, rejected: 2)])
        #expect(try !scenario.output("apple_tieout.csv").contains("2062"))
    }

    @Test("a dated day not over at the run's clock dates the as-of no later than a day after the clock, the latest an event time can give")
    func datedDayCappedADayAfterTheClock() throws {
        // Each begins within a day of the clock, so it is read; each ends later than a day after it.
        let spend = try Scenario()
        try spend.write("spend/s.csv", [Self.spendHeader, "2026-11-30,Facebook Ads,FB_US,10,USD", "2026-12-02,Facebook Ads,FB_US,10,USD"])
        let sales = try Scenario()
        try sales.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-12-01", "gems60", units: 1, country: "US")])
        for scenario in [spend, sales] {
            let run = try scenario.run(now: "2026-12-01T00:00:00Z")
            #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-12-02T00:00:00.000Z")
            #expect(run.ingest.totals.rejected == 0)
            #expect(try scenario.output("summary.json").contains("\"as_of\": \"2026-12-02T00:00:00.000Z\""))
        }
    }

    @Test("near miss: spend and Sales Report days of today and yesterday at the run's clock are read and date the as-of as before, in each day's zone")
    func todayAndYesterday() throws {
        // 2026-12-01T20:00Z is noon in Los Angeles and 05:00 on 2026-12-02 in Tokyo.
        let now = "2026-12-01T20:00:00Z"
        for (zone, today, asOf) in [("UTC", "2026-12-01", "2026-12-01T23:59:59.999Z"), ("Asia/Tokyo", "2026-12-02", "2026-12-02T14:59:59.999Z")] {
            let scenario = try Scenario()
            try scenario.write("spend/s.csv", [Self.spendHeader, "2026-11-30,Facebook Ads,FB_US,10,USD", "\(today),Facebook Ads,FB_US,10,USD"])
            let run = try scenario.run(now: now, zone: zone)
            #expect(Timestamp.iso8601(run.join.asOfMs) == asOf, "\(zone)")
            #expect(run.ingest.totals == LineCounts(read: 2, accepted: 2), "\(zone)")
        }
        let sales = try Scenario()
        try sales.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-30", "gems60", units: 1, country: "US"),
            AppleTieOutTests.sales("2026-12-01", "gems60", units: 1, country: "US"), Self.appRow("2026-12-01"),
        ])
        let run = try sales.run(now: now)
        // 2026-12-01 in Los Angeles ends at 2026-12-02T07:59:59.999Z.
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-12-02T07:59:59.999Z")
        #expect(run.ingest.totals == LineCounts(read: 3, accepted: 2, ignored: 1))
    }

    @Test("near miss: beside an event time the as-of is the latest event time, whatever spend days lie ahead; a spend day years ahead is still rejected")
    func eventTimesUnaffected() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-30T10:00:00Z", "o_1", "u_1", "gems60")])
        try scenario.write("spend/s.csv", [Self.spendHeader, "2026-12-02,Facebook Ads,FB_US,10,USD", "2062-12-02,Facebook Ads,FB_US,10,USD"])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-30T10:00:00.000Z")
        #expect(try scenario.output("rejects.csv").contains("spend/s.csv,3,\"time in the future: 'date' is 2062-12-02, "))
        #expect(run.ingest.files.first { $0.path == "spend/s.csv" }?.counts == LineCounts(read: 2, accepted: 1, rejected: 1))
    }

    @Test("near miss: a V1 notification's purchase date is no event time (CONTRACT.md §2), so V1 notifications alone date no as-of")
    func v1NotificationsAlone() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("notifications/n.jsonl", [Self.v1("t_v1", purchase: "2026-11-20T08:00:00Z")])
        #expect(try scenario.run(now: "2026-12-01T00:00:00Z").join.asOfMs == 0)
    }
}
