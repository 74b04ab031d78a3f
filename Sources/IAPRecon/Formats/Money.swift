import Foundation

/// Exact decimal amounts: parsing and plain-text formatting.
///
/// Money is never binary floating point (CONTRACT.md, "Money"). Amounts are
/// Foundation `Decimal`s built from their digits; Apple's V2 `price` is in
/// milliunits (`990` = 0.99).
public enum Money {
    /// The most significant digits an amount may have; more is not a price.
    static let maximumDigits = 18

    /// An exact decimal from text such as `"0.99"`, `"-1100"`, `"12.500"`; nil for anything else
    /// (`"0,99"`, `"1e5"`, `"NaN"`, `""`, or more than 18 significant digits).
    public static func parse(_ text: String) -> Decimal? {
        Digits(text)?.decimal
    }

    /// The digits of an amount's text: `significand × 10^exponent`, with its sign.
    struct Digits {
        var negative: Bool
        var significand: UInt64
        /// Zero or less: minus the number of places.
        var exponent: Int

        /// nil for anything `parse` refuses.
        init?(_ text: String) {
            var text = text
            guard let digits = text.withUTF8({ Digits(utf8: $0) }) else { return nil }
            self = digits
        }

        private init?(utf8 text: UnsafeBufferPointer<UInt8>) {
            var significand: UInt64 = 0
            var exponent = 0
            var negative = false
            var digits = 0
            var sawDigit = false
            var inFraction = false
            for offset in text.indices {
                let byte = text[offset]
                switch byte {
                case UInt8(ascii: "-") where offset == 0:
                    negative = true
                case UInt8(ascii: "+") where offset == 0:
                    continue
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    sawDigit = true
                    if significand != 0 || byte != UInt8(ascii: "0") { digits += 1 }
                    guard digits <= maximumDigits else { return nil }
                    significand = significand * 10 + UInt64(byte - UInt8(ascii: "0"))
                    if inFraction { exponent -= 1 }
                case UInt8(ascii: ".") where !inFraction && sawDigit:
                    inFraction = true
                default:
                    return nil
                }
            }
            // Decimal's exponent stops at -128; a smaller one would silently become 0.
            guard sawDigit, text.last != UInt8(ascii: "."), exponent >= -128 else { return nil }
            self.negative = negative && significand != 0
            self.significand = significand
            self.exponent = exponent
        }

        var decimal: Decimal {
            Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: Decimal(significand))
        }
    }

    /// An exact decimal from a JSON number or numeric string.
    public static func parse(_ value: JSONValue) -> Decimal? {
        switch value {
        case .number(let text), .string(let text): parse(text)
        default: nil
        }
    }

    /// Apple's milliunits (`10990`) as a major-unit amount (`10.99`).
    public static func fromMilliunits(_ milliunits: Int64) -> Decimal {
        Decimal(sign: milliunits < 0 ? .minus : .plus, exponent: -3, significand: Decimal(milliunits.magnitude))
    }

    /// One unit's price of Apple's V2 `price` (milliunits), which is the whole transaction's: for a consumable
    /// bought several at once, the total of its `quantity` (`2970` for three at 0.99), where an order's and the
    /// catalog's price are one unit's. Exact whenever the total is whole milliunits per unit, as every price Apple
    /// charges is (a unit price in the currency's minor units, times the quantity), and whenever the share is a
    /// decimal an amount can hold (`10` for 4 is 0.0025). A share that is not (no price Apple sends: `10000` for 3
    /// is 3.3333…) is rounded to the milliunit: its endless digits are more than an amount may have (`parse`), and
    /// every report reading it back would find the transaction no price at all.
    public static func unitPrice(milliunits: Int64, quantity: Int64) -> Decimal {
        guard quantity > 1 else { return fromMilliunits(milliunits) }
        var share = fromMilliunits(milliunits) / Decimal(quantity)
        if parse(format(share)) == share { return share }
        var rounded = Decimal()
        NSDecimalRound(&rounded, &share, 3, .plain)
        return rounded
    }

    /// Plain decimal text with no exponent and no trailing zeros, e.g. `5.495`, `1100`, `0`.
    public static func format(_ amount: Decimal) -> String {
        if amount.isZero { return "0" }
        return amount.description
    }

    /// Plain decimal text of an exact amount, as `format(_: Decimal)` writes it.
    static func format(_ amount: Amount) -> String {
        amount.text
    }

    /// Plain text rounded half-even to `scale` places (for display only; sums stay exact).
    public static func format(_ amount: Decimal, scale: Int) -> String {
        var value = amount
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, scale, .bankers)
        return format(rounded)
    }
}
