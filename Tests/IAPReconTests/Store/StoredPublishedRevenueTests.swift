import Foundation
import Testing
@testable import IAPRecon

/// A store runs every night for years: the revenue figures its reports published must be kept in room that grows with
/// the figures that changed, not with reports × days, while each report still finds the figures of the report it is
/// compared with as that report published them.
@Suite("Stored published revenue")
struct StoredPublishedRevenueTests {
    static let firstDay: Int64 = 20_400
    static let currencies = ["EUR", "JPY", "USD"]

    /// The figures a report of `zone` into `folder` as of `through` publishes: every day from `firstDay` on, each local
    /// currency and the reporting currency (USD), of `value` (given the day, whether reporting, the currency).
    static func report(zone: String = "UTC", folder: String, through: Int64, value: (Int64, Bool, String) -> String = { _, _, _ in "1" })
        -> PublishedRevenue {
        var figures: [PublishedRevenue.Figure] = []
        for day in firstDay...through {
            for (reporting, currency) in currencies.map({ (false, $0) }) + [(true, "USD")] {
                let amount = value(day, reporting, currency)
                figures.append(PublishedRevenue.Figure(day: day, date: "d\(day)", reporting: reporting, currency: currency,
                                                       gross: amount, refunds: "0", net: amount))
            }
        }
        return PublishedRevenue(setPath: folder + "/.sets/set-\(through)", folder: folder, zone: zone, reportingCurrency: "USD",
                                throughDay: through, figures: figures)
    }

    /// What the report is compared with, then the report published (saved pending, switched in, made published).
    @discardableResult
    static func publish(_ figures: PublishedRevenue, in database: Database) throws -> ComparedRevenue {
        let store = SQLiteReportStore(database)
        let compared = try store.publishedRevenue(zone: figures.zone, folder: figures.folder, throughDay: figures.throughDay,
                                                  earlierIn: nil) { _ in false }
        try store.savePendingRevenue(figures)
        try store.publishPendingRevenue()
        return compared
    }

    static func rows(_ database: Database) throws -> Int64 {
        try database.scalar("SELECT count(*) FROM fct_published_revenue").integerValue
    }

    /// The local USD gross `report` gives `day`, and its reporting-currency gross.
    static func usd(_ report: PublishedRevenue?, day: Int64) -> (local: String?, reporting: String?) {
        let figures = report?.figures.filter { $0.day == day && $0.currency == "USD" } ?? []
        return (figures.first { !$0.reporting }?.gross, figures.first { $0.reporting }?.gross)
    }

    @Test("thirty nights of unchanged figures keep one row per day and currency, not one per night, and restate nothing")
    func unchangedNights() throws {
        let database = try Scenario().open()
        let nights: Int64 = 30, daysBefore: Int64 = 29
        for night in 1...nights {
            let through = Self.firstDay + daysBefore + night
            let compared = try Self.publish(Self.report(folder: "/reports/\(night)", through: through), in: database)
            #expect(compared.rewritten == nil)
            #expect(compared.earlier?.throughDay == (night == 1 ? nil : through - 1))
            #expect(compared.earlier?.figures.count == (night == 1 ? nil : Int(through - Self.firstDay) * 4))
            if let earlier = compared.earlier {
                #expect(RestatedFigures(published: earlier, now: Self.report(folder: "/reports/\(night)", through: through)).isEmpty)
            }
        }
        let days = daysBefore + nights + 1
        #expect(try Self.rows(database) == days * 4, "one row per day, local currency and reporting currency")
        #expect(try database.scalar("SELECT count(*) FROM fct_published_report").integerValue == nights)
        // Every night run again, unchanged: nothing is added.
        for night in 1...nights {
            let report = Self.report(folder: "/reports/\(night)", through: Self.firstDay + daysBefore + night)
            let compared = try Self.publish(report, in: database)
            #expect(compared.rewritten == report)
        }
        #expect(try Self.rows(database) == days * 4)
    }

    @Test("a figure changed by a later report is still found as it was by a re-run of a report compared with the earlier one; the reporting currency's and another zone's figures stay apart")
    func changedFigureKeepsItsOldValue() throws {
        let database = try Scenario().open()
        let day = Self.firstDay + 5
        func nights(_ newUSD: String) -> (Int64, Bool, String) -> String {
            { figureDay, reporting, currency in figureDay == day && !reporting && currency == "USD" ? newUSD : "1" }
        }
        let a = Self.report(folder: "/reports/a", through: Self.firstDay + 10)
        try Self.publish(a, in: database)
        // Tokyo's figures of the same days, other values: they never stand for UTC's.
        try Self.publish(Self.report(zone: "Asia/Tokyo", folder: "/tokyo", through: Self.firstDay + 10) { _, _, _ in "9" }, in: database)
        // B restates the local USD of `day` (a late receipt whose reporting-currency figure rounds the same).
        let b = Self.report(folder: "/reports/b", through: Self.firstDay + 11, value: nights("2"))
        let first = try Self.publish(b, in: database)
        #expect(first.earlier?.folder == "/reports/a")
        #expect(Self.usd(first.earlier, day: day) == ("1", "1"))
        let c = Self.report(folder: "/reports/c", through: Self.firstDay + 12, value: nights("2"))
        #expect(RestatedFigures(published: try Self.publish(c, in: database).earlier, now: c).isEmpty)
        // B run again, after C, with a late file for its night each time: still compared with A, whose figure was 1.
        for (run, late) in ["3", "4", "5"].enumerated() {
            let again = try Self.publish(Self.report(folder: "/reports/b", through: Self.firstDay + 11, value: nights(late)), in: database)
            #expect(again.earlier?.folder == "/reports/a")
            #expect(Self.usd(again.earlier, day: day) == ("1", "1"))
            #expect(Self.usd(again.rewritten, day: day) == (run == 0 ? "2" : String(run + 2), "1"))
        }
        // C run again: compared with B as published last, its own figures as C published them.
        let cAgain = try Self.publish(c, in: database)
        #expect(cAgain.earlier?.folder == "/reports/b")
        #expect(Self.usd(cAgain.earlier, day: day) == ("5", "1"))
        #expect(Self.usd(cAgain.rewritten, day: day) == ("2", "1"))
        #expect(cAgain.rewritten?.figures.count == 13 * 4)
        // Tokyo's, untouched by UTC's restatements.
        let tokyo = try SQLiteReportStore(database).publishedRevenue(zone: "Asia/Tokyo", folder: "/tokyo", throughDay: Self.firstDay + 10,
                                                                     earlierIn: nil) { _ in false }
        #expect(tokyo.rewritten?.figures.allSatisfy { $0.gross == "9" } == true)
        #expect(tokyo.rewritten?.figures.count == 11 * 4)
        // The values B's runs published and no report shows any more are not kept: 13 days of UTC, 11 of Tokyo, and
        // the USD of `day` as A, C and B last showed it.
        #expect(try Self.rows(database) == 13 * 4 + 11 * 4 + 2)
    }

    @Test("after any sequence of reports, re-runs, zones, dropped figures and currencies, each report reads back the figures it last published")
    func everyReportReadsBackWhatItPublished() throws {
        let database = try Scenario().open()
        var seed: UInt64 = 7
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var last: [String: PublishedRevenue] = [:]
        for _ in 0..<120 {
            let zone = ["UTC", "Asia/Tokyo"][next(2)]
            let through = Self.firstDay + Int64(3 + next(6))
            let reporting = ["USD", "EUR"][next(4) == 0 ? 1 : 0]
            var figures: [PublishedRevenue.Figure] = []
            for day in Self.firstDay...through {
                for (isReporting, currency) in Self.currencies.map({ (false, $0) }) + [(true, reporting)] where next(5) > 0 {
                    let amount = String(1 + next(3))
                    figures.append(PublishedRevenue.Figure(day: day, date: "d\(day)", reporting: isReporting, currency: currency,
                                                           gross: amount, refunds: "0", net: amount))
                }
            }
            let folder = "/reports/" + ["a", "b", "c"][next(3)]
            let report = PublishedRevenue(setPath: folder + "/.sets/set", folder: folder, zone: zone, reportingCurrency: reporting,
                                          throughDay: through, figures: figures)
            try Self.publish(report, in: database)
            last["\(zone) \(folder) \(through)"] = report
        }
        for report in last.values {
            let stored = try SQLiteReportStore(database).publishedRevenue(zone: report.zone, folder: report.folder, throughDay: report.throughDay,
                                                                          earlierIn: nil) { _ in false }
            #expect(stored.rewritten == report)
        }
        // Kept: at most every figure of every report, never more.
        #expect(try Self.rows(database) <= Int64(last.values.map(\.figures.count).reduce(0, +)))
    }
}
