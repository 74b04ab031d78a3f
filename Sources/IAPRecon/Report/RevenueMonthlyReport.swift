/// `revenue_monthly.csv`: `revenue_daily.csv`'s rows summed by Apple's fiscal month.
///
/// Finance ties App Store payments out against Apple's financial reports, which cover fiscal
/// months (`FiscalCalendar`), not calendar months. Grain: one row per fiscal month, product,
/// storefront and currency; each row says the month's first and last day, so a reader needs no
/// calendar to see which days it holds. Summing the daily rows keeps both files equal to the cent.
struct RevenueMonthlyReport {
    struct Key: Hashable, Comparable {
        var month: String
        var productID: String
        var storefront: String
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            (a.month, a.productID, a.storefront, a.currency) < (b.month, b.productID, b.storefront, b.currency)
        }
    }

    var rows: [Key: RevenueReport.Row] = [:]
    var months: [String: FiscalCalendar.Month] = [:]

    init(daily: RevenueReport) {
        for (day, row) in daily.rows {
            let month = FiscalCalendar.month(containing: day.day)
            months[month.name] = month
            let key = Key(month: month.name, productID: day.productID, storefront: day.storefront, currency: day.currency)
            rows[key] = rows[key].map { $0.adding(row) } ?? row
        }
    }

    /// The header; the last three columns are named for the reporting currency, as in revenue_daily.csv.
    static func header(_ currency: ReportingCurrency) -> [String] {
        ["fiscal_month", "fiscal_year", "first_day", "last_day", "product_id", "storefront", "currency", "units", "gross", "refunds", "net"]
            + ["gross", "refunds", "net"].map(currency.column)
    }

    func write(_ sink: inout TextSink, currency: ReportingCurrency) throws {
        try sink.csvRecord(Self.header(currency))
        for key in rows.keys.sorted() {
            guard let row = rows[key], let month = months[key.month] else { continue }
            try sink.csvRecord([
                CSV.textCell(key.month), String(month.fiscalYear), month.firstDate, month.lastDate,
                CSV.textCell(key.productID), CSV.textCell(key.storefront), CSV.textCell(key.currency), String(row.units),
            ] + row.moneyCells)
        }
    }
}
