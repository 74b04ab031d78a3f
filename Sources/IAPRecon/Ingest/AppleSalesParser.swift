/// `apple/*.txt`: App Store Connect's daily Summary Sales Report, matched by Apple's column
/// names (CONTRACT.md §1.7).
///
/// Both of Apple's layouts are read: the current one of 28 columns and the older one that ends
/// at `Period`; the columns used are in both (`Parent Identifier` is read where there is one).
/// Only in-app purchase rows are kept; the app's own rows (downloads, updates, re-downloads) are
/// read and ignored, but for the day they cover, and so are other apps' in-app rows when the run
/// names the app's SKUs (`LineRules.appSKUs`): a report is the vendor account's, of all its apps.
/// `Units` is negative for refunds; the per-unit `Customer Price` and `Developer Proceeds` are
/// kept as magnitudes, so a refund row's sign lives in its units alone, whichever sign Apple
/// gave its prices.
enum AppleSalesParser: CSVRowParser {
    static let requiredColumns = Column.allCases.filter { $0 != .parentIdentifier }.map(\.name)
    static let columns = Column.allCases.map(\.name)

    /// Apple's Product Type Identifiers of in-app purchases: consumable or non-consumable (`IA1`),
    /// non-renewing and auto-renewable subscriptions (`IA9`, `IAY`), the older free subscription
    /// (`IAC`), and a Mac app's (`FI1`, and `IA1-M`, `IA9-M`, `IAY-M`, which Apple reports Mac
    /// purchases under today: left out, Apple's Mac sales would count as none, and every verified
    /// Mac purchase as one Apple never sold).
    /// A restored purchase (`IA3`) sells nothing, so it is not one of them.
    static let inAppProductTypes: Set<String> = ["IA1", "IA9", "IAY", "IAC", "FI1", "IA1-M", "IA9-M", "IAY-M"]

    /// The app's own rows Apple lists: downloads (`1`, `1F`, `1T`, `F1`, the bundles `1-B`, `F1-B`
    /// and the `1E*` custom apps), re-downloads (`3*`, `F3`), updates (`7*`, `F7`), restored in-app
    /// purchases (`IA3`) and the Mac free subscription (`IAC-M`).
    static let appProductTypes: Set<String> = [
        "1", "1F", "1T", "F1", "1-B", "F1-B", "1E", "1EP", "1EU", "3", "3F", "3T", "F3", "7", "7F", "7T", "F7", "IA3", "IAC-M",
    ]

    /// Whether Apple lists `productType`, as an in-app purchase or as one of the app's own rows.
    static func isDocumented(productType: String) -> Bool {
        inAppProductTypes.contains(productType) || appProductTypes.contains(productType)
    }

    enum Column: Int, CaseIterable {
        case sku, productType, units, developerProceeds, beginDate, endDate, customerCurrency, countryCode
        case proceedsCurrency, customerPrice
        /// The SKU of the app an in-app purchase belongs to.
        case parentIdentifier

        var name: String {
            switch self {
            case .sku: "SKU"
            case .productType: "Product Type Identifier"
            case .units: "Units"
            case .developerProceeds: "Developer Proceeds"
            case .beginDate: "Begin Date"
            case .endDate: "End Date"
            case .customerCurrency: "Customer Currency"
            case .countryCode: "Country Code"
            case .proceedsCurrency: "Currency of Proceeds"
            case .customerPrice: "Customer Price"
            case .parentIdentifier: "Parent Identifier"
            }
        }
    }

    static func parse(_ row: CSVRow, header: CSVHeader, rules: LineRules) throws(LineReject) -> LineOutcome {
        func required(_ column: Column) throws(LineReject) -> String {
            guard let value = header.value(slot: column.rawValue, in: row) else { throw LineReject("missing required value '\(column.name)'") }
            return value
        }
        let productType = try required(.productType)
        // The header again is a second report pasted after the first, whose rows count as well:
        // the line says so, rather than passing for one of the app's own rows.
        if productType == Column.productType.name { throw LineReject("header row repeated: two reports in one file") }
        // The app's own rows, and with the app's SKUs named another app's in-app rows, sell nothing
        // this app ties out, but their day is a day the report covers: a purchase iaprecon verified
        // that day shows beside Apple's zero units. A row whose dates do not say one day is ignored
        // whole, as before: it is not read for anything.
        let parent = header.value(slot: Column.parentIdentifier.rawValue, in: row)
        let isOtherApps = !rules.appSKUs.isEmpty && parent.map { !$0.isEmpty && !rules.appSKUs.contains($0) } == true
        guard inAppProductTypes.contains(productType), !isOtherApps else {
            guard let day = try? pacificDay(.beginDate, required(.beginDate)), (try? pacificDay(.endDate, required(.endDate))) == day else {
                return .ignored
            }
            try checkDay(day, written: required(.beginDate), rules: rules)
            return .ignoredKeeping([SalesReportLine.coverageRow(day: day, productType: productType)])
        }
        let units = try units(try required(.units))
        let day = try pacificDay(.beginDate, required(.beginDate))
        let endDay = try pacificDay(.endDate, required(.endDate))
        guard endDay == day else { throw LineReject("not a daily report: 'Begin Date' \(day), 'End Date' \(endDay)") }
        let country = try required(.countryCode)
        guard country.utf8.count == 2, country.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A }) else {
            throw LineReject("bad country in 'Country Code': \"\(HiddenCharacters.visible(String(country.prefix(40))))\"")
        }
        let sales = SalesReportLine(
            day: day, productID: try required(.sku), productType: try required(.productType), units: units, country: country,
            customerPrice: try magnitude(.customerPrice, required(.customerPrice)),
            customerCurrency: try CurrencyCode.checked(required(.customerCurrency), field: Column.customerCurrency.name),
            proceeds: try magnitude(.developerProceeds, required(.developerProceeds)),
            proceedsCurrency: try CurrencyCode.checked(required(.proceedsCurrency), field: Column.proceedsCurrency.name))
        try checkDay(day, written: required(.beginDate), rules: rules)
        // The app the row belongs to, where the report names one: the summary names the apps of the rows tied out.
        guard let parent, !parent.isEmpty else { return .accepted([sales.rawRow()]) }
        return .accepted([sales.rawRow(), SalesReportLine.appRow(parentSKU: parent)])
    }

    /// Apple's reporting zone, whose days a report's dates are.
    static let reportZone = Zone("America/Los_Angeles") ?? .utc

    /// Rejects a report's day (`yyyy-MM-dd`, `written` as the report gives it) that starts in Los
    /// Angeles more than a day after the run's clock: Apple reports a day once it is over, so no
    /// report of it can exist yet, and its row (an app row's too: it says which days the report
    /// covers) would date the as-of of an input without event times. Nor is a day before the App
    /// Store opened one Apple reported. The clock's check, so the last.
    private static func checkDay(_ day: String, written: String, rules: LineRules) throws(LineReject) {
        guard let dayStart = Timestamp.startOfDay(day) else { return }
        try rules.checkDay(written, field: Column.beginDate.name, dayMs: dayStart, startMs: reportZone.utc(fromLocal: dayStart), where: "in Los Angeles at")
    }

    /// `Units`: a whole number of units, negative for refunds. Apple types the column
    /// DECIMAL(18,2), so `3.00` is three units; a fraction of a unit is no count Apple makes.
    static func units(_ text: String) throws(LineReject) -> Int64 {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let cents = parts.count == 2 ? parts[1] : ""
        // `magnitude`, not `abs`: the most negative `Int64` has no positive twin, and `abs` of it traps.
        guard let units = Int64(parts[0]), units.magnitude < 1_000_000_000, parts.count == 1 || (1...2).contains(cents.count),
              cents.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw LineReject("bad number in 'Units': \"\(HiddenCharacters.visible(String(text.prefix(40))))\"")
        }
        guard cents.utf8.allSatisfy({ $0 == UInt8(ascii: "0") }) else {
            throw LineReject("a fraction of a unit in 'Units': \"\(HiddenCharacters.visible(String(text.prefix(40))))\"")
        }
        return units
    }

    /// `MM/DD/YYYY` (a day in `America/Los_Angeles`, Apple's reporting zone) as `yyyy-MM-dd`.
    static func pacificDay(_ column: Column, _ text: String) throws(LineReject) -> String {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 2, parts[1].count == 2, parts[2].count == 4 {
            let day = parts[2] + "-" + parts[0] + "-" + parts[1]
            if Timestamp.startOfDay(String(day)) != nil { return String(day) }
        }
        throw LineReject("bad date in '\(column.name)' (MM/DD/YYYY): \"\(HiddenCharacters.visible(String(text.prefix(40))))\"")
    }

    /// An exact decimal amount without its sign, within the range every amount has (CONTRACT.md §1).
    static func magnitude(_ column: Column, _ text: String) throws(LineReject) -> String {
        let amount = try AmountRange.amount(.string(text), field: column.name, negativeAllowed: true)
        return Money.format(amount.isNegative ? .zero - amount : amount)
    }
}
