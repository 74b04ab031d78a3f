/// The amounts a report cannot convert into the reporting currency because `fx.csv` has no rate
/// for them, per currency, and the one rule for when a rate is wanted at all (CONTRACT.md §1.6, §3).
///
/// An amount of 0 is 0 in every currency: it needs no rate, and is neither left out of a total nor
/// named as such (a free trial, a spend row of nothing, a family-shared finding, a promo code's
/// proceeds). Every other amount without a rate is counted under its currency with the days it
/// fell on and its earliest `Reference` (a finding's row, a spend line), so a report's warning can
/// tell a nightly's reader which rate is missing and where, not only how many amounts lack one.
/// `MissingRates<Never>` keeps no reference.
struct MissingRates<Reference: Comparable & Sendable>: Sendable {
    /// One currency's amounts without a rate.
    struct Tally: Sendable {
        var count: Int
        /// The earliest and latest days whose rate was wanted (`yyyy-MM-dd`).
        var firstDay: String
        var lastDay: String
        /// The least reference given with them.
        var first: Reference?
    }

    private(set) var byCurrency: [String: Tally] = [:]
    /// The amounts without a rate, in every currency.
    private(set) var count = 0

    /// `amount.converted(at: rate)`, counting `amount` under `currency` when it has no rate. The
    /// day and reference are only worked out then.
    mutating func convert(_ amount: Amount, at rate: Amount?, currency: @autoclosure () -> String,
                          day: @autoclosure () -> String, reference: @autoclosure () -> Reference? = nil) -> Amount? {
        if let converted = amount.converted(at: rate) { return converted }
        add(currency: currency(), Tally(count: 1, firstDay: day(), lastDay: day(), first: reference()))
        return nil
    }

    /// Counts `tally`'s amounts under `currency` too.
    mutating func add(currency: String, _ tally: Tally) {
        count += tally.count
        guard var sum = byCurrency[currency] else {
            byCurrency[currency] = tally
            return
        }
        sum.count += tally.count
        sum.firstDay = min(sum.firstDay, tally.firstDay)
        sum.lastDay = max(sum.lastDay, tally.lastDay)
        if let reference = tally.first, sum.first.map({ reference < $0 }) ?? true { sum.first = reference }
        byCurrency[currency] = sum
    }

    /// Counts `other`'s amounts too.
    mutating func add(_ other: MissingRates) {
        for (currency, tally) in other.byCurrency { add(currency: currency, tally) }
    }

    /// One line per currency, in the order of their codes, as `line` words it.
    func warnings(_ line: (_ currency: String, _ tally: Tally) -> String) -> [String] {
        byCurrency.keys.sorted().compactMap { code in byCurrency[code].map { line(code, $0) } }
    }
}

extension Amount {
    /// This amount at `rate`, fx.csv's into the reporting currency; 0 without one, as 0 is 0 in
    /// every currency; nil for any other amount without one (`MissingRates`).
    func converted(at rate: Amount?) -> Amount? {
        if let rate { return self * rate }
        return isZero ? .zero : nil
    }
}
