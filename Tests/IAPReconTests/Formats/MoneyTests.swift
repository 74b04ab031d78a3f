import Foundation
import Testing
@testable import IAPRecon

/// Exact decimal money (CONTRACT.md, "Money"): never binary floating point.
@Suite("Money")
struct MoneyTests {
    @Test("decimal text parses to the exact amount and formats without trailing zeros", arguments: [
        ("0.99", "0.99"),
        ("1100", "1100"),
        ("-3.50", "-3.5"),
        ("+1", "1"),
        ("12.500", "12.5"),
        ("000.10", "0.1"),
        ("0", "0"),
        ("-0", "0"),
        ("0.000", "0"),
        ("123456789012345678", "123456789012345678"),
        ("000123456789012345678", "123456789012345678"),
        ("1.00000000000000000", "1"),
        ("0.000000000000000001", "0.000000000000000001"),
    ])
    func parses(text: String, formatted: String) throws {
        let amount = try #require(Money.parse(text))
        #expect(amount == Decimal(string: formatted))
        #expect(Money.format(amount) == formatted)
    }

    @Test("anything but plain decimal text is rejected", arguments: [
        "0,99", "1,000", "1e5", "1E5", "NaN", "Infinity", "", ".", "1.", ".5", "-", "+", "--1", "+-1", "-+1", "1-",
        " 1", "1 ", "0x10", "1.2.3", "$1", "١",
        // 19 significant digits: more than a price can have.
        "1234567890123456789", "-1234567890123456789", "1.234567890123456789", "0001234567890123456789",
    ])
    func rejects(text: String) {
        #expect(Money.parse(text) == nil)
    }

    @Test("JSON numbers and strings are amounts; other JSON types are not")
    func jsonValues() {
        #expect(Money.parse(JSONValue.number("10.99")) == Decimal(string: "10.99"))
        #expect(Money.parse(JSONValue.string("0.99")) == Decimal(string: "0.99"))
        #expect(Money.parse(JSONValue.number("1e2")) == nil)
        #expect(Money.parse(JSONValue.bool(true)) == nil)
        #expect(Money.parse(JSONValue.null) == nil)
    }

    @Test("Apple milliunits convert exactly to major units", arguments: [
        (Int64(10990), "10.99"),
        (990, "0.99"),
        (1000, "1"),
        (1, "0.001"),
        (0, "0"),
        (-990, "-0.99"),
        (1_100_000, "1100"),
    ])
    func milliunits(milliunits: Int64, formatted: String) {
        let amount = Money.fromMilliunits(milliunits)
        #expect(amount == Decimal(string: formatted))
        #expect(Money.format(amount) == formatted)
    }

    @Test("format writes plain text with no exponent")
    func format() throws {
        #expect(Money.format(try #require(Money.parse("5.495"))) == "5.495")
        #expect(Money.format(Decimal(0)) == "0")
        #expect(Money.format(Decimal(1100)) == "1100")
        #expect(Money.format(Decimal(sign: .plus, exponent: 2, significand: 11)) == "1100")
        #expect(Money.format(Decimal(sign: .minus, exponent: -2, significand: 5)) == "-0.05")
    }

    @Test("format(scale:) rounds half to even, for display only", arguments: [
        ("0.125", 2, "0.12"),
        ("0.135", 2, "0.14"),
        ("5.495", 2, "5.5"),
        ("1.005", 2, "1"),
        ("0.126", 2, "0.13"),
        ("2.5", 0, "2"),
        ("3.5", 0, "4"),
        ("-0.125", 2, "-0.12"),
        ("0.004", 2, "0"),
        ("1100", 2, "1100"),
    ])
    func rounding(text: String, scale: Int, formatted: String) throws {
        #expect(Money.format(try #require(Money.parse(text)), scale: scale) == formatted)
    }

    @Test("sums and prorations are exact")
    func exactArithmetic() throws {
        let tenth = try #require(Money.parse("0.1"))
        let fifth = try #require(Money.parse("0.2"))
        #expect(tenth + fifth == Money.parse("0.3"))
        #expect(Money.format(tenth + fifth) == "0.3")

        // A REFUND_PRORATED of revocationPercentage 50000 on a 10990-milliunit price refunds 5.495.
        let refund = Money.fromMilliunits(10990) * Decimal(50000) / Decimal(100_000)
        #expect(refund == Money.parse("5.495"))
        #expect(Money.format(refund) == "5.495")
    }

    @Test("a non-zero amount with more fractional zeros than Decimal's exponent holds is rejected, not zero")
    func tinyAmountIsNotZero() {
        let tiny = "0." + String(repeating: "0", count: 130) + "1"
        #expect(Money.parse(tiny) == nil)
    }
}
