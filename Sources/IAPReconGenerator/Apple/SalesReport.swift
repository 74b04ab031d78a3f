import Foundation

/// Apple's daily Summary Sales Reports for the generated data (CONTRACT.md §1.7), and the
/// purchases Apple reports that no receipt or notification ever mentioned.
///
/// The ledger is filled from the payloads as they are written: a Production, non-family-shared
/// transaction counts once a receipt or notification line shows it, and its refund once a line
/// shows the refund (until a `REFUND_REVERSED` notification undoes it). So the reports hold
/// exactly what iaprecon can verify, on Apple's Pacific days, and every difference in them is
/// planted: the unverified sales `plantUnverifiedSales` adds.
struct SalesLedger {
    /// One transaction as the written lines show it.
    struct Sale {
        var product: Int
        var country: Int
        var quantity: Int
        var purchase: Millis
        var refund: Millis?
        var refundReversed = false
        /// A V2 payload (which carries the storefront) showed it: iaprecon knows its country.
        var storefrontKnown: Bool
    }

    /// Extra units on one Pacific day, product and country: purchases with no receipt.
    struct Unverified {
        var day: Int64
        var product: Int
        var country: Int
        var units: Int
    }

    static let zone = TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600) ?? .current
    static let vendor = "85012345"

    private(set) var sales: [String: Sale] = [:]
    private(set) var unverified: [Unverified] = []

    /// The Pacific day number (days since 1970-01-01 there) of an instant.
    static func pacificDay(_ time: Millis) -> Int64 {
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time / 1000)))) * 1000
        return Clock.floorDiv(time + offset, Clock.day)
    }

    /// The instant a Pacific wall-clock time `minutes` after midnight of Pacific day `day` is.
    static func instant(pacificDay day: Int64, minutes: Int64) -> Millis {
        let local = day * Clock.day + minutes * Clock.minute
        let guess = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local / 1000)))) * 1000
        let offset = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double((local - guess) / 1000)))) * 1000
        return local - offset
    }

    /// The Pacific days a report covers whole: ended by `asOf`, begun at or after `start`.
    static func coveredDays(start: Millis, asOf: Millis) -> ClosedRange<Int64>? {
        let first = pacificDay(start - 1) + 1
        let last = pacificDay(asOf + Clock.second) - 1
        return first <= last ? first...last : nil
    }

    /// A line showing `tx` as it is at `time` was written.
    mutating func sighted(_ tx: AppleTransaction, at time: Millis, storefrontKnown: Bool) {
        guard tx.environment == .production, !tx.familyShared else { return }
        var sale = sales[tx.id] ?? Sale(product: tx.product, country: tx.country, quantity: tx.quantity, purchase: tx.purchase,
                                        storefrontKnown: storefrontKnown)
        sale.storefrontKnown = sale.storefrontKnown || storefrontKnown
        if let revocation = tx.revocation(at: time), sale.refund == nil {
            if case .familyRevoke = revocation.type {} else { sale.refund = revocation.time }
        }
        sales[tx.id] = sale
    }

    /// A `REFUND_REVERSED` notification was written: the refund no longer counts.
    mutating func refundReversed(_ transactionId: String) {
        sales[transactionId]?.refundReversed = true
    }

    /// Plants `count` unverified sales on covered days, in products and countries of `random`'s choosing.
    ///
    /// Storefront-less purchases (`??`) cover shortfalls in country-code order, so a planted sale
    /// goes where they cannot cover it: in a country whose code sorts at or after every country
    /// with a purchase of that day and product no V2 payload showed, and never on a day and product
    /// with such a refund (whose country's shortfall it lowers, leaving `??` units over).
    mutating func plantUnverifiedSales(_ count: Int, days: ClosedRange<Int64>, random: inout SeededRandom) {
        let products = Int64(Catalog.products.count)
        var lastStorefrontlessCountry: [Int64: String] = [:]
        var storefrontlessRefunds = Set<Int64>()
        for sale in sales.values where !sale.storefrontKnown {
            let key = Self.pacificDay(sale.purchase) * products + Int64(sale.product)
            lastStorefrontlessCountry[key] = max(lastStorefrontlessCountry[key] ?? "", Catalog.countries[sale.country].code)
            if let refund = sale.refund, !sale.refundReversed { storefrontlessRefunds.insert(Self.pacificDay(refund) * products + Int64(sale.product)) }
        }
        var taken = Set<Int64>()
        var attempts = 0
        while unverified.count < count, attempts < count * 50 {
            attempts += 1
            let day = days.lowerBound + Int64(random.below(Int(days.upperBound - days.lowerBound + 1)))
            let product = Catalog.consumables[random.weighted(Catalog.consumableWeights)]
            let country = random.weighted(Catalog.countryWeights)
            let key = day * products + Int64(product)
            guard Catalog.products[product].inCatalog, !storefrontlessRefunds.contains(key),
                  Catalog.countries[country].code >= lastStorefrontlessCountry[key] ?? "", taken.insert(key).inserted else { continue }
            unverified.append(Unverified(day: day, product: product, country: country, units: random.chance(0.8) ? 1 : 2))
        }
    }

    /// A Pacific day, product and country.
    struct Key: Hashable {
        var day: Int64
        var product: Int
        var country: Int
    }

    /// Units of one key: verified purchases, refunds, planted extras.
    struct Units {
        var purchases = 0
        var refunds = 0
        var unverified = 0
    }

    func units(days: ClosedRange<Int64>) -> [Key: Units] {
        var units: [Key: Units] = [:]
        for sale in sales.values {
            let day = Self.pacificDay(sale.purchase)
            if days.contains(day) { units[Key(day: day, product: sale.product, country: sale.country), default: Units()].purchases += sale.quantity }
            if let refund = sale.refund, !sale.refundReversed {
                let refundDay = Self.pacificDay(refund)
                if days.contains(refundDay) {
                    units[Key(day: refundDay, product: sale.product, country: sale.country), default: Units()].refunds += sale.quantity
                }
            }
        }
        for extra in unverified {
            units[Key(day: extra.day, product: extra.product, country: extra.country), default: Units()].unverified += extra.units
        }
        return units
    }

    /// Refunds on a later Pacific day than their purchase, both inside `days`: a near miss.
    func refundsOnLaterPacificDay(days: ClosedRange<Int64>) -> Int {
        sales.values.filter { sale in
            guard let refund = sale.refund, !sale.refundReversed else { return false }
            let refundDay = Self.pacificDay(refund)
            return days.contains(refundDay) && refundDay > Self.pacificDay(sale.purchase)
        }.count
    }

    // MARK: Writing

    static let header = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category", "CMB",
        "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ]

    /// One day's report file.
    struct File {
        /// `apple/S_D_<vendor>_<yyyyMMdd>.txt`.
        var path: String
        /// The Pacific day it reports, in days since 1970-01-01.
        var day: Int64
        var bytes: [UInt8]
        /// Data lines (the header row is not one).
        var lines: Int
    }

    /// One report per covered day; `downloads(day, country)` is the app's own row's units.
    func reports(days: ClosedRange<Int64>, downloads: (Int64, Int) -> Int) -> [File] {
        let byKey = units(days: days)
        var files: [File] = []
        for day in days {
            var out = LineBuffer()
            out.text(Self.header.joined(separator: "\t"))
            out.byte(10)
            var lines = 0
            let (year, month, dayOfMonth) = Clock.civil(days: day)
            var date = LineBuffer(capacity: 10)
            date.padded(month, width: 2); date.byte(UInt8(ascii: "/"))
            date.padded(dayOfMonth, width: 2); date.byte(UInt8(ascii: "/"))
            date.padded(year, width: 4)
            let dateText = String(decoding: date.bytes, as: UTF8.self)
            // The app's own rows come first, as in Apple's files: read and ignored by iaprecon.
            for country in Catalog.countries.indices {
                let count = downloads(day, country)
                guard count > 0 else { continue }
                Self.row(&out, sku: Catalog.bundleId, title: "Gem Quest", version: "2.14.0", type: "1F", units: count,
                         priceMilli: 0, date: dateText, country: country, subscription: "", period: "")
                lines += 1
            }
            for product in Catalog.products.indices {
                for country in Catalog.countries.indices {
                    guard let units = byKey[Key(day: day, product: product, country: country)] else { continue }
                    let info = Catalog.products[product]
                    let price = info.prices[Catalog.countries[country].currency]
                    let type = info.isSubscription ? "IAY" : (info.type == .nonRenewing ? "IAC" : (info.type == .nonConsumable ? "IA9" : "IA1"))
                    let period = info.period == Catalog.week ? "7 Days" : (info.period == Catalog.month ? "1 Month" : (info.period == Catalog.year ? "1 Year" : ""))
                    let sold = units.purchases + units.unverified
                    if sold > 0 {
                        Self.row(&out, sku: info.id, title: info.short, version: "", type: type, units: sold, priceMilli: price,
                                 date: dateText, country: country, subscription: info.isSubscription ? "New" : "", period: period)
                        lines += 1
                    }
                    if units.refunds > 0 {
                        Self.row(&out, sku: info.id, title: info.short, version: "", type: type, units: -units.refunds,
                                 priceMilli: -price, date: dateText, country: country, subscription: info.isSubscription ? "New" : "",
                                 period: period)
                        lines += 1
                    }
                }
            }
            var name = LineBuffer(capacity: 40)
            name.text("apple/S_D_" + Self.vendor + "_")
            name.padded(year, width: 4); name.padded(month, width: 2); name.padded(dayOfMonth, width: 2)
            name.raw(".txt")
            files.append(File(path: String(decoding: name.bytes, as: UTF8.self), day: day, bytes: out.bytes, lines: lines))
        }
        return files
    }

    /// One tab-separated row of the 28-column layout; proceeds are 70 % of the price, cut to the currency's digits.
    private static func row(_ out: inout LineBuffer, sku: String, title: String, version: String, type: String, units: Int,
                            priceMilli: Int64, date: String, country: Int, subscription: String, period: String) {
        let currency = Catalog.countries[country].currency
        var step: Int64 = 1
        for _ in 0..<(3 - Catalog.currencies[currency].decimals) { step *= 10 }
        let proceedsMilli = priceMilli * 7 / 10 / step * step
        func cell(_ text: String) {
            out.text(text)
            out.byte(9)
        }
        cell("APPLE"); cell("US"); cell(sku); cell("Example Games Inc."); cell(title); cell(version); cell(type)
        out.int(units); out.byte(9)
        out.money(proceedsMilli, currency: currency); out.byte(9)
        cell(date); cell(date)
        cell(Catalog.currencies[currency].code); cell(Catalog.countries[country].code); cell(Catalog.currencies[currency].code)
        cell(type == "1F" ? "1460000000" : "1460000\(String(sku.utf8.count * 37 % 1000))")
        out.money(priceMilli, currency: currency); out.byte(9)
        cell(""); cell(type == "1F" ? "" : Catalog.bundleId); cell(subscription); cell(period); cell("Games"); cell("")
        cell("iPhone"); cell("iOS"); cell(""); cell(""); cell("")
        out.byte(10)
    }
}
