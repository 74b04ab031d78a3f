/// Distinct keys numbered 0, 1, 2, ... in the order they are first seen: what goes with each key
/// is kept in an array the caller appends to when a key is new.
struct FirstSeen<Key: Hashable> {
    private var numbers: [Key: Int] = [:]

    /// The number of `key`, and whether this is its first time.
    mutating func number(_ key: Key) -> (number: Int, isNew: Bool) {
        if let known = numbers[key] { return (known, false) }
        let number = numbers.count
        numbers[key] = number
        return (number, true)
    }
}

extension FirstSeen: Sendable where Key: Sendable {}

/// The distinct texts of a column, each numbered once: a report reading hundreds of thousands of
/// rows that repeat a few hundred product ids, storefronts and currencies looks each row's text
/// up by the fingerprint of its bytes and makes a `String` only the first time it sees one.
struct TextIndex {
    private var numbers = FirstSeen<RowFingerprint>()
    private(set) var texts: [String] = []

    /// The number of column `column`'s text; NULL counts as the empty text.
    mutating func number(_ row: some StoredRow, _ column: some StoredColumn) -> Int32 {
        let (number, isNew) = numbers.number(row.fingerprint(column) ?? RowFingerprint(""))
        if isNew { texts.append(row.optionalString(column) ?? "") }
        return Int32(number)
    }

    /// The number of `text`, as `number(_:_:)` numbers a column holding it.
    mutating func number(_ text: String) -> Int32 {
        let (number, isNew) = numbers.number(RowFingerprint(text))
        if isNew { texts.append(text) }
        return Int32(number)
    }

    subscript(number: Int32) -> String { texts[Int(number)] }
}

/// Amounts and exchange rates of many transaction rows: each distinct amount text is parsed once,
/// and each currency's rate looked up once a day, in the report's zone (`FXRates` for the rule).
struct AmountReader {
    let fx: FXRates
    private(set) var days: DayNames
    private(set) var currencies = TextIndex()
    private var amounts: [RowFingerprint: Amount?] = [:]
    private var rates: [RateKey: Amount?] = [:]

    private struct RateKey: Hashable {
        var currency: Int32
        var day: Int64

        /// Looked up once per row: one multiply and shift, not SipHash.
        func _rawHashValue(seed: Int) -> Int {
            RowFingerprint.hashValue(UInt64(bitPattern: day), UInt64(UInt32(bitPattern: currency)), seed: seed)
        }
    }

    init(fx: FXRates, zone: Zone) {
        self.fx = fx
        days = DayNames(zone)
    }

    /// Column `column` as an exact amount: nil when it is NULL or not a number.
    mutating func amount(_ row: some StoredRow, _ column: some StoredColumn) -> Amount? {
        guard let fingerprint = row.fingerprint(column) else { return nil }
        if let amount = amounts[fingerprint] { return amount }
        let amount = Amount.parse(row.string(column))
        amounts[fingerprint] = amount
        return amount
    }

    /// The rate of the currency `currency` numbers (in `currencies`) on the day of `utcMs`: what
    /// `fx.rate(currency, on: day)` says.
    mutating func rate(currency: Int32, atMs utcMs: Int64) -> Amount? {
        let key = RateKey(currency: currency, day: days.number(utcMs))
        if let rate = rates[key] { return rate }
        let rate = fx.rate(currencies[currency], on: days(utcMs))
        rates[key] = rate
        return rate
    }

    /// The number of column `column`'s currency (NULL as the empty text), for `rate`.
    mutating func currency(_ row: some StoredRow, _ column: some StoredColumn) -> Int32 { currencies.number(row, column) }

    /// The number of the currency `code`, for `rate`.
    mutating func currency(_ code: String) -> Int32 { currencies.number(code) }

    /// The name of the day of `utcMs` in the report's zone.
    mutating func day(_ utcMs: Int64) -> String { days(utcMs) }
}
