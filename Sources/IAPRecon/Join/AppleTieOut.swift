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
    /// Apple's reporting zone: the Sales Report's days are days here, as ingest judges them.
    static let reportZone = AppleSalesParser.reportZone
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
        /// Apple's units of purchases alone (its rows of positive units): what the verified purchases
        /// are held against, so that a refund's timing neither makes nor hides a shortfall.
        var applePurchases: Int64 = 0
        /// The customer price of the country's purchases (the one most units sold at); nil where Apple has no row.
        var customerPrice: Decimal?
        var customerCurrency: String?
        /// Σ units × per-unit proceeds: refunds take their proceeds back.
        var proceeds: Decimal?
        var proceedsCurrency: String?
        var sources: [SourceLine]
        /// What the verified purchases and refunds add up, kept for a night to add its changes to.
        var counted = Counted()

        var verifiedUnits: Int64 { counted.units }

        /// Apple's units less verified ones: positive where Apple sold more than iaprecon verified.
        var difference: Int64 { appleUnits - verifiedUnits }

        /// Apple's purchases less the verified ones: the units Apple sold that no receipt or
        /// notification told of, whatever either side knows of refunds (`findings`).
        var purchaseShortfall: Int64 { applePurchases - counted.purchases }
    }

    /// What the verified purchases and refunds of one day, product and country add up to.
    struct Counted: Sendable, Equatable {
        var units: Int64 = 0
        /// How many purchases and refunds: a row with none is shown only for Apple's units.
        var changes: Int64 = 0
        /// The units of its purchases alone: refunds are held against Apple's apart, on their own day
        /// (`Row.purchaseShortfall`).
        var purchases: Int64 = 0
        /// Of the storefront-less row (`unknownCountry`), its purchases' units: refunds are not
        /// netted against them (`findings`).
        var unplacedPurchases: Int64 = 0

        /// Counts `change` once (`sign` 1), or takes it away again (-1).
        mutating func add(_ change: VerifiedUnits, sign: Int64 = 1) {
            units += sign * change.units
            changes += sign
            if change.units > 0 { purchases += sign * change.units }
            if change.country == nil, change.units > 0 { unplacedPurchases += sign * change.units }
        }

        mutating func add(_ other: Counted) {
            (units, changes, purchases, unplacedPurchases) = (
                units + other.units, changes + other.changes, purchases + other.purchases, unplacedPurchases + other.unplacedPurchases
            )
        }
    }

    /// The key a verified change counts under: storefront-less ones under `unknownCountry`.
    static func key(_ change: VerifiedUnits) -> Key {
        Key(day: change.day, productID: change.productID, country: change.country ?? unknownCountry)
    }

    /// `verified` added up by day, product and country.
    static func counted(_ verified: [VerifiedUnits]) -> [Key: Counted] {
        var counted: [Key: Counted] = [:]
        for change in verified { counted[key(change), default: Counted()].add(change) }
        return counted
    }

    /// A file whose rows of a day another file, earlier in path order, reports too.
    struct RepeatedReport: Sendable, Equatable {
        var day: String
        /// The later file's place in path order.
        var file: Int32
        /// The earlier file's.
        var repeats: Int32
    }

    /// Sorted by day, product and country.
    private(set) var rows: [Row] = []
    private(set) var findings: [Finding] = []
    /// Days a file reports with exactly the rows of an earlier file: counted once, from the earlier.
    private(set) var repeatedReports: [RepeatedReport] = []
    /// Days a file reports with other rows than an earlier file, for a product and country both
    /// have: both are counted, as two vendor accounts' reports of one day would be. One per earlier
    /// file it overlaps, so a third report of a day is named against both others.
    private(set) var overlappingReports: [RepeatedReport] = []
    /// Rows whose Sales Report lines pay their proceeds in more than one currency: their
    /// `proceeds` is left empty (a sum across currencies would be no amount at all).
    private(set) var mixedProceeds: [MixedProceeds] = []

    /// A day, product and country whose proceeds Apple reports in several currencies.
    struct MixedProceeds: Sendable, Equatable {
        var key: Key
        var currencies: [String]
        /// The places in path order of the files of the row's lines, in that order: two reports of
        /// one day may each pay in a currency of their own.
        var files: [Int32]
    }

    init(sales: [TieOutSalesLine], verified: [VerifiedUnits], covered: Set<String> = []) {
        self.init(sales: sales, counted: Self.counted(verified), covered: covered)
    }

    /// The rows of the days the reports cover (`sales`' days, and `covered`: days whose report
    /// has only the app's own rows): a row where Apple has units or any verified purchase or
    /// refund counted (`counted`, by day, product and country).
    init(sales allSales: [TieOutSalesLine], counted: [Key: Counted], covered: Set<String> = []) {
        let (sales, repeated, overlapping) = Self.withoutRepeatedReports(allSales)
        repeatedReports = repeated
        overlappingReports = overlapping
        var byKey: [Key: Row] = [:]
        /// Units sold per key at each customer price and currency, to name the price most units sold at.
        var unitsAtPrice: [Key: [(price: Decimal, currency: String, units: Int64)]] = [:]
        /// Σ units × proceeds per key and proceeds currency: one amount only where the key has one currency.
        var proceedsByCurrency: [Key: [String: Decimal]] = [:]
        var coveredDays = covered
        for line in sales {
            coveredDays.insert(line.day)
            let key = Key(day: line.day, productID: line.productID, country: line.country)
            var row = byKey[key] ?? Row(key: key, appleUnits: 0, sources: [])
            row.appleUnits += line.units
            row.applePurchases += max(line.units, 0)
            row.sources.append(line.source)
            byKey[key] = row
            proceedsByCurrency[key, default: [:]][line.proceedsCurrency, default: 0] += Decimal(line.units) * line.proceeds
            var prices = unitsAtPrice[key] ?? []
            if let index = prices.firstIndex(where: { $0.price == line.customerPrice && $0.currency == line.customerCurrency }) {
                prices[index].units += max(line.units, 0)
            } else {
                prices.append((line.customerPrice, line.customerCurrency, max(line.units, 0)))
            }
            unitsAtPrice[key] = prices
        }
        for (key, prices) in unitsAtPrice {
            // Most units, then the higher price: the same choice whatever order the rows came in. The
            // price keeps its own currency, so a finding's amount is never one currency's price in another.
            let price = prices.max { ($0.units, $0.price, $0.currency) < ($1.units, $1.price, $1.currency) }
            byKey[key]?.customerPrice = price?.price
            byKey[key]?.customerCurrency = price?.currency
        }
        for (key, amounts) in proceedsByCurrency {
            // Amounts in two currencies have no one sum: the row says none rather than a wrong one.
            guard amounts.count == 1, let only = amounts.first else {
                let files = Set((byKey[key]?.sources ?? []).map(\.file)).sorted()
                mixedProceeds.append(MixedProceeds(key: key, currencies: amounts.keys.sorted(), files: files))
                continue
            }
            byKey[key]?.proceeds = only.value
            byKey[key]?.proceedsCurrency = only.key
        }
        mixedProceeds.sort { $0.key < $1.key }
        /// Storefront-less verified purchases per day and product (refunds not netted: see `findings`).
        var unplacedPurchases: [Key: Int64] = [:]
        for (key, count) in counted where count.changes > 0 && coveredDays.contains(key.day) {
            var row = byKey[key] ?? Row(key: key, appleUnits: 0, sources: [])
            row.counted = count
            byKey[key] = row
            if count.unplacedPurchases != 0 { unplacedPurchases[key] = count.unplacedPurchases }
        }
        rows = byKey.values.sorted { $0.key < $1.key }
        findings = Self.findings(rows, unplacedPurchases: unplacedPurchases)
    }

    /// `sales` without the rows of a day that a file reports exactly as an earlier file in path
    /// order does (the same rows, in any order): the same day's report put in twice, say as `.txt`
    /// and as `.txt.gz`, whose units would otherwise count twice and show as unverified sales. A
    /// day's rows of two files that differ but share a product and country are kept, and named: a
    /// later file against every earlier one it shares some with, as each pair counts a unit twice.
    static func withoutRepeatedReports(_ sales: [TieOutSalesLine]) -> (kept: [TieOutSalesLine], repeated: [RepeatedReport], overlapping: [RepeatedReport]) {
        struct Entry: Hashable {
            var productID, country, customerPrice, customerCurrency, proceeds, proceedsCurrency: String
            var units: Int64
        }
        struct FileDay: Hashable {
            var day: String
            var file: Int32
        }
        var reports: [FileDay: [Entry: Int]] = [:]
        for line in sales {
            let entry = Entry(productID: line.productID, country: line.country, customerPrice: Money.format(line.customerPrice),
                              customerCurrency: line.customerCurrency, proceeds: Money.format(line.proceeds),
                              proceedsCurrency: line.proceedsCurrency, units: line.units)
            reports[FileDay(day: line.day, file: line.source.file), default: [:]][entry, default: 0] += 1
        }
        guard reports.count > 1 else { return (sales, [], []) }
        var repeated: [RepeatedReport] = [], overlapping: [RepeatedReport] = []
        var dropped = Set<FileDay>()
        var counted: [String: [(file: Int32, rows: [Entry: Int])]] = [:]
        for report in reports.keys.sorted(by: { ($0.day, $0.file) < ($1.day, $1.file) }) {
            let rows = reports[report] ?? [:]
            let earlier = counted[report.day] ?? []
            if let same = earlier.first(where: { $0.rows == rows }) {
                repeated.append(RepeatedReport(day: report.day, file: report.file, repeats: same.file))
                dropped.insert(report)
                continue
            }
            let places = Set(rows.keys.map { [$0.productID, $0.country] })
            for shared in earlier where shared.rows.keys.contains(where: { places.contains([$0.productID, $0.country]) }) {
                overlapping.append(RepeatedReport(day: report.day, file: report.file, repeats: shared.file))
            }
            counted[report.day, default: []].append((report.file, rows))
        }
        guard !dropped.isEmpty else { return (sales, [], overlapping) }
        return (sales.filter { !dropped.contains(FileDay(day: $0.day, file: $0.source.file)) }, repeated, overlapping)
    }

    /// The repeated and overlapping reports as the store keeps them, files named by path.
    func reportOverlaps(_ files: SourceFiles) -> [SalesReportOverlap] {
        repeatedReports.map { SalesReportOverlap(day: $0.day, path: files.path($0.file), earlierPath: files.path($0.repeats), kind: .repeated) }
            + overlappingReports.map {
                SalesReportOverlap(day: $0.day, path: files.path($0.file), earlierPath: files.path($0.repeats), kind: .overlapping)
            }
    }

    /// What a person reads of repeated and overlapping reports, on stderr and on the report page
    /// alike: one line per pair of files, the repeated ones first, each kind in path order.
    static func warnings(_ overlaps: [SalesReportOverlap]) -> [String] {
        func days(_ list: [String]) -> String {
            list.count == 1 ? "the report of \(list[0])" : "the reports of \(list.count) days from \(list[0]) to \(list[list.count - 1])"
        }
        func pairs(_ kind: SalesReportOverlap.Kind) -> [(path: String, earlierPath: String, days: [String])] {
            var byPair: [[String]: [String]] = [:]
            for overlap in overlaps where overlap.kind == kind { byPair[[overlap.path, overlap.earlierPath], default: []].append(overlap.day) }
            // Byte by byte, as files are in path order everywhere (`SourceFiles`).
            return byPair.sorted { $0.key.lexicographicallyPrecedes($1.key) { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
                .map { ($0.key[0], $0.key[1], $0.value.sorted()) }
        }
        return pairs(.repeated).map { "\($0.path) repeats \(days($0.days)) in \($0.earlierPath): counted once" }
            + pairs(.overlapping).map {
                "\($0.path) and \($0.earlierPath) both have rows of \(days($0.days)) for the same products and countries, "
                    + "and the rows differ: both counted"
            }
    }

    /// The files of the rows whose proceeds came in several currencies as the store keeps them, named by path.
    func mixedProceedsFiles(_ files: SourceFiles) -> [SalesReportMixedProceeds] {
        mixedProceeds.flatMap { row in
            row.files.map {
                SalesReportMixedProceeds(day: row.key.day, productID: row.key.productID, country: row.key.country, path: files.path($0))
            }
        }
    }

    /// What a person reads of the reports a run tied out: their repeats and overlaps, and rows whose
    /// proceeds came in several currencies, with the files their lines are in.
    func reportWarnings(_ files: SourceFiles) -> [String] {
        Self.warnings(reportOverlaps(files))
            + mixedProceeds.map {
                let paths = $0.files.map(files.path)
                let named = paths.count == 1 ? "\(paths[0]) has" : "\(Self.listed(paths)) have"
                return "\(named) proceeds of \($0.key.productID) in \($0.key.country) on \($0.key.day) in "
                    + "\($0.currencies.joined(separator: " and ")): apple_proceeds left empty for that row"
            }
    }

    /// `a`, `a and b`, `a, b and c`: names as a sentence lists them.
    static func listed(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
    }

    /// One finding per day, product and country whose shortfall of purchases (Apple's purchase
    /// units over the verified ones) the day's storefront-less purchases do not cover. Purchases
    /// are held against purchases and refunds left apart: a refund the server learnt of on another
    /// Pacific day than Apple lists it is no sale the server never saw, and a refund Apple lists
    /// that no notification told of does not hide one. Storefront-less purchases (a receipt without
    /// a storefront could be from any country) go to the shortfalls in country-code order first. A storefront-less refund is not
    /// netted against them: it lowers some country's Apple units, never raises a shortfall, and
    /// netting it would let one country's refund unmask another country's covered purchase.
    static func findings(_ rows: [Row], unplacedPurchases: [Key: Int64]) -> [Finding] {
        let shortfalls = shortfalls(rows, key: \.key, shortfall: \.purchaseShortfall) {
            unplacedPurchases[Key(day: $0.day, productID: $0.productID, country: unknownCountry)] ?? 0
        }
        return shortfalls.compactMap { shortfall in
            shortfall.missing > 0 ? finding(shortfall.row, missing: shortfall.missing, coveredByUnknownCountry: shortfall.covered) : nil
        }
    }

    /// A country's shortfall on one day and product, Apple's purchases over the verified ones, and how
    /// much of it that day's storefront-less purchases cover.
    struct Shortfall<Row> {
        var row: Row
        var covered: Int64
        var missing: Int64
    }

    /// Every row of a known country whose verified purchases fall short of Apple's (`shortfall`), with
    /// the part its day and product's storefront-less purchases cover (`findings`: in country-code
    /// order, first come first served). `rows` are in key order; `unplacedPurchases` gives a day and
    /// product's. The findings and the report page both read the shortfalls from here, so they cannot disagree.
    static func shortfalls<Element>(_ rows: [Element], key: (Element) -> Key, shortfall difference: (Element) -> Int64,
                                    unplacedPurchases: (Key) -> Int64) -> [Shortfall<Element>] {
        var shortfalls: [Shortfall<Element>] = []
        var start = 0
        while start < rows.count {
            let first = key(rows[start])
            var end = start
            while end < rows.count, key(rows[end]).day == first.day, key(rows[end]).productID == first.productID { end += 1 }
            var unplaced = unplacedPurchases(first)
            for row in rows[start..<end] where key(row).country != unknownCountry && difference(row) > 0 {
                let covered = min(unplaced, difference(row))
                unplaced -= covered
                shortfalls.append(Shortfall(row: row, covered: covered, missing: difference(row) - covered))
            }
            start = end
        }
        return shortfalls
    }

    static func finding(_ row: Row, missing: Int64, coveredByUnknownCountry: Int64) -> Finding {
        let dayStart = Timestamp.startOfDay(row.key.day).map { reportZone.utc(fromLocal: $0) } ?? 0
        var detail = "country=\(row.key.country) apple_units=\(row.appleUnits) verified_units=\(row.verifiedUnits)"
        // Refunds on either side: the purchases the shortfall is of differ from the net units.
        if row.applePurchases != row.appleUnits || row.counted.purchases != row.verifiedUnits {
            detail += " apple_purchase_units=\(row.applePurchases) verified_purchase_units=\(row.counted.purchases)"
        }
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

    /// Ties out every day again, or (`days`, a night's) counts again the days whose Sales Report
    /// rows changed and adds what `changes` changed to the stored rows of the other days they
    /// fall on; returns how many rows it wrote (tie-out rows and findings) and what a person should
    /// know of the reports it read (`reportWarnings`). A night's changes
    /// are its own transactions as they were and as they are, so a night reads those, not every
    /// transaction of the days they fall on.
    static func refresh(_ store: some JoinStore, days requested: Set<String>? = nil, changes: TieOutChanges = TieOutChanges()) throws
        -> (rowsWritten: Int, warnings: [String]) {
        try refreshed(store, days: requested, changes: changes, ofRebuilt: false)?.save(to: store) ?? (0, [])
    }

    /// Every day tied out again from a full rebuild's results before they are switched in: read
    /// while their indexes are built, saved (`Refreshed.save`) once they replace the current ones.
    static func refreshedFromRebuilt(_ store: some JoinStore) throws -> Refreshed? {
        try refreshed(store, days: nil, changes: TieOutChanges(), ofRebuilt: true)
    }

    /// A tie-out computed (`refresh`) and not yet written.
    struct Refreshed {
        var days: [(day: String, startMs: Int64?)]?
        var rows: [TieOutRow]
        var findings: [Finding]
        var overlaps: [SalesReportOverlap]
        var mixedProceeds: [SalesReportMixedProceeds]
        var files: SourceFiles
        var warnings: [String]

        /// Writes it; returns how many rows it wrote and its warnings (`refresh`).
        func save(to store: some JoinStore) throws -> (rowsWritten: Int, warnings: [String]) {
            try store.replaceTieOut(days: days, rows: rows, findings: findings, overlaps: overlaps, mixedProceeds: mixedProceeds, files: files)
            return (rows.count + findings.count, warnings)
        }
    }

    private static func refreshed(_ store: some JoinStore, days requested: Set<String>?, changes: TieOutChanges, ofRebuilt: Bool) throws
        -> Refreshed? {
        var changed: [Key: Counted] = [:]
        if let requested {
            var names = DayNames(reportZone)
            var removed: [VerifiedUnits] = [], added: [VerifiedUnits] = []
            for transaction in changes.removed { VerifiedUnits.append(transaction, days: &names, to: &removed) }
            for transaction in changes.added { VerifiedUnits.append(transaction, days: &names, to: &added) }
            for change in removed where !requested.contains(change.day) { changed[key(change), default: Counted()].add(change, sign: -1) }
            for change in added where !requested.contains(change.day) { changed[key(change), default: Counted()].add(change) }
        }
        let changedDays = Set(changed.keys.map(\.day))
        guard let inputs = try store.tieOutInputs(days: requested.map { $0.union(changedDays) }, counted: requested, zone: reportZone,
                                                  ofRebuilt: ofRebuilt)
        else { return nil }
        var counted = Self.counted(inputs.verified)
        if requested != nil {
            for row in try store.tieOutRows(days: changedDays) {
                counted[Key(day: row.day, productID: row.productID, country: row.country)] = Counted(
                    units: row.verifiedUnits, changes: row.verifiedChanges, purchases: row.verifiedPurchases,
                    unplacedPurchases: row.unplacedPurchases)
            }
            for (key, change) in changed { counted[key, default: Counted()].add(change) }
        }
        let tieOut = AppleTieOut(sales: inputs.sales, counted: counted, covered: inputs.covered)
        let rows = tieOut.rows.map { row in
            TieOutRow(
                day: row.key.day, productID: row.key.productID, country: row.key.country, appleUnits: row.appleUnits,
                verifiedUnits: row.verifiedUnits, customerPrice: row.customerPrice.map(Money.format), customerCurrency: row.customerCurrency,
                proceeds: row.proceeds.map(Money.format), proceedsCurrency: row.proceedsCurrency, verifiedChanges: row.counted.changes,
                unplacedPurchases: row.counted.unplacedPurchases, applePurchases: row.applePurchases,
                verifiedPurchases: row.counted.purchases)
        }
        return Refreshed(days: inputs.days.map { $0.map { (day: $0, startMs: dayStartMs($0)) } }, rows: rows, findings: tieOut.findings,
                         overlaps: tieOut.reportOverlaps(inputs.files), mixedProceeds: tieOut.mixedProceedsFiles(inputs.files),
                         files: inputs.files, warnings: tieOut.reportWarnings(inputs.files))
    }

    /// The start of `day` in Apple's reporting zone, as the findings' `event_ms` holds it.
    static func dayStartMs(_ day: String) -> Int64? {
        Timestamp.startOfDay(day).map { reportZone.utc(fromLocal: $0) }
    }
}
