import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// On generated data the findings match the planted truth exactly: precision and recall 1.0 for
/// every kind (the tie-out's `unverified_apple_sales` among them: the planted sales Apple reports
/// and no receipt or notification mentions), the planted bad lines are the rejects, and the reports' totals agree with each other.
@Suite("Generated data against its planted truth")
struct GeneratedTruthTests {
    struct Truth: Decodable {
        struct Planted: Decodable {
            var kind: String
            var transaction_id: String
            var user_id: String
            var order_id: String?
            var original_transaction_id: String
            var subscription_group: String
            var detail: String
            var amount: String?
            var product_id: String?
            var day: String?
            var country: String?
        }
        var as_of: String
        var findings: [Planted]
        var rejects: Int
    }

    /// What identifies a finding within its kind (the `finding_id` key).
    static func key(kind: String, transaction: String, user: String, original: String, tieOut: String = "") -> String {
        switch kind {
        case "multi_apple_id_subscription": kind + "|" + user
        case "shared_apple_id_subscription": kind + "|" + original
        case "unverified_apple_sales": kind + "|" + tieOut
        default: kind + "|" + transaction
        }
    }

    /// A tie-out finding's Pacific day, product and country, as `findings.csv` shows them.
    static func tieOutKey(_ row: [String: String]) -> String {
        let day = Timestamp.parse(row["event_time"] ?? "").map { AppleTieOut.reportZone.day($0) } ?? ""
        let country = (row["detail"] ?? "").split(separator: " ").first.map { String($0.dropFirst("country=".count)) } ?? ""
        return day + "|" + (row["product_id"] ?? "") + "|" + country
    }

    /// Reads a CSV output into rows keyed by header name.
    static func table(_ text: String) -> [[String: String]] {
        var lines = text.split(separator: "\r\n").map(String.init)
        guard !lines.isEmpty, let header = CSV.fields(lines.removeFirst()) else { return [] }
        return lines.compactMap { line in CSV.fields(line).map { Dictionary(uniqueKeysWithValues: zip(header, $0)) } }
    }

    static func sum(_ rows: [[String: String]], _ column: String) -> Decimal {
        rows.reduce(Decimal(0)) { $0 + (Money.parse($1[column] ?? "") ?? 0) }
    }

    @Test("3,000 generated users: every planted finding and nothing else; rejects = planted bad lines; totals agree")
    func truth() throws {
        let scenario = try Scenario()
        let report = try InputGenerator.write(GeneratorOptions(users: 3000, days: 30, seed: 42), to: scenario.input)
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: scenario.input + "/truth.json")))
        let result = try scenario.run(jobs: 2)
        #expect(Timestamp.iso8601(result.join.asOfMs) == Timestamp.iso8601(Timestamp.parse(truth.as_of) ?? 0))
        #expect(result.ingest.totals.read == report.lines)
        #expect(result.ingest.totals.rejected == truth.rejects)

        let findings = Self.table(try scenario.output("findings.csv"))
        var found: [String: [String: String]] = [:]
        for row in findings {
            let key = Self.key(kind: row["kind"] ?? "", transaction: row["transaction_id"] ?? "", user: row["user_id"] ?? "",
                               original: row["original_transaction_id"] ?? "", tieOut: Self.tieOutKey(row))
            #expect(found[key] == nil, "finding \(key) twice")
            found[key] = row
        }
        var planted: [String: Truth.Planted] = [:]
        for finding in truth.findings {
            let tieOut = (finding.day ?? "") + "|" + (finding.product_id ?? "") + "|" + (finding.country ?? "")
            planted[Self.key(kind: finding.kind, transaction: finding.transaction_id, user: finding.user_id,
                             original: finding.original_transaction_id, tieOut: tieOut)] = finding
        }
        for kind in FindingKind.allCases.map(\.rawValue) {
            let expected = Set(planted.keys.filter { $0.hasPrefix(kind + "|") })
            let actual = Set(found.keys.filter { $0.hasPrefix(kind + "|") })
            #expect(!expected.isEmpty, "the generator plants \(kind)")
            #expect(actual.subtracting(expected).isEmpty, "\(kind): not planted: \(actual.subtracting(expected).sorted().prefix(5))")
            #expect(expected.subtracting(actual).isEmpty, "\(kind): missed: \(expected.subtracting(actual).sorted().prefix(5))")
        }
        for (key, finding) in planted {
            guard let row = found[key] else { continue }
            if !finding.detail.isEmpty { #expect(row["detail"]?.hasPrefix(finding.detail) == true, "\(key)") }
            if let amount = finding.amount, !amount.isEmpty { #expect(Money.parse(row["amount"] ?? "") == Money.parse(amount), "\(key)") }
            if finding.kind == "shared_apple_id_subscription" {
                // The owner's purchase that made them hold the chain, and its order.
                #expect(row["transaction_id"] == finding.transaction_id, "\(key)")
                #expect(row["order_id"] == finding.order_id, "\(key)")
            }
        }

        // The reports agree with each other.
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("summary.json").utf8)) as? [String: Any])
        let revenue = try #require(summary["revenue"] as? [String: Any])
        let gross = try #require((revenue["gross_usd"] as? String).flatMap(Money.parse))
        #expect(gross > 0)
        #expect(Self.sum(Self.table(try scenario.output("revenue_daily.csv")), "gross_usd") == gross)
        let attribution = Self.table(try scenario.output("attribution.csv"))
        // Each file rounds its own rows to the cent (CONTRACT.md §3): attribution's cohorts and
        // revenue's days differ in grain, so their sums agree to half a cent a row.
        let tolerance = Decimal(attribution.count + Self.table(try scenario.output("revenue_daily.csv")).count) * Decimal(5) / 1000
        let difference = Self.sum(attribution, "revenue_usd") - gross
        #expect(difference <= tolerance && -difference <= tolerance, "attribution \(Self.sum(attribution, "revenue_usd")), revenue \(gross)")
        let installRows = try Self.distinctInstallRows(in: scenario.input + "/attribution")
        #expect(Self.sum(attribution, "installs") == Decimal(installRows))

        // transactions.csv: one row per verified transaction, summing to revenue_daily.csv.
        let transactions = Self.table(try scenario.output("transactions.csv"))
        let ids = transactions.compactMap { $0["transaction_id"] }
        #expect(Set(ids).count == ids.count, "a transaction listed twice")
        let environments = try #require((summary["transactions"] as? [String: Any])?["by_environment"] as? [String: Int])
        #expect(ids.count == environments.values.reduce(0, +))
        let listed = Set(ids)
        for finding in truth.findings where !finding.transaction_id.isEmpty {
            // Every planted finding's transaction is one Apple knows, except an orphan delivery's.
            #expect(listed.contains(finding.transaction_id) == (finding.kind != "orphan_delivery"), "\(finding.kind) \(finding.transaction_id)")
        }
        // A finding about chains is on every transaction of each chain it is about: a user's
        // multi-Apple-ID finding on two chains at least, its own row's first among them; a shared
        // subscription's on its chain's alone.
        var chainsListing: [String: Set<String>] = [:]
        for row in transactions {
            for id in (row["finding_ids"] ?? "").split(separator: ";") {
                chainsListing[String(id), default: []].insert(row["original_transaction_id"] ?? "")
            }
        }
        for row in findings where row["kind"] == "multi_apple_id_subscription" || row["kind"] == "shared_apple_id_subscription" {
            let chains = chainsListing[row["finding_id"] ?? ""] ?? []
            #expect(chains.contains(row["original_transaction_id"] ?? ""), "\(row["finding_id"] ?? "")")
            #expect(row["kind"] == "shared_apple_id_subscription" ? chains.count == 1 : chains.count >= 2, "\(row["finding_id"] ?? ""): \(chains)")
        }
        #expect(chainsListing.values.contains { $0.count >= 2 }, "the generator plants users paying from two Apple IDs")
        // Both files round their own rows to the cent: their sums agree to half a cent a row.
        let revenueRows = Self.table(try scenario.output("revenue_daily.csv"))
        let rowTolerance = Decimal(transactions.count + revenueRows.count) * Decimal(5) / 1000
        // In each local currency the revenue transactions' prices are exactly revenue_daily.csv's gross.
        for currency in Set(revenueRows.compactMap { $0["currency"] }) {
            let listed = transactions.filter { $0["revenue"] == "true" && $0["currency"] == currency }
            #expect(Self.sum(listed, "price") == Self.sum(revenueRows.filter { $0["currency"] == currency }, "gross"), "\(currency)")
        }
        for (column, total) in [("gross_usd", gross), ("refunds_usd", Self.sum(revenueRows, "refunds_usd"))] {
            let difference = Self.sum(transactions, column) - total
            #expect(difference <= rowTolerance && -difference <= rowTolerance, "\(column): \(Self.sum(transactions, column)) against \(total)")
        }
        for row in transactions where row["revenue"] == "false" { #expect(row["gross_usd"] == "", "\(row["transaction_id"] ?? "")") }
    }

    /// Distinct non-retargeting install rows, read straight from the MMP files (not through iaprecon's store).
    static func distinctInstallRows(in folder: String) throws -> Int {
        var seen = Set<String>()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".csv") {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map { String($0).replacingOccurrences(of: "\r", with: "") }
            guard !lines.isEmpty, let header = CSV.fields(lines.removeFirst()) else { continue }
            for line in lines {
                guard let fields = CSV.fields(line), fields.count == header.count else { continue }
                let row = Dictionary(zip(header, fields), uniquingKeysWith: { first, _ in first })
                guard row["Event Name"] == "install", row["Is Retargeting"]?.lowercased() != "true",
                      Timestamp.parse(row["Event Time"] ?? "") != nil else { continue }
                seen.insert([row["AppsFlyer ID"], row["Event Name"], row["Event Time"], row["Event Value"]].map { $0 ?? "" }.joined(separator: "|"))
            }
        }
        return seen.count
    }
}
