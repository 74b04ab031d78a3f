import Foundation
import Testing
@testable import IAPRecon

/// The reporting currency and the findings' history (CONTRACT.md §1.6, §3): columns named for
/// `--currency`, cells rounded half-even to its minor unit row by row, totals that add the
/// rounded rows; `first_seen` and `new` per finding; and reruns that write the same bytes.
@Suite("Reporting currency, first sightings, reproducible outputs")
struct ReportingCurrencyTests {
    /// Yen reports: fx.csv converts into JPY (its JPY rows have rate 1), a dollar is 150 yen.
    private func yenScenario() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150"])
        try scenario.write("receipts/r.jsonl", [
            // 0.99 USD = 148.5 JPY and 2.99 USD = 448.5 JPY: each row rounds half-even to 148 and 448.
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 990)),
            Line.v2Receipt("2026-11-10T11:00:05Z", "u2", transaction: Line.v2("t2", "gems300", purchase: "2026-11-10T11:00:00Z", price: 2990)),
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-10T10:00:09Z", "u1", "t1", "gems60"),
            Line.delivered("2026-11-10T11:00:09Z", "u2", "t2", "gems300"),
            // Delivered, but Apple never heard of it: an orphan, priced from the catalog at 0.99 USD.
            Line.delivered("2026-11-10T12:00:09Z", "u3", "t404", "gems60"),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "JPY")
        return scenario
    }

    @Test("amounts round half-even to the currency's ISO 4217 minor unit: 0, 2, 3 or 4 places", arguments: [
        ("USD", 2, "49.37"), ("JPY", 0, "49"), ("KWD", 3, "49.368"), ("CLF", 4, "49.3677"), ("UYW", 4, "49.3677"), ("IQD", 3, "49.368"),
        ("ISK", 0, "49"), ("XCG", 2, "49.37"),
    ])
    func minorUnits(code: String, places: Int, rounded: String) throws {
        let currency = ReportingCurrency(code)
        #expect(currency.minorUnit == places)
        // 39.99 × 1.2345 = 49.367655.
        let amount = try #require(Amount.parse("39.99")) * (try #require(Amount.parse("1.2345")))
        #expect(Money.format(currency.rounded(amount)) == rounded)
    }

    @Test("the ISO 4217 table knows every active code with a minor unit, and nothing else", arguments: [
        ("USD", 2), ("EUR", 2), ("JPY", 0), ("KRW", 0), ("KWD", 3), ("BHD", 3), ("TND", 3), ("CLF", 4), ("UYW", 4), ("UYI", 0), ("VES", 2),
        ("VED", 2), ("ZWG", 2), ("SLE", 2), ("MRU", 2), ("STN", 2),
    ])
    func isoTable(code: String, places: Int) {
        #expect(CurrencyMinorUnits.places(code) == places)
    }

    @Test("near miss: made-up codes, withdrawn ones and units with no minor unit (gold, SDR, the test code) are not in the table",
          arguments: ["XBT", "BTC", "usd", "HRK", "XAU", "XDR", "XTS", "XXX", ""])
    func notInISOTable(code: String) {
        #expect(CurrencyMinorUnits.places(code) == nil)
    }

    @Test("--currency JPY names the columns for yen and rounds each row to whole yen, half-even")
    func yenColumns() throws {
        let scenario = try yenScenario()
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_daily.csv")) == [
            "date,product_id,storefront,currency,units,refund_units,gross,refunds,net,gross_jpy,refunds_jpy,net_jpy",
            "2026-11-10,gems300,USA,USD,1,0,2.99,0,2.99,448,0,448",
            "2026-11-10,gems60,USA,USD,1,0,0.99,0,0.99,148,0,148",
        ])
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_monthly.csv")).first
            == "fiscal_month,fiscal_year,first_day,last_day,product_id,storefront,currency,units,gross,refunds,net,gross_jpy,refunds_jpy,net_jpy")
        let attributionHeader = try #require(RevenueReportTests.Fixture.lines(scenario.output("attribution.csv")).first)
        #expect(attributionHeader == "install_date,media_source,campaign,installs,registrations,payers,revenue_d0_jpy,revenue_d7_jpy,revenue_d30_jpy,revenue_jpy,refunds_jpy,spend_jpy,roas_d7,roas,mmp_revenue_jpy,cpi,cost_per_payer,revenue_per_payer")
        let findings = RevenueReportTests.Fixture.table(try scenario.output("findings.csv"))
        #expect(findings.map { $0["amount_jpy"] } == ["148"])
        #expect(findings.map { $0["amount"] } == ["0.99"])
    }

    @Test("a finding's reporting amount converts at its transaction's purchase-day rate, as the revenue files do; without a transaction, on its event's day")
    func findingsConvertOnThePurchaseDay() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // The dollar is 150 yen until 11-12, then 160.
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150", "2026-11-12,USD,160"])
        try scenario.write("receipts/r.jsonl", [
            // Bought 11-10 (148.5 yen, 148), refunded 11-13 and never revoked.
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z",
                                                                                revocation: "2026-11-13T10:00:00Z")),
            // Bought 11-11, delivered again on 11-14.
            Line.v2Receipt("2026-11-11T10:00:05Z", "u2", transaction: Line.v2("t2", "gems300", purchase: "2026-11-11T10:00:00Z", price: 2990)),
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-10T10:00:09Z", "u1", "t1", "gems60"),
            Line.delivered("2026-11-11T10:00:09Z", "u2", "t2", "gems300", deliveryID: "d1"),
            Line.delivered("2026-11-14T10:00:09Z", "u2", "t2", "gems300", deliveryID: "d2"),
            // No transaction: an orphan of 11-13, priced from the catalog at 0.99 USD, converts on that day.
            Line.delivered("2026-11-13T12:00:09Z", "u3", "t404", "gems60"),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "JPY")
        let findings = RevenueReportTests.Fixture.table(try scenario.output("findings.csv"))
        let byKind = Dictionary(uniqueKeysWithValues: findings.map { ($0["kind"] ?? "", $0["amount_jpy"] ?? "") })
        // 0.99 × 150 = 148.5 → 148 (not 0.99 × 160 = 158.4 on the refund's day).
        #expect(byKind["refunded_not_revoked"] == "148")
        // 2.99 × 150 = 448.5 → 448 (not 478.4 on the second delivery's day).
        #expect(byKind["duplicate_delivery"] == "448")
        // 0.99 × 160 = 158.4 → 158.
        #expect(byKind["orphan_delivery"] == "158")
        // The refund the finding is about is booked at the same yen in revenue_daily.csv.
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_daily.csv")).contains("2026-11-13,gems60,USA,USD,0,1,0,0.99,-0.99,0,148,-148"))
    }

    @Test("a finding whose currency fx.csv cannot convert is named in a warning, not left out of money at risk in silence")
    func findingWithoutRateWarning() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150"])
        try scenario.write("receipts/r.jsonl", [
            // Paid in pounds, never delivered: a lost delivery of 4.99 GBP that no rate converts.
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2(
                "t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR")),
            // Paid in dollars, never delivered: converted, so named in no warning.
            Line.v2Receipt("2026-11-10T11:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-10T11:00:00Z", price: 990)),
        ])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "JPY")
        let findings = RevenueReportTests.Fixture.table(try scenario.output("findings.csv"))
        let pound = try #require(findings.first { $0["currency"] == "GBP" })
        #expect(pound["amount_jpy"] == "")
        #expect(findings.first { $0["currency"] == "USD" }?["amount_jpy"] == "148")
        #expect(result.report.warnings.filter { $0.contains("finding") } == [
            "fx.csv has no rate into JPY for GBP on or before 2026-11-10: 1 finding (\(pound["finding_id"] ?? "")) "
                + "has no amount_jpy and is left out of money_at_risk_jpy",
        ])
    }

    @Test("a family-shared finding's amount 0 needs no rate: shown as 0, named in no fx warning; a purchased one still is")
    func familySharedFindingWithoutRate() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-11-01,JPY,1", "2026-11-01,USD,150"])
        try scenario.write("receipts/r.jsonl", [
            // A family member's share, paid in pounds, never delivered: a lost delivery at 0 GBP.
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2(
                "t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR", ownership: "FAMILY_SHARED")),
            // Near miss: bought in pounds, never delivered, 4.99 GBP that no rate converts.
            Line.v2Receipt("2026-11-12T10:00:05Z", "u2", transaction: RevenueReportTests.Fixture.v2(
                "t2", "gems300", purchase: "2026-11-12T10:00:00Z", price: 4990, currency: "GBP", storefront: "GBR")),
        ])
        let result = try scenario.run(asOf: "2026-11-30T00:00:00Z", currency: "JPY")
        let findings = RevenueReportTests.Fixture.table(try scenario.output("findings.csv"))
        let shared = try #require(findings.first { $0["amount"] == "0" })
        let bought = try #require(findings.first { $0["amount"] == "4.99" })
        #expect(shared["currency"] == "GBP")
        #expect(shared["amount_jpy"] == "0")
        #expect(bought["amount_jpy"] == "")
        #expect(result.report.warnings.filter { $0.contains("finding") } == [
            "fx.csv has no rate into JPY for GBP on or before 2026-11-12: 1 finding (\(bought["finding_id"] ?? "")) "
                + "has no amount_jpy and is left out of money_at_risk_jpy",
        ])
    }

    @Test("summary totals are the sums of the rounded rows, not the rounded sum; money at risk is in the reporting currency")
    func totalsOfRoundedRows() throws {
        let scenario = try yenScenario()
        let summary = try RevenueReportTests.Fixture.summary(scenario)
        #expect(summary["contract_version"] as? Int == 2)
        let revenue = try #require(summary["revenue"] as? [String: Any])
        // 148.5 + 448.5 = 597 exactly; the rows say 148 + 448 = 596, and so does the total.
        #expect(revenue["gross_jpy"] as? String == "596")
        #expect(revenue["net_jpy"] as? String == "596")
        #expect(revenue["gross_usd"] == nil)
        let atRisk = try #require(summary["money_at_risk_jpy"] as? [String: Any])
        #expect(atRisk["total"] as? String == "148")
        #expect((atRisk["by_kind"] as? [String: Any])?["orphan_delivery"] as? String == "148")
        let orphan = try #require(((summary["findings"] as? [String: Any])?["by_kind"] as? [String: Any])?["orphan_delivery"] as? [String: Any])
        #expect(orphan["amount_jpy"] as? String == "148")
        #expect(orphan["new"] as? Int == 1)
    }

    @Test("half-even rounding to the minor unit: 2 places for USD and EUR, 0 for JPY and KRW, 3 for KWD", arguments: [
        ("USD", "0.125", "0.12"), ("USD", "0.135", "0.14"), ("EUR", "-2.495", "-2.5"), ("JPY", "148.5", "148"),
        ("JPY", "149.5", "150"), ("KRW", "1234.51", "1235"), ("KWD", "1.2345", "1.234"),
        // `--currency` in lower case: its minor unit is the upper-case code's.
        ("jpy", "148.5", "148"), ("kwd", "1.2345", "1.234"),
    ])
    func halfEven(code: String, value: String, rounded: String) throws {
        let amount = try #require(Amount.parse(value))
        #expect(ReportingCurrency(code).rounded(amount).text == rounded)
    }

    @Test("the page shows an amount with every place of its minor unit and the thousands grouped; the files keep the plain text", arguments: [
        ("USD", "1208134.1", "1,208,134.10"), ("USD", "0", "0.00"), ("USD", "999.5", "999.50"), ("EUR", "-1234.5", "-1,234.50"),
        ("USD", "100000", "100,000.00"), ("JPY", "19439", "19,439"), ("JPY", "148.5", "148"), ("KWD", "1.5", "1.500"),
        ("USD", "0.125", "0.12"),
    ])
    func shownOnThePage(code: String, value: String, shown: String) throws {
        let amount = try #require(Amount.parse(value))
        #expect(ReportingCurrency(code).shown(amount) == shown)
    }

    /// One purchase of 2026-11-10T10:00, never delivered, and its lost_delivery row in the last run's findings.csv.
    private func oneUndeliveredPurchase() throws -> (Scenario, () throws -> [String: String]?) {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z")),
        ])
        return (scenario, { RevenueReportTests.Fixture.table(try scenario.output("findings.csv")).first { $0["kind"] == "lost_delivery" } })
    }

    @Test("a finding keeps its first sighting when it goes away and comes back; only the run that first reports it calls it new")
    func firstSeenKept() throws {
        let (scenario, lost) = try oneUndeliveredPurchase()
        // Due a day after purchase: lost as of the 12th, not yet as of the 10th.
        _ = try scenario.run(asOf: "2026-11-12T00:00:00Z")
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        #expect(try lost()?["new"] == "true")
        _ = try scenario.run(asOf: "2026-11-10T12:00:00Z")
        #expect(try lost() == nil)
        _ = try scenario.run(asOf: "2026-11-14T00:00:00Z")
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        #expect(try lost()?["new"] == "false")
    }

    @Test("first_seen is the as-of of the first run that reported the finding, kept when a later run judges an earlier moment")
    func firstSeenNeverMovesBack() throws {
        let (scenario, lost) = try oneUndeliveredPurchase()
        _ = try scenario.run(asOf: "2026-11-12T00:00:00Z")
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        // Still lost as of an earlier moment (due 2026-11-11T10:00): the first run's as-of stands, and it is not new.
        _ = try scenario.run(asOf: "2026-11-11T12:00:00Z")
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        #expect(try lost()?["new"] == "false")
        _ = try scenario.run(asOf: "2026-11-13T00:00:00Z")
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        #expect(try lost()?["new"] == "false")
    }

    /// The findings this run's alert names: the new ones no report of the store showed before.
    private static func alerted(_ result: RunResult) -> Int { result.report.tallies.reduce(0) { $0 + $1.new } }

    @Test("a night reported again says new as that night did, in the same bytes, and its alert names nothing already said")
    func nightReportedAgain() throws {
        let (scenario, lost) = try oneUndeliveredPurchase()
        let first = try scenario.run(asOf: "2026-11-12T00:00:00Z")
        #expect(Self.alerted(first) == 1)
        let written = try ["findings.csv", "findings.json", "summary.json"].map { try scenario.output($0) }
        #expect(try lost()?["new"] == "true")
        let again = try scenario.run(asOf: "2026-11-12T00:00:00Z", nightReportedBefore: true)
        #expect(try ["findings.csv", "findings.json", "summary.json"].map { try scenario.output($0) } == written)
        #expect(Self.alerted(again) == 0)
        // Near misses: a later night's report, and a run that is no night's, call it seen before.
        _ = try scenario.run(asOf: "2026-11-13T00:00:00Z", nightReportedBefore: true)
        #expect(try lost()?["new"] == "false")
        _ = try scenario.run(asOf: "2026-11-12T00:00:00Z")
        #expect(try lost()?["new"] == "false")
    }

    /// What stops a run after its outputs are switched in and before its findings were said.
    struct StoppedBeforeTheAlert: Error {}

    @Test("a run stopped before it said its findings leaves them new: the next run alerts on them, once")
    func stoppedBeforeTheAlert() throws {
        let (scenario, lost) = try oneUndeliveredPurchase()
        #expect(throws: StoppedBeforeTheAlert.self) {
            try scenario.run(asOf: "2026-11-12T00:00:00Z") { _ in throw StoppedBeforeTheAlert() }
        }
        // Its outputs are in place: the finding is there, new.
        #expect(try lost()?["new"] == "true")
        let next = try scenario.run(asOf: "2026-11-12T00:00:00Z")
        #expect(Self.alerted(next) == 1)
        #expect(try lost()?["first_seen"] == "2026-11-12T00:00:00.000Z")
        #expect(Self.alerted(try scenario.run(asOf: "2026-11-12T00:00:00Z")) == 0)
    }

    @Test("stage timings are kept in the store's run_stages table, never in summary.json")
    func timingsInTheStore() throws {
        let scenario = try yenScenario()
        let database = try scenario.open()
        let runID = try database.scalar("SELECT max(run_id) FROM runs").integerValue
        #expect(try RunLog.stages(database, runID: runID).map(\.stage) == ["ingest", "normalize", "join", "report"])
        #expect(try !scenario.output("summary.json").contains("seconds"))
    }

    @Test("two runs over the same inputs on fresh stores write byte-identical files, all of them")
    func reproducible() throws {
        let first = try Scenario()
        let second = try Scenario()
        for scenario in [first, second] {
            var options = RunOptions(input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out,
                                     jobs: 2, reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out))
            options.lineRules = SampleDataTests.lineRules
            _ = try Pipeline.run(options, progress: nil)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: first.out).filter { !$0.hasPrefix(".") }.sorted()
        #expect(names == (try FileManager.default.contentsOfDirectory(atPath: second.out).filter { !$0.hasPrefix(".") }.sorted()))
        #expect(names.contains("summary.json"))
        for name in names {
            let one = try Data(contentsOf: URL(fileURLWithPath: first.out + "/" + name))
            let two = try Data(contentsOf: URL(fileURLWithPath: second.out + "/" + name))
            #expect(one == two, "\(name) differs between two runs")
        }
    }
}
