import Foundation
import Testing
@testable import IAPRecon

/// `report.html`: one self-contained page that agrees with summary.json and never runs input as markup.
@Suite("report.html")
struct ReportPageTests {
    typealias Fixture = RevenueReportTests.Fixture
    static let hostileUser = "u_<script>alert(1)</script>\u{1B}[31m"
    static let hostileSource = "\"><img src=x onerror=alert(2)>"

    /// A lost delivery to a user whose id is markup with a terminal escape, and an install from a
    /// media source whose name breaks out of an attribute.
    static func hostileNight() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        let user = OutputFormatTests.json(hostileUser).replacingOccurrences(of: "\u{1B}", with: "\\u001b")
        try scenario.write("server/s.jsonl", [
            "{\"ts\":\"2026-11-20T10:00:00Z\",\"event\":\"order_created\",\"order_id\":\"o1\",\"user_id\":\"\(user)\",\"product_id\":\"gems300\",\"price\":\"4.99\",\"currency\":\"USD\"}",
        ])
        try scenario.write("receipts/r.jsonl", [
            "{\"received_at\":\"2026-11-20T10:00:05Z\",\"user_id\":\"\(user)\",\"order_id\":\"o1\",\"transactions\":["
                + Fixture.v2("2000000630024936", "gems300", purchase: "2026-11-20T10:00:03Z", price: 4990) + "]}",
        ])
        try AttributionReportTests.Fixture.mmp(scenario, [
            AttributionReportTests.Fixture.MMPRow(time: "2026-11-20 09:00:00", mediaSource: hostileSource, campaign: "<b>c</b>", appsflyerID: "af1"),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        return scenario
    }

    @Test("the critical findings listed are the newest ten, as a stable sort by time and id would list them, equal ones in their order")
    func newestCriticalFindings() {
        var generator = SplitMix64(state: 0xC217)
        func finding(_ number: Int) -> ReportPage.CriticalFinding {
            let time = "2026-11-\(10 + Int.random(in: 0..<6, using: &generator))T00:00:00.000Z"
            return ReportPage.CriticalFinding(findingID: "f\(Int.random(in: 0..<8, using: &generator))", kind: "k", eventTime: time, userID: "",
                                              transactionID: "", productID: "", amount: "", currency: "", detail: String(number), sources: "")
        }
        for size in [0, 1, 5, 10, 11, 40, 300] {
            let findings = (0..<size).map(finding)
            let sorted = findings.sorted { ($0.eventTime, $0.findingID) > ($1.eventTime, $1.findingID) }.prefix(10)
            for count in [10, 3] {
                let expected = sorted.prefix(count).map { [$0.eventTime, $0.findingID, $0.detail] }
                #expect(ReportPage.newest(findings, count: count).map { [$0.eventTime, $0.findingID, $0.detail] } == Array(expected))
            }
        }
    }

    @Test("user ids and media sources holding markup, quotes or control characters show as text and never become elements")
    func escapesInput() throws {
        let html = try Self.hostileNight().output("report.html")
        #expect(html.contains("u_&lt;script&gt;alert(1)&lt;/script&gt;\\u{1B}[31m"))
        #expect(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.unicodeScalars.contains("\u{1B}"))
        // The transaction id is text as written, never a number (no exponent, no lost digits).
        #expect(html.contains("2000000630024936"))
    }

    @Test("an id or media source too long for its column may break anywhere, so it cannot push the amounts and evidence off the page; usual ones never break")
    func longTextBreaks() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let user = "u_" + String(repeating: "x", count: 300), transaction = String(repeating: "9", count: 120)
        let source = "Campaign_" + String(repeating: "m", count: 200)
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-20T10:00:00Z", user, transaction, "gems60"),
            Line.delivered("2026-11-20T11:00:00Z", "u_1035", "2000000631400001", "gems60"),
        ])
        typealias Attribution = AttributionReportTests.Fixture
        try Attribution.mmp(scenario, [
            Attribution.MMPRow(time: "2026-11-10 10:00:00", mediaSource: source, appsflyerID: "af1"),
            Attribution.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "googleadwords_int", appsflyerID: "af2"),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let html = try scenario.output("report.html")
        #expect(html.contains("<span class=\"id long\">\(user)</span>"))
        #expect(html.contains("<span class=\"id long\">\(transaction)</span>"))
        #expect(html.contains("<td><span class=\"long\">\(source)</span></td>"))
        // Near misses: ids and names of a usual length stay whole on their line.
        #expect(html.contains("<span class=\"id\">u_1035</span>"))
        #expect(html.contains("<span class=\"id\">2000000631400001</span>"))
        #expect(html.contains("<td>googleadwords_int</td>"))
        #expect(HTML.style.contains(".id.long {") && HTML.style.contains(".long {"))
        // The limit: a run of 56 stays whole, 57 breaks; spaces end a run, whatever the text's length.
        let fiftySix = String(repeating: "8", count: 56)
        #expect(HTML.id(fiftySix) == "<span class=\"id\">\(fiftySix)</span>")
        #expect(HTML.id(fiftySix + "9") == "<span class=\"id long\">\(fiftySix)9</span>")
        #expect(HTML.text(Array(repeating: fiftySix, count: 5).joined(separator: " ")) == Array(repeating: fiftySix, count: 5).joined(separator: " "))
        #expect(HTML.text("<" + fiftySix) == "<span class=\"long\">&lt;\(fiftySix)</span>")
    }

    @Test("a critical finding first reported tonight is listed, marked new, however old its event: the alert sends the reader to this page")
    func newCriticalFindingsListedFirst() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // Eleven orphan deliveries of the 20th: more than the page lists.
        try scenario.write("server/s.jsonl", (0..<11).map { Line.delivered("2026-11-20T10:\(10 + $0):00Z", "u\($0)", "orphan\($0)", "gems60") })
        _ = try scenario.run(asOf: "2026-11-25T00:00:00Z")
        // A receipt of the 15th, never delivered, that reached the store only tonight: a lost delivery older than every orphan.
        try scenario.write("receipts/late.jsonl", [
            Line.v2Receipt("2026-11-15T10:00:05Z", "u_late", transaction: Line.v2("t_late", "gems60", purchase: "2026-11-15T10:00:00Z")),
        ])
        _ = try scenario.run(asOf: "2026-11-26T00:00:00Z")
        let findings = Fixture.table(try scenario.output("findings.csv"))
        let lost = try #require(findings.first { $0["kind"] == "lost_delivery" })
        #expect(lost["new"] == "true")
        #expect(findings.filter { $0["new"] == "true" }.count == 1)
        let html = try scenario.output("report.html")
        let critical = try #require(html.components(separatedBy: "<h2>Newest critical findings</h2>").last?.components(separatedBy: "</section>").first)
        let parts = critical.components(separatedBy: "<aside class=\"earlier-new\">")
        try #require(parts.count == 2)
        let (newest, earlier) = (parts[0], parts[1])
        // The newest ten are the orphans, reported last night: none is marked new.
        let rows = newest.components(separatedBy: "<tr>").dropFirst(2)
        #expect(rows.count == 10)
        #expect(!newest.contains("class=\"new\"") && !newest.contains(lost["finding_id"] ?? "-"))
        // Below them, the one the alert names, said new in words, not by colour alone.
        #expect(earlier.hasPrefix("<p class=\"warn\">1 more critical finding first reported by this run, of an earlier event:</p>"))
        let earlierRows = earlier.components(separatedBy: "<tr>").dropFirst(2)
        #expect(earlierRows.count == 1)
        #expect(earlierRows.first?.contains(lost["finding_id"] ?? "-") == true)
        #expect(earlierRows.first?.contains("<b class=\"new\">new</b>") == true)
        // A fresh store fed the same files lists the same newest ten, all new, and nothing apart.
        let fresh = try Scenario()
        try fresh.catalog()
        for name in ["server/s.jsonl", "receipts/late.jsonl"] {
            let lines = try String(contentsOfFile: scenario.input + "/" + name, encoding: .utf8).split(separator: "\n").map(String.init)
            try fresh.write(name, lines)
        }
        _ = try fresh.run(asOf: "2026-11-26T00:00:00Z")
        let freshPage = try fresh.output("report.html")
        #expect(!freshPage.contains("earlier-new"))
        #expect(SampleDataTests.withoutHistory("report.html", html) == SampleDataTests.withoutHistory("report.html", freshPage))
        // The money-at-risk table counts the new findings per kind, as summary.json does.
        #expect(Self.attributes(html, "data-summary-key", "data-value").contains { $0 == ("findings.by_kind.lost_delivery.new", "1") })
        #expect(Self.attributes(html, "data-summary-key", "data-value").contains { $0 == ("findings.by_kind.orphan_delivery.new", "0") })
        #expect(Self.attributes(html, "data-summary-key", "data-value").contains { $0 == ("findings.new", "1") })
    }

    @Test("counts are grouped by thousands as amounts are, on the cards and in the tables; data-value keeps the plain number")
    func countsGroupedByThousands() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // 1,204 lines: 1,200 blank ones and 4 catalog lines; 1,200 orphan deliveries would take a while, blank lines do not.
        try scenario.write("server/s.jsonl", Array(repeating: "", count: 1_199) + [Line.delivered("2026-11-20T10:00:00Z", "u1", "t1", "gems60")])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let html = try scenario.output("report.html")
        #expect(html.contains("data-summary-key=\"inputs.totals.read\" data-value=\"1204\">1,204</div>"))
        #expect(html.contains("<b data-summary-key=\"inputs.totals.read\" data-value=\"1204\">1,204</b>"))
        #expect(html.contains("<b data-summary-key=\"inputs.totals.blank\" data-value=\"1199\">1,199</b>"))
        #expect(html.contains("<td>server/s.jsonl</td><td>server</td><td class=\"num\">1,200</td><td class=\"num\">1</td>"))
        // Near miss: a count under a thousand is as it is.
        #expect(html.contains("data-summary-key=\"findings.total\" data-value=\"1\">1</div>"))
    }

    @Test("HTML.escape keeps plain text as it is and escapes markup, quotes and hidden characters, ASCII or not")
    func escaping() {
        #expect(HTML.escape("u_1005 com.example.gems300 4.99 (x) #1") == "u_1005 com.example.gems300 4.99 (x) #1")
        #expect(HTML.escape(#"<b a="1">&'x'</b>"#) == "&lt;b a=&quot;1&quot;&gt;&amp;&#39;x&#39;&lt;/b&gt;")
        // Each alone, in text that is otherwise plain.
        #expect(["a&b", "a<b", "a>b", #"a"b"#, "a'b"].map(HTML.escape) == ["a&amp;b", "a&lt;b", "a&gt;b", "a&quot;b", "a&#39;b"])
        #expect(HTML.escape("a\u{1B}b\u{7F}c\td\ne") == "a\\u{1B}b\\u{7F}c\td\ne")
        #expect(HTML.escape("Café 円\u{200B}\u{85}") == "Café 円\\u{200B}\\u{85}")
    }

    @Test("the page is self-contained: no script, no external font, image or style sheet, no network address")
    func selfContained() throws {
        let html = try Self.hostileNight().output("report.html")
        for forbidden in ["<script", "<link", "<iframe", "src=\"", "url(", "@import", "http://", "https://"] {
            #expect(!html.contains(forbidden), "\(forbidden)")
        }
        #expect(html.contains("<svg"))
        #expect(html.contains("@media print"))
    }

    @Test("on sample-data every number the page marks with a summary.json key equals that value, and the daily chart sums to the totals")
    func agreesWithSummary() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let html = try scenario.output("report.html")
        let summary = try Fixture.summary(scenario)
        let marked = Self.attributes(html, "data-summary-key", "data-value")
        #expect(marked.count >= 20)
        for (key, value) in marked {
            var node: Any? = summary
            for part in key.split(separator: ".") { node = (node as? [String: Any])?[String(part)] }
            let expected = (node as? String) ?? (node as? NSNumber).map { $0.stringValue }
            #expect(expected == value, "\(key)")
        }
        #expect(Set(marked.map(\.0)).isSuperset(of: ["revenue.gross_usd", "revenue.refunds_usd", "revenue.net_usd", "findings.total",
                                                      "findings.by_kind.lost_delivery.count", "inputs.totals.read", "as_of",
                                                      "money_at_risk_usd.by_kind.duplicate_delivery",
                                                      "money_at_risk_usd.by_kind.lost_delivery", "money_at_risk_usd.total"]))
        let revenue = try #require(summary["revenue"] as? [String: String])
        // The cards show those values as people read money: every cent written, thousands grouped.
        for key in ["gross_usd", "refunds_usd", "net_usd"] {
            let value = try #require(revenue[key])
            let shown = ReportingCurrency("USD").shown(try #require(Amount.parse(value)))
            #expect(html.contains("data-summary-key=\"revenue.\(key)\" data-value=\"\(value)\">\(shown)</div>"), "\(key)")
            #expect(shown.split(separator: ".").last?.count == 2, "\(key): \(shown)")
        }
        let days = Self.attributes(html, "data-gross", "data-refunds")
        #expect(days.reduce(Decimal(0)) { $0 + (Money.parse($1.0) ?? 0) } == Money.parse(revenue["gross_usd"] ?? ""))
        #expect(days.reduce(Decimal(0)) { $0 + (Money.parse($1.1) ?? 0) } == Money.parse(revenue["refunds_usd"] ?? ""))
        // The sample's Sales Reports disagree with the store on one day, product and country: the section shows it.
        #expect(html.contains("id=\"tieout\""))
    }

    @Test("the chart draws the last 120 days; the days before are summed in one marked line, so the chart still adds up to the cards")
    func chartWindow() throws {
        /// A night with purchases of 0.99 on `purchaseDays` (yyyy-MM-dd), and its page.
        func page(_ purchaseDays: [String]) throws -> (html: String, summary: [String: Any]) {
            let scenario = try Scenario()
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", purchaseDays.enumerated().map { index, day in
                Line.v2Receipt(day + "T10:00:05Z", "u\(index)", transaction: Line.v2("t\(index)", "gems60", purchase: day + "T10:00:00Z", price: 990))
            })
            _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
            return (try scenario.output("report.html"), try Fixture.summary(scenario))
        }
        let long = try page(["2025-06-01", "2025-07-01", "2026-07-24", "2026-11-20"])
        let days = Self.attributes(long.html, "data-date", "data-gross")
        #expect(days.count == 120)
        #expect(days.first?.0 == "2026-07-24")
        #expect(days.last?.0 == "2026-11-20")
        let earlier = Self.attributes(long.html, "data-earlier-gross", "data-earlier-refunds")
        #expect(earlier.map(\.0) == ["1.98"])
        #expect(long.html.contains("The 2 earlier days with revenue add gross 1.98 and refunds 0.00"))
        let drawn = days.reduce(Decimal(0)) { $0 + (Money.parse($1.1) ?? 0) }
        let revenue = try #require(long.summary["revenue"] as? [String: String])
        #expect(drawn + (Money.parse(earlier.first?.0 ?? "") ?? 0) == Money.parse(revenue["gross_usd"] ?? ""))

        // 120 days from first to last: every one drawn, no earlier line.
        let quarter = try page(["2026-07-24", "2026-11-20"])
        #expect(Self.attributes(quarter.html, "data-date", "data-gross").count == 120)
        #expect(!quarter.html.contains("data-earlier-gross"))
    }

    @Test("the Apple tie-out section appears only when there are tie-out rows, with their totals marked for summary.json")
    func tieoutSection() throws {
        let scenario = try Self.hostileNight()
        var page = try Self.page(scenario)
        #expect(!page.html().contains("Apple tie-out"))
        page.tieout = ReportPage.TieOut([AppleTieOutReport.Row(day: "2026-11-20", productID: "gems300", country: "US", appleUnits: 3, verifiedUnits: 2,
                                                               applePurchases: 3, verifiedPurchases: 2)])
        let html = page.html()
        #expect(html.contains("<section id=\"tieout\"><h2>Apple tie-out</h2>"))
        #expect(html.contains("Apple's Sales Reports cover 1 Pacific day, 2026-11-20: Apple counts "
            + "<span data-summary-key=\"apple_tieout.apple_units\" data-value=\"3\">3</span> units, iaprecon verified "
            + "<span data-summary-key=\"apple_tieout.verified_units\" data-value=\"2\">2</span>."))
        // Apple sold one more than the store verified: the row nothing covers, its missing unit in bold.
        #expect(Self.tieoutRows(html) == [["2026-11-20", "gems300", "US", "3", "2", "1", ""]])
    }

    /// A night whose Sales Report sells gems60 on 2026-11-24 in `apple` (country and units) against the verified
    /// purchases `receipts` (`AppleTieOutTests.purchase`); returns its report.html and findings.csv.
    static func tieoutNight(apple: [(String, Int)], receipts: [String]) throws -> (html: String, findings: String) {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader]
            + apple.map { AppleTieOutTests.sales("2026-11-24", "gems60", units: $0.1, country: $0.0) })
        try scenario.write("receipts/r.jsonl", receipts)
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        return (try scenario.output("report.html"), try scenario.output("findings.csv"))
    }

    @Test("the tie-out lists the shortfalls storefront-less units leave uncovered, not every row that differs by country")
    func tieoutListsUncoveredShortfalls() throws {
        // Apple: JP 1, US 2. Verified: one US purchase and one with no storefront, which covers JP (first in country order).
        // apple_tieout.csv has three rows that differ (??, JP, US); only US's unit is missing.
        let night = try Self.tieoutNight(apple: [("US", 2), ("JP", 1)], receipts: [
            AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z"), AppleTieOutTests.purchase("t2", at: "2026-11-24T20:00:00Z", storefront: nil),
        ])
        #expect(Self.tieoutRows(night.html) == [["2026-11-24", "gems60", "US", "2", "1", "1", "0.99 USD"]])
        // No listed row is partly covered: no column of blanks for it.
        #expect(!night.html.contains("verified without country"))
        #expect(night.html.contains("2 rows of apple_tieout.csv have fewer verified purchases than Apple&#39;s (refunds are compared apart). Units verified without a storefront "
            + "(country ??) could be from any country, so they count toward their day and product&#39;s shortfalls: they cover 1 of these whole."))
        #expect(night.html.contains("Units Apple counts that no receipt or notification verified, 1 in all: the 1 unverified_apple_sales finding."))
        // The page's list is the findings'.
        #expect(night.findings.contains("country=US apple_units=2 verified_units=1 missing_units=1"))
        #expect(!night.findings.contains("country=JP"))

        // Near miss: a second storefront-less purchase covers US too; nothing is listed, and the page says so.
        let covered = try Self.tieoutNight(apple: [("US", 2), ("JP", 1)], receipts: [
            AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z"), AppleTieOutTests.purchase("t2", at: "2026-11-24T20:00:00Z", storefront: nil),
            AppleTieOutTests.purchase("t3", at: "2026-11-24T21:00:00Z", storefront: nil),
        ])
        #expect(Self.tieoutRows(covered.html).isEmpty)
        #expect(covered.html.contains("they cover 2 of these whole."))
        #expect(covered.html.contains("Every unit Apple counts is verified or covered."))
        #expect(!covered.findings.contains("unverified_apple_sales"))

        // A storefront-less purchase covering one of US's two missing units: the row is listed with it in a column of its own.
        let partly = try Self.tieoutNight(apple: [("US", 3)], receipts: [
            AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z"), AppleTieOutTests.purchase("t2", at: "2026-11-24T20:00:00Z", storefront: nil),
        ])
        #expect(partly.html.contains("<th class=\"num\">verified purchases</th><th class=\"num\">verified without country</th><th class=\"num\">missing</th>"))
        #expect(Self.tieoutRows(partly.html) == [["2026-11-24", "gems60", "US", "3", "1", "1", "1", "0.99 USD"]])
        #expect(partly.findings.contains("country=US apple_units=3 verified_units=1 covered_by_storefrontless_units=1 missing_units=1"))
    }

    @Test("more verified units than Apple's in a country are counted on the page, and never listed as missing")
    func tieoutCountsSurplus() throws {
        let night = try Self.tieoutNight(apple: [("US", 1)], receipts: [
            AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z"), AppleTieOutTests.purchase("t2", at: "2026-11-24T19:00:00Z"),
        ])
        #expect(night.html.contains("No country has fewer verified purchases than Apple&#39;s on any day. 1 row has more verified units than Apple&#39;s, 1 in all."))
        #expect(Self.tieoutRows(night.html).isEmpty)
    }

    @Test("rows whose proceeds Apple paid in two currencies are named on the page: their apple_proceeds is empty and left out of the totals")
    func tieoutNamesProceedsInTwoCurrencies() throws {
        var page = try Self.page(Self.hostileNight())
        let mixed = AppleTieOutReport.Row(day: "2026-11-24", productID: "gems60", country: "AE", appleUnits: 3, verifiedUnits: 3,
                                          customerPrice: "0.99", customerCurrency: "USD")
        let paid = AppleTieOutReport.Row(day: "2026-11-24", productID: "gems60", country: "US", appleUnits: 1, verifiedUnits: 1,
                                         customerPrice: "0.99", customerCurrency: "USD", proceeds: "0.69", proceedsCurrency: "USD")
        page.tieout = ReportPage.TieOut([mixed, paid])
        #expect(page.html().contains("1 row has Apple&#39;s proceeds in two currencies: its apple_proceeds is empty, and summary.json&#39;s "
            + "proceeds leave it out."))
        // Near miss: rows with one proceeds currency, or with no Apple row at all (verified units only), say nothing of it.
        let verifiedOnly = AppleTieOutReport.Row(day: "2026-11-24", productID: "gems60", country: "JP", appleUnits: 0, verifiedUnits: 1)
        page.tieout = ReportPage.TieOut([paid, verifiedOnly])
        #expect(!page.html().contains("two currencies"))
    }

    @Test("the Sales Report file and day of rows whose proceeds Apple paid in two currencies are named on every page, as the join names them on stderr")
    func proceedsInTwoCurrenciesNameTheirFile() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1_20261124.txt", [
            AppleSalesReportTests.currentHeader,
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 2, country: "AE", price: "0.99", currency: "USD", proceeds: "0.69"),
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "US"),
        ])
        // Near miss: the next day's report pays each country in one currency, and is not named.
        try scenario.write("apple/S_D_1_20261125.txt", [
            AppleSalesReportTests.currentHeader,
            AppleTieOutTests.sales("2026-11-25", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
            AppleTieOutTests.sales("2026-11-25", "gems60", units: 1, country: "US"),
        ])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(result.join.warnings == [
            "apple/S_D_1_20261124.txt has proceeds of gems60 in AE on 2026-11-24 in AED and USD: apple_proceeds left empty for that row",
        ])
        let named = "1 row has Apple&#39;s proceeds in two currencies: its apple_proceeds is empty, and summary.json&#39;s proceeds leave it out. "
            + "It comes from apple/S_D_1_20261124.txt (2026-11-24).</p>"
        #expect(try scenario.output("report.html").contains(named))

        // A later night touches another day only: the join says nothing of the report that night, and the page still names it.
        try scenario.write("receipts/r2.jsonl", [AppleTieOutTests.purchase("t2", at: "2026-11-27T18:00:00Z")])
        let later = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(later.join.recomputedTransactions != nil, "the night is incremental")
        #expect(later.join.warnings.isEmpty)
        #expect(try scenario.output("report.html").contains(named))
    }

    @Test("near miss: a Sales Report that pays each country's proceeds in one currency names no file for them, on the page or on stderr")
    func proceedsInOneCurrencyNameNoFile() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1_20261124.txt", [
            AppleSalesReportTests.currentHeader,
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 2, country: "AE", price: "2.99", currency: "AED", proceeds: "2.09"),
            AppleTieOutTests.sales("2026-11-24", "gems60", units: 1, country: "US"),
        ])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(result.join.warnings.isEmpty)
        let html = try scenario.output("report.html")
        #expect(html.contains("<h2>Apple tie-out</h2>"))
        #expect(!html.contains("two currencies"))
        #expect(!html.contains("comes from") && !html.contains("come from"))
    }

    @Test("many files with rows whose proceeds came in two currencies: the page names the first few by path, each with its days, and counts the rest")
    func proceedsInTwoCurrenciesFromManyFiles() throws {
        var page = try Self.page(Self.hostileNight())
        func mixed(_ day: String) -> AppleTieOutReport.Row {
            AppleTieOutReport.Row(day: day, productID: "gems60", country: "AE", appleUnits: 3, verifiedUnits: 3, customerPrice: "0.99",
                                  customerCurrency: "USD")
        }
        func lines(_ day: String, in path: String) -> SalesReportMixedProceeds {
            SalesReportMixedProceeds(day: day, productID: "gems60", country: "AE", path: path)
        }
        // A weekly report's two days, and two vendor accounts' reports whose rows of the 22nd pay in a currency each.
        let few = [lines("2026-11-20", in: "apple/S_W_1.txt"), lines("2026-11-21", in: "apple/S_W_1.txt"),
                   lines("2026-11-22", in: "apple/S_D_2_20261122.txt"), lines("2026-11-22", in: "apple/S_D_3_20261122.txt")]
        page.tieout = ReportPage.TieOut(["2026-11-20", "2026-11-21", "2026-11-22"].map(mixed), mixedProceeds: few)
        #expect(page.html().contains("3 rows have Apple&#39;s proceeds in two currencies: their apple_proceeds are empty, and summary.json&#39;s "
            + "proceeds leave them out. They come from apple/S_D_2_20261122.txt (2026-11-22), apple/S_D_3_20261122.txt (2026-11-22) and "
            + "apple/S_W_1.txt (2 days from 2026-11-20 to 2026-11-21).</p>"))
        let days = (20...25).map { "2026-11-\($0)" }
        let daily = days.map { lines($0, in: "apple/S_D_1_\($0.replacingOccurrences(of: "-", with: "")).txt") }
        page.tieout = ReportPage.TieOut(days.map(mixed), mixedProceeds: daily)
        #expect(page.html().contains("6 rows have Apple&#39;s proceeds in two currencies: their apple_proceeds are empty, and summary.json&#39;s "
            + "proceeds leave them out. They come from apple/S_D_1_20261120.txt (2026-11-20), apple/S_D_1_20261121.txt (2026-11-21), "
            + "apple/S_D_1_20261122.txt (2026-11-22) and 3 more files.</p>"))
    }

    @Test("more uncovered shortfalls than the page lists: the page says how many it shows of how many; at the limit it says nothing")
    func tieoutSectionSaysWhatItLeavesOut() throws {
        /// The page of a night whose Sales Report sells one unit of gems60 on each of `days` days from 2026-11-01, none verified.
        func page(days: Int) throws -> String {
            let scenario = try Scenario()
            try scenario.catalog()
            let start = try #require(Timestamp.startOfDay("2026-11-01"))
            let rows = (0..<days).map { day in
                AppleTieOutTests.sales(String(Timestamp.iso8601(start + Int64(day) * 86_400_000).prefix(10)), "gems60", units: 1, country: "US")
            }
            try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader] + rows)
            try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-10-20T18:00:00Z")])
            _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
            return try scenario.output("report.html")
        }
        let many = try page(days: 24)
        // The newest days first: 2026-11-24 down to 2026-11-05; the first four days are left to findings.csv.
        #expect(Self.tieoutRows(many).map(\.first) == (5...24).reversed().map { String(format: "2026-11-%02d", $0) })
        #expect(many.contains("The newest 20 of 24; findings.csv has every one."))
        // Near miss: exactly as many as the page lists, all shown, nothing to say.
        let twenty = try page(days: 20)
        #expect(Self.tieoutRows(twenty).count == 20)
        #expect(!twenty.contains("findings.csv has every one"))
    }

    /// A Sales Report of `day`'s in-app rows (product, country and units), as `path` under the input folder.
    static func salesReport(_ scenario: Scenario, _ path: String, _ rows: [(day: String, sku: String, country: String, units: Int)],
                            gzip: Bool = false) throws {
        let lines = [AppleSalesReportTests.currentHeader] + rows.map { AppleTieOutTests.sales($0.day, $0.sku, units: $0.units, country: $0.country) }
        if gzip { try scenario.writeGzip(path, lines) } else { try scenario.write(path, lines) }
    }

    /// The warning lines of the tie-out section, as text.
    static func tieoutWarnings(_ html: String) -> [String] {
        guard let start = html.range(of: "<h2>Apple tie-out</h2>"),
              let end = html.range(of: "</section>", range: start.upperBound..<html.endIndex) else { return [] }
        return String(html[start.upperBound..<end.lowerBound]).components(separatedBy: "<p class=\"warn\">").dropFirst().map {
            String($0.prefix { $0 != "<" })
        }
    }

    @Test("a Sales Report given twice is named in the tie-out section of every night's page while the store holds both files, and no longer once the copy is forgotten")
    func repeatedSalesReportOnEveryPage() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        let report = [(day: "2026-11-24", sku: "gems60", country: "US", units: 2)]
        try Self.salesReport(scenario, "apple/S_D_1_20261124.txt", report)
        try Self.salesReport(scenario, "apple/S_D_1_20261124.txt.gz", report, gzip: true)
        let repeated = ["Sales Reports: apple/S_D_1_20261124.txt.gz repeats the report of 2026-11-24 in apple/S_D_1_20261124.txt: counted once."]
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let first = try scenario.output("report.html")
        #expect(Self.tieoutWarnings(first) == repeated)
        // Counted once: Apple's 2 units beside the 1 verified, whatever the page says of the files.
        #expect(first.contains("<span data-summary-key=\"apple_tieout.apple_units\" data-value=\"2\">2</span>"))

        // A later night touches another day only: the join says nothing of the reports that night, and the page still does.
        try scenario.write("receipts/r2.jsonl", [AppleTieOutTests.purchase("t2", at: "2026-11-27T18:00:00Z")])
        let later = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(later.join.recomputedTransactions != nil, "the night is incremental")
        #expect(later.join.warnings.isEmpty)
        #expect(Self.tieoutWarnings(try scenario.output("report.html")) == repeated)

        // The copy is forgotten: the next page says nothing of it, and the tie-out is the same.
        let tieout = try scenario.output("apple_tieout.csv")
        try FileManager.default.removeItem(atPath: scenario.input + "/apple/S_D_1_20261124.txt.gz")
        #expect(try StoredFiles.forget(paths: ["apple/S_D_1_20261124.txt.gz"], in: scenario.open()).isEmpty)
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let forgotten = try scenario.output("report.html")
        #expect(Self.tieoutWarnings(forgotten).isEmpty)
        #expect(!forgotten.contains("Sales Reports:"))
        #expect(try scenario.output("apple_tieout.csv") == tieout)
    }

    @Test("two Sales Reports whose differing rows of a day share a product and country are named on the page: both are counted")
    func overlappingSalesReportsOnThePage() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try Self.salesReport(scenario, "apple/S_D_1_20261124.txt", [("2026-11-24", "gems60", "US", 2)])
        try Self.salesReport(scenario, "apple/S_D_2_20261124.txt", [("2026-11-24", "gems60", "US", 3), ("2026-11-24", "gems300", "US", 1)])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let html = try scenario.output("report.html")
        #expect(Self.tieoutWarnings(html) == [
            "Sales Reports: apple/S_D_2_20261124.txt and apple/S_D_1_20261124.txt both have rows of the report of 2026-11-24 for the same "
                + "products and countries, and the rows differ: both counted.",
        ])
        #expect(html.contains("<span data-summary-key=\"apple_tieout.apple_units\" data-value=\"6\">6</span>"))
    }

    @Test("three Sales Reports whose differing rows of a day share a product and country: stderr and the page name each later file against every earlier one")
    func threeOverlappingSalesReports() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try Self.salesReport(scenario, "apple/S_D_1_20261124.txt", [("2026-11-24", "gems60", "US", 2)])
        try Self.salesReport(scenario, "apple/S_D_2_20261124.txt", [("2026-11-24", "gems60", "US", 3)])
        try Self.salesReport(scenario, "apple/S_D_3_20261124.txt", [("2026-11-24", "gems60", "US", 4)])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let pairs = [("apple/S_D_2_20261124.txt", "apple/S_D_1_20261124.txt"), ("apple/S_D_3_20261124.txt", "apple/S_D_1_20261124.txt"),
                     ("apple/S_D_3_20261124.txt", "apple/S_D_2_20261124.txt")]
        let warnings = pairs.map {
            "\($0.0) and \($0.1) both have rows of the report of 2026-11-24 for the same products and countries, and the rows differ: both counted"
        }
        #expect(result.join.warnings == warnings)
        let html = try scenario.output("report.html")
        #expect(Self.tieoutWarnings(html) == warnings.map { "Sales Reports: \($0)." })
        #expect(html.contains("<span data-summary-key=\"apple_tieout.apple_units\" data-value=\"9\">9</span>"))

        // A later night touches another day only: the page still names every pair.
        try scenario.write("receipts/r2.jsonl", [AppleTieOutTests.purchase("t2", at: "2026-11-27T18:00:00Z")])
        let later = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(later.join.recomputedTransactions != nil, "the night is incremental")
        #expect(later.join.warnings.isEmpty)
        #expect(Self.tieoutWarnings(try scenario.output("report.html")) == warnings.map { "Sales Reports: \($0)." })
    }

    @Test("near miss: three Sales Reports of adjacent days, each its own day, put no Sales Report line on the page or on stderr")
    func threeAdjacentSalesReportsSayNothing() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        for day in ["2026-11-23", "2026-11-24", "2026-11-25"] {
            try Self.salesReport(scenario, "apple/S_D_1_\(day.replacingOccurrences(of: "-", with: "")).txt", [(day, "gems60", "US", 2)])
        }
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(result.join.warnings.isEmpty)
        let html = try scenario.output("report.html")
        #expect(html.contains("<h2>Apple tie-out</h2>"))
        #expect(Self.tieoutWarnings(html).isEmpty)
        #expect(!html.contains("Sales Reports:"))
    }

    @Test("near miss: one report per day, reports of adjacent periods, and two vendor accounts' reports of one day put no Sales Report line on the page")
    func separateSalesReportsSayNothing() throws {
        func page(_ reports: [(path: String, rows: [(day: String, sku: String, country: String, units: Int)])]) throws -> String {
            let scenario = try Scenario()
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
            for report in reports { try Self.salesReport(scenario, report.path, report.rows) }
            _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
            return try scenario.output("report.html")
        }
        let daily = try page([("apple/S_D_1_20261124.txt", [("2026-11-24", "gems60", "US", 2)]),
                              ("apple/S_D_1_20261125.txt", [("2026-11-25", "gems60", "US", 2)])])
        let periods = try page([("apple/S_W_1_20261122.txt", [("2026-11-22", "gems60", "US", 1), ("2026-11-23", "gems60", "US", 1)]),
                                ("apple/S_W_1_20261124.txt", [("2026-11-24", "gems60", "US", 1), ("2026-11-25", "gems60", "US", 1)])])
        let vendors = try page([("apple/S_D_1_20261124.txt", [("2026-11-24", "gems60", "US", 2)]),
                                ("apple/S_D_2_20261124.txt", [("2026-11-24", "gems300", "US", 2)])])
        for html in [daily, periods, vendors] {
            #expect(html.contains("<h2>Apple tie-out</h2>"))
            #expect(Self.tieoutWarnings(html).isEmpty)
            #expect(!html.contains("Sales Reports:"))
        }
    }

    /// The cells of the tie-out table's rows, as text.
    static func tieoutRows(_ html: String) -> [[String]] {
        guard let start = html.range(of: "<h2>Apple tie-out</h2>"),
              let end = html.range(of: "</section>", range: start.upperBound..<html.endIndex) else { return [] }
        return String(html[start.upperBound..<end.lowerBound]).components(separatedBy: "<tr>").dropFirst().compactMap { row in
            let cells = row.components(separatedBy: "<td").dropFirst().map {
                $0.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
                    .replacingOccurrences(of: "^[^>]*>", with: "", options: .regularExpression)
            }
            return cells.isEmpty ? nil : cells
        }
    }

    /// The cells of the attribution table's row for `mediaSource`, bars left out.
    static func attributionRow(_ html: String, _ mediaSource: String) -> [String] {
        guard let start = html.range(of: "<h2>Attribution per media source"),
              let end = html.range(of: "</section>", range: start.upperBound..<html.endIndex) else { return [] }
        let section = String(html[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "<svg[^>]*>.*?</svg>", with: "", options: .regularExpression)
        for row in section.components(separatedBy: "<tr>") {
            let cells = row.components(separatedBy: "<td").dropFirst().map {
                $0.replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression)
                    .replacingOccurrences(of: "^[^>]*>", with: "", options: .regularExpression)
            }
            if cells.first == mediaSource { return cells }
        }
        return []
    }

    @Test("a media source's revenue and spend are attribution.csv's rounded cells summed, in the reporting currency's minor unit")
    func mediaSourceTotalsTieToAttributionCSV() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // A dollar is 150 yen: 0.99 USD is 148.5 JPY, which each cohort row of attribution.csv rounds half-even to 148.
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150"])
        typealias Attribution = AttributionReportTests.Fixture
        try Attribution.mmp(scenario, [
            Attribution.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "Facebook Ads", campaign: "C1", appsflyerID: "af1", cuid: "u1"),
            Attribution.MMPRow(time: "2026-11-10 10:00:00", mediaSource: "Facebook Ads", campaign: "C2", appsflyerID: "af2", cuid: "u2"),
        ])
        try scenario.write("registrations/r.jsonl", [
            Attribution.signup("2026-11-10T10:30:00Z", "u1"), Attribution.signup("2026-11-10T10:30:00Z", "u2"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T11:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T11:00:00Z", price: 990)),
            Line.v2Receipt("2026-11-10T12:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-10T12:00:00Z", price: 990)),
        ])
        try scenario.write("spend/s.csv", [
            "date,media_source,campaign,spend,currency", "2026-11-10,Facebook Ads,C1,0.99,USD", "2026-11-10,Facebook Ads,C2,0.99,USD",
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "JPY")
        let cohorts = Fixture.table(try scenario.output("attribution.csv"))
        #expect(Fixture.sum(cohorts, "revenue_jpy") == 296)
        #expect(Fixture.sum(cohorts, "spend_jpy") == 296)
        let row = Self.attributionRow(try scenario.output("report.html"), "Facebook Ads")
        #expect(row == ["Facebook Ads", "2", "2", "296", "296", "1.00"])
    }

    @Test("a media source without spend rows says so rather than showing a spend of 0, also when no spend/ file was read")
    func mediaSourceWithoutSpend() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        typealias Attribution = AttributionReportTests.Fixture
        try Attribution.mmp(scenario, [Attribution.MMPRow(time: "2026-11-10 10:00:00", appsflyerID: "af1", cuid: "u1")])
        try scenario.write("registrations/r.jsonl", [Attribution.signup("2026-11-10T10:30:00Z", "u1")])
        try scenario.write("receipts/r.jsonl", [Attribution.purchase("t1", at: "2026-11-10T11:00:00Z", by: "u1", price: 4990)])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        #expect(Fixture.table(try scenario.output("attribution.csv")).map { $0["spend_usd"] } == [""])
        let row = Self.attributionRow(try scenario.output("report.html"), "organic")
        #expect(row == ["organic", "1", "1", "4.99", "no spend", ""])
    }

    @Test("revenue fx.csv cannot convert is named beside the totals it is missing from, as summary.json counts it")
    func revenueWithoutFXRateIsNamed() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 990)),
            Line.v2Receipt("2026-11-10T11:00:05Z", "u2", transaction: Fixture.v2(
                "t2", "gems300", purchase: "2026-11-10T11:00:00Z", price: 800_000, currency: "JPY", storefront: "JPN")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let transactions = try #require(Fixture.summary(scenario)["transactions"] as? [String: Any])
        #expect(transactions["without_fx_rate"] as? Int == 1)
        let html = try scenario.output("report.html")
        #expect(Self.attributes(html, "data-summary-key", "data-value").contains { $0 == ("transactions.without_fx_rate", "1") })
        #expect(html.contains("not in these totals"))
    }

    @Test("the newest critical findings show their time to the second, as findings.csv has it")
    func criticalFindingTimesToTheSecond() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let html = try scenario.output("report.html")
        let critical = Fixture.table(try scenario.output("findings.csv")).filter { $0["severity"] == "critical" }
        let times = Set(critical.compactMap { $0["event_time"] }.map { String($0.prefix(19)).replacingOccurrences(of: "T", with: " ") })
        let shown = html.components(separatedBy: "<span class=\"time\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
        #expect(!shown.isEmpty)
        for time in shown { #expect(times.contains(time), "\(time)") }
        #expect(ReportPage.seconds("2026-11-28T20:14:05.000Z") == "2026-11-28 20:14:05")
        #expect(ReportPage.seconds("2026-11-28T20:14:05.250Z") == "2026-11-28 20:14:05.250")
    }

    @Test("the money-at-risk table ends in a total row marked with summary.json's money_at_risk total and the findings' count")
    func riskTotalRow() throws {
        let scenario = try Self.hostileNight()
        let html = try scenario.output("report.html")
        let summary = try Fixture.summary(scenario)
        let total = try #require((summary["money_at_risk_usd"] as? [String: Any])?["total"] as? String)
        #expect(total == "4.99")
        #expect(html.contains("<b data-summary-key=\"money_at_risk_usd.total\" data-value=\"4.99\">4.99</b>"))
    }

    @Test("the chart's y axis is labelled at round values within the bars, every place of the minor unit written", arguments: [
        ("USD", ["8.00", "6.00", "4.00", "2.00", "0.00", "-2.00"]), ("KWD", ["2.000", "1.500", "1.000", "0.500", "0.000", "-0.500"]),
        ("JPY", ["1,000", "500", "0"]),
    ])
    func chartAxisLabels(currency: String, labels: [String]) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // A dollar is 0.3 KWD or 150 yen: gross 8.21 USD on the 11th, and 3.22 bought on the 10th and refunded on the 11th.
        let rate = currency == "JPY" ? "150" : "0.3"
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,\(currency),1"] + (currency == "USD" ? [] : ["2026-11-01,USD,\(rate)"]))
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 3220,
                                                                           revocation: "2026-11-11T12:00:00Z")),
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Line.v2("t2", "gems300", purchase: "2026-11-11T10:00:00Z", price: 8210)),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: currency)
        let html = try scenario.output("report.html")
        let chart = try #require(html.components(separatedBy: "<svg class=\"chart\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        let shown = chart.components(separatedBy: "text-anchor=\"end\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
        #expect(Array(shown.prefix(labels.count)) == labels)
    }

    @Test("the chart's y axis labels of a large amount fit beside the plot, the minus sign of a negative one too")
    func chartAxisLabelsOfLargeAmountsFit() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // A large app's won: 8.21 billion on the 11th, and 3.22 billion bought on the 10th and refunded on the 11th.
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,KRW,1"])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Fixture.v2("t1", "gems300", purchase: "2026-11-10T10:00:00Z",
                                                                           price: 3_220_000_000_000, currency: "KRW", storefront: "KOR",
                                                                           revocation: "2026-11-11T12:00:00Z")),
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: Fixture.v2("t2", "gems300", purchase: "2026-11-11T10:00:00Z",
                                                                           price: 8_210_000_000_000, currency: "KRW", storefront: "KOR")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "KRW")
        let html = try scenario.output("report.html")
        let chart = try #require(html.components(separatedBy: "<svg class=\"chart\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        let labels = chart.components(separatedBy: "<text x=\"").dropFirst().compactMap { text -> (x: Double, label: String)? in
            guard text.contains("text-anchor=\"end\">"), let x = Double(text.prefix { $0 != "\"" }),
                  let label = text.components(separatedBy: "text-anchor=\"end\">").last?.prefix(while: { $0 != "<" }) else { return nil }
            return (x, String(label))
        }
        #expect(labels.map(\.label).contains("-2,000,000,000"))
        // At 11px, a digit, comma or minus of the sans-serif fonts is at most 6.5 units wide: the label ends at x, and starts within the chart.
        let axisLabels = labels.filter { $0.label.range(of: #"^-?[0-9,]+$"#, options: .regularExpression) != nil }
        #expect(!axisLabels.isEmpty)
        for label in axisLabels { #expect(label.x >= Double(label.label.count) * 6.5, "\(label.label) at \(label.x)") }
        // The plot starts after the labels: its gridlines too.
        let gridStart = try #require(chart.components(separatedBy: "<line class=\"grid\" x1=\"").dropFirst().first.flatMap { Double($0.prefix { $0 != "\"" }) })
        #expect(axisLabels.allSatisfy { $0.x < gridStart })
    }

    @Test("axis ticks are 0 and multiples of 1, 2 or 5 times a power of ten between the lowest and the highest value, at most six", arguments: [
        ("8.21", "-3.22", ["-2", "0", "2", "4", "6", "8"]), ("14.15", "0", ["0", "5", "10"]), ("0.03", "0", ["0", "0.01", "0.02", "0.03"]),
        ("19439", "0", ["0", "5000", "10000", "15000"]), ("0", "0", ["0"]), ("1", "0", ["0", "0.2", "0.4", "0.6", "0.8", "1"]),
        ("28665", "-322", ["0", "5000", "10000", "15000", "20000", "25000"]),
    ])
    func axisTicks(high: String, low: String, ticks: [String]) throws {
        let values = ReportPage.axisTicks(high: try #require(Amount.parse(high)), low: try #require(Amount.parse(low)), places: 2)
        #expect(values.map { Money.format($0) } == ticks)
    }

    @Test("revenue with no price is named beside the totals and the attribution revenue it is missing from")
    func revenueWithoutPriceIsNamed() throws {
        typealias Attribution = AttributionReportTests.Fixture
        let scenario = try Scenario()
        try scenario.catalog()
        try Attribution.mmp(scenario, [Attribution.MMPRow(time: "2026-11-10 09:00:00", mediaSource: "Facebook Ads", campaign: "FB", appsflyerID: "af1", cuid: "u1")])
        try scenario.write("registrations/r.jsonl", [Attribution.signup("2026-11-10T09:30:00Z", "u1")])
        // A StoreKit 1 receipt names no price, and the catalog does not know the product; a priced one beside it.
        try scenario.write("receipts/r.jsonl", [
            Fixture.inAppReceipt("2026-11-10T10:00:05Z", "u1", items: [Fixture.inApp("t9", "unknown.prod", purchase: "2026-11-10T10:00:00Z")]),
            Line.v2Receipt("2026-11-10T11:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T11:00:00Z", price: 990)),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let html = try scenario.output("report.html")
        #expect(Self.attributes(html, "data-summary-key", "data-value").contains { $0 == ("transactions.price_source.none", "1") })
        #expect(html.contains("no price (no V2 price, order or catalog entry): not in these totals, the chart or the attribution revenue"))
        #expect(!html.contains("no fx.csv rate"))
        #expect(Self.attributionRow(html, "Facebook Ads") == ["Facebook Ads", "1", "1", "0.99", "no spend", ""])
    }

    /// The page model of a finished scenario, built from its store as the report stage builds it.
    static func page(_ scenario: Scenario) throws -> ReportPage {
        let database = try scenario.open()
        var asOfMs: Int64 = 0, graceMs: Int64 = 0
        try database.forEach("SELECT as_of_ms, grace_ms FROM int_run_settings") { (asOfMs, graceMs) = ($0.int(0), $0.int(1)) }
        let store = SQLiteReportStore(database)
        let fx = FXRates(rows: try store.fxRates(), reportingCurrency: "USD")
        let settings = ReportSettings(outFolder: scenario.out)
        return ReportPage(
            asOfMs: asOfMs, settings: settings, counts: try StoredSummaryCounts.counts(database: database, asOfMs: asOfMs, graceMs: graceMs),
            findings: try FindingsReport(reading: store, fx: fx, zone: .utc, announced: store.recordFirstSightings(asOfMs: asOfMs, earlierIn: nil)),
            revenue: try RevenueReport(store: store, zone: .utc, fx: fx),
            attribution: try AttributionReport(store: store, zone: .utc, fx: fx, asOfMs: asOfMs))
    }

    /// The values of two attributes on every element that has both, in page order.
    static func attributes(_ html: String, _ first: String, _ second: String) -> [(String, String)] {
        let pattern = "\(first)=\"([^\"]*)\" \(second)=\"([^\"]*)\""
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let text = html as NSString
        return regex.matches(in: html, range: NSRange(location: 0, length: text.length)).map {
            (text.substring(with: $0.range(at: 1)), text.substring(with: $0.range(at: 2)))
        }
    }

    /// The page's own warnings, above its sections (`Inputs: …`), as text.
    static func inputWarnings(_ html: String) -> [String] {
        html.components(separatedBy: "<p class=\"warn\">Inputs: ").dropFirst().map { String($0.prefix { $0 != "<" }) }
    }

    @Test("a notification of a type Apple does not document is named on every night's page while it is stored, in the ingest's words; documented types put nothing there")
    func unknownNotificationTypesOnEveryPage() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let known = Line.purchaseNotification("ONE_TIME_CHARGE", "t_known", number: 1)
        let unknown = Line.purchaseNotification("NEW_THING", "t_new", number: 2)
        try scenario.write("notifications/n.jsonl", [known])
        // Near miss: documented types only.
        _ = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(!(try scenario.output("report.html")).contains("iaprecon does not know"))

        try scenario.write("notifications/n2.jsonl", [Line.purchaseNotification("ONE_TIME_CHARGE", "t_known", number: 3), unknown])
        let night = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        let said = "1 notification has a type iaprecon does not know (NEW_THING 1); it is treated as any other notification: a transaction it "
            + "carries counts as a purchase Apple confirmed, and as refunded only if it gives a refund date; check Apple's notes for what it "
            + "means: notifications/n2.jsonl:2"
        #expect(night.ingest.warnings == [said])
        #expect(Self.inputWarnings(try scenario.output("report.html")) == [HTML.escape(said) + "."])

        // A later night reads another file only: the ingest says nothing of the type that night, and the page still does.
        try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
        let later = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(later.ingest.warnings.isEmpty)
        #expect(Self.inputWarnings(try scenario.output("report.html")) == [HTML.escape(said) + "."])
    }
}
