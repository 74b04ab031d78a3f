import Foundation
import Testing
@testable import IAPRecon

/// `revenue_monthly.csv` and the Apple fiscal calendar it sums by.
@Suite("revenue_monthly.csv and Apple's fiscal calendar")
struct FiscalCalendarTests {
    /// Apple's published fiscal calendar for fiscal year 2024 (App Store payments and financial
    /// reports): each fiscal month's name, first day and last day.
    static let fiscal2024: [(name: String, first: String, last: String)] = [
        ("2023-10", "2023-10-01", "2023-11-04"),
        ("2023-11", "2023-11-05", "2023-12-02"),
        ("2023-12", "2023-12-03", "2023-12-30"),
        ("2024-01", "2023-12-31", "2024-02-03"),
        ("2024-02", "2024-02-04", "2024-03-02"),
        ("2024-03", "2024-03-03", "2024-03-30"),
        ("2024-04", "2024-03-31", "2024-05-04"),
        ("2024-05", "2024-05-05", "2024-06-01"),
        ("2024-06", "2024-06-02", "2024-06-29"),
        ("2024-07", "2024-06-30", "2024-08-03"),
        ("2024-08", "2024-08-04", "2024-08-31"),
        ("2024-09", "2024-09-01", "2024-09-28"),
    ]

    static func dayNumber(_ date: String) throws -> Int64 { try #require(Timestamp.startOfDay(date)) / 86_400_000 }

    @Test("every day of fiscal 2024 lands in the fiscal month Apple published, with its first and last day")
    func publishedYear() throws {
        let first = try Self.dayNumber("2023-10-01"), last = try Self.dayNumber("2024-09-28")
        var seen: [String: (first: String, last: String, days: Int)] = [:]
        for day in first...last {
            let month = FiscalCalendar.month(containing: day)
            #expect(month.fiscalYear == 2024)
            #expect(month.firstDay <= day && day <= month.lastDay)
            var entry = seen[month.name] ?? (month.firstDate, month.lastDate, 0)
            entry.days += 1
            seen[month.name] = entry
        }
        #expect(seen.count == 12)
        for published in Self.fiscal2024 {
            let entry = try #require(seen[published.name], "\(published.name)")
            #expect(entry.first == published.first, "\(published.name)")
            #expect(entry.last == published.last, "\(published.name)")
            #expect(entry.days == (try Self.dayNumber(published.last)) - (try Self.dayNumber(published.first)) + 1)
        }
        // The days just outside belong to the neighbouring fiscal years.
        #expect(FiscalCalendar.month(containing: first - 1).fiscalYear == 2023)
        #expect(FiscalCalendar.month(containing: first - 1).name == "2023-09")
        #expect(FiscalCalendar.month(containing: last + 1).fiscalYear == 2025)
        #expect(FiscalCalendar.month(containing: last + 1).name == "2024-10")
    }

    @Test("a fiscal year runs from the Sunday after one September's last Saturday to the next's; fiscal 2023 had 53 weeks")
    func yearBoundaries() throws {
        // Published: fiscal 2023 began 2022-09-25 and ended 2023-09-30; fiscal 2022 ended 2022-09-24.
        #expect(FiscalCalendar.lastDay(ofFiscalYear: 2022) == (try Self.dayNumber("2022-09-24")))
        #expect(FiscalCalendar.lastDay(ofFiscalYear: 2023) == (try Self.dayNumber("2023-09-30")))
        #expect(FiscalCalendar.lastDay(ofFiscalYear: 2024) == (try Self.dayNumber("2024-09-28")))
        let october2022 = try #require(FiscalCalendar.month(of: "2022-09-25"))
        #expect((october2022.name, october2022.firstDate, october2022.fiscalYear) == ("2022-10", "2022-09-25", 2023))
        let september2023 = try #require(FiscalCalendar.month(of: "2023-09-30"))
        #expect((september2023.name, september2023.lastDate) == ("2023-09", "2023-09-30"))
        // The 53rd week makes the first quarter 14 weeks long; it ends on the last day of 2022.
        let december2022 = try #require(FiscalCalendar.month(of: "2022-12-31"))
        #expect((december2022.name, december2022.lastDate) == ("2022-12", "2022-12-31"))
        #expect(try #require(FiscalCalendar.month(of: "2023-01-01")).name == "2023-01")
    }

    /// Fiscal 2025 to 2028 by Apple's rule (the published calendar of a year comes out shortly
    /// before it begins): each fiscal month's name, first day and last day. Fiscal 2028 has 53
    /// weeks, so its December runs into January and its first quarter ends on 2028-01-01.
    static let fiscal2025to2028: [(name: String, first: String, last: String)] = [
        ("2024-10", "2024-09-29", "2024-11-02"), ("2024-11", "2024-11-03", "2024-11-30"), ("2024-12", "2024-12-01", "2024-12-28"),
        ("2025-01", "2024-12-29", "2025-02-01"), ("2025-02", "2025-02-02", "2025-03-01"), ("2025-03", "2025-03-02", "2025-03-29"),
        ("2025-04", "2025-03-30", "2025-05-03"), ("2025-05", "2025-05-04", "2025-05-31"), ("2025-06", "2025-06-01", "2025-06-28"),
        ("2025-07", "2025-06-29", "2025-08-02"), ("2025-08", "2025-08-03", "2025-08-30"), ("2025-09", "2025-08-31", "2025-09-27"),
        ("2025-10", "2025-09-28", "2025-11-01"), ("2025-11", "2025-11-02", "2025-11-29"), ("2025-12", "2025-11-30", "2025-12-27"),
        ("2026-01", "2025-12-28", "2026-01-31"), ("2026-02", "2026-02-01", "2026-02-28"), ("2026-03", "2026-03-01", "2026-03-28"),
        ("2026-04", "2026-03-29", "2026-05-02"), ("2026-05", "2026-05-03", "2026-05-30"), ("2026-06", "2026-05-31", "2026-06-27"),
        ("2026-07", "2026-06-28", "2026-08-01"), ("2026-08", "2026-08-02", "2026-08-29"), ("2026-09", "2026-08-30", "2026-09-26"),
        ("2026-10", "2026-09-27", "2026-10-31"), ("2026-11", "2026-11-01", "2026-11-28"), ("2026-12", "2026-11-29", "2026-12-26"),
        ("2027-01", "2026-12-27", "2027-01-30"), ("2027-02", "2027-01-31", "2027-02-27"), ("2027-03", "2027-02-28", "2027-03-27"),
        ("2027-04", "2027-03-28", "2027-05-01"), ("2027-05", "2027-05-02", "2027-05-29"), ("2027-06", "2027-05-30", "2027-06-26"),
        ("2027-07", "2027-06-27", "2027-07-31"), ("2027-08", "2027-08-01", "2027-08-28"), ("2027-09", "2027-08-29", "2027-09-25"),
        ("2027-10", "2027-09-26", "2027-10-30"), ("2027-11", "2027-10-31", "2027-11-27"), ("2027-12", "2027-11-28", "2028-01-01"),
        ("2028-01", "2028-01-02", "2028-02-05"), ("2028-02", "2028-02-06", "2028-03-04"), ("2028-03", "2028-03-05", "2028-04-01"),
        ("2028-04", "2028-04-02", "2028-05-06"), ("2028-05", "2028-05-07", "2028-06-03"), ("2028-06", "2028-06-04", "2028-07-01"),
        ("2028-07", "2028-07-02", "2028-08-05"), ("2028-08", "2028-08-06", "2028-09-02"), ("2028-09", "2028-09-03", "2028-09-30"),
    ]

    @Test("fiscal 2025 to 2028 month by month, fiscal 2028's 53rd week in a December that ends on 2028-01-01")
    func laterYears() throws {
        for expected in Self.fiscal2025to2028 {
            for day in [expected.first, expected.last] {
                let month = try #require(FiscalCalendar.month(of: day))
                #expect((month.name, month.firstDate, month.lastDate) == (expected.name, expected.first, expected.last), "\(day)")
            }
        }
        #expect(FiscalCalendar.lastDay(ofFiscalYear: 2028) - FiscalCalendar.lastDay(ofFiscalYear: 2027) == 53 * 7)
        #expect(try #require(FiscalCalendar.month(of: "2028-01-01")).fiscalYear == 2028)
    }

    @Test("revenue_monthly.csv sums revenue_daily.csv's rows by fiscal month: a Saturday and the next day's Sunday are two months")
    func monthlyRows() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        typealias Fixture = RevenueReportTests.Fixture
        try scenario.write("receipts/r.jsonl", [
            // Fiscal November 2026 is 2026-11-01 .. 2026-11-28; the 29th starts fiscal December.
            Line.v2Receipt("2026-11-01T00:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-01T00:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-28T23:59:05Z", "u1", transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-28T23:59:00Z", price: 4990)),
            Line.v2Receipt("2026-11-29T00:00:05Z", "u1", transaction: Fixture.v2("t3", "gems300", purchase: "2026-11-29T00:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-29T10:00:05Z", "u2", transaction: Fixture.v2(
                "t4", "gems300", purchase: "2026-11-29T10:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN")),
            // The last day of fiscal October 2026 (its first is 2026-09-27).
            Line.v2Receipt("2026-10-31T12:00:05Z", "u3", transaction: Fixture.v2("t5", "gems60", purchase: "2026-10-31T12:00:00Z", price: 990)),
        ])
        try scenario.write("notifications/n.jsonl", [
            // t2's refund lands on its own day: fiscal December.
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-30T08:00:01Z", transaction: Fixture.v2(
                "t2", "gems300", purchase: "2026-11-28T23:59:00Z", price: 4990, revocation: "2026-11-30T08:00:00Z")),
        ])
        _ = try scenario.run(asOf: "2026-12-01T00:00:00Z")
        #expect(try Fixture.lines(scenario.output("revenue_monthly.csv")) == [
            "fiscal_month,fiscal_year,first_day,last_day,product_id,storefront,currency,units,gross,refunds,net,gross_usd,refunds_usd,net_usd",
            "2026-10,2027,2026-09-27,2026-10-31,gems60,USA,USD,1,0.99,0,0.99,0.99,0,0.99",
            "2026-11,2027,2026-11-01,2026-11-28,gems300,USA,USD,2,9.98,0,9.98,9.98,0,9.98",
            "2026-12,2027,2026-11-29,2026-12-26,gems300,JPN,JPY,1,800,0,800,5.28,0,5.28",
            "2026-12,2027,2026-11-29,2026-12-26,gems300,USA,USD,1,4.99,4.99,0,4.99,4.99,0",
        ])
        let daily = try Fixture.table(scenario.output("revenue_daily.csv"))
        let monthly = try Fixture.table(scenario.output("revenue_monthly.csv"))
        for column in ["units", "gross", "refunds", "net", "gross_usd", "refunds_usd", "net_usd"] {
            #expect(Fixture.sum(monthly, column) == Fixture.sum(daily, column), "\(column)")
        }
    }

    @Test("before 1970 the rule is the same: fiscal 1970 began the day after 1969's last Saturday of September")
    func beforeEpoch() throws {
        #expect(FiscalCalendar.lastDay(ofFiscalYear: 1969) == (try Self.dayNumber("1969-09-27")))
        let december31 = try #require(FiscalCalendar.month(of: "1969-12-31"))
        #expect((december31.name, december31.firstDate, december31.lastDate, december31.fiscalYear) == ("1970-01", "1969-12-28", "1970-01-31", 1970))
        // Every fiscal year, before and after 1970, ends on a Saturday in September's last week.
        for year in Array(1900...2100) + [1, 1000, 9999] {
            let last = FiscalCalendar.lastDay(ofFiscalYear: year)
            let (civilYear, month, day) = Timestamp.civilFromDays(last)
            #expect(((last + 4) % 7 + 7) % 7 == 6 && civilYear == year && month == 9 && day >= 24, "\(year)")
        }
    }

    @Test("a purchase whose day in --tz lies outside years 0000 to 9999 still counts in revenue_monthly.csv, as in revenue_daily.csv")
    func monthlyRowsOfFarDays() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        typealias Fixture = RevenueReportTests.Fixture
        try scenario.write("receipts/r.jsonl", [
            // 9999-12-31T20:00Z is the first day of year 10000 in Tokyo. (No Production purchase
            // predates the App Store: year 0, the other side, is a rejected line.)
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "9999-12-31T20:00:00Z", price: 4990)),
            Line.v2Receipt("2026-11-20T10:00:05Z", "u1", transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-20T10:00:00Z", price: 4990)),
        ])
        _ = try scenario.run(asOf: "2026-12-01T00:00:00Z", zone: "Asia/Tokyo")
        let daily = try Fixture.table(scenario.output("revenue_daily.csv"))
        let monthly = try Fixture.table(scenario.output("revenue_monthly.csv"))
        #expect(daily.count == 2 && monthly.count == 2)
        #expect(daily.map { $0["date"] }.contains("10000-01-01"))
        for column in ["units", "gross", "refunds", "net"] {
            #expect(Fixture.sum(monthly, column) == Fixture.sum(daily, column), "\(column)")
        }
    }
}
