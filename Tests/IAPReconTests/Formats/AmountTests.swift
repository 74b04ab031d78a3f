import Foundation
import Testing
@testable import IAPRecon

/// `Amount`, the reports' fast exact sums: every result prints exactly what `Decimal` prints.
@Suite("Amount")
struct AmountTests {
    /// The same operations on `Decimal` and on `Amount`, printed.
    private func both(_ prices: [String], quantity: Int64, rate: String) throws -> (decimal: String, amount: String) {
        var decimalSum = Decimal(0)
        var amountSum = Amount.zero
        let decimalRate = try #require(Money.parse(rate))
        let amountRate = try #require(Amount.parse(rate))
        for price in prices {
            decimalSum += try #require(Money.parse(price)) * Decimal(quantity) * decimalRate
            amountSum += try #require(Amount.parse(price)) * quantity * amountRate
        }
        #expect(Money.format(amountSum.decimal) == Money.format(decimalSum))
        return (Money.format(decimalSum), Money.format(amountSum))
    }

    @Test("sums of converted prices print as Decimal's do", arguments: [
        (["0.99", "4.99", "-0.99"], Int64(1), "1"),
        (["0.99", "9.99"], 3, "1.0843"),
        (["14000", "1100", "33000"], 1, "0.00072"),
        (["1500000", "79000"], 2, "0.000063"),
        (["12.500", "0.000000000000000001"], 1, "1"),
        (["0", "-0", "0.000"], 5, "0.006712"),
        (["123456789012345678"], 1_000_000, "1.5"),
        (["0.000000000000000001"], 1, "0.000000000000000001"),
        (["99999999999999999.9"], 7, "123456.789"),
    ])
    func matchesDecimal(prices: [String], quantity: Int64, rate: String) throws {
        let (decimal, amount) = try both(prices, quantity: quantity, rate: rate)
        #expect(amount == decimal)
    }

    @Test("10,000 random sums and differences print as Decimal's do")
    func randomSums() throws {
        var generator = SplitMix64(state: 0x1A9)
        let rates = ["1", "1.0843", "1.2712", "0.006712", "0.000063", "0.7", "1.000001"]
        var decimal = Decimal(0)
        var amount = Amount.zero
        for step in 0..<10_000 {
            let cents = Int64.random(in: -10_000_000...10_000_000, using: &generator)
            let places = Int.random(in: 0...3, using: &generator)
            let text = Money.format(Decimal(sign: cents < 0 ? .minus : .plus, exponent: -places, significand: Decimal(cents.magnitude)))
            let rate = rates[step % rates.count]
            let quantity = Int64.random(in: 1...3, using: &generator)
            let decimalTerm = try #require(Money.parse(text)) * Decimal(quantity) * #require(Money.parse(rate))
            let amountTerm = try #require(Amount.parse(text)) * quantity * #require(Amount.parse(rate))
            if step % 5 == 4 {
                decimal -= decimalTerm
                amount = amount - amountTerm
            } else {
                decimal += decimalTerm
                amount += amountTerm
            }
            #expect(Money.format(amountTerm) == Money.format(decimalTerm))
            #expect(Money.format(amount) == Money.format(decimal))
        }
        #expect(Money.format(amount) == Money.format(decimal))
        #expect(amount.decimal == decimal)
    }

    @Test("a product with more than 18 places is still exact (it leaves integer units)")
    func manyPlaces() throws {
        let tiny = try #require(Amount.parse("0.000000001"))
        let product = tiny * tiny * tiny
        #expect(Money.format(product) == "0.000000000000000000000000001")
        #expect(Money.format(product + Amount.one) == "1.000000000000000000000000001")
        #expect(Money.format((product + Amount.one) - product) == "1")
    }

    @Test("amounts too large for integer units stay exact")
    func large() throws {
        let big = try #require(Amount.parse("123456789012345678"))
        let huge = big * 1_000_000 * big
        #expect(huge.decimal == Decimal(string: "15241578753238836527968299765279684000000"))
        #expect(Money.format(big * 1_000) == "123456789012345678000")
        #expect(Money.format(big * 1_000 - big * 1_000) == "0")
        #expect((big - big).isZero)
    }

    @Test("text prints what Decimal prints, over every scale, sign and size")
    func textMatchesDecimal() throws {
        var significands: [UInt64] = [0, 1, 5, 9, 10, 99, 100, 990, 1_000, 4_990, 12_500, 123_456_789, 1_000_000_007,
                                      100_000_000_000_000_000, 999_999_999_999_999_999,
                                      // Either side of the most units 64 bits hold, at 16 places.
                                      184_467_440_737_095_516, 184_467_440_737_095_517]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<300 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            significands.append((seed >> (seed % 64)) % 1_000_000_000_000_000_000)
        }
        for significand in significands {
            for places in 0...18 {
                for negative in [false, true] {
                    let text = (negative ? "-" : "") + String(significand) + (places == 0 ? "" : "e-\(places)")
                    let decimal = Decimal(sign: negative ? .minus : .plus, exponent: -places, significand: Decimal(significand))
                    let digits = String(significand)
                    let plain = places == 0 ? digits : {
                        let padded = String(repeating: "0", count: max(0, places + 1 - digits.count)) + digits
                        return padded.dropLast(places) + "." + padded.suffix(places)
                    }()
                    let amount = try #require(Amount.parse((negative ? "-" : "") + plain), "\(text)")
                    #expect(amount.text == Money.format(decimal), "\(text)")
                    #expect(amount.text == Money.format(amount.decimal), "\(text)")
                }
            }
        }
    }
}
