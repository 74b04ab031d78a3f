import Foundation

/// `revenue_daily.csv`: verified production purchases on their purchase day,
/// refunds on the day they happen, per product, storefront and currency.
///
/// Grain: one row per (date in `--tz`, product, storefront, currency).
/// Checks: `net = gross - refunds` on every row; family-shared and test
/// transactions never count.
struct RevenueReport: Sendable {
    struct Key: Hashable, Comparable, Sendable {
        var date: String
        var productID: String
        var storefront: String
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            (a.date, a.productID, a.storefront, a.currency) < (b.date, b.productID, b.storefront, b.currency)
        }
    }

    struct Row: Sendable {
        var units: Int64 = 0
        var gross = Amount.zero
        var refunds = Amount.zero
        var grossUSD: Amount? = .zero
        var refundsUSD: Amount? = .zero
    }

    var rows: [Key: Row] = [:]
    var grossUSD = Amount.zero
    var refundsUSD = Amount.zero
    var unconverted = 0
    var priceSources: [PriceSource: Int] = [:]

    init(database: Database, zone: Zone, fx: FXRates) throws {
        var day = DayNames(zone)
        try database.forEach("""
            SELECT purchase_ms, product_id, storefront, currency, unit_price, quantity, refund_ms, refund_amount, price_source
            FROM int_transactions_resolved WHERE is_revenue = 1
            """) { row in
            let source = PriceSource(rawValue: row.string(8)) ?? .none
            priceSources[source, default: 0] += 1
            let purchaseDay = day(row.int(0))
            let currency = row.optionalString(3) ?? ""
            let unitPrice = row.optionalString(4).flatMap(Amount.parse)
            let quantity = row.int(5)
            let gross = (unitPrice ?? .zero) * quantity
            let rate = fx.rate(currency, on: purchaseDay)
            if rate == nil, unitPrice != nil { unconverted += 1 }
            let storefront = row.optionalString(2) ?? ""
            let key = Key(date: purchaseDay, productID: row.string(1), storefront: storefront, currency: currency)
            add(key) { entry in
                entry.units += quantity
                entry.gross += gross
                entry.grossUSD = rate.flatMap { rate in entry.grossUSD.map { $0 + gross * rate } }
            }
            if let rate { grossUSD += gross * rate }
            if let refundMs = row.optionalInt(6), let refund = row.optionalString(7).flatMap(Amount.parse) {
                let refundKey = Key(date: day(refundMs), productID: row.string(1), storefront: storefront, currency: currency)
                add(refundKey) { entry in
                    entry.refunds += refund
                    entry.refundsUSD = rate.flatMap { rate in entry.refundsUSD.map { $0 + refund * rate } }
                }
                if let rate { refundsUSD += refund * rate }
            }
        }
    }

    private mutating func add(_ key: Key, _ change: (inout Row) -> Void) {
        var row = rows[key] ?? Row()
        change(&row)
        rows[key] = row
    }

    static let header = ["date", "product_id", "storefront", "currency", "units", "gross", "refunds", "net", "gross_usd", "refunds_usd", "net_usd"]

    func write(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.header)
        for key in rows.keys.sorted() {
            guard let row = rows[key] else { continue }
            let net = row.gross - row.refunds
            let netUSD = row.grossUSD.flatMap { gross in row.refundsUSD.map { gross - $0 } }
            try sink.csvRecord([
                CSV.textCell(key.date), CSV.textCell(key.productID), CSV.textCell(key.storefront), CSV.textCell(key.currency),
                String(row.units), Money.format(row.gross), Money.format(row.refunds), Money.format(net),
                row.grossUSD.map(Money.format) ?? "", row.refundsUSD.map(Money.format) ?? "", netUSD.map(Money.format) ?? "",
            ])
        }
    }
}
