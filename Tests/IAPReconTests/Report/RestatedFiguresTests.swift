import Foundation
import Testing
@testable import IAPRecon

/// Finance books each day's revenue from the reports: a later run that changes a day already reported says which
/// days (and fiscal months) changed, with the old and new figures, on stderr and on the report page.
@Suite("Restated revenue")
struct RestatedFiguresTests {
    static let now = "2026-12-01T00:00:00Z"

    /// A receipts line verifying one Production purchase of gems60 in USD.
    static func receipt(_ transactionID: String, purchase: String, received: String, price: Int = 990) -> String {
        Line.v2Receipt(received, "u1", transaction: Line.v2(transactionID, "gems60", purchase: purchase, price: price))
    }

    /// Night 1: a purchase on 2026-11-20 and one on 2026-11-21, as-of the 21st.
    static func firstNight(_ scenario: Scenario, jobs: Int = 1) throws -> RunResult {
        try scenario.write("receipts/2026-11-21.jsonl", [
            receipt("t1", purchase: "2026-11-20T10:00:00Z", received: "2026-11-20T10:00:05Z"),
            receipt("t2", purchase: "2026-11-21T09:00:00Z", received: "2026-11-21T09:00:05Z"),
        ])
        return try scenario.run(now: now, jobs: jobs)
    }

    @Test("a late receipt for a day already reported names that day with its old and new figures; the new day is not named",
          arguments: [1, 4])
    func lateReceipt(jobs: Int) throws {
        let scenario = try Scenario()
        #expect(try Self.firstNight(scenario, jobs: jobs).report.restatedRevenue == nil, "nothing was published before")
        try scenario.write("receipts/2026-11-22.jsonl", [
            // Bought late on the 20th, its receipt reached the server two days later.
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
            Self.receipt("t4", purchase: "2026-11-22T08:00:00Z", received: "2026-11-22T08:00:09Z"),
        ])
        let night = try scenario.run(now: Self.now, jobs: jobs)
        let expected = "1 day already reported changed: 2026-11-20 (USD gross 0.99 → 5.98, USD net 0.99 → 5.98, "
            + "gross_usd 0.99 → 5.98, net_usd 0.99 → 5.98) (revenue_daily.csv)"
        #expect(night.report.restatedRevenue == expected)
        #expect(try scenario.output("report.html").contains("<p class=\"warn\">Restated revenue: \(expected).</p>"))
        // The files say the same: the day's row was 0.99 and is 5.98 now.
        #expect(try scenario.output("revenue_daily.csv").contains("2026-11-20,gems60,USA,USD,2,0,5.98,0,5.98,5.98,0,5.98"))
        // Run again with nothing new: the same report rewritten. Its page still says what it restates, byte for byte;
        // stderr does not say it again.
        let page = try scenario.output("report.html")
        let again = try scenario.run(now: Self.now, jobs: jobs)
        #expect(again.report.restatedRevenue == nil)
        // A plain run again reports no finding first, as findings.csv's `new` says: the page's new marks go with it.
        #expect(SampleDataTests.withoutNewMarks(try scenario.output("report.html")) == SampleDataTests.withoutNewMarks(page))
    }

    @Test("a report rewritten after a late file compares with the report before its first run: the page names both days, stderr the new one only")
    func rerunAfterLateFile() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
            Self.receipt("t4", purchase: "2026-11-22T08:00:00Z", received: "2026-11-22T08:00:09Z"),
        ])
        _ = try scenario.run(now: Self.now)
        // A file late for the same night (its as-of stays the 22nd's last event) changes the 21st too.
        try scenario.write("receipts/2026-11-22-late.jsonl", [
            Self.receipt("t5", purchase: "2026-11-21T20:00:00Z", received: "2026-11-22T07:00:00Z"),
        ])
        let again = try scenario.run(now: Self.now)
        let twentieth = "2026-11-20 (USD gross 0.99 → 5.98, USD net 0.99 → 5.98, gross_usd 0.99 → 5.98, net_usd 0.99 → 5.98)"
        let twentyFirst = "2026-11-21 (USD gross 0.99 → 1.98, USD net 0.99 → 1.98, gross_usd 0.99 → 1.98, net_usd 0.99 → 1.98)"
        // What this report itself published before and now changes: the only news.
        #expect(again.report.restatedRevenue == "1 day already reported changed: \(twentyFirst) (revenue_daily.csv)")
        // The page compares with the first night, as the report's first run did: the earlier restatement and the new one.
        #expect(try scenario.output("report.html").contains(
            "<p class=\"warn\">Restated revenue: 2 days already reported changed: \(twentieth), \(twentyFirst) (revenue_daily.csv).</p>"))
    }

    @Test("a night that only adds a new day restates nothing")
    func newDayOnly() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t4", purchase: "2026-11-22T08:00:00Z", received: "2026-11-22T08:00:09Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue == nil)
        #expect(try !scenario.output("report.html").contains("Restated revenue"))
        #expect(try scenario.output("revenue_daily.csv").contains("2026-11-22,gems60,USA,USD,1,0,4.99,0,4.99,4.99,0,4.99"))
    }

    @Test("a refund dated on a day already reported restates that day's refunds and net; the purchase day keeps its figures")
    func refundInThePast() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try scenario.write("notifications/2026-11-22.jsonl", [
            Line.notification("REFUND", uuid: "9b2c3d4e-0000-4000-8000-000000000001", signed: "2026-11-22T06:00:00Z",
                              transaction: Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-21T12:00:00Z")),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue == "1 day already reported changed: 2026-11-21 (USD refunds 0 → 0.99, USD net 0.99 → 0, "
            + "refunds_usd 0 → 0.99, net_usd 0.99 → 0) (revenue_daily.csv)")
    }

    @Test("a fiscal month the last report covered whole is restated with its day, as revenue_monthly.csv sums it")
    func closedFiscalMonth() throws {
        let scenario = try Scenario()
        // Fiscal October 2026 runs from 2026-09-27 to 2026-10-31.
        try scenario.write("receipts/2026-11-02.jsonl", [
            Self.receipt("t1", purchase: "2026-10-30T10:00:00Z", received: "2026-10-30T10:00:05Z"),
            Self.receipt("t2", purchase: "2026-11-02T09:00:00Z", received: "2026-11-02T09:00:05Z"),
        ])
        _ = try scenario.run(now: Self.now)
        try scenario.write("receipts/2026-11-03.jsonl", [
            Self.receipt("t3", purchase: "2026-10-30T11:00:00Z", received: "2026-11-03T08:00:05Z", price: 1990),
            Self.receipt("t4", purchase: "2026-11-02T11:00:00Z", received: "2026-11-03T08:00:09Z", price: 1990),
        ])
        let night = try scenario.run(now: Self.now)
        let changed = "(USD gross 0.99 → 2.98, USD net 0.99 → 2.98, gross_usd 0.99 → 2.98, net_usd 0.99 → 2.98)"
        // Fiscal November is under way: its restated day is named, the month is not.
        #expect(night.report.restatedRevenue == "2 days already reported changed: 2026-10-30 \(changed), 2026-11-02 \(changed) (revenue_daily.csv); "
            + "1 fiscal month already reported changed: 2026-10 \(changed) (revenue_monthly.csv)")
    }

    @Test("many restated days are summarised: the first three spelled out, the others counted")
    func summarised() {
        func figures(_ gross: String, through: Int64) -> PublishedRevenue {
            PublishedRevenue(setPath: "/out/.sets/a", folder: "/out", zone: "UTC", reportingCurrency: "USD", throughDay: through, figures: (0..<5).map { day in
                PublishedRevenue.Figure(day: 20_400 + day, date: "day\(day)", reporting: false, currency: "EUR", gross: gross, refunds: "0", net: gross)
            })
        }
        let restated = RestatedFigures(published: figures("1", through: 20_404), now: figures("2", through: 20_405))
        #expect(restated.days.count == 5)
        #expect(restated.line() == "5 days already reported changed: day0 (EUR gross 1 → 2, EUR net 1 → 2), day1 (EUR gross 1 → 2, EUR net 1 → 2), "
            + "day2 (EUR gross 1 → 2, EUR net 1 → 2) and 2 more days (revenue_daily.csv)")
        // Another zone's days are other days: nothing is compared.
        var otherZone = figures("2", through: 20_405)
        otherZone.zone = "Asia/Tokyo"
        #expect(RestatedFigures(published: figures("1", through: 20_404), now: otherZone).isEmpty)
        // A day after the earlier report's last is new, however it differs.
        #expect(RestatedFigures(published: figures("1", through: 20_399), now: figures("2", through: 20_405)).isEmpty)
    }

    // MARK: - Crash safety

    /// The figures the store keeps as published, per day and column, and whether any are left pending.
    static func stored(_ scenario: Scenario) throws -> (published: PublishedRevenue?, pending: Int64) {
        let database = try scenario.open()
        let pending = try database.scalar("SELECT count(*) FROM fct_published_report WHERE state = 1").integerValue
        // The latest report published: the one a report of a later day in another folder compares with.
        let compared = try SQLiteReportStore(database).publishedRevenue(zone: "UTC", folder: "/nowhere", throughDay: .max, earlierIn: nil) { _ in false }
        return (compared.earlier, pending)
    }

    @Test("after a run, the store's published figures are those of the outputs switched in, and none are left pending")
    func publishedAgreesWithOutputs() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        let (published, pending) = try Self.stored(scenario)
        #expect(pending == 0)
        let current = try FileManager.default.destinationOfSymbolicLink(atPath: scenario.out + "/.current")
        #expect(published?.setPath.hasSuffix("/" + current) == true)
        #expect(OutputSet.isCurrent(setPath: published?.setPath ?? ""))
        // Each day's figures are the sums of revenue_daily.csv's rows of that day.
        #expect(published?.figures.map { "\($0.date) \($0.reporting ? "reporting " : "")\($0.currency) \($0.gross) \($0.refunds) \($0.net)" } == [
            "2026-11-20 USD 0.99 0 0.99", "2026-11-20 reporting USD 0.99 0 0.99",
            "2026-11-21 USD 0.99 0 0.99", "2026-11-21 reporting USD 0.99 0 0.99",
        ])
    }

    @Test("figures a killed run saved but never switched in are dropped: the next run compares with the outputs still shown")
    func pendingNeverSwitchedIn() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        // A run killed after saving its figures and before its switch: its set never became current.
        var killed = try #require(try Self.stored(scenario).published)
        killed.setPath = scenario.out + "/.sets/set-1-99999"
        killed.figures = killed.figures.map { var figure = $0; figure.gross = "100"; figure.net = "100"; return figure }
        try SQLiteReportStore(scenario.open()).savePendingRevenue(killed)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue?.hasPrefix("1 day already reported changed: 2026-11-20 (USD gross 0.99 → 5.98,") == true)
        #expect(try Self.stored(scenario).pending == 0)
    }

    @Test("a night run again and killed before its switch leaves its report as first published: the next run again writes the same page and says nothing")
    func rerunKilledBeforeSwitch() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        #expect(try scenario.run(now: Self.now).report.restatedRevenue != nil)
        let page = try scenario.output("report.html")
        // The re-run saved its figures (other ones, as if a file had changed) and was killed before its switch.
        let database = try scenario.open()
        var killed = try #require(try SQLiteReportStore(database).publishedRevenue(
            zone: "UTC", folder: OutputSet.canonicalFolder(scenario.out), throughDay: .max, earlierIn: nil) { _ in false }.earlier)
        killed.setPath = scenario.out + "/.sets/set-1-99999"
        killed.figures = killed.figures.map { var figure = $0; figure.gross = "100"; figure.net = "100"; return figure }
        try SQLiteReportStore(database).savePendingRevenue(killed)
        let again = try scenario.run(now: Self.now)
        #expect(again.report.restatedRevenue == nil)
        // A plain run again reports no finding first, as findings.csv's `new` says: the page's new marks go with it.
        #expect(SampleDataTests.withoutNewMarks(try scenario.output("report.html")) == SampleDataTests.withoutNewMarks(page))
        #expect(try Self.stored(scenario).pending == 0)
    }

    @Test("figures a killed run saved and switched in, but did not mark published, are taken as published")
    func pendingSwitchedIn() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        // A run killed after its switch and before it marked its figures published: its set is the current one.
        var killed = try #require(try Self.stored(scenario).published)
        let firstDay = try #require(killed.figures.first).day
        killed.figures = killed.figures.map { var figure = $0; figure.gross = figure.day == firstDay ? "7" : figure.gross; return figure }
        try SQLiteReportStore(scenario.open()).savePendingRevenue(killed)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue == "1 day already reported changed: 2026-11-20 (USD gross 7 → 5.98, USD net 0.99 → 5.98, "
            + "gross_usd 7 → 5.98, net_usd 0.99 → 5.98) (revenue_daily.csv)")
    }

    @Test("a report in another zone between two says nothing, and the next report in the first zone still names what it restates")
    func otherZoneBetween() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        // An analyst's look in Tokyo days: nothing to compare with there.
        #expect(try scenario.run(now: Self.now, zone: "Asia/Tokyo").report.restatedRevenue == nil)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue?.hasPrefix("1 day already reported changed: 2026-11-20 (USD gross 0.99 → 5.98,") == true)
        // Tokyo's figures were kept too: its next report names the day (the 21st there) the late receipt restates.
        let tokyo = try scenario.run(now: Self.now, zone: "Asia/Tokyo")
        #expect(tokyo.report.restatedRevenue?.hasPrefix("1 day already reported changed: 2026-11-21 (USD gross ") == true)
        // And the first zone's again, with nothing new, says nothing.
        #expect(try scenario.run(now: Self.now).report.restatedRevenue == nil)
    }

    @Test("a report with an earlier --as-of between two leaves the days the first covered compared by the next")
    func earlierAsOfBetween() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        // A look as of the 20th: every event is still counted, so the 21st is printed as the first night printed it.
        #expect(try scenario.run(asOf: "2026-11-20T12:00:00Z", now: Self.now).report.restatedRevenue == nil)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-21T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue?.hasPrefix("1 day already reported changed: 2026-11-21 (USD gross 0.99 → 5.98,") == true)
    }

    @Test("a report into another folder compares with what the last one published elsewhere, and a deleted out/ changes nothing")
    func otherFolders() throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try FileManager.default.removeItem(atPath: scenario.out)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        let night = try scenario.run(now: Self.now)
        #expect(night.report.restatedRevenue?.hasPrefix("1 day already reported changed: 2026-11-20 (USD gross 0.99 → 5.98,") == true)
    }

    @Test("a store write after the outputs' switch that fails says the reports are this run's, and the next run mends the store: the switched-in revenue is published, nothing restated again",
          arguments: ["fct_published_report", "fct_published_revenue", "fct_finding_first_seen"])
    func failedRecordingAfterSwitch(table: String) throws {
        let scenario = try Scenario()
        _ = try Self.firstNight(scenario)
        try scenario.write("receipts/2026-11-22.jsonl", [
            Self.receipt("t3", purchase: "2026-11-20T23:00:00Z", received: "2026-11-22T08:00:05Z", price: 4990),
        ])
        // A full disk, as the store sees it, from the switch on: the first write after it fails.
        try scenario.open().execute("CREATE TRIGGER full_disk BEFORE UPDATE ON \(table) BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        let failure = try #require(throws: ReportStage.NotRecorded.self) { try scenario.run(now: Self.now) }
        #expect(failure.description.hasPrefix("the reports in \(scenario.out)/ are this run's, but the store could not record them as shown: "))
        // The reports switched in are whole and this run's.
        #expect(try scenario.output("revenue_daily.csv").contains("2026-11-20,gems60,USA,USD,2,0,5.98,0,5.98,5.98,0,5.98"))
        try scenario.open().execute("DROP TRIGGER full_disk")
        let next = try scenario.run(now: Self.now)
        #expect(next.report.restatedRevenue == nil, "the figures the failed run switched in count as published")
    }
}
