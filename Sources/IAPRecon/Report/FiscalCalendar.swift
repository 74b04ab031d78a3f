/// Apple's fiscal calendar, the one App Store payments and financial reports use.
///
/// Weeks run Sunday to Saturday. A fiscal year ends on the last Saturday of September and the
/// next begins the day after. Each quarter is 13 weeks split 5-4-4: its first month has five
/// weeks, the other two four. A year that reaches 53 weeks (every five or six years) gives the
/// extra week to the first quarter's last month, December, so Q1 has 14 weeks. A fiscal month is
/// named by the calendar month most of it falls in: fiscal October starts in late September or on
/// 1 October and always ends in October or early November.
enum FiscalCalendar {
    /// One fiscal month: Apple's name for it (`2026-10` is fiscal October 2026, in fiscal year 2027)
    /// and its first and last day, as days since 1970-01-01.
    struct Month: Equatable, Sendable {
        var fiscalYear: Int
        /// 1 (October) through 12 (September).
        var period: Int
        var firstDay: Int64
        var lastDay: Int64

        /// `yyyy-MM` of the calendar month the period is named after.
        var name: String {
            let month = (period + 8) % 12 + 1
            let year = period <= 3 ? fiscalYear - 1 : fiscalYear
            return String(year) + "-" + (month < 10 ? "0" : "") + String(month)
        }

        var firstDate: String { Timestamp.day(firstDay * 86_400_000) }
        var lastDate: String { Timestamp.day(lastDay * 86_400_000) }
    }

    /// The last day of fiscal year `year`: the last Saturday of September.
    static func lastDay(ofFiscalYear year: Int) -> Int64 {
        let september30 = Timestamp.daysFromCivil(year: year, month: 9, day: 30)
        // 1970-01-01 was a Thursday: weekday 0 is Sunday, 6 Saturday. Days before 1970 are negative
        // numbers, whose remainder would be negative too.
        let weekday = ((september30 + 4) % 7 + 7) % 7
        return september30 - (weekday + 1) % 7
    }

    /// The fiscal month holding `day` (days since 1970-01-01).
    static func month(containing day: Int64) -> Month {
        let (calendarYear, _, _) = Timestamp.civilFromDays(day)
        let fiscalYear = day > lastDay(ofFiscalYear: calendarYear) ? calendarYear + 1 : calendarYear
        let first = lastDay(ofFiscalYear: fiscalYear - 1) + 1
        let hasExtraWeek = lastDay(ofFiscalYear: fiscalYear) - first + 1 == 371
        var start = first
        for period in 1...12 {
            var weeks: Int64 = period % 3 == 1 ? 5 : 4
            if period == 3 && hasExtraWeek { weeks += 1 }
            let end = start + weeks * 7 - 1
            if day <= end || period == 12 { return Month(fiscalYear: fiscalYear, period: period, firstDay: start, lastDay: end) }
            start = end + 1
        }
        return Month(fiscalYear: fiscalYear, period: 12, firstDay: start, lastDay: start)
    }

    /// The fiscal month of a `yyyy-MM-dd` day, nil when the text is not a date.
    static func month(of date: String) -> Month? {
        guard let ms = Timestamp.startOfDay(date) else { return nil }
        return month(containing: ms / 86_400_000)
    }
}
