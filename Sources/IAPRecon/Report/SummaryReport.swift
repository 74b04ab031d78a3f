import Foundation

/// `summary.json`: the run in numbers (CONTRACT.md §3).
///
/// As-of, per-file input accounting, the bundle ids seen, counts and amounts
/// per finding kind (new ones apart), money at risk in the reporting currency,
/// orders matched by rule, unmatched and unpaid, transactions by environment,
/// price sources (so finance sees catalog-priced and unpriced transactions),
/// revenue totals, the tie-out with Apple's Sales Report and attribution join keys. Nothing in it
/// depends on the clock or the machine, so two runs over the same inputs write the same bytes
/// (stage timings go to the run log and the `run_stages` table).
enum SummaryReport {
    /// The contract version the outputs follow.
    static let contractVersion = 2

    /// What the summary counts in the store, read on its own connection while attribution runs.
    typealias Counts = SummaryCounts

    /// The summary of a report: `counts` from the store, the rest from the other reports.
    static func build(
        counts: Counts, asOfMs: Int64, graceMs: Int64, settings: ReportSettings, findings: FindingsReport,
        revenue: RevenueReport, tieOut: AppleTieOutReport, attribution: AttributionReport
    ) -> JSONValue {
        let currency = settings.reportingCurrency
        let byRule: [(String, JSONValue)] = MatchRule.allCases.map { ($0.rawValue, .int(counts.ordersByRule[$0.rawValue] ?? 0)) }
        var kinds: [(String, JSONValue)] = []
        var atRiskByKind: [(String, JSONValue)] = []
        var atRisk = Amount.zero
        var newAtRisk = Amount.zero
        // The rows of each kind, in their order, from one pass over the findings.
        var rowsOfKind: [String: [FindingsReport.Row]] = [:]
        for row in findings.rows { rowsOfKind[row.kind, default: []].append(row) }
        for kind in FindingKind.allCases {
            let rows = rowsOfKind[kind.rawValue] ?? []
            var amounts: [String: Decimal] = [:]
            var reporting = Amount.zero
            var newReporting = Amount.zero
            for row in rows {
                if let amount = row[.amount].flatMap(Money.parse), let currency = row[.currency] { amounts[currency, default: 0] += amount }
                reporting += row.reportingAmount ?? .zero
                if row.isNew { newReporting += row.reportingAmount ?? .zero }
            }
            kinds.append((kind.rawValue, .object([
                ("severity", .string(kind.severity.rawValue)), ("count", .int(rows.count)),
                ("new", .int(rows.filter(\.isNew).count)),
                ("amount", .object(amounts.keys.sorted().map { ($0, .string(Money.format(amounts[$0] ?? 0))) })),
                (currency.column("amount"), .string(Money.format(reporting))),
                (currency.column("new_amount"), .string(Money.format(newReporting))),
            ])))
            atRiskByKind.append((kind.rawValue, .string(Money.format(reporting))))
            atRisk += reporting
            newAtRisk += newReporting
        }

        return .object([
            ("contract_version", .int(contractVersion)),
            ("as_of", .string(Timestamp.iso8601(asOfMs))),
            ("grace_hours", .number(Money.format(Decimal(graceMs) / 3_600_000))),
            ("time_zone", .string(settings.zone.identifier)),
            ("reporting_currency", .string(settings.currency)),
            ("signatures", signatures(settings: settings, counts: counts)),
            ("inputs", .object([
                ("files", .array(counts.files.map { file in
                    .object([
                        ("file", .string(file.path)), ("source", .string(file.source)), ("bytes", .int(file.bytes)),
                        ("read", .int(file.counts.read)), ("accepted", .int(file.counts.accepted)), ("rejected", .int(file.counts.rejected)),
                        ("blank", .int(file.counts.blank)), ("ignored", .int(file.counts.ignored)), ("present", .bool(file.present)),
                    ])
                })),
                ("totals", .object([
                    ("read", .int(counts.totals.read)), ("accepted", .int(counts.totals.accepted)), ("rejected", .int(counts.totals.rejected)),
                    ("blank", .int(counts.totals.blank)), ("ignored", .int(counts.totals.ignored)),
                ])),
            ])),
            ("ignored_files", .array(counts.ignoredFiles.map { .string($0) })),
            ("bundle_ids", .array(counts.bundleIDs.map { .string($0) })),
            ("findings", .object([
                ("total", .int(findings.rows.count)), ("new", .int(findings.rows.filter(\.isNew).count)), ("by_kind", .object(kinds)),
            ])),
            (currency.column("money_at_risk"), .object([
                ("total", .string(Money.format(atRisk))), ("new", .string(Money.format(newAtRisk))), ("by_kind", .object(atRiskByKind)),
            ])),
            ("orders", .object([
                ("total", .int(counts.orders)),
                ("matched_by_rule", .object(byRule)), ("unmatched", .int(counts.unmatched)), ("unpaid_after_grace", .int(counts.unpaid)),
            ])),
            ("transactions", .object([
                ("by_environment", .object(counts.environments.map { ($0.name, .int($0.count)) })), ("production_without_order", .int(counts.unmatchedTransactions)),
                ("family_shared", .int(counts.familyShared)), ("failed_verifications", .int(counts.failedVerifications)),
                ("price_source", .object(PriceSource.allCases.filter { $0 != .freeTrial }.map { ($0.rawValue, .int(revenue.priceSources[$0] ?? 0)) })),
                ("without_fx_rate", .int(revenue.missingRates.count)),
                ("products_missing_from_catalog", .int(counts.missingFromCatalog)),
            ])),
            ("revenue", .object([
                (currency.column("gross"), .string(Money.format(revenue.grossUSD))),
                (currency.column("refunds"), .string(Money.format(revenue.refundsUSD))),
                (currency.column("net"), .string(Money.format(revenue.grossUSD - revenue.refundsUSD))),
            ])),
            ("apple_tieout", tieOut.summary(reportingCurrency: settings.currency)),
            ("attribution", .object([
                ("install_rows", .int(attribution.installRows)),
                ("purchases_without_user", .int(attribution.userlessPurchases)),
                ("spend_rows_without_fx_rate", .int(attribution.missingSpendRates.count)),
                ("users_matched_by", .object(["customer_user_id", "appsflyer_id", "idfv", "idfa", "unattributed"].map {
                    ($0, .int(attribution.matchedBy[$0] ?? 0))
                })),
            ])),
        ])
    }

    /// Which signatures ingest trusted: the run's own setting, or for a report run on its own, the
    /// one mode the stored receipts and notifications were all read with (Apple's root alone when
    /// the store recorded none, as before it kept them).
    static func signatures(settings: ReportSettings, counts: Counts) -> JSONValue {
        if let check = settings.signatures { return check.summary }
        let trusted = Set(counts.readWith.compactMap(LineRules.trustedSignatures(inReadWith:)))
        guard trusted.count == 1, let only = trusted.first, let summary = SignatureCheck.summary(ofTrusted: only) else {
            return SignatureCheck.appleOnly.summary
        }
        return summary
    }
}

