import Foundation

/// What `report.html` shows, taken from the values the report stage already computed: the page
/// never re-reads a written file, so it cannot disagree with the files of its own set.
///
/// Money is in the reporting currency (`fx.csv`'s latest rate on or before the day, as everywhere
/// else), exact until the renderer formats it. Headline numbers carry the `summary.json` key they
/// stand for, so a check can compare the page with the summary value by value.
struct ReportPage {
    struct Headline {
        /// The dotted path of the value in `summary.json`, e.g. `revenue.net_usd`.
        var summaryKey: String
        var label: String
        /// The value as `summary.json` writes it.
        var value: String
        /// The value as the card shows it (an amount in full minor units, grouped by thousands).
        var shown: String
    }

    struct Day {
        var date: String
        var gross: Amount
        var refunds: Amount
        var net: Amount { gross - refunds }
    }

    /// The revenue of the days before the chart's first: in the cards' totals, summed, not drawn.
    struct EarlierDays {
        /// Days with revenue among them.
        var count: Int
        var gross: Amount
        var refunds: Amount
    }

    /// The most days the chart draws, the last ones: a store that grows every night would
    /// otherwise squeeze years of days into bars thinner than a pixel.
    static let chartDays = 120

    struct RiskKind {
        var kind: String
        var severity: String
        var count: Int
        /// Of `count`, the findings first reported by this run (`findings.csv`'s `new`).
        var new = 0
        /// The kind's amounts converted into the reporting currency.
        var amount: Amount
        /// Findings of the kind whose amount fx.csv could not convert; they are counted, not summed.
        var unconverted: Int
    }

    struct CriticalFinding {
        var findingID: String
        var kind: String
        var eventTime: String
        var userID: String
        var transactionID: String
        var productID: String
        var amount: String
        var currency: String
        var detail: String
        var sources: String
        /// First reported by this run (`findings.csv`'s `new`): what the night's alert counts.
        var isNew = false
    }

    struct MediaSource {
        var name: String
        var installs: Int
        var payers: Int
        /// attribution.csv's revenue cells summed: what has a price and an fx rate.
        var revenue: Amount
        /// Nil when some of the source's spend has no fx rate: the total is unknown.
        var spend: Amount?
        /// Whether any of the source's cohorts has spend rows. Organic installs, or a run without
        /// spend files, have none: that is no data, which the page says, not a measured 0.
        var hasSpend = false
        var roas: String {
            guard hasSpend, let spend, spend.decimal > 0 else { return "" }
            return ReportingCurrency.shown(Amount(revenue.decimal / spend.decimal), places: 2)
        }
    }

    /// Apple's tie-out as finance reads it. Most rows of `apple_tieout.csv` that differ do so by
    /// country only: a receipt with no storefront puts its unit in the country `??`, where it covers
    /// a shortfall of its day and product. Listing those rows would bury the shortfalls nothing
    /// covers, the `unverified_apple_sales` findings, so the page counts them and lists these.
    struct TieOut {
        /// The days the reports cover and the units on each side, as `summary.json` gives them.
        var totals: AppleTieOutReport.Totals
        /// Rows of a known country with fewer verified purchases than Apple's (`AppleTieOut.findings`:
        /// refunds are held against refunds apart).
        var shortfallRows = 0
        /// Of those, the rows storefront-less purchases cover whole.
        var coveredRows = 0
        /// Rows of a known country with more verified units than Apple's, and by how many in all.
        var surplusRows = 0
        var surplusUnits: Int64 = 0
        /// The newest `tieoutRowsShown` shortfalls not covered whole, newest day first, then in product and
        /// country order: a nightly reader looks for the days just reported.
        var uncovered: [AppleTieOut.Shortfall<AppleTieOutReport.Row>] = []
        /// How many shortfalls are not covered whole, and their missing units.
        var uncoveredRows = 0
        var missingUnits: Int64 = 0
        /// Rows of Apple's whose proceeds came in two currencies: `apple_proceeds` is empty and the
        /// totals leave them out, which the join warns of only on the night it reads the report.
        var proceedsInTwoCurrencies = 0
        /// The Sales Report files those rows' lines are in, in path order, each with its days of
        /// them: what finance asks Apple about. Kept with the day's tie-out, like `reportWarnings`.
        var proceedsInTwoCurrenciesFiles: [(path: String, days: [String])] = []
        /// The report files whose rows of a day repeat or overlap an earlier file's, worded as the join
        /// words them on stderr (`AppleTieOut.warnings`): the units above count a repeated day's rows
        /// once, and both files' rows of an overlapping one. The join keeps them with the day's
        /// tie-out, so every page names them while the files are stored, not only the night's page.
        var reportWarnings: [String] = []

        /// Nil without a row: no reports, or reports whose days hold no in-app row.
        init?(_ rows: [AppleTieOutReport.Row], overlaps: [SalesReportOverlap] = [], mixedProceeds: [SalesReportMixedProceeds] = []) {
            guard !rows.isEmpty else { return nil }
            totals = AppleTieOutReport.totals(rows)
            reportWarnings = AppleTieOut.warnings(overlaps)
            var daysByPath: [String: Set<String>] = [:]
            for lines in mixedProceeds { daysByPath[lines.path, default: []].insert(lines.day) }
            // Byte by byte, as files are in path order everywhere (`SourceFiles`).
            proceedsInTwoCurrenciesFiles = daysByPath.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
                .map { ($0.key, $0.value.sorted()) }
            var unplaced: [String: Int64] = [:]
            for row in rows where row.country == AppleTieOut.unknownCountry { unplaced[row.day + "|" + row.productID] = row.unplacedPurchases }
            proceedsInTwoCurrencies = rows.count { $0.customerPrice != nil && $0.proceeds == nil }
            for row in rows where row.country != AppleTieOut.unknownCountry && row.difference < 0 {
                surplusRows += 1
                surplusUnits -= row.difference
            }
            let shortfalls = AppleTieOut.shortfalls(rows, key: { AppleTieOut.Key(day: $0.day, productID: $0.productID, country: $0.country) },
                                                    shortfall: \.purchaseShortfall) { unplaced[$0.day + "|" + $0.productID] ?? 0 }
            shortfallRows = shortfalls.count
            var open: [AppleTieOut.Shortfall<AppleTieOutReport.Row>] = []
            for shortfall in shortfalls {
                guard shortfall.missing > 0 else {
                    coveredRows += 1
                    continue
                }
                missingUnits += shortfall.missing
                open.append(shortfall)
            }
            uncoveredRows = open.count
            // Stable: within a day, product and country order stay.
            uncovered = Array(open.enumerated().sorted { ($1.element.row.day, $0.offset) < ($0.element.row.day, $1.offset) }
                .prefix(ReportPage.tieoutRowsShown).map(\.element))
        }
    }

    typealias InputFile = SummaryCounts.InputFile

    var asOf: String
    var timeZone: String
    var currency: String
    var headlines: [Headline]
    /// Revenue transactions fx.csv has no rate for: left out of the totals and the chart, as
    /// summary.json leaves them out (`transactions.without_fx_rate`), so the page must say so.
    var revenueWithoutFXRate: Int
    /// Revenue transactions with no price at all (no V2 price, order or catalog entry): left out
    /// the same way, counted by summary.json as `transactions.price_source.none`.
    var revenueWithoutPrice: Int
    /// The chart's days, the last `chartDays` at most.
    var days: [Day]
    /// Nil when the chart draws every day with revenue.
    var earlier: EarlierDays?
    var risk: [RiskKind]
    /// The `summary.json` key of money at risk, named for the reporting currency.
    var atRiskKey: String
    var criticalFindings: [CriticalFinding]
    var criticalTotal: Int
    /// The critical findings first reported by this run that `criticalFindings` leaves out, newest first, as many
    /// as it lists: a finding of an old event that reached the store tonight is what the night's alert names.
    var earlierNewCritical: [CriticalFinding] = []
    /// How many of those there are.
    var earlierNewCriticalTotal = 0
    /// Apple's tie-out; nil until a run reads Apple's sales reports.
    var tieout: TieOut?
    /// What the run warns of in its inputs (fx rates, catalog lines, spend files that disagree): a
    /// nightly run's stderr reaches a log, and the person who reads the page is who can mend them.
    var warnings: [String] = []
    /// What the night's command said of the night (`ReportSettings.nightWarnings`), first on the page.
    var nightWarnings: [String] = []
    /// The revenue figures of days already reported that this report changed (`RestatedFigures.line`): finance books
    /// them, and must restate its books.
    var restatedRevenue: String?
    var mediaSources: [MediaSource]
    var inputs: [InputFile]
    var inputTotals: LineCounts

    /// How many of the tie-out's uncovered shortfalls the page lists; findings.csv has them all.
    static let tieoutRowsShown = 20

    /// How many files of rows with proceeds in two currencies the page names; the rest it counts.
    static let proceedsFilesShown = 3

    /// How many of the newest critical findings the page lists; findings.csv has them all.
    static let criticalShown = 10

    init(asOfMs: Int64, settings: ReportSettings, counts: SummaryReport.Counts, findings: FindingsReport, revenue: RevenueReport,
         attribution: AttributionReport) {
        asOf = Timestamp.iso8601(asOfMs)
        timeZone = settings.zone.identifier
        currency = settings.currency
        let net = revenue.grossUSD - revenue.refundsUSD
        let reporting = settings.reportingCurrency
        atRiskKey = reporting.column("money_at_risk")
        func money(_ name: String, _ label: String, _ amount: Amount) -> Headline {
            Headline(summaryKey: "revenue." + reporting.column(name), label: label + " " + settings.currency, value: Money.format(amount),
                     shown: reporting.shown(amount))
        }
        func count(_ key: String, _ label: String, _ value: Int) -> Headline {
            Headline(summaryKey: key, label: label, value: String(value), shown: ReportingCurrency.shown(Amount(Decimal(value)), places: 0))
        }
        headlines = [
            money("gross", "Gross", revenue.grossUSD), money("refunds", "Refunds", revenue.refundsUSD), money("net", "Net", net),
            count("findings.total", "Findings", findings.rows.count), count("inputs.totals.read", "Lines read", counts.totals.read),
            count("inputs.totals.rejected", "Rejected", counts.totals.rejected),
        ]

        revenueWithoutFXRate = revenue.missingRates.count
        revenueWithoutPrice = revenue.priceSources[.none] ?? 0

        var byDate: [String: Day] = [:]
        for (key, row) in revenue.rows {
            var day = byDate[key.date] ?? Day(date: key.date, gross: .zero, refunds: .zero)
            day.gross += row.grossUSD ?? .zero
            day.refunds += row.refundsUSD ?? .zero
            byDate[key.date] = day
        }
        (days, earlier) = Self.chart(byDate)

        var risk: [String: RiskKind] = [:]
        for kind in FindingKind.allCases {
            risk[kind.rawValue] = RiskKind(kind: kind.rawValue, severity: kind.severity.rawValue, count: 0, amount: .zero, unconverted: 0)
        }
        var critical: [CriticalFinding] = []
        for row in findings.rows {
            let value = { (column: FindingsReport.Column) in row[column] ?? "" }
            risk[row.kind]?.count += 1
            if row.isNew { risk[row.kind]?.new += 1 }
            // The rows' own rounded amounts, as summary.json adds them, so the page and the summary agree.
            if let amount = row.reportingAmount {
                risk[row.kind]?.amount += amount
            } else if row[.amount].flatMap(Amount.parse) != nil {
                risk[row.kind]?.unconverted += 1
            }
            if row.severity == Severity.critical.rawValue {
                critical.append(CriticalFinding(
                    findingID: value(.findingID), kind: value(.kind), eventTime: value(.eventMs), userID: value(.userID),
                    transactionID: value(.transactionID), productID: value(.productID), amount: value(.amount), currency: value(.currency),
                    detail: value(.detail), sources: value(.sources), isNew: row.isNew))
            }
        }
        self.risk = FindingKind.allCases.compactMap { risk[$0.rawValue] }
        criticalTotal = critical.count
        criticalFindings = Self.newest(critical, count: Self.criticalShown)
        // The list above is the newest by event time, whatever the store's history, so a fresh store lists the same.
        // When every one is new (a first run), none is news beside another: the list's count line says how many more.
        let listed = Set(criticalFindings.map(\.findingID))
        let earlierNew = critical.allSatisfy(\.isNew) ? [] : critical.filter { $0.isNew && !listed.contains($0.findingID) }
        earlierNewCriticalTotal = earlierNew.count
        earlierNewCritical = Self.newest(earlierNew, count: Self.criticalShown)

        var sources: [String: MediaSource] = [:]
        for (key, cohort) in attribution.cohorts {
            var source = sources[key.mediaSource] ?? MediaSource(name: key.mediaSource, installs: 0, payers: 0, revenue: .zero, spend: .zero)
            source.installs += cohort.installs
            source.payers += cohort.payers
            // attribution.csv's cells, rounded per cohort, so the page's sums are that file's column sums.
            let revenue = reporting.rounded(cohort.revenue)
            source.revenue += revenue
            source.hasSpend = source.hasSpend || cohort.hasSpend
            if cohort.spendUnconverted {
                source.spend = nil
            } else if cohort.hasSpend {
                let spend = reporting.rounded(cohort.spend)
                source.spend = source.spend.map { $0 + spend }
            }
            sources[key.mediaSource] = source
        }
        mediaSources = sources.values.sorted { ($0.revenue.decimal, $1.name) > ($1.revenue.decimal, $0.name) }

        inputs = counts.files
        inputTotals = counts.totals
    }

    /// The first `count` of `findings` sorted newest first (by event time, then id, descending), equal
    /// ones in their order, as a stable sort's prefix: picked in one pass, not by sorting them all.
    static func newest(_ findings: [CriticalFinding], count: Int) -> [CriticalFinding] {
        var newest: [CriticalFinding] = []
        newest.reserveCapacity(count + 1)
        func isNewer(_ a: CriticalFinding, than b: CriticalFinding) -> Bool { (a.eventTime, a.findingID) > (b.eventTime, b.findingID) }
        for finding in findings {
            if newest.count == count, let last = newest.last, !isNewer(finding, than: last) { continue }
            // After every one it is not newer than: an equal one seen earlier stays first.
            var index = newest.count
            while index > 0, isNewer(finding, than: newest[index - 1]) { index -= 1 }
            newest.insert(finding, at: index)
            if newest.count > count { newest.removeLast() }
        }
        return newest
    }

    /// The days from the first with revenue (or `chartDays` before the last) to the last, none
    /// left out, so the chart's x axis is time; and what the days before them add up to.
    private static func chart(_ byDate: [String: Day]) -> ([Day], EarlierDays?) {
        let numbers = byDate.keys.compactMap { Timestamp.startOfDay($0).map { $0 / 86_400_000 } }
        guard let first = numbers.min(), let last = numbers.max() else { return ([], nil) }
        let start = max(first, last - Int64(chartDays) + 1)
        let drawn = (start...last).map { number in
            let date = Timestamp.day(number * 86_400_000)
            return byDate[date] ?? Day(date: date, gross: .zero, refunds: .zero)
        }
        guard start > first else { return (drawn, nil) }
        var earlier = EarlierDays(count: 0, gross: .zero, refunds: .zero)
        for (date, day) in byDate where date < drawn[0].date {
            earlier.count += 1
            earlier.gross += day.gross
            earlier.refunds += day.refunds
        }
        return (drawn, earlier)
    }
}
