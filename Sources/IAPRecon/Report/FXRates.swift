import Foundation

/// Daily exchange rates into the reporting currency (`fx.csv`).
///
/// A transaction converts at the latest rate on or before its purchase day,
/// and its refund at that same rate, so a refunded purchase nets to zero
/// (CONTRACT.md §1.6). The reporting currency itself converts at 1.
struct FXRates: Sendable {
    let reportingCurrency: String
    /// currency → (day, rate), sorted by day.
    private var rates: [String: [(day: String, rate: Amount)]] = [:]
    /// Days on which fx.csv gives a currency more than one rate: the last in file order is the
    /// one used, and a person is told (`warnings`).
    private(set) var conflicts: [(currency: String, day: String, rates: [FXRow])] = []

    /// The rates of the stored fx rows, by day then file.
    init(rows: [FXRow], reportingCurrency: String) {
        self.reportingCurrency = reportingCurrency
        var sameDay: [String: [(row: FXRow, rate: Amount?)]] = [:]
        var day = ""
        func noteConflicts() {
            for (currency, rows) in sameDay.sorted(by: { $0.key < $1.key }) where rows.contains(where: { $0.rate != rows[0].rate }) {
                conflicts.append((currency, day, rows.map(\.row)))
            }
            sameDay = [:]
        }
        for row in rows {
            if row.day != day { noteConflicts(); day = row.day }
            let rate = Amount.parse(row.rate)
            sameDay[row.currency, default: []].append((row, rate))
            if let rate { rates[row.currency, default: []].append((row.day, rate)) }
        }
        noteConflicts()
    }

    /// One line per day and currency fx.csv gives several rates, naming each with its line; past
    /// ten, how many more.
    var warnings: [String] {
        var lines = conflicts.prefix(10).map { conflict in
            let rates = conflict.rates.map { "\($0.rate) (\($0.path):\($0.line))" }
            let count = conflict.rates.count == 2 ? "two" : String(conflict.rates.count)
            return "fx.csv gives \(conflict.currency) \(count) rates on \(conflict.day), "
                + rates.dropLast().joined(separator: ", ") + " and " + (rates.last ?? "") + ": the last is used"
        }
        if conflicts.count > 10 { lines.append("fx.csv gives \(conflicts.count - 10) more days and currencies more than one rate") }
        return lines
    }

    /// The one currency the stored fx rows convert into (those with rate 1), or nil when there is
    /// none or more than one.
    static func convertsInto(_ stored: [FXRow]) -> String? {
        let units = ReportingCurrency.unitCurrencies(stored.map { ($0.currency, $0.rate) })
        return units.count == 1 ? units.first : nil
    }

    /// Checks the stored fx files against the reporting currency (`ReportingCurrency.check`), so a
    /// `report --currency JPY` over dollar rates stops instead of writing dollars as yen.
    func checkStored(_ stored: [FXRow]) throws {
        var files: [String: [(currency: String, rate: String, day: String, line: Int)]] = [:]
        for row in stored { files[row.path, default: []].append((row.currency, row.rate, row.day, Int(row.line))) }
        for path in files.keys.sorted() {
            try ReportingCurrency(reportingCurrency).check(fxRows: files[path] ?? [], file: path)
        }
    }

    /// The rate for `currency` on `day`, or nil when fx.csv has none on or before it.
    func rate(_ currency: String, on day: String) -> Amount? {
        if currency == reportingCurrency { return .one }
        guard let series = rates[currency] else { return nil }
        var low = 0
        var high = series.count
        while low < high {
            let middle = (low + high) / 2
            if series[middle].day <= day { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : series[low - 1].rate
    }
}
