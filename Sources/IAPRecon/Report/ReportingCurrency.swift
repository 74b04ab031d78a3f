import Foundation

/// The currency `fx.csv` converts into (`--currency`), and how its amounts are shown (CONTRACT.md §1.6, §3).
///
/// Columns and keys are named for it (`gross_jpy`, `amount_eur`), and every cell is rounded
/// half-even to its ISO 4217 minor unit row by row; totals add the rounded rows, so a sum of a
/// column always equals the total `summary.json` shows for it.
public struct ReportingCurrency: Sendable, Equatable {
    public let code: String
    /// Decimal places of the currency's minor unit (ISO 4217, `CurrencyMinorUnits`); 2 for a code
    /// the table does not know, which only a caller that skips `--currency`'s check can give.
    /// Looked up once: every money cell of a report is rounded to it.
    public let minorUnit: Int

    public init(_ code: String) {
        self.code = code.uppercased()
        minorUnit = CurrencyMinorUnits.places(self.code) ?? 2
    }

    /// `name` with the currency's suffix: `gross` → `gross_jpy`.
    public func column(_ name: String) -> String { name + "_" + code.lowercased() }

    /// An amount as a cell shows it: rounded half-even to the minor unit.
    func rounded(_ amount: Amount) -> Amount { amount.rounded(scale: minorUnit) }

    /// An amount as people read it on a page: rounded to the minor unit, every place of it written
    /// and the whole part grouped by thousands (`1,208,134.10`, `19,439` yen). The files keep the
    /// plain exact text (`1208134.1`), which is what scripts and the page's check compare.
    func shown(_ amount: Amount) -> String { Self.shown(amount, places: minorUnit) }

    /// `amount` rounded half-even to `places`, every place written, the whole part grouped by thousands.
    static func shown(_ amount: Amount, places: Int) -> String {
        let text = amount.rounded(scale: places).text
        let negative = text.hasPrefix("-")
        let unsigned = negative ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts.first.map(String.init) ?? "0"
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        var grouped = ""
        for (index, digit) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        if places > 0 { grouped += "." + fraction + String(repeating: "0", count: max(0, places - fraction.count)) }
        return (negative ? "-" : "") + grouped
    }

    /// `fx.csv` converts into the reporting currency when its rows for that currency have rate 1
    /// and no other currency's do. Checked before anything else is read: a run that reports yen
    /// from dollar rates writes wrong numbers under the right names.
    public struct Mismatch: Error, CustomStringConvertible, Sendable {
        public var file: String
        public var found: [String]
        public var wanted: String
        /// The file's first rejected line and its reason, and how many more it rejects: the run stops
        /// before its rejects are reported, and the rate-1 row may be among them (`usd,1`).
        public var rejected: (line: Int, reason: String, more: Int)?
        /// When the file does convert into `wanted` and another currency's rate is 1 besides (a
        /// currency at parity for a day), its first such row and how many more: the file is not
        /// another currency's, and the person fixing it needs the row.
        public var strayUnit: (currency: String, day: String, line: Int, more: Int)?
        public var description: String {
            if let stray = strayUnit {
                let more = stray.more == 0 ? "" : stray.more == 1 ? ", and on 1 more row" : ", and on \(stray.more) more rows"
                return "\(file) converts into \(wanted), but gives \(stray.currency) rate 1 on \(stray.day) (\(file):\(stray.line))\(more): "
                    + "only \(wanted) may have rate 1, or the file reads as converting into \(stray.currency)"
            }
            let mismatch = found.isEmpty
                ? "\(file) has no rate-1 row for \(wanted): it does not convert into \(wanted)"
                : "\(file) converts into \(found.joined(separator: ", ")), not \(wanted)"
            guard let rejected else { return mismatch }
            let more = rejected.more == 0 ? "" : rejected.more == 1 ? ", and 1 more line" : ", and \(rejected.more) more lines"
            return mismatch + " (\(file):\(rejected.line) is rejected: \(rejected.reason)\(more))"
        }
    }

    /// The currencies whose fx rows have rate 1: what fx rows convert into.
    static func unitCurrencies(_ rows: [(currency: String, rate: String)]) -> Set<String> {
        Set(rows.filter { Money.parse($0.rate) == 1 }.map(\.currency))
    }

    /// Throws `Mismatch` when `rows` (currency, rate, day, line) of the fx file named `file` do not convert into this currency.
    public func check(fxRows rows: [(currency: String, rate: String, day: String, line: Int)], file: String,
                      rejected: (line: Int, reason: String, more: Int)? = nil) throws {
        let unitCurrencies = Self.unitCurrencies(rows.map { ($0.currency, $0.rate) })
        guard unitCurrencies != [code] else { return }
        var mismatch = Mismatch(file: file, found: unitCurrencies.subtracting([code]).sorted(), wanted: code, rejected: rejected)
        if unitCurrencies.contains(code) {
            let strays = rows.filter { $0.currency != code && Money.parse($0.rate) == 1 }.sorted { $0.line < $1.line }
            if let first = strays.first { mismatch.strayUnit = (first.currency, first.day, first.line, strays.count - 1) }
        }
        throw mismatch
    }
}
