import Foundation

/// The amount checks of CONTRACT.md §1: what parses as a number but cannot be a price.
///
/// Every check runs on the parsed amount's integer units or on the milliunits themselves, exactly:
/// ingest checks millions of prices, and `Decimal` arithmetic is what it would cost most. A
/// `Decimal` is made only to word a reject.
enum AmountRange {
    /// The largest amount in its currency's major unit: 10^12.
    static let maximum = Amount(whole: 1_000_000_000_000)
    /// `maximum` in Apple's milliunits: 10^15.
    static let maximumMilliunits: Int64 = 1_000_000_000_000_000
    /// The most units one delivery or one Apple transaction may carry. StoreKit sells at most ten at
    /// once; a count near `Int64.max` is no purchase, and the reports' sums of units would overflow on it.
    static let maximumQuantity: Int64 = 1_000_000

    /// Parses `value` as an amount, rejecting what is not a number (`bad amount`), has more than 18
    /// significant digits or is above 10^12 (`amount out of range`), or, unless `negativeAllowed`,
    /// is below zero (`negative amount`).
    static func amount(_ value: JSONValue, field: String, negativeAllowed: Bool = false) throws(LineReject) -> Amount {
        let text: String
        switch value {
        case .number(let number), .string(let number): text = number
        default: throw .badAmount(field, value)
        }
        guard let amount = Amount.parse(text) else {
            if isLongNumber(text) { throw LineReject("amount out of range: '\(field)' has more than \(Money.maximumDigits) significant digits") }
            throw .badAmount(field, value)
        }
        if !negativeAllowed, amount.isNegative { throw negative(amount.decimal, field: field) }
        if amount.magnitudeExceeds(maximum) { throw outOfRange(field) }
        return amount
    }

    /// Apple's V2 `price` in milliunits: within range and not negative.
    /// `field` is worded only for a reject.
    static func checkMilliunits(_ milliunits: Int64?, field: @autoclosure () -> String) throws(LineReject) {
        guard let milliunits else { return }
        if milliunits < 0 { throw negative(Decimal(milliunits) / 1000, field: field()) }
        if milliunits > maximumMilliunits { throw outOfRange(field()) }
    }

    /// Apple's V2 `price` text as milliunits, checked as `checkMilliunits` does: nil when it is not
    /// a whole number. One with too many digits for an `Int64` lies far beyond 10^12, so it is out
    /// of range (or negative), not a bad number.
    static func milliunits(_ text: String, field: @autoclosure () -> String) throws(LineReject) -> Int64? {
        if let milliunits = Int64(text) {
            try checkMilliunits(milliunits, field: field())
            return milliunits
        }
        var digits = Substring(text)
        let isNegative = digits.first == "-"
        if isNegative || digits.first == "+" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        if isNegative { throw negative((Decimal(string: text) ?? -1) / 1000, field: field()) }
        throw outOfRange(field())
    }

    private static func negative(_ decimal: Decimal, field: String) -> LineReject {
        LineReject("negative amount: '\(field)' is \(Money.format(decimal))")
    }

    private static func outOfRange(_ field: String) -> LineReject {
        LineReject("amount out of range: '\(field)' is above 10^12")
    }

    /// Digits with at most one point and sign: a number, only too long for an amount.
    private static func isLongNumber(_ text: String) -> Bool {
        var body = Substring(text)
        if body.first == "-" || body.first == "+" { body = body.dropFirst() }
        let parts = body.split(separator: ".", omittingEmptySubsequences: false)
        return !body.isEmpty && parts.count <= 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
    }
}

/// Rejects a `quantity` below 1 (`quantity below 1`) or above `AmountRange.maximumQuantity` (`bad number`);
/// `field` is worded only then.
func checkQuantity(_ quantity: Int64, field: @autoclosure () -> String) throws(LineReject) {
    if quantity < 1 { throw LineReject("quantity below 1: '\(field())' is \(quantity)") }
    if quantity > AmountRange.maximumQuantity { throw LineReject("bad number in '\(field())': \(quantity)") }
}
