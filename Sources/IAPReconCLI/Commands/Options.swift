import Foundation
import IAPRecon

/// Typed readings of the options several commands share.
extension ParsedCommand {
    var jobs: Int { declares("jobs") ? (try? optionalInt("jobs")).flatMap { $0 } ?? WorkerPool.defaultWidth : WorkerPool.defaultWidth }

    func zone(_ name: String) throws -> Zone {
        let identifier = value(name) ?? "UTC"
        guard let zone = Zone(identifier) else { throw usageError("'\(identifier)' is not an IANA time zone for --\(name)") }
        return zone
    }

    /// Whether this subcommand has the option at all (asking for an undeclared one is a programming error).
    func declares(_ name: String) -> Bool { spec.options.contains { $0.name == name } }

    func asOfMs() throws -> Int64? {
        guard declares("as-of"), let text = value("as-of") else { return nil }
        guard let ms = Timestamp.parse(text) else {
            throw usageError("'\(text)' is not a time for --as-of (use ISO 8601, e.g. 2026-11-29T00:00:00Z, or epoch ms)")
        }
        return ms
    }

    func reconcileSettings() throws -> ReconcileSettings {
        ReconcileSettings(asOfMs: try asOfMs(), graceMs: try optionalDuration("grace") ?? 86_400_000,
                          mmpZone: declares("mmp-tz") ? try zone("mmp-tz") : .utc)
    }

    func reportSettings() throws -> ReportSettings {
        ReportSettings(outFolder: declares("out") ? value("out") ?? "out" : "out", zone: try zone("tz"), currency: value("currency") ?? "USD",
                       signatures: declares("trust-root") ? try signatureCheck() : .appleOnly)
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

    var databasePath: String { value("db") ?? "iaprecon.sqlite" }
    var inputFolder: String { value("input") ?? "sample-data" }
}

/// `--fail-on`: exit 1 after writing everything when a finding is at or above the severity.
func exitCode(findings: [Severity: Int], failOn: Severity?) -> ExitCode {
    guard let failOn else { return .ok }
    return findings.contains { $0.key >= failOn && $0.value > 0 } ? .failure : .ok
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
