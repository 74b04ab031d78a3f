import Foundation

/// `apple_tieout.csv`: Apple's Sales Report beside verified units, per Pacific day, product and
/// country (CONTRACT.md §2 "Tie-out with Apple", §3), and its totals for `summary.json`.
///
/// Reads `fct_apple_tieout`, which the join recomputes every run; written only when the
/// reports have in-app rows. `difference` is Apple's units less verified ones: positive where
/// Apple sold what no receipt or notification reported.
struct AppleTieOutReport: Sendable {
    static let columns = [
        "date", "product_id", "country", "apple_units", "verified_units", "difference", "apple_customer_price",
        "customer_currency", "apple_proceeds", "proceeds_currency",
    ]

    typealias Row = TieOutRow

    var rows: [Row] = []
    /// The report files whose rows of a day repeat or overlap an earlier file's, which the page names.
    var overlaps: [SalesReportOverlap] = []
    /// The report files of rows whose proceeds came in several currencies, which the page names.
    var mixedProceeds: [SalesReportMixedProceeds] = []
    /// Σ proceeds per proceeds currency.
    var proceeds: [String: Amount] = [:]
    /// Σ proceeds in the reporting currency, at `fx.csv`'s rate on or before each row's day, each row
    /// rounded to the currency's minor unit like every reporting-currency amount (CONTRACT.md §3).
    var reportingProceeds = Amount.zero
    /// The rows whose proceeds `fx.csv` cannot convert (left out of `reportingProceeds`), for `fxWarnings`.
    var missingRates = MissingRates<Never>()
    let reportingCurrency: ReportingCurrency

    init(store: some ReportStore, fx: FXRates, reportingCurrency: ReportingCurrency) throws {
        self.reportingCurrency = reportingCurrency
        overlaps = try store.salesReportOverlaps()
        mixedProceeds = try store.salesReportMixedProceeds()
        for item in try store.tieOutRows() {
            rows.append(item)
            guard let currency = item.proceedsCurrency, let amount = item.proceeds.flatMap(Amount.parse) else { continue }
            proceeds[currency, default: .zero] += amount
            // No proceeds (a promo code redeemed) need no rate.
            if let converted = missingRates.convert(amount, at: fx.rate(currency, on: item.day), currency: currency, day: item.day) {
                reportingProceeds += reportingCurrency.rounded(converted)
            }
        }
    }

    /// One line per proceeds currency `fx.csv` cannot convert: summary.json's reporting-currency
    /// proceeds leave those rows out, which its count alone does not say on a nightly's stderr.
    var fxWarnings: [String] {
        missingRates.warnings { code, missing in
            let rows = missing.count == 1 ? "1 Sales Report row" : "\(missing.count) Sales Report rows"
            let days = missing.firstDay == missing.lastDay ? "day \(missing.firstDay)" : "days \(missing.firstDay) to \(missing.lastDay)"
            return "fx.csv has no rate into \(reportingCurrency.code) for \(code) on or before \(missing.lastDay): the proceeds of \(rows) "
                + "(\(days)) are left out of summary.json's \(reportingCurrency.column("apple_proceeds"))"
        }
    }

    func write(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.columns)
        for row in rows {
            try sink.csvRecord([
                CSV.textCell(row.day), CSV.textCell(row.productID), CSV.textCell(row.country), String(row.appleUnits),
                String(row.verifiedUnits), String(row.difference), CSV.numberCell(row.customerPrice ?? ""),
                CSV.textCell(row.customerCurrency ?? ""), CSV.numberCell(row.proceeds ?? ""), CSV.textCell(row.proceedsCurrency ?? ""),
            ])
        }
    }

    /// What the reports cover and the units on each side: `summary.json`'s and the report page's.
    struct Totals {
        /// The days with a row, in order.
        var days: [String]
        var appleUnits: Int64
        var verifiedUnits: Int64
    }

    static func totals(_ rows: [Row]) -> Totals {
        Totals(days: Set(rows.map(\.day)).sorted(), appleUnits: rows.reduce(0) { $0 + $1.appleUnits },
               verifiedUnits: rows.reduce(0) { $0 + $1.verifiedUnits })
    }

    /// `summary.json` → `apple_tieout`: what the reports cover and how far apart the two sides are.
    func summary(reportingCurrency: String) -> JSONValue {
        let totals = Self.totals(rows)
        let (days, appleUnits, verifiedUnits) = (totals.days, totals.appleUnits, totals.verifiedUnits)
        return .object([
            ("days", .int(days.count)), ("first_day", JSONValue.optional(days.first)), ("last_day", JSONValue.optional(days.last)),
            ("apple_units", .int(appleUnits)), ("verified_units", .int(verifiedUnits)), ("difference_units", .int(appleUnits - verifiedUnits)),
            ("apple_proceeds", .object(proceeds.keys.sorted().map { ($0, .string(Money.format(proceeds[$0] ?? .zero))) })),
            ("apple_proceeds_" + reportingCurrency.lowercased(), .string(Money.format(reportingProceeds))),
            ("proceeds_rows_without_fx_rate", .int(missingRates.count)),
        ])
    }
}
