import Foundation
import Testing
@testable import IAPRecon

/// Apple's Summary Sales Report (`apple/*.txt`), laid out as App Store Connect writes it.
@Suite("Apple Summary Sales Report input")
struct AppleSalesReportTests {
    /// The 28 columns of the current Summary Sales Report, in Apple's order.
    static let currentHeader = [
        "Provider", "Provider Country", "SKU", "Developer", "Title", "Version", "Product Type Identifier", "Units",
        "Developer Proceeds", "Begin Date", "End Date", "Customer Currency", "Country Code", "Currency of Proceeds",
        "Apple Identifier", "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category", "CMB",
        "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client", "Order Type",
    ].joined(separator: "\t")

    /// The older layout: the first 20 of those columns, ending at `Period`.
    static let olderHeader = currentHeader.split(separator: "\t").prefix(20).joined(separator: "\t")

    static func current(_ cells: [String]) -> String {
        precondition(cells.count == 28)
        return cells.joined(separator: "\t")
    }

    static let currentReport = [
        currentHeader,
        // The app itself: a free download, read and ignored.
        current(["APPLE", "US", "com.example.game", "Example Games Inc.", "Gem Quest", "2.14.0", "1F", "37", "0", "11/24/2026",
                 "11/24/2026", "USD", "US", "USD", "6449010001", "0", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""]),
        // An in-app purchase.
        current(["APPLE", "US", "com.example.gems300", "Example Games Inc.", "300 Gems", "", "IA1", "3", "3.49", "11/24/2026",
                 "11/24/2026", "USD", "US", "USD", "6449010103", "4.99", "", "com.example.game", "", "", "Games", "", "iPhone", "iOS",
                 "", "", "", ""]),
        // A refund: negative units, Apple's negative prices.
        current(["APPLE", "US", "com.example.premium.monthly", "Example Games Inc.", "Premium (Monthly)", "", "IAY", "-1", "-3.49",
                 "11/24/2026", "11/24/2026", "USD", "US", "USD", "6449010201", "-4.99", "", "com.example.game", "Renewal", "1 Month",
                 "Games", "", "iPad", "iOS", "", "", "", ""]),
        // Not in dollars: Japan, in yen.
        current(["APPLE", "US", "com.example.gems300", "Example Games Inc.", "300 Gems", "", "IA1", "2", "509", "11/24/2026",
                 "11/24/2026", "JPY", "JP", "JPY", "6449010103", "800", "", "com.example.game", "", "", "Games", "", "iPhone", "iOS",
                 "", "", "", ""]),
        // An update of the app: ignored.
        current(["APPLE", "US", "com.example.game", "Example Games Inc.", "Gem Quest", "2.14.0", "7F", "12", "0", "11/24/2026",
                 "11/24/2026", "USD", "US", "USD", "6449010001", "0", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""]),
    ]

    /// The kept row of an accepted line, beside which only the app it belongs to may be kept (`app`).
    static func values(_ parsed: ParsedLine) -> [String: SQLValue]? {
        guard case .accepted(let rows) = parsed.outcome, rows.first?.table == .appleSales, rows.dropFirst().allSatisfy({ $0.table == .salesApps })
        else { return nil }
        return rows[0].byColumn
    }

    /// The `Parent Identifier` an accepted line keeps, if it names one.
    static func app(_ parsed: ParsedLine) -> SQLValue? {
        guard case .accepted(let rows) = parsed.outcome else { return nil }
        return rows.first { $0.table == .salesApps }?.byColumn["parent_sku"]
    }

    @Test("the 28-column report: in-app, refund and yen rows are kept by header name; the app's rows are ignored but for their day")
    func currentLayout() throws {
        let parsed = IngestLine.csv(.apple, Self.currentReport)
        #expect(parsed.map(\.line) == [2, 3, 4, 5, 6])
        #expect(parsed[0].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2026-11-24", productType: "1F")]))
        #expect(parsed[4].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2026-11-24", productType: "7F")]))
        var counts = LineCounts()
        for line in parsed { counts.count(line.outcome) }
        #expect(counts == LineCounts(read: 5, accepted: 3, ignored: 2))
        let purchase = try #require(Self.values(parsed[1]))
        #expect(Self.app(parsed[1]) == .text("com.example.game"))
        #expect(purchase["day"] == .text("2026-11-24"))
        #expect(purchase["product_id"] == .text("com.example.gems300"))
        #expect(purchase["product_type"] == .text("IA1"))
        #expect(purchase["units_n"] == .integer(3))
        #expect(purchase["country"] == .text("US"))
        #expect(purchase["customer_price"] == .text("4.99"))
        #expect(purchase["proceeds"] == .text("3.49"))
        let refund = try #require(Self.values(parsed[2]))
        #expect(refund["units_n"] == .integer(-1))
        #expect(refund["customer_price"] == .text("4.99"), "the sign lives in the units alone")
        #expect(refund["proceeds"] == .text("3.49"))
        let yen = try #require(Self.values(parsed[3]))
        #expect(yen["customer_currency"] == .text("JPY"))
        #expect(yen["proceeds_currency"] == .text("JPY"))
        #expect(yen["customer_price"] == .text("800"))
        #expect(yen["country"] == .text("JP"))
    }

    @Test("with the app's SKUs named, another app's in-app row is read and ignored but for its day; rows of no parent and the older layout are kept")
    func otherAppsRows() throws {
        var rules = IngestLine.unsigned
        rules.appSKUs = ["com.example.game"]
        func other(_ parent: String) -> String {
            Self.current(["APPLE", "US", "com.other.coins", "Example Games Inc.", "Coins", "", "IA1", "5", "0.69", "11/24/2026", "11/24/2026",
                          "USD", "US", "USD", "6449020001", "0.99", "", parent, "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [Self.currentHeader, other("OTHERAPP"), other(""), Self.currentReport[2]], rules: rules)
        #expect(parsed[0].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2026-11-24", productType: "IA1")]))
        #expect(Self.values(parsed[1])?["product_id"] == .text("com.other.coins"), "a row that names no parent app is kept")
        #expect(Self.app(parsed[1]) == nil)
        #expect(Self.values(parsed[2])?["product_id"] == .text("com.example.gems300"))
        // Without the app's SKUs, every app's rows are kept, as before.
        #expect(Self.values(IngestLine.csv(.apple, [Self.currentHeader, other("OTHERAPP")])[0])?["units_n"] == .integer(5))
        // The older layout has its Parent Identifier too; a report without the column keeps every row.
        let noParent = Self.currentHeader.split(separator: "\t").filter { $0 != "Parent Identifier" }.joined(separator: "\t")
        let row = other("OTHERAPP").split(separator: "\t", omittingEmptySubsequences: false).enumerated().filter { $0.offset != 17 }.map(\.element)
        #expect(Self.values(IngestLine.csv(.apple, [noParent, row.joined(separator: "\t")], rules: rules)[0])?["units_n"] == .integer(5))
    }

    @Test("the older 20-column report ending at Period is read the same way")
    func olderLayout() throws {
        let parsed = IngestLine.csv(.apple, [
            Self.olderHeader,
            ["APPLE", "US", "com.example.gems980", "Example Games Inc.", "980 Gems", "", "IA1", "1", "11.89", "03/09/2014", "03/09/2014",
             "EUR", "DE", "EUR", "6449010104", "16.99", "", "com.example.game", "", ""].joined(separator: "\t"),
            ["APPLE", "US", "com.example.game", "Example Games Inc.", "Gem Quest", "1.0", "1", "5", "0", "03/09/2014", "03/09/2014",
             "USD", "US", "USD", "6449010001", "0", "", "", "", ""].joined(separator: "\t"),
        ])
        let row = try #require(Self.values(parsed[0]))
        #expect(row["day"] == .text("2014-03-09"))
        #expect(row["country"] == .text("DE"))
        #expect(row["customer_price"] == .text("16.99"))
        #expect(parsed[1].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2014-03-09", productType: "1")]))
    }

    @Test("Mac in-app purchases (IA1-M, IA9-M, IAY-M) are kept; a restored purchase (IA3) sells nothing and is ignored")
    func macInAppProductTypes() throws {
        func row(_ productType: String) -> String {
            Self.current(["APPLE", "US", "com.example.gems300", "Example Games Inc.", "300 Gems", "", productType, "1", "3.49", "11/24/2026",
                          "11/24/2026", "USD", "US", "USD", "6449010103", "4.99", "", "com.example.game", "", "", "Games", "", "Mac", "macOS",
                          "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [Self.currentHeader, row("IA1-M"), row("IA9-M"), row("IAY-M"), row("IA3")])
        for (index, productType) in ["IA1-M", "IA9-M", "IAY-M"].enumerated() {
            let kept = try #require(Self.values(parsed[index]), "\(productType)")
            #expect(kept["product_type"] == .text(productType))
            #expect(kept["units_n"] == .integer(1))
        }
        #expect(parsed[3].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2026-11-24", productType: "IA3")]))
    }

    @Test("a bad in-app row is rejected with its line and reason; the rows around it are kept")
    func rejects() throws {
        func row(units: String = "1", begin: String = "11/24/2026", end: String = "11/24/2026", country: String = "US", price: String = "0.99") -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", units, "0.69", begin, end, "USD", country, "USD", "1",
                          price, "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [
            Self.currentHeader, row(), row(units: "1.5"), row(begin: "2026-11-24", end: "2026-11-24"), row(end: "11/30/2026"),
            row(country: "USA"), row(price: "0,99"), "", row(),
        ])
        let outcomes = parsed.map { ($0.line, $0.outcome) }
        #expect(outcomes.map(\.0) == [2, 3, 4, 5, 6, 7, 8, 9])
        #expect(Self.values(parsed[0]) != nil)
        #expect(parsed[1].outcome == .rejected("a fraction of a unit in 'Units': \"1.5\""))
        #expect(parsed[2].outcome == .rejected("bad date in 'Begin Date' (MM/DD/YYYY): \"2026-11-24\""))
        #expect(parsed[3].outcome == .rejected("not a daily report: 'Begin Date' 2026-11-24, 'End Date' 2026-11-30"))
        #expect(parsed[4].outcome == .rejected("bad country in 'Country Code': \"USA\""))
        #expect(parsed[5].outcome == .rejected("bad amount in 'Customer Price': \"0,99\""))
        #expect(parsed[6].outcome == .blank)
        #expect(Self.values(parsed[7]) != nil)
    }

    @Test("a Sales Report currency is checked as every source's: three capital letters, the reason naming its column")
    func currencies() throws {
        func row(_ customer: String, _ proceeds: String) -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", "1", "0.69", "11/24/2026", "11/24/2026", customer, "US",
                          proceeds, "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [Self.currentHeader, row("usd", "USD"), row("USD", "US$"), row("JPY", "KRW"), row(" USD ", "USD")])
        #expect(parsed[0].outcome == .rejected(#"bad currency in 'Customer Currency': "usd""#))
        #expect(parsed[1].outcome == .rejected(#"bad currency in 'Currency of Proceeds': "US$""#))
        #expect(Self.values(parsed[2])?["customer_currency"] == .text("JPY") && Self.values(parsed[2])?["proceeds_currency"] == .text("KRW"))
        // Spaces around a cell are dropped, as around every cell.
        #expect(Self.values(parsed[3])?["customer_currency"] == .text("USD"))
    }

    @Test("Units as Apple types them, DECIMAL(18,2): a whole number of units with zero cents is that many units; a fraction of a unit is rejected")
    func decimalUnits() throws {
        func row(units: String) -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", units, "0.69", "11/24/2026", "11/24/2026", "USD", "US",
                          "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let texts = ["3.00", "-1.00", "2.0", "7", "+2.00", "1.50", "1.", ".00", "1.001", "1e2", "0x10", "2..0", "1,00", "-"]
        let parsed = IngestLine.csv(.apple, [Self.currentHeader] + texts.map { row(units: $0) })
        #expect(parsed.count == texts.count)
        for (text, line) in zip(texts, parsed) {
            switch text {
            case "3.00": #expect(Self.values(line)?["units_n"] == .integer(3))
            case "-1.00": #expect(Self.values(line)?["units_n"] == .integer(-1))
            case "2.0", "+2.00": #expect(Self.values(line)?["units_n"] == .integer(2), "\(text)")
            case "7": #expect(Self.values(line)?["units_n"] == .integer(7))
            case "1.50": #expect(line.outcome == .rejected("a fraction of a unit in 'Units': \"1.50\""))
            default: #expect(line.outcome == .rejected("bad number in 'Units': \"\(text)\""), "\(text)")
            }
        }
    }

    @Test("Units of a billion or more of either sign are a bad number, the most negative 64-bit number too (a crash before); a count under a billion is kept")
    func unitsOutOfRange() throws {
        func row(units: String) -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", units, "0.69", "11/24/2026", "11/24/2026", "USD", "US",
                          "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let texts = ["-9223372036854775808", "-9223372036854775808.00", "9223372036854775807", "-1000000000", "1000000000", "-999999999", "999999999.00"]
        let parsed = IngestLine.csv(.apple, [Self.currentHeader] + texts.map { row(units: $0) })
        #expect(parsed.count == texts.count)
        for (text, line) in zip(texts, parsed) {
            switch text {
            case "-999999999": #expect(Self.values(line)?["units_n"] == .integer(-999_999_999))
            case "999999999.00": #expect(Self.values(line)?["units_n"] == .integer(999_999_999))
            default: #expect(line.outcome == .rejected("bad number in 'Units': \"\(text)\""), "\(text)")
            }
        }
    }

    @Test("a Sales Report reason shows the invisible character that makes a cell bad; a visible one is quoted as it is")
    func invisibleCharacterInAReason() throws {
        func row(units: String, country: String) -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", units, "0.69", "11/24/2026", "11/24/2026", "USD", country,
                          "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [Self.currentHeader, row(units: "3\u{200B}", country: "US"), row(units: "3", country: "U\u{200B}S"),
                                             row(units: "3", country: "\u{00DC}S")])
        #expect(parsed.map(\.outcome) == [
            .rejected(#"bad number in 'Units': "3\u{200B}""#), .rejected(#"bad country in 'Country Code': "U\u{200B}S""#),
            .rejected("bad country in 'Country Code': \"\u{00DC}S\""),
        ])
    }

    @Test("a row of a Product Type Identifier Apple does not list is named by the run that reads it (it may be an in-app type Apple added); every code Apple lists is quiet")
    func undocumentedProductTypes() throws {
        func row(_ productType: String, sku: String = "com.example.game") -> String {
            Self.current(["APPLE", "US", sku, "Example", "Gem Quest", "", productType, "1", "0.69", "11/24/2026", "11/24/2026", "USD", "US",
                          "USD", "1", "0.99", "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let scenario = try Scenario()
        try scenario.catalog()
        let documented = AppleSalesParser.appProductTypes.sorted() + AppleSalesParser.inAppProductTypes.sorted()
        try scenario.write("apple/quiet.txt", [Self.currentHeader] + documented.map { row($0, sku: "gems60") })
        #expect(try scenario.run(asOf: "2026-11-30T00:00:00Z").ingest.warnings == [])
        // Lower case is not Apple's spelling either: a code is compared as Apple writes it.
        try scenario.write("apple/new.txt", [Self.currentHeader, row("1F"), row("IAX", sku: "gems60"), row("ia1", sku: "gems60"), row("IAX", sku: "gems60")])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(result.ingest.warnings == [
            "3 Sales Report rows have a Product Type Identifier iaprecon does not know (IAX 2, ia1 1); they are read as the app's own rows, "
                + "so they are left out of the tie-out: if Apple added an in-app type, its sales are not compared; "
                + "apple/new.txt:3, apple/new.txt:4, apple/new.txt:5",
        ])
        let new = try #require(result.ingest.files.first { $0.path == "apple/new.txt" })
        #expect(new.counts == LineCounts(read: 4, accepted: 0, ignored: 4))
        // The next night reads no new report: nothing to say again.
        #expect(try scenario.run(asOf: "2026-11-30T00:00:00Z").ingest.warnings == [])
    }

    @Test("a header row inside the file (two reports in one) is rejected, not ignored as one of the app's rows; the rows around it are read as before")
    func repeatedHeader() throws {
        let parsed = IngestLine.csv(.apple, Self.currentReport + Self.currentReport)
        #expect(parsed.map(\.line) == Array(2...12))
        #expect(parsed[5].outcome == .rejected("header row repeated: two reports in one file"))
        // Near miss: the app's own rows stay ignored and the in-app rows after the repeated header stay kept.
        #expect(parsed[6].outcome == .ignoredKeeping([SalesReportLine.coverageRow(day: "2026-11-24", productType: "1F")]))
        #expect(Self.values(parsed[7]) != nil)
        var counts = LineCounts()
        for line in parsed { counts.count(line.outcome) }
        #expect(counts == LineCounts(read: 11, accepted: 6, rejected: 1, ignored: 4))
    }

    @Test("a price up to 10^12 of either sign is kept; above it, or past 18 digits, is rejected as out of range")
    func amountRange() throws {
        func row(price: String, proceeds: String = "0.69") -> String {
            Self.current(["APPLE", "US", "gems60", "Example", "60 Gems", "", "IA1", "1", proceeds, "11/24/2026", "11/24/2026", "KRW", "KR",
                          "KRW", "1", price, "", "", "", "", "Games", "", "iPhone", "iOS", "", "", "", ""])
        }
        let parsed = IngestLine.csv(.apple, [
            Self.currentHeader, row(price: "1000000000000"), row(price: "-1000000000000"), row(price: "1000000000000.01"),
            row(price: "-1000000000001"), row(price: "0.1234567890123456789"), row(price: "1", proceeds: "1000000000000.5"),
        ])
        #expect(Self.values(parsed[0])?["customer_price"] == .text("1000000000000"))
        #expect(Self.values(parsed[1])?["customer_price"] == .text("1000000000000"))
        #expect(parsed[2].outcome == .rejected("amount out of range: 'Customer Price' is above 10^12"))
        #expect(parsed[3].outcome == .rejected("amount out of range: 'Customer Price' is above 10^12"))
        #expect(parsed[4].outcome == .rejected("amount out of range: 'Customer Price' has more than 18 significant digits"))
        #expect(parsed[5].outcome == .rejected("amount out of range: 'Developer Proceeds' is above 10^12"))
    }

    @Test("a report without Apple's Units column rejects each in-app row naming the column")
    func missingColumn() {
        let header = Self.currentHeader.replacingOccurrences(of: "\tUnits\t", with: "\tQuantity\t")
        let parsed = IngestLine.csv(.apple, [header, Self.currentReport[2]])
        #expect(parsed.first?.outcome == .rejected("header has no column 'Units'"))
    }

    @Test("apple/*.txt and .txt.gz are Sales Reports; other names under apple/ are not inputs")
    func paths() {
        #expect(SourceKind.of(relativePath: "apple/S_D_85012345_20261124.txt") == .apple)
        #expect(SourceKind.of(relativePath: "apple/S_D_85012345_20261124.txt.gz") == .apple)
        #expect(SourceKind.of(relativePath: "apple/S_D_85012345_20261124.csv") == nil)
        #expect(SourceKind.of(relativePath: "apple.txt") == nil)
    }

    @Test("every line of a report file is accounted for: read = accepted + rejected + blank + ignored")
    func accounting() throws {
        let scenario = try Scenario()
        try scenario.write("apple/S_D_1_20261124.txt", Self.currentReport + ["", "not\ta\trow"])
        let database = try scenario.open()
        let report = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, progress: nil)
        let counts = try #require(report.files.first?.counts)
        #expect(counts == LineCounts(read: 7, accepted: 3, rejected: 1, blank: 1, ignored: 2))
    }
}
