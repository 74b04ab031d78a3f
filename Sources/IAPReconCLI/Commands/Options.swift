import Foundation
import IAPRecon

/// Typed readings of the options several commands share.
extension ParsedCommand {
    var jobs: Int { declares("jobs") ? (try? optionalInt("jobs")).flatMap { $0 } ?? WorkerPool.defaultWidth : WorkerPool.defaultWidth }

    func zone(_ name: String) throws -> Zone {
        let identifier = value(name) ?? "UTC"
        // The parser has checked it names a place (`ValueKind.timeZone`).
        guard let zone = Zone(identifier) else { throw usageError("'\(identifier)' is not an IANA time zone for --\(name)") }
        return zone
    }

    /// Whether this subcommand has the option at all (asking for an undeclared one is a programming error).
    func declares(_ name: String) -> Bool { spec.options.contains { $0.name == name } }

    func asOfMs() throws -> Int64? { try time("as-of") }

    /// `--now`, the run's clock; nil for the system clock.
    func nowMs() throws -> Int64? { try time("now") }

    /// A time option (`--as-of`, `--now`), which the parser has checked (`ValueKind.time`), from the
    /// command line and config files alike.
    private func time(_ name: String) throws -> Int64? {
        guard declares(name), let text = value(name) else { return nil }
        switch ValueKind.clockMs(text) {
        case .success(let ms): return ms
        case .failure(let invalid): throw usageError("The value '\(text)' is invalid for '--\(name)'\(invalid.explanation)")
        }
    }

    /// `--now` (the run's clock, default the system clock), `--bundle-id`, `--app-sku` and `--mmp-tz`, for the line checks.
    func lineRules() throws -> LineRules {
        var rules = LineRules(signatures: declares("trust-root") ? try signatureCheck() : .appleOnly)
        if let ms = try nowMs() { rules.nowMs = ms }
        if declares("bundle-id") { rules.bundleID = value("bundle-id") }
        if declares("app-sku") {
            let skus = allValues("app-sku")
            if skus.contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) { throw usageError("--app-sku needs the app's SKU, not an empty value") }
            rules.appSKUs = Set(skus)
        }
        if declares("mmp-tz") { rules.mmpZone = try zone("mmp-tz") }
        return rules
    }

    func reconcileSettings() throws -> ReconcileSettings {
        var settings = ReconcileSettings(asOfMs: try asOfMs(), graceMs: try optionalDuration("grace") ?? 86_400_000,
                                         mmpZone: declares("mmp-tz") ? try zone("mmp-tz") : .utc, reportZone: declares("tz") ? try zone("tz") : .utc)
        if let ms = try nowMs() { settings.nowMs = ms }
        // An as-of no event read can reach (a year typed 2062 for 2026) judges every open purchase lost
        // and every cohort mature, and the store keeps it as the first sighting of each finding it reports.
        if let asOfMs = settings.asOfMs, asOfMs > settings.nowMs + LineRules.futureToleranceMs {
            throw usageError("--as-of \(Timestamp.iso8601(asOfMs)) is more than 24 hours after the run's clock (\(Timestamp.iso8601(settings.nowMs)), "
                + "--now or the system clock): no event read can be that late, as a line stamped so is rejected")
        }
        return settings
    }

    func reportSettings() throws -> ReportSettings {
        ReportSettings(outFolder: declares("out") ? value("out") ?? "out" : "out", zone: try zone("tz"), currency: value("currency") ?? "USD",
                       signatures: declares("trust-root") ? try signatureCheck() : nil)
    }

    /// `--trust-unsigned`, or Apple's root plus each `--trust-root` PEM file.
    func signatureCheck() throws -> SignatureCheck {
        let roots = allValues("trust-root")
        if flag("trust-unsigned") {
            guard roots.isEmpty else { throw usageError("--trust-unsigned checks no signature; drop it or --trust-root") }
            return .trustUnsigned
        }
        return try SignatureCheck.trusting(pemFiles: roots)
    }

    var failOn: Severity? { declares("fail-on") ? value("fail-on").flatMap(Severity.init(rawValue:)) : nil }
    var failOnNew: Severity? { declares("fail-on-new") ? value("fail-on-new").flatMap(Severity.init(rawValue:)) : nil }

    var databasePath: String { value("db") ?? "iaprecon.sqlite" }
    var inputFolder: String { value("input") ?? "sample-data" }
}

/// `--fail-on`: exit 1 after writing everything when a finding is at or above the severity.
func exitCode(findings: [Severity: Int], failOn: Severity?) -> ExitCode {
    guard let failOn else { return .ok }
    return findings.contains { $0.key >= failOn && $0.value > 0 } ? .failure : .ok
}

/// What a report's findings make of a run: exit 1 for `--fail-on` or `--fail-on-new` (CONTRACT.md §3),
/// and then the one alert line stderr gets, also under `--quiet`, since cron mails only what is printed
/// (CONTRACT.md §4): `iaprecon: exit 1: 3 new critical findings (lost_delivery 2, refunded_not_revoked 1),
/// 41.97 USD at risk; see reports/2026-11-29/findings.csv`.
func findingsOutcome(_ report: ReportSummary, failOn: Severity?, failOnNew: Severity?, outFolder: String) -> (code: ExitCode, alert: String?) {
    func tallies(at severity: Severity, newOnly: Bool) -> [(kind: FindingKind, count: Int, atRisk: Decimal)] {
        report.tallies.filter { $0.kind.severity >= severity }
            .map { (kind: $0.kind, count: newOnly ? $0.new : $0.count, atRisk: newOnly ? $0.newAtRisk : $0.atRisk) }
            .filter { $0.count > 0 }
    }
    // --fail-on-new first: its line names what is new, which is what a night's alert is for.
    let triggered: (severity: Severity, newOnly: Bool)?
    if let failOnNew, !tallies(at: failOnNew, newOnly: true).isEmpty {
        triggered = (failOnNew, true)
    } else if let failOn, !tallies(at: failOn, newOnly: false).isEmpty {
        triggered = (failOn, false)
    } else {
        triggered = nil
    }
    guard let triggered else { return (.ok, nil) }
    let found = tallies(at: triggered.severity, newOnly: triggered.newOnly)
    let count = found.reduce(0) { $0 + $1.count }
    let atRisk = found.reduce(Decimal(0)) { $0 + $1.atRisk }
    let level = triggered.severity == .critical ? "critical" : "\(triggered.severity.rawValue)-or-worse"
    let kinds = found.map { "\($0.kind.rawValue) \($0.count)" }.joined(separator: ", ")
    let money = Money.format(atRisk, scale: report.currency.minorUnit)
    let alert = "iaprecon: exit 1: \(count) \(triggered.newOnly ? "new " : "")\(level) finding\(count == 1 ? "" : "s") (\(kinds)), "
        + "\(money) \(report.currency.code) at risk; see \(outFolder)/findings.csv"
    return (.failure, alert)
}

/// Without `--bundle-id`, receipts and notifications of more than one app are named on stderr: one store usually holds one app.
func bundleWarning(_ report: ReportSummary, bundleOption: String?) -> String? {
    guard bundleOption == nil, report.bundleIDs.count > 1 else { return nil }
    return "Warning: receipts and notifications name \(report.bundleIDs.count) app bundles (\(report.bundleIDs.joined(separator: ", "))); "
        + "set --bundle-id to reject the others"
}

/// The per-file accounting table `ingest` and `validate` print.
func accountingTable(_ report: IngestReport) -> String {
    var table = TextTable(["file", "read", "accepted", "rejected", "blank", "ignored", "status"], numeric: [1, 2, 3, 4, 5])
    for file in report.files {
        table.add([file.path, String(file.counts.read), String(file.counts.accepted), String(file.counts.rejected),
                   String(file.counts.blank), String(file.counts.ignored), file.status.rawValue])
    }
    let totals = report.totals
    table.add(["total", String(totals.read), String(totals.accepted), String(totals.rejected), String(totals.blank),
               String(totals.ignored), ""])
    return table.text
}
