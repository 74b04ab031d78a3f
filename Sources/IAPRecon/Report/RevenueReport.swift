import Foundation

/// `revenue_daily.csv`: verified production purchases on their purchase day,
/// refunds on the day they happen, per product, storefront and currency.
///
/// Grain: one row per (date in `--tz`, product, storefront, currency).
/// Checks: `net = gross - refunds` on every row where both are known (a row with unpriced units
/// leaves its gross and net empty, a row with an unpriced refund its refunds and net); family-shared
/// and test transactions never count. The reporting-currency cells
/// are rounded to its minor unit row by row, and the totals are the sums of those rounded cells.
struct RevenueReport: Sendable {
    struct Key: Hashable, Comparable, Sendable {
        var date: String
        /// `date` as days since 1970-01-01 in `--tz`: what `revenue_monthly.csv` sums by, since a
        /// day outside years 0000 to 9999 has no `yyyy-MM-dd` text to read back.
        var day: Int64
        var productID: String
        var storefront: String
        var currency: String

        static func < (a: Key, b: Key) -> Bool {
            (a.date, a.productID, a.storefront, a.currency) < (b.date, b.productID, b.storefront, b.currency)
        }
    }

    struct Row: Sendable {
        var units: Int64 = 0
        /// The units of the refunds that happened on the row's day.
        var refundUnits: Int64 = 0
        /// Nil when some of the row's units have no price at all: the gross is unknown, never 0.
        var gross: Amount? = .zero
        /// Nil when some of the row's refunds are of units with no price at all: unknown, never 0.
        var refunds: Amount? = .zero
        var grossUSD: Amount? = .zero
        var refundsUSD: Amount? = .zero

        /// `gross,refunds,net` and the same in the reporting currency, as both revenue files write
        /// them: a net only where its gross and refunds are known.
        var moneyCells: [String] {
            let net = gross.flatMap { gross in refunds.map { gross - $0 } }
            let netUSD = grossUSD.flatMap { gross in refundsUSD.map { gross - $0 } }
            return [gross.map(Money.format) ?? "", refunds.map(Money.format) ?? "", net.map(Money.format) ?? "",
                    grossUSD.map(Money.format) ?? "", refundsUSD.map(Money.format) ?? "", netUSD.map(Money.format) ?? ""]
        }

        func adding(_ other: Row) -> Row {
            Row(units: units + other.units, refundUnits: refundUnits + other.refundUnits,
                gross: gross.flatMap { mine in other.gross.map { mine + $0 } },
                refunds: refunds.flatMap { mine in other.refunds.map { mine + $0 } },
                grossUSD: grossUSD.flatMap { mine in other.grossUSD.map { mine + $0 } },
                refundsUSD: refundsUSD.flatMap { mine in other.refundsUSD.map { mine + $0 } })
        }
    }

    let currency: ReportingCurrency
    var rows: [Key: Row] = [:]
    /// The sums of the rows' rounded reporting-currency cells.
    var grossUSD = Amount.zero
    var refundsUSD = Amount.zero
    /// The priced revenue transactions `fx.csv` has no rate for, by purchase day, for a warning a
    /// nightly's reader sees (`fxWarnings`).
    var missingRates = MissingRates<Never>()
    var priceSources: [PriceSource: Int] = [:]

    init(store: some ReportStore, zone: Zone, fx: FXRates) throws {
        currency = ReportingCurrency(fx.reportingCurrency)
        var values = AmountReader(fx: fx, zone: zone)
        var products = TextIndex(), storefronts = TextIndex(), sources = TextIndex()
        var sourceCounts: [Int32: Int] = [:]
        // Rows gather by numbers (day, product, storefront, currency), named once at the end.
        var slots = FirstSeen<Slot>()
        var entries: [(slot: Slot, date: String, row: Row)] = []
        func add(_ slot: Slot, at utcMs: Int64, _ change: (inout Row) -> Void) {
            let (index, isNew) = slots.number(slot)
            if isNew { entries.append((slot, values.day(utcMs), Row())) }
            change(&entries[index].row)
        }
        typealias Column = RevenueTransactionColumn
        try store.forEachRevenueTransaction { row in
            sourceCounts[sources.number(row, Column.priceSource), default: 0] += 1
            let purchaseMs = row.int(Column.purchaseMs)
            let currency = values.currency(row, Column.currency)
            let unitPrice = values.amount(row, Column.unitPrice)
            let quantity = row.int(Column.quantity)
            let gross = unitPrice.map { $0 * quantity }
            // A free transaction (an introductory free trial, say) needs no rate.
            let fxRate = values.rate(currency: currency, atMs: purchaseMs)
            let reportingGross = gross.flatMap {
                missingRates.convert($0, at: fxRate, currency: values.currencies[currency], day: values.day(purchaseMs))
            }
            let product = products.number(row, Column.productID)
            let storefront = storefronts.number(row, Column.storefront)
            let purchase = Slot(day: values.days.number(purchaseMs), product: product, storefront: storefront, currency: currency)
            add(purchase, at: purchaseMs) { entry in
                entry.units += quantity
                entry.gross = gross.flatMap { gross in entry.gross.map { $0 + gross } }
                entry.grossUSD = reportingGross.flatMap { reportingGross in entry.grossUSD.map { $0 + reportingGross } }
            }
            if let refundMs = row.optionalInt(Column.refundMs) {
                // A refund of a purchase with no price gives back an unknown amount: its units count on
                // its day, its money is unknown there as the gross is on the purchase day, never 0.
                let refund = values.amount(row, Column.refundAmount)
                let refundSlot = Slot(day: values.days.number(refundMs), product: product, storefront: storefront, currency: currency)
                add(refundSlot, at: refundMs) { entry in
                    entry.refundUnits += quantity
                    entry.refunds = refund.flatMap { refund in entry.refunds.map { $0 + refund } }
                    let refundUSD = refund.flatMap { $0.converted(at: fxRate) }
                    entry.refundsUSD = refundUSD.flatMap { refundUSD in entry.refundsUSD.map { $0 + refundUSD } }
                }
            }
        }
        for (number, count) in sourceCounts {
            priceSources[PriceSource(rawValue: sources[number]) ?? .none, default: 0] += count
        }
        for (slot, date, row) in entries {
            let key = Key(date: date, day: slot.day, productID: products[slot.product], storefront: storefronts[slot.storefront],
                          currency: values.currencies[slot.currency])
            // Two texts that differ only in bytes a String repairs name one row, as they always did.
            rows[key] = rows[key].map { $0.adding(row) } ?? row
        }
        for (key, row) in rows {
            var rounded = row
            rounded.grossUSD = row.grossUSD.map(currency.rounded)
            rounded.refundsUSD = row.refundsUSD.map(currency.rounded)
            rows[key] = rounded
            grossUSD += rounded.grossUSD ?? .zero
            refundsUSD += rounded.refundsUSD ?? .zero
        }
    }

    /// One line per currency whose revenue `fx.csv` cannot convert: the cells are left empty and
    /// summary.json's totals leave it out, so a nightly's reader must be told which rate is missing,
    /// not only how many transactions lack one (CONTRACT.md §1.6, §3).
    var fxWarnings: [String] {
        missingRates.warnings { code, missing in
            let (count, first, last) = (missing.count, missing.firstDay, missing.lastDay)
            let what = count == 1 ? "1 revenue transaction" : "\(count) revenue transactions"
            let days = first == last ? "on \(first)" : "\(first) to \(last)"
            let name = code.isEmpty ? "transactions with no currency" : code
            return "fx.csv has no rate into \(currency.code) for \(name) on or before \(last): \(what) bought \(days) "
                + (count == 1 ? "is" : "are") + " left out of \(currency.column("gross")) and summary.json's revenue"
        }
    }

    /// A row's place while the transactions are read: its day's number and its texts' numbers.
    private struct Slot: Hashable {
        var day: Int64
        var product: Int32
        var storefront: Int32
        var currency: Int32
    }

    static func header(_ currency: ReportingCurrency) -> [String] {
        ["date", "product_id", "storefront", "currency", "units", "refund_units", "gross", "refunds", "net"]
            + ["gross", "refunds", "net"].map(currency.column)
    }

    func write(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.header(currency))
        for key in rows.keys.sorted() {
            guard let row = rows[key] else { continue }
            try sink.csvRecord([
                CSV.textCell(key.date), CSV.textCell(key.productID), CSV.textCell(key.storefront), CSV.textCell(key.currency),
                String(row.units), String(row.refundUnits),
            ] + row.moneyCells)
        }
    }
}
