import Foundation

/// `findings.csv` and `findings.json`: one row per finding (CONTRACT.md §3).
///
/// Sorted by severity (critical first), kind, event time and id, so a support
/// reader sees the money-losing rows first and two runs write the same bytes.
/// Each row carries its amount in the reporting currency (at the rate of its
/// event's day, rounded to the currency's minor unit), and when the finding was
/// first reported: `first_seen` is the as-of of the first run that reported its
/// `finding_id`, and `new` says whether this run is that run, so a night alerts
/// once per new problem.
struct FindingsReport {
    static let storedColumns = [
        "finding_id", "kind", "severity", "user_id", "order_id", "transaction_id", "original_transaction_id", "product_id",
        "amount", "currency", "event_time", "detail", "sources",
    ]

    /// The header: the stored columns, then the reporting-currency amount, `first_seen` and `new`.
    static func columns(_ currency: ReportingCurrency) -> [String] {
        storedColumns + [currency.column("amount"), "first_seen", "new"]
    }

    struct Row {
        var values: [String?]
        /// The amount in the reporting currency, rounded; nil without an amount or a rate.
        var reportingAmount: Amount?
        var firstSeenMs: Int64
        var isNew: Bool
        var severity: String { values[2] ?? "" }
        var kind: String { values[1] ?? "" }
    }

    let currency: ReportingCurrency
    var rows: [Row] = []

    /// The findings of the store as of `asOfMs`; records each finding's first sighting in `fct_finding_first_seen`.
    init(database: Database, fx: FXRates, zone: Zone, asOfMs: Int64) throws {
        currency = ReportingCurrency(fx.reportingCurrency)
        try database.execute(Tables.findingFirstSeen)
        // This report's number: the findings it is the first to record are the new ones, so a rerun of
        // the same night reports nothing new.
        let report = try database.scalar("SELECT coalesce(max(first_report), 0) + 1 FROM fct_finding_first_seen").integerValue
        // A run judging an earlier moment (a re-run of a past night) moves first sightings back, never forward.
        try database.run("""
            INSERT INTO fct_finding_first_seen (finding_id, first_seen_ms, first_report) SELECT finding_id, ?1, ?2 FROM fct_findings WHERE 1
            ON CONFLICT (finding_id) DO UPDATE SET first_seen_ms = min(first_seen_ms, excluded.first_seen_ms)
            """, [.integer(asOfMs), .integer(report)])
        var values = AmountReader(fx: fx, zone: zone)
        try database.forEach("""
            SELECT f.finding_id, f.kind, f.severity, f.user_id, f.order_id, f.transaction_id, f.original_transaction_id, f.product_id,
                   f.amount, f.currency, f.event_ms, f.detail, f.sources, s.first_seen_ms, s.first_report
            FROM fct_findings f JOIN fct_finding_first_seen s USING (finding_id)
            ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, f.kind, f.event_ms, f.finding_id
            """) { row in
            var texts: [String?] = (0..<13).map { row.optionalString($0) }
            texts[10] = Timestamp.iso8601(row.int(10))
            var reportingAmount: Amount?
            if let amount = values.amount(row, 8), let rate = values.rate(currency: values.currency(row, 9), atMs: row.int(10)) {
                reportingAmount = currency.rounded(amount * rate)
            }
            rows.append(Row(values: texts, reportingAmount: reportingAmount, firstSeenMs: row.int(13), isNew: row.int(14) == report))
        }
    }

    /// The row's cells after the stored ones, as text.
    private func added(_ row: Row) -> [String] {
        [row.reportingAmount.map(Money.format) ?? "", Timestamp.iso8601(row.firstSeenMs), row.isNew ? "true" : "false"]
    }

    func writeCSV(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.columns(currency))
        for row in rows {
            let stored = row.values.enumerated().map { index, value in
                index == 8 ? CSV.numberCell(value ?? "") : CSV.textCell(value ?? "")
            }
            let added = added(row)
            try sink.csvRecord(stored + [CSV.numberCell(added[0]), added[1], added[2]])
        }
    }

    func writeJSON(_ sink: inout TextSink) throws {
        let array = JSONValue.array(rows.map { row in
            .object(zip(Self.storedColumns, row.values).map { ($0, JSONValue.optional($1)) } + [
                (currency.column("amount"), JSONValue.optional(row.reportingAmount.map(Money.format))),
                ("first_seen", .string(Timestamp.iso8601(row.firstSeenMs))),
                ("new", .bool(row.isNew)),
            ])
        })
        try sink.write(JSONWriter.pretty(array))
    }
}

/// `rejects.csv`: every rejected input line with its file, line and reason.
enum RejectsReport {
    static func write(_ database: Database, _ sink: inout TextSink) throws {
        try sink.csvRecord(["file", "line", "reason", "text"])
        try database.forEach("""
            SELECT f.path, r.line, r.reason, r.text FROM rejects r JOIN files f USING (file_id) ORDER BY f.path, r.line
            """) { row in
            try sink.csvRecord([CSV.textCell(row.string(0)), String(row.int(1)), CSV.textCell(row.string(2)), CSV.textCell(row.string(3))])
        }
    }
}
