import Foundation
import Testing
@testable import IAPRecon

/// The tie-out with Apple's Sales Report and its finding, `unverified_apple_sales`.
@Suite("Tie-out with Apple's Sales Report")
struct AppleTieOutTests {
    let asOf = "2026-11-30T00:00:00Z"

    /// One in-app row of a Summary Sales Report in Apple's 28-column layout.
    static func sales(_ day: String, _ sku: String, units: Int, country: String, price: String = "0.99", currency: String = "USD",
                      proceeds: String = "0.69", parent: String = "com.example.game") -> String {
        let parts = day.split(separator: "-")
        let date = "\(parts[1])/\(parts[2])/\(parts[0])"
        return AppleSalesReportTests.current([
            "APPLE", "US", sku, "Example Games Inc.", sku, "", "IA1", String(units), proceeds, date, date, currency, country, currency,
            "6449010103", price, "", parent, "", "", "Games", "", "iPhone", "iOS", "", "", "", "",
        ])
    }

    /// A receipts line with one decoded V2 Production transaction of `gems60`.
    static func purchase(_ id: String, at purchase: String, storefront: String? = "USA", currency: String = "USD", price: Int = 990,
                         refundedAt: String? = nil, quantity: Int = 1, ownership: String = "PURCHASED", environment: String = "Production",
                         offer: String? = nil) -> String {
        var fields = "\"transactionId\":\"\(id)\",\"originalTransactionId\":\"\(id)\",\"productId\":\"gems60\",\"purchaseDate\":\(Line.ms(purchase)),\"quantity\":\(quantity),\"environment\":\"\(environment)\",\"inAppOwnershipType\":\"\(ownership)\",\"price\":\(price),\"currency\":\"\(currency)\""
        if let offer { fields += ",\"offerDiscountType\":\"\(offer)\"" }
        if let storefront { fields += ",\"storefront\":\"\(storefront)\"" }
        if let refundedAt { fields += ",\"revocationDate\":\(Line.ms(refundedAt)),\"revocationReason\":0" }
        return Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: "{\(fields)}")
    }

    /// Reconciles `receipts` against a Sales Report of `report` rows; returns the tie-out findings.
    private func reconcile(receipts: [String], report: [String]) throws -> [Scenario.StoredFinding] {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", receipts)
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader] + report)
        return try scenario.reconcile(asOf: asOf).filter { $0.kind == .unverifiedAppleSales }
    }

    @Test("Apple sold two in Japan, one was verified: one finding for the missing unit at Apple's yen price")
    func unverifiedSale() throws {
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T03:00:00Z", storefront: "JPN", currency: "JPY", price: 160_000)],
            report: [Self.sales("2026-11-23", "gems60", units: 2, country: "JP", price: "160", currency: "JPY", proceeds: "101")])
        let finding = try #require(findings.first)
        #expect(findings.count == 1)
        #expect(finding.detail.hasPrefix("country=JP apple_units=2 verified_units=1"))
        #expect(finding.detail.contains("missing_units=1"))
        #expect(finding.amount == Decimal(160))
        #expect(finding.currency == "JPY")
        #expect(finding.transactionID == nil)
        #expect(Timestamp.iso8601(finding.eventMs) == "2026-11-23T08:00:00.000Z", "the start of the Pacific day")
        #expect(finding.sources == ["apple/S_D_1.txt:2"])
    }

    @Test("a vendor's report lists another app's in-app sales: named by --app-sku, this app's rows alone are tied out, and the store reads the report again")
    func otherAppsRows() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T03:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-23", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-23", "com.other.coins", units: 5, country: "US", parent: "OTHERAPP"),
            // Near miss: this app's own product that no receipt verified is still flagged.
            Self.sales("2026-11-23", "gems300", units: 2, country: "US"),
        ])
        func missing(_ findings: [Scenario.StoredFinding]) -> [String] {
            findings.filter { $0.kind == .unverifiedAppleSales }.map { "\($0.detail.split(separator: " ").prefix(3).joined(separator: " ")) \($0.sources)" }
        }
        // Without the app's SKU, every in-app row is the app's: the other app's coins count as missing sales.
        let unnamed = missing(try scenario.reconcile(asOf: asOf))
        #expect(unnamed.sorted() == [
            "country=US apple_units=2 verified_units=0 [\"apple/S_D_1.txt:4\"]", "country=US apple_units=5 verified_units=0 [\"apple/S_D_1.txt:3\"]",
        ])
        // Named, the same store reads the report again: the other app's row is read and ignored.
        let named = missing(try scenario.reconcile(asOf: asOf, appSKUs: ["com.example.game"]))
        #expect(named == ["country=US apple_units=2 verified_units=0 [\"apple/S_D_1.txt:4\"]"])
        #expect(try scenario.open().scalar("SELECT accepted || ' ' || ignored FROM files WHERE path = 'apple/S_D_1.txt'") == .text("2 1"))
        // And without it again, every row is read once more as the app's.
        #expect(missing(try scenario.reconcile(asOf: asOf)) == unnamed)
    }

    @Test("reports read without --app-sku whose in-app rows name two apps are named on stderr and the page; one app, or the SKU named, warns of nothing")
    func otherAppsWarning() throws {
        let warning = "Sales Reports list the in-app sales of 2 apps (Parent Identifier GEMQUEST, OTHERAPP), all tied out as this app's: "
            + "name this app's SKU with --app-sku to leave the others out"
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T03:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-23", "gems60", units: 1, country: "US", parent: "GEMQUEST"),
        ])
        // Near miss: one app's rows, whatever its SKU.
        #expect(try scenario.run(asOf: asOf).report.warnings == [])
        try scenario.write("apple/S_D_2.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "com.other.coins", units: 5, country: "US", parent: "OTHERAPP"),
        ])
        #expect(try scenario.run(asOf: asOf).report.warnings == [warning])
        #expect(try scenario.output("report.html").contains(warning.replacingOccurrences(of: "'", with: "&#39;")))
        // Named, the other app's row is left out, and the rows tied out are this app's alone.
        #expect(try scenario.run(asOf: asOf, appSKUs: ["GEMQUEST"]).report.warnings == [])
        // Near miss: two SKUs named are both this app's.
        #expect(try scenario.run(asOf: asOf, appSKUs: ["GEMQUEST", "OTHERAPP"]).report.warnings == [])
    }

    @Test("days with no report between the first and the last the reports cover are named on stderr and the page; a day of the app's own rows alone is covered")
    func missingReportDays() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-22T18:00:00Z")])
        let appRowOnly = Self.sales("2026-11-23", "com.example.game", units: 40, country: "US", price: "0", proceeds: "0")
            .replacingOccurrences(of: "\tIA1\t", with: "\t1F\t")
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-22", "gems60", units: 1, country: "US"), appRowOnly,
            Self.sales("2026-11-24", "gems60", units: 0, country: "US"),
        ])
        // Near miss: days in a row, one of them reported by the app's own rows alone.
        #expect(try scenario.run(asOf: asOf).report.warnings == [])
        try scenario.write("apple/S_D_2.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-27", "gems60", units: 0, country: "US")])
        let warning = "Sales Reports cover 2026-11-22 to 2026-11-27 but no report of 2 days between them is in (2026-11-25, 2026-11-26): "
            + "the tie-out compares only the days reported, so those days' Apple and verified units are in no total "
            + "(a day Apple sold nothing on has no report)"
        #expect(try scenario.run(asOf: asOf).report.warnings == [warning])
        #expect(try scenario.output("report.html").contains(warning.replacingOccurrences(of: "'", with: "&#39;")))
    }

    @Test("near miss: every Apple unit verified, with no finding")
    func allVerified() throws {
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T03:00:00Z"), Self.purchase("t2", at: "2026-11-24T20:00:00Z", quantity: 2)],
            report: [Self.sales("2026-11-23", "gems60", units: 1, country: "US"), Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        #expect(findings.isEmpty)
    }

    @Test("near miss: a purchase at 23:30 Pacific, the next UTC day, counts on Apple's Pacific day")
    func lateEveningPacific() throws {
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-25T07:30:00Z")],
            report: [Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        #expect(findings.isEmpty)
    }

    @Test("near miss: the Pacific day the clocks go back lasts 25 hours, and its first and last half hours count on it, as Apple's report does")
    func pacificDayOfTwentyFiveHours() throws {
        // 2026-11-01 00:30 PDT, 23:30 PST the same day (25 hours on), and 00:30 PST on the 2nd.
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-01T07:30:00Z"), Self.purchase("t2", at: "2026-11-02T07:30:00Z"),
                       Self.purchase("t3", at: "2026-11-02T08:30:00Z")],
            report: [Self.sales("2026-10-31", "gems60", units: 0, country: "US"), Self.sales("2026-11-01", "gems60", units: 2, country: "US"),
                     Self.sales("2026-11-02", "gems60", units: 1, country: "US")])
        #expect(findings.isEmpty)
    }

    @Test("near miss: a refund on a later Pacific day than its purchase nets on Apple's refund day")
    func refundLaterDay() throws {
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z", refundedAt: "2026-11-26T18:00:00Z")],
            report: [Self.sales("2026-11-24", "gems60", units: 1, country: "US"), Self.sales("2026-11-26", "gems60", units: -1, country: "US")])
        #expect(findings.isEmpty)
    }

    @Test("near miss: a refund iaprecon verified on a day whose report lists it a day later is no unverified sale: every purchase was verified")
    func refundListedByAppleADayLater() throws {
        // t1 bought at 10:00 Pacific on the 24th, refunded at 23:50 Pacific that day; Apple lists the refund on the 25th.
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z", refundedAt: "2026-11-25T07:50:00Z")],
            report: [Self.sales("2026-11-24", "gems60", units: 1, country: "US"), Self.sales("2026-11-25", "gems60", units: -1, country: "US")])
        #expect(findings.isEmpty, "a refund's timing is no purchase the server never saw")
    }

    @Test("a refund Apple lists that no notification told of does not hide a purchase the server never saw on the same day")
    func unnotifiedRefundHidesNoPurchase() throws {
        // Apple sold two in the US on the 24th and refunded one; the server verified one purchase and heard of no refund.
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z")],
            report: [Self.sales("2026-11-24", "gems60", units: 2, country: "US"), Self.sales("2026-11-24", "gems60", units: -1, country: "US")])
        #expect(findings.map(\.detail) == [
            "country=US apple_units=1 verified_units=1 apple_purchase_units=2 verified_purchase_units=1 missing_units=1",
        ])
        #expect(findings.first?.amount == Decimal(string: "0.99"))
    }

    @Test("a night that verifies a late purchase and a refund on days it does not count again gives a fresh store's findings")
    func purchasesCountedOnANight() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t2", at: "2026-11-23T18:00:00Z")])
        // On the 24th Apple sold two and refunded t2 (bought on the 23rd), which no notification has told of yet.
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-23", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 2, country: "US"), Self.sales("2026-11-24", "gems60", units: -1, country: "US"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try tieOutFindings(scenario) == [
            "country=US apple_units=1 verified_units=1 apple_purchase_units=2 verified_purchase_units=1 missing_units=1",
        ])
        // The next night: t2's refund on the 24th, and the purchase the server had not seen.
        try scenario.write("receipts/r2.jsonl", [
            Self.purchase("t2", at: "2026-11-23T18:00:00Z", refundedAt: "2026-11-24T20:00:00Z"), Self.purchase("t3", at: "2026-11-24T19:00:00Z"),
        ])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-24,gems60,US,1,1,0,"))
        #expect(try tieOutFindings(scenario).isEmpty)
        try expectRebuildEqual(scenario)
    }

    @Test("near miss: a verified purchase without storefront covers a country's gap on its day; without it the gap is flagged")
    func storefrontlessCoversGap() throws {
        let report = [Self.sales("2026-11-24", "gems60", units: 2, country: "US"), Self.sales("2026-11-24", "gems60", units: 1, country: "JP", price: "160", currency: "JPY")]
        let covered = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T19:00:00Z"),
                       Self.purchase("t3", at: "2026-11-24T20:00:00Z", storefront: nil)],
            report: report)
        #expect(covered.isEmpty)
        let uncovered = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T19:00:00Z")],
            report: report)
        #expect(uncovered.map(\.detail) == ["country=JP apple_units=1 verified_units=0 missing_units=1"])
    }

    @Test("near miss: a storefront-less refund the same day does not cancel the storefront-less purchase that covers a gap")
    func storefrontlessRefundSameDay() throws {
        // t1 was bought in Japan two days earlier and refunded on the 24th; t2 bought in the US on the 24th; neither has a storefront.
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-22T18:00:00Z", storefront: nil, refundedAt: "2026-11-24T18:00:00Z"),
                       Self.purchase("t2", at: "2026-11-24T19:00:00Z", storefront: nil)],
            report: [Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
                     Self.sales("2026-11-24", "gems60", units: -1, country: "JP", price: "160", currency: "JPY")])
        #expect(findings.isEmpty)
    }

    @Test("a storefront-less purchase on another day covers nothing")
    func storefrontlessOtherDay() throws {
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-23T20:00:00Z", storefront: nil)],
            report: [Self.sales("2026-11-23", "gems60", units: 0, country: "US"), Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        #expect(findings.map(\.detail) == ["country=US apple_units=1 verified_units=0 missing_units=1"])
    }

    @Test("a refund of an unpriced purchase is a refund unit in revenue_daily.csv as in apple_tieout.csv: the files agree on units")
    func unpricedRefundUnitsAgree() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // mystery.bundle has no V2 price, no order and no catalog line; t2 of gems60 is priced. Both are refunded two days later.
        let unpriced = Line.v2("t1", "mystery.bundle", purchase: "2026-11-24T18:00:00Z", price: nil, revocation: "2026-11-26T18:00:00Z")
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: unpriced),
                                                Self.purchase("t2", at: "2026-11-24T18:00:00Z", refundedAt: "2026-11-26T18:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader,
                                               Self.sales("2026-11-24", "mystery.bundle", units: 1, country: "US"),
                                               Self.sales("2026-11-26", "mystery.bundle", units: -1, country: "US"),
                                               Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
                                               Self.sales("2026-11-26", "gems60", units: -1, country: "US")])
        _ = try scenario.run(asOf: asOf)
        let tieout = RevenueReportTests.Fixture.table(try scenario.output("apple_tieout.csv"))
        let revenue = RevenueReportTests.Fixture.table(try scenario.output("revenue_daily.csv"))
        for product in ["mystery.bundle", "gems60"] {
            func sum(_ rows: [[String: String]], _ column: String, where keep: (Int) -> Bool = { _ in true }) -> Int {
                rows.filter { $0["product_id"] == product }.compactMap { Int($0[column] ?? "") }.filter(keep).reduce(0, +)
            }
            let refundedUnits: Int = -sum(tieout, "verified_units") { $0 < 0 }
            let netUnits: Int = sum(revenue, "units") - sum(revenue, "refund_units")
            #expect(refundedUnits == sum(revenue, "refund_units"), "\(product)")
            #expect(sum(tieout, "verified_units") == netUnits, "\(product)")
        }
    }

    @Test("family-shared and sandbox transactions are not verified sales")
    func notSales() throws {
        let sandbox = Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t2", "gems60", purchase: "2026-11-24T18:00:00Z", environment: "Sandbox"))
        let findings = try reconcile(
            receipts: [Self.purchase("t1", at: "2026-11-24T18:00:00Z", ownership: "FAMILY_SHARED"), sandbox],
            report: [Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        #expect(findings.map(\.detail) == ["country=US apple_units=2 verified_units=0 missing_units=2"])
        #expect(findings.first?.amount == Decimal(string: "1.98"))
    }

    @Test("a verified free trial is a verified unit, as Apple counts it at price 0: no unverified sale; family-shared and sandbox trials are not")
    func freeTrialIsAVerifiedUnit() throws {
        let trial = Self.purchase("t1", at: "2026-11-24T18:00:00Z", price: 0, offer: "FREE_TRIAL")
        let zeroPriced = Self.sales("2026-11-24", "gems60", units: 1, country: "US", price: "0", proceeds: "0")
        #expect(try reconcile(receipts: [trial], report: [zeroPriced]).isEmpty)
        // Near miss: trials Apple's report does not count as sales are not verified units either.
        let notSales = try reconcile(
            receipts: [Self.purchase("t2", at: "2026-11-24T18:00:00Z", price: 0, ownership: "FAMILY_SHARED", offer: "FREE_TRIAL"),
                       Self.purchase("t3", at: "2026-11-24T19:00:00Z", price: 0, environment: "Sandbox", offer: "FREE_TRIAL")],
            report: [zeroPriced])
        #expect(notSales.map(\.detail) == ["country=US apple_units=1 verified_units=0 missing_units=1"])

        // Still never revenue; a night that learns the trial agrees with a fresh store.
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, zeroPriced])
        try scenario.write("receipts/a.jsonl", [Self.purchase("t9", at: "2026-11-20T18:00:00Z")])
        _ = try scenario.run(asOf: asOf)
        #expect(try tieOutFindings(scenario) == ["country=US apple_units=1 verified_units=0 missing_units=1"])
        try scenario.write("receipts/b.jsonl", [trial])
        _ = try scenario.run(asOf: asOf)
        #expect(try tieOutFindings(scenario).isEmpty)
        try expectRebuildEqual(scenario)
        #expect(try scenario.output("transactions.csv").split(separator: "\r\n").filter { $0.hasPrefix("t1,") }.first?.contains(",false,") == true)
    }

    @Test("results an older iaprecon wrote, without what Apple counts as a sale, are rebuilt in full by the next join")
    func resultsWithoutSalesRebuilt() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        try scenario.write("receipts/a.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        _ = try scenario.run(asOf: asOf)
        let database = try scenario.open()
        // What the older iaprecon kept: no is_apple_sale, and the tie-out's indexes over revenue.
        try database.execute("""
            DROP INDEX IF EXISTS int_transactions_by_purchase; DROP INDEX IF EXISTS int_transactions_by_purchase__2;
            DROP INDEX IF EXISTS int_transactions_by_refund; DROP INDEX IF EXISTS int_transactions_by_refund__2;
            ALTER TABLE int_transactions_resolved DROP COLUMN is_apple_sale;
            CREATE INDEX int_transactions_by_purchase ON int_transactions_resolved(purchase_ms) WHERE is_revenue = 1;
            CREATE INDEX int_transactions_by_refund ON int_transactions_resolved(refund_ms) WHERE is_revenue = 1 AND refund_ms IS NOT NULL;
            """)
        #expect(try !StoredJoinResults.areCurrent(database))
        #expect(try Pipeline.join(database: database, settings: ReconcileSettings()).recomputedTransactions == nil)
        #expect(try database.scalar("SELECT is_apple_sale FROM int_transactions_resolved") == .integer(1))
    }

    @Test("a full rebuild ties out its own results, read before they are switched in, not the results they replace")
    func fullRebuildTiesOutItsResults() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        try scenario.write("receipts/a.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        let unverified = try scenario.reconcile(asOf: asOf).filter { $0.kind == .unverifiedAppleSales }
        #expect(unverified.count == 1 && unverified.first?.detail.contains("verified_units=1") == true)
        // The second unit's purchase arrives; a new grace rebuilds every result.
        try scenario.write("receipts/b.jsonl", [Self.purchase("t2", at: "2026-11-24T19:00:00Z")])
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: asOf), progress: nil)
        try Pipeline.normalize(database: database)
        let settings = ReconcileSettings(asOfMs: Timestamp.parse(asOf), graceMs: 48 * 3_600_000)
        let night = try Pipeline.join(database: database, settings: settings)
        #expect(night.recomputedTransactions == nil)
        #expect(night.fullRebuildReason == "--grace 48h differs from the earlier join's 24h")
        #expect(try Scenario.findings(database).filter { $0.kind == .unverifiedAppleSales }.isEmpty)
        #expect(try database.scalar("SELECT sum(verified_units) FROM fct_apple_tieout") == .integer(2))
    }

    @Test("several report rows of one day, product and country add up; the price is the one most units sold at; the shortfall is of purchases")
    func rowsAddUp() throws {
        func line(_ units: Int64, price: String, proceeds: String, line: Int) -> TieOutSalesLine {
            TieOutSalesLine(day: "2026-11-24", productID: "gems60", country: "US", units: units, customerPrice: Decimal(string: price) ?? 0,
                                  customerCurrency: "USD", proceeds: Decimal(string: proceeds) ?? 0, proceedsCurrency: "USD",
                                  source: SourceLine(file: 0, line: Int64(line)))
        }
        // A promotional price for one unit, the list price for three, and a refund at the list price.
        let tieOut = AppleTieOut(
            sales: [line(1, price: "0.49", proceeds: "0.34", line: 2), line(3, price: "0.99", proceeds: "0.69", line: 3),
                    line(-1, price: "0.99", proceeds: "0.69", line: 4)],
            verified: [.init(day: "2026-11-24", productID: "gems60", country: "US", units: 2)])
        let row = try #require(tieOut.rows.first)
        #expect(tieOut.rows.count == 1)
        #expect(row.appleUnits == 3)
        #expect(row.difference == 1)
        #expect(row.customerPrice == Decimal(string: "0.99"))
        #expect(row.proceeds == Decimal(string: "1.72"))
        // Apple sold four and the server verified two purchases: the refund no notification told of hides none.
        #expect(row.applePurchases == 4 && row.purchaseShortfall == 2)
        #expect(tieOut.findings.map(\.amount) == [Decimal(string: "1.98")])
        #expect(tieOut.findings.first?.sources == [2, 3, 4].map { SourceLine(file: 0, line: $0) })
    }

    @Test("rows of one day, product and country in two currencies: the price keeps its currency, proceeds are not summed across currencies")
    func rowsInTwoCurrencies() throws {
        func line(_ units: Int64, price: String, _ currency: String, proceeds: String, _ proceedsCurrency: String, line: Int) -> TieOutSalesLine {
            TieOutSalesLine(day: "2026-11-24", productID: "gems60", country: "AE", units: units, customerPrice: Decimal(string: price) ?? 0,
                            customerCurrency: currency, proceeds: Decimal(string: proceeds) ?? 0, proceedsCurrency: proceedsCurrency,
                            source: SourceLine(file: 0, line: Int64(line)))
        }
        // One unit paid in dirhams, two in dollars (a storefront changing its currency, or a refund of a sale in the old one).
        let tieOut = AppleTieOut(
            sales: [line(1, price: "3.99", "AED", proceeds: "2.79", "AED", line: 2), line(2, price: "0.99", "USD", proceeds: "0.69", "USD", line: 3)],
            verified: [])
        let row = try #require(tieOut.rows.first)
        #expect(row.appleUnits == 3)
        #expect(row.customerPrice == Decimal(string: "0.99"))
        #expect(row.customerCurrency == "USD", "the price most units sold at, in its own currency")
        #expect(row.proceeds == nil && row.proceedsCurrency == nil, "2.79 AED and 1.38 USD have no one sum")
        let finding = try #require(tieOut.findings.first)
        #expect(finding.amount == Decimal(string: "2.97"))
        #expect(finding.currency == "USD")
        #expect(tieOut.mixedProceeds == [AppleTieOut.MixedProceeds(
            key: AppleTieOut.Key(day: "2026-11-24", productID: "gems60", country: "AE"), currencies: ["AED", "USD"], files: [0])])

        // Near miss: two prices in one currency, and another country in its own currency, keep their sums and no warning.
        let oneCurrency = AppleTieOut(
            sales: [line(1, price: "3.99", "AED", proceeds: "2.79", "AED", line: 2), line(2, price: "2.99", "AED", proceeds: "2.09", "AED", line: 3),
                    TieOutSalesLine(day: "2026-11-24", productID: "gems60", country: "US", units: 1, customerPrice: Decimal(string: "0.99") ?? 0,
                                    customerCurrency: "USD", proceeds: Decimal(string: "0.69") ?? 0, proceedsCurrency: "USD",
                                    source: SourceLine(file: 0, line: 4))],
            verified: [])
        #expect(oneCurrency.rows.map(\.customerPrice) == [Decimal(string: "2.99"), Decimal(string: "0.99")])
        #expect(oneCurrency.rows.map(\.customerCurrency) == ["AED", "USD"])
        #expect(oneCurrency.rows.map(\.proceeds) == [Decimal(string: "6.97"), Decimal(string: "0.69")])
        #expect(oneCurrency.rows.map(\.proceedsCurrency) == ["AED", "USD"])
        #expect(oneCurrency.mixedProceeds.isEmpty)
    }

    @Test("a report whose rows of a country pay in two currencies writes no mixed sum to apple_tieout.csv and warns naming the file")
    func rowsInTwoCurrenciesOutput() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
            Self.sales("2026-11-24", "gems60", units: 2, country: "AE", price: "0.99", currency: "USD", proceeds: "0.69"),
        ])
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-20T18:00:00Z")])
        let result = try scenario.run(asOf: asOf)
        let csv = try scenario.output("apple_tieout.csv").split(separator: "\r\n").map(String.init)
        #expect(csv.contains("2026-11-24,gems60,AE,3,0,3,0.99,USD,,"))
        #expect(result.join.warnings == ["apple/S_D_1.txt has proceeds of gems60 in AE on 2026-11-24 in AED and USD: apple_proceeds left empty for that row"])
    }

    @Test("two overlapping reports whose rows of a country pay in a currency each: the warning names both files, as the page does")
    func rowsInTwoCurrenciesFromTwoFiles() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("apple/S_D_1_20261124.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
        ])
        try scenario.write("apple/S_D_2_20261124.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "gems60", units: 2, country: "AE", price: "0.99", currency: "USD", proceeds: "0.69"),
        ])
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-20T18:00:00Z")])
        let result = try scenario.run(asOf: asOf)
        #expect(result.join.warnings == [
            "apple/S_D_2_20261124.txt and apple/S_D_1_20261124.txt both have rows of the report of 2026-11-24 for the same products and "
                + "countries, and the rows differ: both counted",
            "apple/S_D_1_20261124.txt and apple/S_D_2_20261124.txt have proceeds of gems60 in AE on 2026-11-24 in AED and USD: "
                + "apple_proceeds left empty for that row",
        ])
        #expect(try scenario.output("report.html").contains("1 row has Apple&#39;s proceeds in two currencies: its apple_proceeds is empty, "
            + "and summary.json&#39;s proceeds leave it out. It comes from apple/S_D_1_20261124.txt (2026-11-24) and "
            + "apple/S_D_2_20261124.txt (2026-11-24).</p>"))
    }

    /// A report row of `day` as the store hands it, from line `line` of the file `file` in path order.
    private static func reportLine(_ day: String, _ sku: String, units: Int64, country: String = "US", file: Int32, line: Int64) -> TieOutSalesLine {
        TieOutSalesLine(day: day, productID: sku, country: country, units: units, customerPrice: Decimal(string: "0.99") ?? 0,
                        customerCurrency: "USD", proceeds: Decimal(string: "0.69") ?? 0, proceedsCurrency: "USD",
                        source: SourceLine(file: file, line: line))
    }

    @Test("a day's report put in twice counts once: the later file in path order is named as the repeat")
    func repeatedReportCountsOnce() throws {
        let first = [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2), Self.reportLine("2026-11-24", "gems60", units: 1, file: 0, line: 3)]
        // The same rows in another order, as a copy saved from another download might hold them.
        let copy = [Self.reportLine("2026-11-24", "gems60", units: 1, file: 1, line: 2), Self.reportLine("2026-11-24", "gems60", units: 2, file: 1, line: 3)]
        let tieOut = AppleTieOut(sales: copy + first, verified: [.init(day: "2026-11-24", productID: "gems60", country: "US", units: 3)])
        #expect(tieOut.rows.map(\.appleUnits) == [3])
        #expect(tieOut.findings.isEmpty)
        #expect(tieOut.rows.first?.sources == first.map(\.source))
        #expect(tieOut.repeatedReports == [AppleTieOut.RepeatedReport(day: "2026-11-24", file: 1, repeats: 0)])
        #expect(tieOut.overlappingReports.isEmpty)
    }

    @Test("near miss: two files of one day with different products, or of different days, both count and are no repeat")
    func differentReportsBothCount() throws {
        // Two vendor accounts' reports of the same day: other apps' products.
        let vendors = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                          Self.reportLine("2026-11-24", "coins100", units: 2, file: 1, line: 2)], verified: [])
        #expect(vendors.rows.map(\.appleUnits) == [2, 2])
        #expect(vendors.repeatedReports.isEmpty && vendors.overlappingReports.isEmpty)
        // The same rows on two days.
        let days = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                       Self.reportLine("2026-11-25", "gems60", units: 2, file: 1, line: 2)], verified: [])
        #expect(days.rows.map(\.appleUnits) == [2, 2])
        #expect(days.repeatedReports.isEmpty && days.overlappingReports.isEmpty)
        // One file's two rows that look alike (two devices' rows) are not repeats of each other.
        let devices = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                          Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 3)], verified: [])
        #expect(devices.rows.map(\.appleUnits) == [4])
        #expect(devices.repeatedReports.isEmpty)
    }

    @Test("two files of one day that differ but share a product and country both count, and are named as overlapping")
    func overlappingReports() throws {
        let tieOut = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                         Self.reportLine("2026-11-24", "gems60", units: 3, file: 1, line: 2),
                                         Self.reportLine("2026-11-24", "coins100", units: 1, file: 1, line: 3)], verified: [])
        #expect(tieOut.rows.map(\.appleUnits) == [1, 5])
        #expect(tieOut.repeatedReports.isEmpty)
        #expect(tieOut.overlappingReports == [AppleTieOut.RepeatedReport(day: "2026-11-24", file: 1, repeats: 0)])
    }

    @Test("three files of one day that differ but share a product and country all count, and each later file is named against every earlier one it overlaps")
    func threeOverlappingReports() throws {
        let tieOut = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                         Self.reportLine("2026-11-24", "gems60", units: 3, file: 1, line: 2),
                                         Self.reportLine("2026-11-24", "gems60", units: 4, file: 2, line: 2)], verified: [])
        #expect(tieOut.rows.map(\.appleUnits) == [9])
        #expect(tieOut.repeatedReports.isEmpty)
        #expect(tieOut.overlappingReports == [
            AppleTieOut.RepeatedReport(day: "2026-11-24", file: 1, repeats: 0), AppleTieOut.RepeatedReport(day: "2026-11-24", file: 2, repeats: 0),
            AppleTieOut.RepeatedReport(day: "2026-11-24", file: 2, repeats: 1),
        ])
        // Near miss: the third file shares a product and country with the second only, and is named against that one alone.
        let chained = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                          Self.reportLine("2026-11-24", "gems60", units: 3, file: 1, line: 2),
                                          Self.reportLine("2026-11-24", "coins100", units: 1, file: 1, line: 3),
                                          Self.reportLine("2026-11-24", "coins100", units: 2, file: 2, line: 2)], verified: [])
        #expect(chained.overlappingReports == [
            AppleTieOut.RepeatedReport(day: "2026-11-24", file: 1, repeats: 0), AppleTieOut.RepeatedReport(day: "2026-11-24", file: 2, repeats: 1),
        ])
        // Near miss: a third file that repeats the first is counted once and named as its repeat only, not against the second.
        let copied = AppleTieOut(sales: [Self.reportLine("2026-11-24", "gems60", units: 2, file: 0, line: 2),
                                         Self.reportLine("2026-11-24", "gems60", units: 3, file: 1, line: 2),
                                         Self.reportLine("2026-11-24", "gems60", units: 2, file: 2, line: 2)], verified: [])
        #expect(copied.rows.map(\.appleUnits) == [5])
        #expect(copied.repeatedReports == [AppleTieOut.RepeatedReport(day: "2026-11-24", file: 2, repeats: 0)])
        #expect(copied.overlappingReports == [AppleTieOut.RepeatedReport(day: "2026-11-24", file: 1, repeats: 0)])
    }

    @Test("a Sales Report put in as .txt and as .txt.gz ties out once, warns naming both files, and a night that adds the copy agrees")
    func repeatedReportFile() throws {
        let receipts = [Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T19:00:00Z")]
        let report = [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US")]
        let expected = """
            date,product_id,country,apple_units,verified_units,difference,apple_customer_price,customer_currency,apple_proceeds,proceeds_currency\r
            2026-11-24,gems60,US,2,2,0,0.99,USD,1.38,USD\r

            """
        let fresh = try Scenario()
        try fresh.catalog()
        try fresh.write("receipts/r.jsonl", receipts)
        try fresh.write("apple/S_D_1_20261124.txt", report)
        try fresh.writeGzip("apple/S_D_1_20261124.txt.gz", report)
        let result = try fresh.run(asOf: asOf)
        #expect(try fresh.output("apple_tieout.csv") == expected)
        #expect(!(try fresh.output("findings.csv")).contains("unverified_apple_sales"))
        #expect(result.join.warnings == [
            "apple/S_D_1_20261124.txt.gz repeats the report of 2026-11-24 in apple/S_D_1_20261124.txt: counted once",
        ])
        // The copy arrives a night later: the same tie-out, and the warning that night.
        let nights = try Scenario()
        try nights.catalog()
        try nights.write("receipts/r.jsonl", receipts)
        try nights.write("apple/S_D_1_20261124.txt", report)
        #expect(try nights.run(asOf: asOf).join.warnings.isEmpty)
        try nights.writeGzip("apple/S_D_1_20261124.txt.gz", report)
        #expect(try nights.run(asOf: asOf).join.warnings == result.join.warnings)
        #expect(try nights.output("apple_tieout.csv") == expected)
        #expect(ReportPageTests.tieoutWarnings(try nights.output("report.html")) == ReportPageTests.tieoutWarnings(try fresh.output("report.html")))
        #expect(!(try nights.output("findings.csv")).contains("unverified_apple_sales"))
    }

    @Test("days the reports do not cover are not compared; more verified than Apple is no finding")
    func coverage() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-20T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T18:00:00Z"),
            Self.purchase("t3", at: "2026-11-24T19:00:00Z"),
        ])
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        _ = try scenario.run(asOf: asOf)
        #expect(try scenario.output("apple_tieout.csv") == """
            date,product_id,country,apple_units,verified_units,difference,apple_customer_price,customer_currency,apple_proceeds,proceeds_currency\r
            2026-11-24,gems60,US,1,2,-1,0.99,USD,0.69,USD\r

            """)
        #expect(!(try scenario.output("findings.csv")).contains("unverified_apple_sales"))
    }

    @Test("a day whose report has only the app's own rows is covered: a purchase verified that day stands beside Apple's zero; a night adding it agrees")
    func coveredByTheAppsOwnRows() throws {
        let appRow = Self.sales("2026-11-24", "com.example.game", units: 40, country: "US").replacingOccurrences(of: "\tIA1\t", with: "\t1F\t")
        let expected = """
            date,product_id,country,apple_units,verified_units,difference,apple_customer_price,customer_currency,apple_proceeds,proceeds_currency\r
            2026-11-24,gems60,US,0,1,-1,,,,\r
            2026-11-25,gems60,US,1,1,0,0.99,USD,0.69,USD\r

            """
        func write(_ scenario: Scenario, app: Bool) throws {
            try scenario.catalog()
            // t1 on the 24th (Pacific), t2 on the 25th; t3 on the 23rd, which no report covers (near miss).
            try scenario.write("receipts/r.jsonl", [
                Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t2", at: "2026-11-25T18:00:00Z"),
                Self.purchase("t3", at: "2026-11-23T18:00:00Z"),
            ])
            try scenario.write("apple/S_D_25.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-25", "gems60", units: 1, country: "US")])
            if app { try scenario.write("apple/S_D_24.txt", [AppleSalesReportTests.currentHeader, appRow]) }
        }
        let fresh = try Scenario()
        try write(fresh, app: true)
        _ = try fresh.run(asOf: asOf)
        #expect(try fresh.output("apple_tieout.csv") == expected)
        // The 24th's report arrives on a later night.
        let nights = try Scenario()
        try write(nights, app: false)
        _ = try nights.run(asOf: asOf)
        #expect(!(try nights.output("apple_tieout.csv")).contains("2026-11-24"))
        try write(nights, app: true)
        _ = try nights.run(asOf: asOf)
        #expect(try nights.output("apple_tieout.csv") == expected)
        func tieOutSummary(_ scenario: Scenario) throws -> NSDictionary? {
            (try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])?["apple_tieout"] as? NSDictionary
        }
        #expect(try tieOutSummary(nights) == tieOutSummary(fresh))
        #expect(try tieOutSummary(fresh)?["days"] as? Int == 2)
    }

    @Test("a store an older iaprecon wrote, without the days the app's own rows cover, is migrated: its reports are read again and the day compared")
    func migratedCoverage() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_24.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "com.example.game", units: 40, country: "US").replacingOccurrences(of: "\tIA1\t", with: "\t1F\t"),
        ])
        _ = try scenario.run(asOf: asOf)
        let expected = try scenario.output("apple_tieout.csv")
        #expect(expected.contains("2026-11-24,gems60,US,0,1,-1,,,,"))
        // What an older iaprecon left: no coverage row, no tie-out row for the day, schema 19.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for the days reports cover") }?.id)
        let database = try scenario.open()
        try database.execute("""
            DELETE FROM raw_apple__sales WHERE product_id IS NULL;
            DELETE FROM fct_apple_tieout;
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try scenario.run(asOf: asOf)
        #expect(night.ingest.files.first { $0.path == "apple/S_D_24.txt" }?.status == .replaced)
        #expect(try scenario.output("apple_tieout.csv") == expected)
    }

    @Test("a night's days read through the indexes or in one pass over the table give the same units; other days give none")
    func readEitherWay() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            // 23:30 Pacific on the 23rd is the 24th in UTC: a purchase on the 23rd.
            Self.purchase("t1", at: "2026-11-24T07:30:00Z"),
            Self.purchase("t2", at: "2026-11-24T18:00:00Z", storefront: "JPN", refundedAt: "2026-11-26T18:00:00Z", quantity: 2),
            Self.purchase("t3", at: "2026-11-25T18:00:00Z", storefront: nil, refundedAt: "2026-11-26T19:00:00Z"),
            // Near misses: a family-shared purchase and a day asked for by neither read.
            Self.purchase("t4", at: "2026-11-24T19:00:00Z", ownership: "FAMILY_SHARED"),
            Self.purchase("t5", at: "2026-11-27T18:00:00Z"),
        ])
        _ = try scenario.run(asOf: asOf)
        let database = try scenario.open()
        func units(_ days: [String], throughIndexes: Bool) throws -> [String] {
            try AppleTieOutStore.verified(database, days: days, zone: AppleTieOut.reportZone, scan: false, throughIndexes: throughIndexes)
                .map { "\($0.day) \($0.productID) \($0.country ?? "-") \($0.units)" }.sorted()
        }
        let days = ["2026-11-23", "2026-11-24", "2026-11-26"]
        let expected = ["2026-11-23 gems60 US 1", "2026-11-24 gems60 JP 2", "2026-11-26 gems60 - -1", "2026-11-26 gems60 JP -2"]
        #expect(try units(days, throughIndexes: true) == expected)
        #expect(try units(days, throughIndexes: false) == expected)
        #expect(AppleTieOutStore.contains([(from: 10, until: 20), (from: 30, until: 40)], 20) == false)
        #expect(AppleTieOutStore.contains([(from: 10, until: 20), (from: 30, until: 40)], 39))
        #expect(!AppleTieOutStore.contains([], 0))
    }

    @Test("summary.json totals the tie-out: units, proceeds per currency and in the reporting currency")
    func summaryTotals() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 3, country: "JP", price: "160", currency: "JPY", proceeds: "100"),
        ])
        _ = try scenario.run(asOf: asOf)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let tieOut = try #require(summary["apple_tieout"] as? [String: Any])
        #expect(tieOut["apple_units"] as? Int == 4)
        #expect(tieOut["verified_units"] as? Int == 1)
        #expect(tieOut["difference_units"] as? Int == 3)
        #expect(tieOut["apple_proceeds"] as? [String: String] == ["JPY": "300", "USD": "0.69"])
        #expect(tieOut["apple_proceeds_usd"] as? String == "2.67")
        let byKind = try #require((summary["findings"] as? [String: Any])?["by_kind"] as? [String: Any])
        let kind = try #require(byKind["unverified_apple_sales"] as? [String: Any])
        #expect(kind["count"] as? Int == 1)
        #expect(kind["amount"] as? [String: String] == ["JPY": "480"])
    }

    @Test("Sales Report proceeds fx.csv cannot convert are named in a warning, not only counted in summary.json")
    func proceedsWithoutRateWarning() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 1, country: "JP", price: "160", currency: "JPY", proceeds: "100"),
            Self.sales("2026-11-24", "gems60", units: 1, country: "EG", price: "49.99", currency: "EGP", proceeds: "35"),
            Self.sales("2026-11-25", "gems60", units: 1, country: "EG", price: "49.99", currency: "EGP", proceeds: "35"),
            // Near miss: a promo code redeemed, no proceeds, in a currency fx.csv has no rate for either: 0 in any currency.
            Self.sales("2026-11-25", "gems60", units: 1, country: "AR", price: "0", currency: "ARS", proceeds: "0"),
        ])
        let result = try scenario.run(asOf: asOf)
        let tieOut = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])["apple_tieout"]
        #expect((tieOut as? [String: Any])?["proceeds_rows_without_fx_rate"] as? Int == 2)
        #expect(result.report.warnings.filter { $0.contains("Sales Report") } == [
            "fx.csv has no rate into USD for EGP on or before 2026-11-25: the proceeds of 2 Sales Report rows (days 2026-11-24 to 2026-11-25) "
                + "are left out of summary.json's apple_proceeds_usd",
        ])
    }

    @Test("proceeds in the reporting currency add the rows rounded to the cent, like every reporting-currency total")
    func proceedsRoundedPerRow() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,JPY,0.0066"])
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        // 101 yen are 0.6666 USD: 0.67 on each row's own, so 1.34 in all, never 1.3332.
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "gems60", units: 1, country: "JP", price: "160", currency: "JPY", proceeds: "101"),
            Self.sales("2026-11-25", "gems60", units: 1, country: "JP", price: "160", currency: "JPY", proceeds: "101"),
        ])
        _ = try scenario.run(asOf: asOf)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let tieOut = try #require(summary["apple_tieout"] as? [String: Any])
        #expect(tieOut["apple_proceeds"] as? [String: String] == ["JPY": "202"])
        #expect(tieOut["apple_proceeds_usd"] as? String == "1.34")
    }

    @Test("apple/ holding reports without an in-app row still writes apple_tieout.csv, its header alone; no apple/ writes none")
    func reportsWithoutInAppRows() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // Only the app's own downloads (1F): read and ignored, but apple/ has a report.
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader,
            Self.sales("2026-11-24", "com.example.game", units: 40, country: "US").replacingOccurrences(of: "\tIA1\t", with: "\t1F\t"),
        ])
        let run = try scenario.run(asOf: asOf)
        #expect(try scenario.output("apple_tieout.csv")
            == "date,product_id,country,apple_units,verified_units,difference,apple_customer_price,customer_currency,apple_proceeds,proceeds_currency\r\n")
        // The files the report says it wrote (what `iaprecon report` prints) name it too.
        #expect(run.report.files.contains("apple_tieout.csv"))
    }

    @Test("Sales Reports with no other input are judged as of the end of their latest Pacific day, not 1970; their findings are first seen then")
    func asOfOfSalesReportsAlone() throws {
        let scenario = try Scenario()
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        try scenario.write("apple/S_D_2.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-23", "gems60", units: 1, country: "US")])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        // 2026-11-24 in Los Angeles (UTC-8) ends at 08:00 UTC the next day.
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-25T07:59:59.999Z")
        #expect(try scenario.output("summary.json").contains("\"as_of\": \"2026-11-25T07:59:59.999Z\""))
        let findings = try scenario.output("findings.csv").split(separator: "\r\n").dropFirst()
        #expect(findings.count == 2)
        #expect(findings.allSatisfy { $0.hasSuffix(",2026-11-25T07:59:59.999Z,true") })
    }

    @Test("near miss: beside an event time, a later Sales Report day does not move the as-of")
    func salesReportsBesideEventTimes() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-29", "gems60", units: 1, country: "US")])
        let run = try scenario.run(now: "2026-12-01T00:00:00Z")
        // The receipt line's received_at.
        #expect(Timestamp.iso8601(run.join.asOfMs) == "2026-11-28T10:00:05.000Z")
    }

    @Test("a report added on a later night gives the findings a fresh store gives")
    func incrementalNight() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        _ = try scenario.run(asOf: asOf)
        #expect(!(try scenario.output("findings.csv")).contains("unverified_apple_sales"))
        #expect(!FileManager.default.fileExists(atPath: scenario.out + "/apple_tieout.csv"))
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        _ = try scenario.run(asOf: asOf)
        let night = try scenario.output("findings.csv")
        #expect(night.contains("unverified_apple_sales"))

        let fresh = try Scenario()
        try FileManager.default.removeItem(atPath: fresh.input)
        try FileManager.default.copyItem(atPath: scenario.input, toPath: fresh.input)
        _ = try fresh.run(asOf: asOf)
        // The night's store saw t1's lost delivery a run earlier: only first_seen and new may differ.
        #expect(SampleDataTests.withoutHistory("findings.csv", try fresh.output("findings.csv")) == SampleDataTests.withoutHistory("findings.csv", night))
        #expect(try fresh.output("apple_tieout.csv") == (try scenario.output("apple_tieout.csv")))
    }

    /// A fresh store over `scenario`'s inputs, run as of the same moment.
    private func rebuilt(_ scenario: Scenario) throws -> Scenario {
        let fresh = try Scenario()
        try FileManager.default.removeItem(atPath: fresh.input)
        try FileManager.default.copyItem(atPath: scenario.input, toPath: fresh.input)
        _ = try fresh.run(asOf: asOf)
        return fresh
    }

    @Test("a night changes only the days its purchases, refunds and reports touch, and equals a rebuild")
    func nightRecomputesTouchedDays() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-23T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T18:00:00Z"),
            Self.purchase("t9", at: "2026-11-22T18:00:00Z"),
        ])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-22", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-23", "gems60", units: 1, country: "US"), Self.sales("2026-11-24", "gems60", units: 2, country: "US"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try scenario.output("findings.csv").contains("2026-11-24|gems60|US") == false)
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-24,gems60,US,2,1,1,"))
        // The next night: t1 (bought on the 23rd) refunded on the 25th, the 24th's missing unit
        // verified, and the 25th's report with the refund.
        try scenario.write("receipts/r2.jsonl", [
            Self.purchase("t1", at: "2026-11-23T18:00:00Z", refundedAt: "2026-11-25T18:00:00Z"),
            Self.purchase("t3", at: "2026-11-24T19:00:00Z"),
        ])
        try scenario.write("apple/S_D_2.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-25", "gems60", units: -1, country: "US")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        let tieOut = try scenario.output("apple_tieout.csv")
        #expect(tieOut.contains("2026-11-24,gems60,US,2,2,0,"))
        #expect(tieOut.contains("2026-11-25,gems60,US,-1,-1,0,"))
        // The 22nd, which nothing touched, is kept as it was.
        #expect(tieOut.contains("2026-11-22,gems60,US,1,1,0,"))
        #expect(!(try scenario.output("findings.csv")).contains("unverified_apple_sales"))

        let fresh = try rebuilt(scenario)
        #expect(try fresh.output("apple_tieout.csv") == tieOut)
        #expect(SampleDataTests.withoutHistory("findings.csv", try fresh.output("findings.csv"))
                == SampleDataTests.withoutHistory("findings.csv", try scenario.output("findings.csv")))
    }

    @Test("a Sales Report replaced on a later night recomputes the days it held before and holds now")
    func replacedReport() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-23", "gems60", units: 1, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 2, country: "US"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try scenario.output("findings.csv").contains("unverified_apple_sales"))
        // Apple's corrected report: nothing on the 23rd, one unit on the 24th.
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        let tieOut = try scenario.output("apple_tieout.csv")
        #expect(!tieOut.contains("2026-11-23"))
        #expect(!(try scenario.output("findings.csv")).contains("unverified_apple_sales"))
        #expect(try rebuilt(scenario).output("apple_tieout.csv") == tieOut)
    }

    @Test("a day's report saved under the next day's name, replaced on a later night by that day's report: the page names the repeat, then no longer, as a fresh store")
    func repeatedReportReplaced() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        let day24 = [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US")]
        try scenario.write("apple/S_D_1_20261124.txt", day24)
        try scenario.write("apple/S_D_1_20261125.txt", day24)
        _ = try scenario.run(asOf: asOf)
        #expect(ReportPageTests.tieoutWarnings(try scenario.output("report.html")) == [
            "Sales Reports: apple/S_D_1_20261125.txt repeats the report of 2026-11-24 in apple/S_D_1_20261124.txt: counted once.",
        ])
        try scenario.write("apple/S_D_1_20261125.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-25", "gems60", units: 1, country: "US")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        #expect(ReportPageTests.tieoutWarnings(try scenario.output("report.html")).isEmpty)
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-25,gems60,US,1,0,1,"))
        try expectRebuildEqual(scenario)
    }

    /// The details of the tie-out's findings in `scenario`'s store.
    private func tieOutFindings(_ scenario: Scenario) throws -> [String] {
        try Scenario.findings(scenario.open()).filter { $0.kind == .unverifiedAppleSales }.map(\.detail)
    }

    /// The tie-out and the findings of `scenario` equal a fresh store's over the same inputs.
    private func expectRebuildEqual(_ scenario: Scenario, _ comment: Comment? = nil) throws {
        let fresh = try rebuilt(scenario)
        #expect(try fresh.output("apple_tieout.csv") == (try scenario.output("apple_tieout.csv")), comment)
        #expect(ReportPageTests.tieoutWarnings(try fresh.output("report.html"))
                == ReportPageTests.tieoutWarnings(try scenario.output("report.html")), comment)
        #expect(SampleDataTests.withoutHistory("findings.csv", try fresh.output("findings.csv"))
                == SampleDataTests.withoutHistory("findings.csv", try scenario.output("findings.csv")), comment)
    }

    @Test("a night that learns a storefront-less purchase's storefront moves its unit to its country, and the gap it covered opens, as in a fresh store")
    func storefrontLearnedOnANight() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-24T18:00:00Z", storefront: nil), Self.purchase("t2", at: "2026-11-24T19:00:00Z"),
        ])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 1, country: "JP", price: "160", currency: "JPY"),
        ])
        _ = try scenario.run(asOf: asOf)
        // t1, without a country, covers Japan's gap (codes in order): the US is one short.
        #expect(try tieOutFindings(scenario) == ["country=US apple_units=2 verified_units=1 missing_units=1"])
        try scenario.write("receipts/r2.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z", storefront: "USA")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        let tieOut = try scenario.output("apple_tieout.csv")
        #expect(tieOut.contains("2026-11-24,gems60,US,2,2,0,"))
        #expect(!tieOut.contains("2026-11-24,gems60,??"), "no storefront-less unit is left on the day")
        #expect(try tieOutFindings(scenario) == ["country=JP apple_units=1 verified_units=0 missing_units=1"])
        try expectRebuildEqual(scenario)
    }

    @Test("a late receipt for a purchase days ago adds its unit to that day and keeps the day's other rows, as in a fresh store")
    func latePurchaseOnAnOldDay() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-22T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T18:00:00Z"),
        ])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-22", "gems60", units: 2, country: "US"),
            Self.sales("2026-11-22", "gems60", units: 1, country: "JP", price: "160", currency: "JPY"),
            Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
        ])
        _ = try scenario.run(asOf: asOf)
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-22,gems60,US,2,1,1,"))
        try scenario.write("receipts/r2.jsonl", [Self.purchase("t3", at: "2026-11-22T19:00:00Z")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        let tieOut = try scenario.output("apple_tieout.csv")
        #expect(tieOut.contains("2026-11-22,gems60,US,2,2,0,"))
        #expect(tieOut.contains("2026-11-22,gems60,JP,1,0,1,"), "the day's row nothing changed is kept")
        #expect(tieOut.contains("2026-11-24,gems60,US,1,1,0,"))
        try expectRebuildEqual(scenario)
    }

    @Test("near miss: a purchase a replaced receipts file no longer holds takes its unit away, and its row with it where Apple sold none, as in a fresh store")
    func purchaseGoneOnANight() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-24T18:00:00Z"), Self.purchase("t9", at: "2026-11-24T19:00:00Z", storefront: "FRA"),
        ])
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 1, country: "US")])
        _ = try scenario.run(asOf: asOf)
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-24,gems60,FR,0,1,-1,"))
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        #expect(!(try scenario.output("apple_tieout.csv")).contains(",FR,"))
        try expectRebuildEqual(scenario)
    }

    @Test("a store whose tie-out rows an older iaprecon kept without what they add up is migrated: the next run ties out every day again, as a fresh store does")
    func rowsWithoutCountsMigrated() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Self.purchase("t1", at: "2026-11-22T18:00:00Z"), Self.purchase("t2", at: "2026-11-24T18:00:00Z", storefront: nil),
        ])
        try scenario.write("apple/S_D_1.txt", [
            AppleSalesReportTests.currentHeader, Self.sales("2026-11-22", "gems60", units: 2, country: "US"),
            Self.sales("2026-11-24", "gems60", units: 1, country: "US"),
        ])
        _ = try scenario.run(asOf: asOf)
        // As the older iaprecon left it: the rows alone, and no migration 15.
        let database = try scenario.open()
        try database.execute("""
            ALTER TABLE fct_apple_tieout DROP COLUMN verified_changes; ALTER TABLE fct_apple_tieout DROP COLUMN unplaced_purchases;
            DELETE FROM schema_migrations WHERE id >= 15; DELETE FROM dirty_keys WHERE kind = 'all'
            """)
        try Schema.migrate(database)
        #expect(try database.scalar("SELECT count(*) FROM dirty_keys WHERE kind = 'all'") == .integer(1), "the next join rebuilds in full")
        // The night after the upgrade brings a late purchase on the 22nd.
        try scenario.write("receipts/r2.jsonl", [Self.purchase("t3", at: "2026-11-22T19:00:00Z")])
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions == nil, "a full rebuild")
        #expect(try database.scalar("SELECT sum(verified_changes) FROM fct_apple_tieout") == .integer(3))
        #expect(try database.scalar("SELECT unplaced_purchases FROM fct_apple_tieout WHERE country = '??'") == .integer(1))
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-22,gems60,US,2,2,0,"))
        try expectRebuildEqual(scenario)
    }

    @Test("a store whose last report was stored by an iaprecon before per-day tie-outs is tied out whole after upgrading")
    func upgradedStore() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [Self.purchase("t1", at: "2026-11-24T18:00:00Z")])
        _ = try scenario.run(asOf: asOf)
        // The older iaprecon ingests a report and is killed before its join: it recorded no report days.
        try scenario.write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, Self.sales("2026-11-24", "gems60", units: 2, country: "US")])
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: asOf), progress: nil)
        try database.execute("DELETE FROM dirty_keys WHERE kind = 'sales_day'; DELETE FROM schema_migrations WHERE id >= 7")
        // The upgraded one migrates the store when it opens it for the night. A later migration asks
        // for a full rebuild, which ties out every day anyway: without it, the days migration 7
        // marks are what an incremental night ties out.
        try Schema.migrate(database)
        try database.execute("DELETE FROM dirty_keys WHERE kind = 'all'")
        let night = try scenario.run(asOf: asOf)
        #expect(night.join.recomputedTransactions != nil, "the night is incremental")
        #expect(try scenario.output("apple_tieout.csv").contains("2026-11-24,gems60,US,2,1,1,"))
        #expect(try scenario.output("findings.csv").contains("unverified_apple_sales"))
        #expect(try rebuilt(scenario).output("apple_tieout.csv") == (try scenario.output("apple_tieout.csv")))
    }
}
