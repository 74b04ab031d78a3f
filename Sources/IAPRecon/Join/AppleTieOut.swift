import Foundation

/// Apple's Summary Sales Report beside iaprecon's verified units, per Pacific day, product and
/// country, and the days on which Apple sold more than iaprecon verified (CONTRACT.md §2,
/// "Tie-out with Apple"; the finding `unverified_apple_sales`).
///
/// A pure function of two inputs: the report rows and the verified unit changes. It is global (a
/// day's units come from every user), so it never belongs to one connected component; it is
/// per day instead: the join recomputes the days a run touches (`AppleTieOutStore`), and an
/// incremental night gives the same answer as a full rebuild.
struct AppleTieOut: Sendable {
    /// Apple's reporting zone: the Sales Report's days are days here.
    static let reportZone = Zone("America/Los_Angeles") ?? .utc
    /// The country of verified units whose transaction has no (known) storefront.
    static let unknownCountry = "??"


    struct Key: Hashable, Comparable, Sendable {
        var day: String
        var productID: String
        var country: String

        static func < (a: Key, b: Key) -> Bool { (a.day, a.productID, a.country) < (b.day, b.productID, b.country) }
    }

    /// One row of `apple_tieout.csv`.
    struct Row: Sendable, Equatable {
        var key: Key
        var appleUnits: Int64
        var verifiedUnits: Int64
        /// The customer price of the country's purchases (the one most units sold at); nil where Apple has no row.
        var customerPrice: Decimal?
        var customerCurrency: String?
        /// Σ units × per-unit proceeds: refunds take their proceeds back.
        var proceeds: Decimal?
        var proceedsCurrency: String?
        var sources: [SourceLine]

        /// Apple's units less verified ones: positive where Apple sold more than iaprecon verified.
        var difference: Int64 { appleUnits - verifiedUnits }
    }

    /// Sorted by day, product and country.
    private(set) var rows: [Row] = []
    private(set) var findings: [Finding] = []

    init(sales: [TieOutSalesLine], verified: [VerifiedUnits]) {
        var byKey: [Key: Row] = [:]
        /// Units sold per key at each customer price, to name the price most units sold at.
        var unitsAtPrice: [Key: [(price: Decimal, units: Int64)]] = [:]
        var coveredDays = Set<String>()
        for line in sales {
            coveredDays.insert(line.day)
            let key = Key(day: line.day, productID: line.productID, country: line.country)
            var row = byKey[key] ?? Row(key: key, appleUnits: 0, verifiedUnits: 0, sources: [])
            row.appleUnits += line.units
            row.proceeds = (row.proceeds ?? 0) + Decimal(line.units) * line.proceeds
            row.proceedsCurrency = row.proceedsCurrency ?? line.proceedsCurrency
            row.customerCurrency = row.customerCurrency ?? line.customerCurrency
            row.sources.append(line.source)
            byKey[key] = row
            var prices = unitsAtPrice[key] ?? []
            if let index = prices.firstIndex(where: { $0.price == line.customerPrice }) {
                prices[index].units += max(line.units, 0)
            } else {
                prices.append((line.customerPrice, max(line.units, 0)))
            }
            unitsAtPrice[key] = prices
        }
        for (key, prices) in unitsAtPrice {
            // Most units, then the higher price: the same choice whatever order the rows came in.
            byKey[key]?.customerPrice = prices.max { ($0.units, $0.price) < ($1.units, $1.price) }?.price
        }
        /// Storefront-less verified purchases per day and product (refunds not netted: see `findings`).
        var unplacedPurchases: [Key: Int64] = [:]
        for change in verified where coveredDays.contains(change.day) {
            let key = Key(day: change.day, productID: change.productID, country: change.country ?? Self.unknownCountry)
            byKey[key, default: Row(key: key, appleUnits: 0, verifiedUnits: 0, sources: [])].verifiedUnits += change.units
            if change.country == nil, change.units > 0 { unplacedPurchases[key, default: 0] += change.units }
        }
        rows = byKey.values.sorted { $0.key < $1.key }
        findings = Self.findings(rows, unplacedPurchases: unplacedPurchases)
    }

    /// One finding per day, product and country whose shortfall the day's storefront-less
    /// purchases do not cover. Those purchases (a receipt without a storefront could be from any
    /// country) go to the shortfalls in country-code order first. A storefront-less refund is not
    /// netted against them: it lowers some country's Apple units, never raises a shortfall, and
    /// netting it would let one country's refund unmask another country's covered purchase.
    static func findings(_ rows: [Row], unplacedPurchases: [Key: Int64]) -> [Finding] {
        var findings: [Finding] = []
        var start = 0
        while start < rows.count {
            var end = start
            while end < rows.count, rows[end].key.day == rows[start].key.day, rows[end].key.productID == rows[start].key.productID { end += 1 }
            let group = rows[start..<end]
            var unplaced = unplacedPurchases[Key(day: rows[start].key.day, productID: rows[start].key.productID, country: unknownCountry)] ?? 0
            for row in group where row.key.country != unknownCountry && row.difference > 0 {
                let covered = min(unplaced, row.difference)
                unplaced -= covered
                let missing = row.difference - covered
                guard missing > 0 else { continue }
                findings.append(finding(row, missing: missing, coveredByUnknownCountry: covered))
            }
            start = end
        }
        return findings
    }

    static func finding(_ row: Row, missing: Int64, coveredByUnknownCountry: Int64) -> Finding {
        let dayStart = Timestamp.startOfDay(row.key.day).map { reportZone.utc(fromLocal: $0) } ?? 0
        var detail = "country=\(row.key.country) apple_units=\(row.appleUnits) verified_units=\(row.verifiedUnits)"
        if coveredByUnknownCountry > 0 { detail += " covered_by_storefrontless_units=\(coveredByUnknownCountry)" }
        detail += " missing_units=\(missing)"
        var finding = Finding(kind: .unverifiedAppleSales, key: "\(row.key.day)|\(row.key.productID)|\(row.key.country)",
                              eventMs: dayStart, detail: detail)
        finding.productID = row.key.productID
        finding.amount = row.customerPrice.map { $0 * Decimal(missing) }
        finding.currency = row.customerCurrency
        finding.sources = row.sources
        return finding
    }

    /// Recomputes the tie-out of `days`, or of every day when nil, in the store; returns how many
    /// rows it wrote (tie-out rows and findings).
    static func refresh(_ store: some JoinStore, days requested: Set<String>? = nil) throws -> Int {
        guard let inputs = try store.tieOutInputs(days: requested, zone: reportZone) else { return 0 }
        let tieOut = AppleTieOut(sales: inputs.sales, verified: inputs.verified)
        let rows = tieOut.rows.map { row in
            TieOutRow(
                day: row.key.day, productID: row.key.productID, country: row.key.country, appleUnits: row.appleUnits,
                verifiedUnits: row.verifiedUnits, customerPrice: row.customerPrice.map(Money.format), customerCurrency: row.customerCurrency,
                proceeds: row.proceeds.map(Money.format), proceedsCurrency: row.proceedsCurrency)
        }
        try store.replaceTieOut(days: inputs.days.map { $0.map { (day: $0, startMs: dayStartMs($0)) } }, rows: rows,
                                findings: tieOut.findings, files: inputs.files)
        return rows.count + tieOut.findings.count
    }

    /// The Pacific days of these moments.
    static func days(of moments: [Int64]) -> Set<String> {
        var names = DayNames(reportZone)
        return Set(moments.map { names($0) })
    }

    /// The start of `day` in Apple's reporting zone, as the findings' `event_ms` holds it.
    static func dayStartMs(_ day: String) -> Int64? {
        Timestamp.startOfDay(day).map { reportZone.utc(fromLocal: $0) }
    }
}
