/// Figures an earlier report published that this one changes: finance books each day's revenue from
/// revenue_daily.csv (and each fiscal month's from revenue_monthly.csv), so a late receipt, a refund dated in the
/// past or a file read again that changes a day already reported must be said, with the old and new figures.
///
/// A report's figures are, per day of its zone and currency, the sums of the cells revenue_daily.csv prints
/// (`PublishedRevenue`). Compared are the days up to the earlier of the two reports' as-of days, which both covered (a
/// day absent from one had nothing: zero); a later day is new, not restated. A fiscal month is compared once the
/// earlier report covered all its days: a month still under way changes with every new day, and its restated days
/// are named one by one. Reports in other zones are not compared, nor reporting-currency figures in another currency.
struct RestatedFigures: Equatable, Sendable {
    struct Change: Equatable, Sendable {
        /// `USD gross` for a local currency's column, `gross_usd` for the reporting currency's.
        var column: String
        var old: String
        var new: String
    }

    struct Period: Equatable, Sendable {
        /// `2026-11-27`, or a fiscal month's name (`2026-11`).
        var name: String
        var changes: [Change]
    }

    var days: [Period] = []
    var months: [Period] = []

    var isEmpty: Bool { days.isEmpty && months.isEmpty }

    /// What `revenue` publishes, as the outputs set at `setPath` in `folder` shows it, as of the day of `asOfMs` in `zone`.
    static func figures(_ revenue: RevenueReport, zone: Zone, asOfMs: Int64, setPath: String, folder: String) -> PublishedRevenue {
        var sums: [Key: Sums] = [:]
        var dates: [Int64: String] = [:]
        for (key, row) in revenue.rows {
            dates[key.day] = key.date
            sums[Key(day: key.day, reporting: false, currency: key.currency), default: Sums()]
                .add(gross: row.gross, refunds: row.refunds)
            sums[Key(day: key.day, reporting: true, currency: revenue.currency.code), default: Sums()]
                .add(gross: row.grossUSD, refunds: row.refundsUSD)
        }
        let figures = sums.keys.sorted().map { key in
            let sum = sums[key] ?? Sums()
            return PublishedRevenue.Figure(day: key.day, date: dates[key.day] ?? "", reporting: key.reporting, currency: key.currency,
                                           gross: Money.format(sum.gross), refunds: Money.format(sum.refunds), net: Money.format(sum.net))
        }
        return PublishedRevenue(setPath: setPath, folder: folder, zone: zone.identifier, reportingCurrency: revenue.currency.code,
                                throughDay: DayNames(zone).number(asOfMs), figures: figures)
    }

    /// What `new` changes of `old`'s figures; nothing when no report was published before.
    init(published old: PublishedRevenue?, now new: PublishedRevenue) {
        guard let old, old.zone == new.zone else { return }
        let through = min(old.throughDay, new.throughDay)
        let sameReporting = old.reportingCurrency == new.reportingCurrency
        func compared(_ figures: PublishedRevenue) -> [Key: PublishedRevenue.Figure] {
            var byKey: [Key: PublishedRevenue.Figure] = [:]
            for figure in figures.figures where figure.day <= through && (sameReporting || !figure.reporting) {
                byKey[Key(day: figure.day, reporting: figure.reporting, currency: figure.currency)] = figure
            }
            return byKey
        }
        let before = compared(old), after = compared(new)
        let keys = Set(before.keys).union(after.keys).sorted()
        var days: [Int64: Period] = [:]
        for key in keys {
            let was = before[key], now = after[key]
            let changes = Self.changes(key, old: (was?.gross ?? "0", was?.refunds ?? "0", was?.net ?? "0"),
                                       new: (now?.gross ?? "0", now?.refunds ?? "0", now?.net ?? "0"))
            guard !changes.isEmpty else { continue }
            days[key.day, default: Period(name: now?.date ?? was?.date ?? "", changes: [])].changes += changes
        }
        self.days = days.keys.sorted().compactMap { days[$0] }
        // Fiscal months the earlier report covered whole, summed from the days as revenue_monthly.csv sums them.
        guard !self.days.isEmpty else { return }
        var monthSums: [Key: (old: Sums, new: Sums)] = [:]
        var names: [Int64: String] = [:]
        for (figures, isNew) in [(before, false), (after, true)] {
            for (key, figure) in figures {
                let month = FiscalCalendar.month(containing: key.day)
                guard month.lastDay <= through else { continue }
                names[month.firstDay] = month.name
                let monthKey = Key(day: month.firstDay, reporting: key.reporting, currency: key.currency)
                var pair = monthSums[monthKey] ?? (Sums(), Sums())
                if isNew { pair.new.add(figure) } else { pair.old.add(figure) }
                monthSums[monthKey] = pair
            }
        }
        var months: [Int64: Period] = [:]
        for key in monthSums.keys.sorted() {
            guard let pair = monthSums[key] else { continue }
            let changes = Self.changes(key, old: pair.old.texts, new: pair.new.texts)
            guard !changes.isEmpty else { continue }
            months[key.day, default: Period(name: names[key.day] ?? "", changes: [])].changes += changes
        }
        self.months = months.keys.sorted().compactMap { months[$0] }
    }

    /// One line for stderr and the report page; nil when nothing was restated. At most `listed` days and `listed`
    /// months are spelled out, the others counted.
    func line(listed: Int = 3) -> String? {
        guard !isEmpty else { return nil }
        func spelled(_ periods: [Period], _ unit: String, _ units: String) -> String {
            let shown = periods.prefix(listed).map { period in
                period.name + " (" + period.changes.map { "\($0.column) \($0.old) → \($0.new)" }.joined(separator: ", ") + ")"
            }
            let more = periods.count - shown.count
            return "\(periods.count) \(periods.count == 1 ? unit : units) already reported changed: " + shown.joined(separator: ", ")
                + (more > 0 ? " and \(more) more \(more == 1 ? unit : units)" : "")
        }
        var parts: [String] = []
        if !days.isEmpty { parts.append(spelled(days, "day", "days") + " (revenue_daily.csv)") }
        if !months.isEmpty { parts.append(spelled(months, "fiscal month", "fiscal months") + " (revenue_monthly.csv)") }
        return parts.joined(separator: "; ")
    }

    private static func changes(_ key: Key, old: (String, String, String), new: (String, String, String)) -> [Change] {
        let columns = [("gross", old.0, new.0), ("refunds", old.1, new.1), ("net", old.2, new.2)]
        return columns.compactMap { name, was, now in
            guard was != now else { return nil }
            let column = key.reporting ? ReportingCurrency(key.currency).column(name) : key.currency + " " + name
            return Change(column: column, old: was, new: now)
        }
    }

    /// A figure's day (or month's first day), then its local currencies before the reporting currency's.
    private struct Key: Hashable, Comparable {
        var day: Int64
        var reporting: Bool
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            if a.day != b.day { return a.day < b.day }
            if a.reporting != b.reporting { return !a.reporting }
            return a.currency.utf8.lexicographicallyPrecedes(b.currency.utf8)
        }
    }

    /// The sums of printed cells: an empty cell (an unknown amount) counts as nothing, a net only where its row has one.
    private struct Sums {
        var gross = Amount.zero, refunds = Amount.zero, net = Amount.zero

        mutating func add(gross: Amount?, refunds: Amount?) {
            if let gross { self.gross += gross }
            if let refunds { self.refunds += refunds }
            if let gross, let refunds { net += gross - refunds }
        }

        mutating func add(_ figure: PublishedRevenue.Figure) {
            gross += Amount.parse(figure.gross) ?? .zero
            refunds += Amount.parse(figure.refunds) ?? .zero
            net += Amount.parse(figure.net) ?? .zero
        }

        var texts: (String, String, String) { (Money.format(gross), Money.format(refunds), Money.format(net)) }
    }
}
