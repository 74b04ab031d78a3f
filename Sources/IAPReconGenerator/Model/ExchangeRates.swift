/// Daily exchange rates into USD, as exact decimals (CONTRACT.md §1.6 `fx.csv`).
///
/// Rates are kept in units of 10⁻⁸ USD per unit of currency and walk a little each
/// day, so a purchase and its refund on different days convert differently unless
/// the reader applies the purchase-day rate to both, as the contract says.
struct ExchangeRates {
    static let scale = 8
    /// `rates[day][currency]`, 10⁻⁸ USD per unit.
    let rates: [[Int64]]

    init(days: Int, seed: UInt64) {
        var random = SeededRandom(seed: seed, stream: 0xF0F0_F0F0)
        var current: [Int64] = [100_000_000, 108_430_000, 127_120_000, 671_200, 73_421]
        var table: [[Int64]] = []
        for _ in 0..<max(days, 1) {
            table.append(current)
            for currency in 1..<current.count {
                let step = Int64(random.int(-25, 25))
                current[currency] += current[currency] * step / 10_000
            }
        }
        rates = table
    }

    func rate(day: Int, currency: Int) -> Int64 {
        rates[min(max(day, 0), rates.count - 1)][currency]
    }

    /// `milli` milliunits of `currency` in USD, rounded half up to 4 places, as 10⁻⁴ USD.
    func usdTenThousandths(milli: Int64, currency: Int, day: Int) -> Int64 {
        // milli × 10⁻³ × rate × 10⁻⁸ = value × 10⁻¹¹ USD; 10⁻⁴ USD = 10⁷ of those.
        let value = milli * rate(day: day, currency: currency)
        return (value + 5_000_000) / 10_000_000
    }

    func csv(startDay: Millis) -> [UInt8] {
        var out = LineBuffer()
        out.raw("date,currency,rate\n")
        for (day, row) in rates.enumerated() {
            for (currency, rate) in row.enumerated() {
                out.date(startDay + Int64(day) * Clock.day)
                out.byte(UInt8(ascii: ","))
                out.text(Catalog.currencies[currency].code)
                out.byte(UInt8(ascii: ","))
                out.decimal(rate, scale: Self.scale, minimumFraction: 0)
                out.byte(10)
            }
        }
        return out.bytes
    }
}
