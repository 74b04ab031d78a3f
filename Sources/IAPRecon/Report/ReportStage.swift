import Foundation

/// The settings of the report stage.
public struct ReportSettings: Sendable {
    public var outFolder: String
    public var zone: Zone = .utc
    public var currency: String = "USD"
    /// How ingest checked JWS signatures, for `summary.json`.
    public var signatures: SignatureCheck = .appleOnly

    public init(outFolder: String, zone: Zone = .utc, currency: String = "USD", signatures: SignatureCheck = .appleOnly) {
        self.outFolder = outFolder
        self.zone = zone
        self.currency = currency
        self.signatures = signatures
    }
}

/// What the report stage wrote, for the caller's exit code and log.
public struct ReportSummary: Sendable {
    public var findingsBySeverity: [Severity: Int]
    public var files: [String]
}

/// Stage 4, report: the only code that writes output files (CONTRACT.md §3).
///
/// All files of a run are written into one `OutputSet` and switched in at
/// once. Every file is sorted, so the same store writes the same bytes.
public enum ReportStage {
    public static func run(database: Database, settings: ReportSettings, timings: [(String, Double)] = []) throws -> ReportSummary {
        Trace.mark("report start")
        var asOfMs: Int64 = 0
        var graceMs: Int64 = 0
        try database.forEach("SELECT as_of_ms, grace_ms FROM int_run_settings") { row in
            asOfMs = row.int(0)
            graceMs = row.int(1)
        }
        let findings = try FindingsReport(database: database)
        let fx = try FXRates(database: database, reportingCurrency: settings.currency)
        Trace.mark("report findings and fx")
        let output = try OutputSet(folder: settings.outFolder)
        // Each file is written (and fsynced) as soon as what it shows is known, on the thread that
        // knows it: findings and rejects at once, revenue beside the summary's counts, attribution
        // here. The summary needs them all and comes last.
        let findingsFiles = Background { [path = database.path] in
            try output.write("findings.csv") { try findings.writeCSV(&$0) }
            try output.write("findings.json") { try findings.writeJSON(&$0) }
            let reader = try Database(path: path, readOnly: true)
            try output.write("rejects.csv") { try RejectsReport.write(reader, &$0) }
        }
        // Revenue and the summary's counts read on their own connection while attribution runs here.
        let revenueWork = Background { [path = database.path, zone = settings.zone, asOfMs, graceMs] in
            let reader = try Database(path: path, readOnly: true)
            let revenue = try RevenueReport(database: reader, zone: zone, fx: fx)
            Trace.mark("report revenue (background)")
            try output.write("revenue_daily.csv") { try revenue.write(&$0) }
            let counts = try SummaryReport.counts(database: reader, asOfMs: asOfMs, graceMs: graceMs)
            Trace.mark("report summary counts (background)")
            return (revenue, counts)
        }
        do {
            let attribution: AttributionReport
            do {
                // Reads in one snapshot; fct_user_installs is written on another connection meanwhile.
                attribution = try database.readTransaction {
                    try AttributionReport(database: database, zone: settings.zone, fx: fx, asOfMs: asOfMs)
                }
                Trace.mark("report attribution")
                try output.write("attribution.csv") { try attribution.write(&$0) }
                let answers = try ConsumptionRequestsReport.answers(database: database, zone: settings.zone, currency: settings.currency)
                try output.write("consumption_requests.jsonl") { try ConsumptionRequestsReport.write(answers, &$0) }
                Trace.mark("report consumption requests")
            } catch {
                findingsFiles.wait()
                revenueWork.wait()
                throw error
            }
            let filesWritten = Result { try findingsFiles.value() }
            let (revenue, counts) = try revenueWork.value()
            try filesWritten.get()
            Trace.mark("report waited for revenue and findings files")
            let summary = SummaryReport.build(counts: counts, asOfMs: asOfMs, graceMs: graceMs, settings: settings,
                                              findings: findings, revenue: revenue, attribution: attribution, timings: timings)
            try output.write("summary.json") { try $0.write(JSONWriter.pretty(summary)) }
            try output.commit()
            Trace.mark("report files written")
        } catch {
            output.discard()
            throw error
        }
        var bySeverity: [Severity: Int] = [:]
        for row in findings.rows { if let severity = Severity(rawValue: row.severity) { bySeverity[severity, default: 0] += 1 } }
        return ReportSummary(findingsBySeverity: bySeverity,
                             files: ["findings.csv", "findings.json", "revenue_daily.csv", "attribution.csv", "rejects.csv",
                                     "consumption_requests.jsonl", "summary.json"])
    }
}
