import Foundation

/// An exact decimal amount for sums over many rows: a whole number of 10⁻¹⁸ units in an `Int128`,
/// or a Foundation `Decimal` once a value needs more places or more size than that holds.
///
/// The reports add and convert hundreds of thousands of prices a night, and `Decimal`
/// arithmetic is slow at that scale. Integer units are far cheaper and exact the
/// same way: every result here is the exact value, and `decimal` equals (and prints as) the
/// `Decimal` that `Decimal` arithmetic gives for the same operations. A value
/// that integer units cannot hold exactly (more than 18 places, or beyond ±10²⁰) is computed as
/// a `Decimal` from there on, so nothing is ever rounded here that `Decimal` would not round.
struct Amount: Sendable, Equatable {
    private enum Storage: Sendable, Equatable {
        case units(Int128)
        case decimal(Decimal)
    }

    private var storage: Storage

    static let places = 18
    private static let unit = power(places)
    private static let unit64 = UInt64(1_000_000_000_000_000_000)
    private static let twoTo64 = Decimal(UInt64.max) + 1
    static let zero = Amount(units: 0)
    static let one = Amount(units: unit)

    private init(units: Int128) { storage = .units(units) }

    init(_ decimal: Decimal) { storage = .decimal(decimal) }

    /// An exact amount from text such as `"0.99"`; nil for what `Money.parse` refuses.
    static func parse(_ text: String) -> Amount? {
        guard let digits = Money.Digits(text) else { return nil }
        if digits.exponent >= -places {
            let magnitude = Int128(digits.significand) * power(places + digits.exponent)
            return Amount(units: digits.negative ? -magnitude : magnitude)
        }
        return Amount(digits.decimal)
    }

    /// An exact amount from a JSON number or numeric string.
    static func parse(_ value: JSONValue) -> Amount? {
        switch value {
        case .number(let text), .string(let text): parse(text)
        default: nil
        }
    }

    /// A whole number of major units, such as a range's bound.
    init(whole: Int64) { storage = .units(Int128(whole) * Self.unit) }

    /// True when the amount is below zero.
    var isNegative: Bool {
        switch storage {
        case .units(let units): units < 0
        case .decimal(let decimal): decimal < 0
        }
    }

    /// True when the amount's magnitude is above `bound`'s (in units without building a `Decimal`).
    func magnitudeExceeds(_ bound: Amount) -> Bool {
        if case .units(let units) = storage, case .units(let limit) = bound.storage { return units.magnitude > limit.magnitude }
        let value = decimal, limit = bound.decimal.magnitude
        return value > limit || value < -limit
    }

    var isZero: Bool {
        switch storage {
        case .units(let units): units == 0
        case .decimal(let decimal): decimal.isZero
        }
    }

    /// The same value as a `Decimal`.
    var decimal: Decimal {
        switch storage {
        case .decimal(let decimal):
            return decimal
        case .units(let units):
            if units == 0 { return 0 }
            let magnitude = units.magnitude
            let low = Decimal(UInt64(truncatingIfNeeded: magnitude))
            let high = UInt64(truncatingIfNeeded: magnitude >> 64)
            let significand = high == 0 ? low : Decimal(high) * Self.twoTo64 + low
            return Decimal(sign: units < 0 ? .minus : .plus, exponent: -Self.places, significand: significand)
        }
    }

    /// Plain decimal text with no exponent and no trailing zeros (`5.495`, `1100`, `-0.5`, `0`):
    /// what `Money.format` writes for the same value as a `Decimal`.
    var text: String {
        guard case .units(let units) = storage else { return Money.format(decimal) }
        if units == 0 { return "0" }
        let magnitude = units.magnitude
        // In 64 bits when the units fit (any amount below 18.4): 128-bit division is a library call.
        if let small = UInt64(exactly: magnitude) { return Self.text(negative: units < 0, units: small) }
        let whole = String(magnitude / UInt128(Self.unit))
        var fraction = UInt64(truncatingIfNeeded: magnitude % UInt128(Self.unit))
        var text = units < 0 ? "-" + whole : whole
        if fraction != 0 {
            var places = Self.places
            while fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: places - digits.utf8.count) + digits
        }
        return text
    }

    /// `text` for a magnitude of at most `UInt64.max` units, the prices and sums reports
    /// write on every row: the digits go straight into the string's storage.
    private static func text(negative: Bool, units: UInt64) -> String {
        let whole = units / unit64
        var fraction = units % unit64
        var places = 0
        if fraction != 0 {
            places = Self.places
            while fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
        }
        var wholeDigits = 1
        var rest = whole
        while rest >= 10 {
            rest /= 10
            wholeDigits += 1
        }
        // A sign, at most 2 whole digits, a point and 18 places.
        return String(unsafeUninitializedCapacity: 1 + wholeDigits + 1 + places) { text in
            var at = 0
            func put(_ value: UInt64, _ width: Int) {
                var value = value
                for place in stride(from: at + width - 1, through: at, by: -1) {
                    text[place] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                at += width
            }
            if negative {
                text[at] = UInt8(ascii: "-")
                at += 1
            }
            put(whole, wholeDigits)
            if places > 0 {
                text[at] = UInt8(ascii: ".")
                at += 1
                put(fraction, places)
            }
            return at
        }
    }

    static func + (a: Amount, b: Amount) -> Amount {
        if case .units(let x) = a.storage, case .units(let y) = b.storage {
            let (sum, overflow) = x.addingReportingOverflow(y)
            if !overflow, sum.magnitude <= limit { return Amount(units: sum) }
        }
        return Amount(a.decimal + b.decimal)
    }

    static func - (a: Amount, b: Amount) -> Amount {
        if case .units(let x) = a.storage, case .units(let y) = b.storage {
            let (difference, overflow) = x.subtractingReportingOverflow(y)
            if !overflow, difference.magnitude <= limit { return Amount(units: difference) }
        }
        return Amount(a.decimal - b.decimal)
    }

    static func += (a: inout Amount, b: Amount) { a = a + b }

    static func * (a: Amount, count: Int64) -> Amount {
        if case .units(let x) = a.storage {
            let (product, overflow) = x.multipliedReportingOverflow(by: Int128(count))
            if !overflow, product.magnitude <= limit { return Amount(units: product) }
        }
        return Amount(a.decimal * Decimal(count))
    }

    /// The exact product, in units when it has at most 18 places.
    static func * (a: Amount, b: Amount) -> Amount {
        if case .units(let x) = a.storage, case .units(let y) = b.storage {
            if x == 0 || y == 0 { return zero }
            // x·y·10⁻³⁶ = m·n·10^(j+k-36) with the trailing zeros of x and y taken out.
            let (m, j) = stripped(x)
            let (n, k) = stripped(y)
            let (product, overflow) = m.multipliedReportingOverflow(by: n)
            let exponent = j + k - places
            if !overflow, exponent >= 0, exponent <= 38 {
                let (scaled, scaleOverflow) = product.multipliedReportingOverflow(by: power(exponent))
                if !scaleOverflow, scaled.magnitude <= limit { return Amount(units: scaled) }
            }
        }
        return Amount(a.decimal * b.decimal)
    }

    /// The amount rounded half-even ("banker's rounding") to `scale` decimal places, as
    /// reporting-currency cells are (CONTRACT.md §3): `0.125` → `0.12`, `0.135` → `0.14`.
    func rounded(scale: Int) -> Amount {
        guard case .units(let units) = storage, scale >= 0, scale <= Self.places else {
            var value = decimal
            var rounded = Decimal()
            NSDecimalRound(&rounded, &value, scale, .bankers)
            return Amount(rounded)
        }
        let step = Self.power(Self.places - scale)
        var quotient = units / step
        let remainder = units % step
        let twice = remainder.magnitude * 2
        if twice > step.magnitude || (twice == step.magnitude && quotient % 2 != 0) {
            quotient += units < 0 ? -1 : 1
        }
        return Amount(units: quotient * step)
    }

    /// The largest magnitude held in units: 10²⁰ whole units, so any two add without overflow
    /// and a `Decimal` (38 digits) holds every value exactly too.
    private static let limit = power(places + 20).magnitude

    private static func stripped(_ value: Int128) -> (Int128, Int) {
        // In 64 bits when the magnitude fits (prices and rates do): 128-bit division is a library call.
        if let small = UInt64(exactly: value.magnitude) {
            let (magnitude, zeros) = strippedZeros(small)
            return (value < 0 ? -Int128(magnitude) : Int128(magnitude), zeros)
        }
        return strippedZeros(value)
    }

    /// `value` without its trailing decimal zeros, and how many it had; `value` is not 0.
    private static func strippedZeros<Value: BinaryInteger>(_ value: Value) -> (Value, Int) {
        var value = value
        var zeros = 0
        while value % 1_000_000 == 0 {
            value /= 1_000_000
            zeros += 6
        }
        while value % 10 == 0 {
            value /= 10
            zeros += 1
        }
        return (value, zeros)
    }

    /// 10⁰ ... 10³⁸, the powers an `Int128` holds.
    private static let powers: [Int128] = (0...38).reduce(into: []) { powers, index in powers.append(index == 0 ? 1 : powers[index - 1] * 10) }

    private static func power(_ exponent: Int) -> Int128 { powers[exponent] }
}
