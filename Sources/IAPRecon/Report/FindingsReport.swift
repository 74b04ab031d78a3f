import Foundation

/// `findings.csv` and `findings.json`: one row per finding (CONTRACT.md §3).
///
/// Sorted by severity (critical first), kind, event time and id, so a support
/// reader sees the money-losing rows first and two runs write the same bytes.
/// Each row carries its amount in the reporting currency (rounded to the
/// currency's minor unit) at the rate its transaction converts at everywhere:
/// that of its purchase day (CONTRACT.md §1.6), so a finding's money is the
/// money the revenue files count; a finding without a known transaction
/// converts on its event's day. It also carries when the finding was
/// first reported: `first_seen` is the as-of of the first run that reported its
/// `finding_id`, and `new` says whether this run is that run, so a night alerts
/// once per new problem.
struct FindingsReport: Sendable {
    static let storedColumns = [
        "finding_id", "kind", "severity", "user_id", "order_id", "transaction_id", "original_transaction_id", "product_id",
        "amount", "currency", "event_time", "detail", "sources",
    ]

    /// The header: the stored columns, then the reporting-currency amount, `first_seen` and `new`.
    static func columns(_ currency: ReportingCurrency) -> [String] {
        storedColumns + [currency.column("amount"), "first_seen", "new"]
    }

    /// The stored finding's columns as the store reads them; `Row.values` holds them in this order.
    typealias Column = ReportFindingColumn

    struct Row: Sendable {
        /// The stored finding's cells, by `Column`.
        var values: [String?]
        /// The amount in the reporting currency, rounded; nil without an amount or a rate.
        var reportingAmount: Amount?
        var firstSeenMs: Int64
        var isNew: Bool
        /// New here, but shown already, by this store's report of the same night or a report of the
        /// store this night was replayed from, whose alert named it then: `--fail-on-new` leaves it out.
        var wasAnnounced = false
        var severity: String { self[.severity] ?? "" }
        var kind: String { self[.kind] ?? "" }

        /// The stored cell of `column`.
        subscript(column: Column) -> String? { values[column.rawValue] }
    }

    let currency: ReportingCurrency
    var rows: [Row] = []
    /// The findings whose amount `fx.csv` cannot convert, referenced by their place in `rows`, for `fxWarnings`.
    var missingRates = MissingRates<Int>()

    /// One line per currency whose findings' amounts `fx.csv` cannot convert: their reporting
    /// amount is empty and summary.json's money at risk leaves them out, which the alert line and
    /// the summary alone would not say.
    var fxWarnings: [String] {
        missingRates.warnings { code, missing in
            let firstID = missing.first.flatMap { rows[$0][.findingID] } ?? ""
            let what = missing.count == 1
                ? "1 finding (\(firstID)) has no \(currency.column("amount")) and is"
                : "\(missing.count) findings (the first \(firstID)) have no \(currency.column("amount")) and are"
            return "fx.csv has no rate into \(currency.code) for \(code) on or before \(missing.lastDay): \(what) "
                + "left out of \(currency.column("money_at_risk"))"
        }
    }

    /// The findings of a store whose first sightings are recorded already: `announced` is what
    /// `ReportStore.recordFirstSightings` returned, the findings the reports of the store a night is
    /// replayed from showed judging its moment or later; `shownAgainAt`, the as-of of a night this
    /// store reported before (`ReportSettings.nightReportedBefore`). This report's sightings count
    /// once its findings were said (`ReportStore.publishFirstSightings`). Only reads, so it may run
    /// on a connection of its own, on another thread.
    init(reading store: some ReportStore, fx: FXRates, zone: Zone, shownAgainAt: Int64? = nil, announced: Set<String>) throws {
        currency = ReportingCurrency(fx.reportingCurrency)
        var values = AmountReader(fx: fx, zone: zone)
        try store.forEachFinding(shownAgainAt: shownAgainAt) { row in
            var texts: [String?] = Column.stored.map { row.optionalString($0) }
            texts[Column.eventMs.rawValue] = Timestamp.iso8601(row.int(Column.eventMs))
            var reportingAmount: Amount?
            if let amount = values.amount(row, Column.amount) {
                let code = values.currency(row, Column.currency)
                let atMs = row.optionalInt(Column.purchaseMs) ?? row.int(Column.eventMs)
                // Nothing at risk (a family-shared transaction's finding) needs no rate.
                reportingAmount = missingRates.convert(amount, at: values.rate(currency: code, atMs: atMs), currency: values.currencies[code],
                                                       day: values.day(atMs), reference: rows.count).map(currency.rounded)
            }
            let isNew = row.int(Column.isNew) != 0
            let wasAnnounced = row.int(Column.wasReported) != 0 || announced.contains(texts[Column.findingID.rawValue] ?? "")
            rows.append(Row(values: texts, reportingAmount: reportingAmount, firstSeenMs: row.int(Column.firstSeenMs), isNew: isNew,
                            wasAnnounced: isNew && wasAnnounced))
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
                index == Column.amount.rawValue ? CSV.numberCell(value ?? "") : CSV.textCell(value ?? "")
            }
            let added = added(row)
            try sink.csvRecord(stored + [CSV.numberCell(added[0]), added[1], added[2]])
        }
    }

    /// One array, as `JSONWriter.pretty` writes it, a finding at a time: a store's findings can run
    /// to many megabytes of JSON, never held whole.
    func writeJSON(_ sink: inout TextSink) throws {
        guard !rows.isEmpty else { return try sink.write("[]\n") }
        try sink.write("[\n")
        let amountColumn = currency.column("amount")
        for (index, row) in rows.enumerated() {
            let finding = JSONValue.object(zip(Self.storedColumns, row.values).map { ($0, JSONValue.optional($1)) } + [
                (amountColumn, JSONValue.optional(row.reportingAmount.map(Money.format))),
                ("first_seen", .string(Timestamp.iso8601(row.firstSeenMs))),
                ("new", .bool(row.isNew)),
            ])
            try sink.write("  " + JSONWriter.pretty(finding, nestedAt: 1) + (index + 1 < rows.count ? ",\n" : "\n"))
        }
        try sink.write("]\n")
    }
}

/// `rejects.csv`: every rejected input line with its file, line and reason.
enum RejectsReport {
    static func write(_ store: some ReportStore, _ sink: inout TextSink) throws {
        try sink.csvRecord(["file", "line", "reason", "text"])
        typealias Column = RejectColumn
        try store.forEachReject { row in
            try sink.csvRecord([CSV.textCell(row.string(Column.path)), String(row.int(Column.line)), CSV.textCell(row.string(Column.reason)),
                                CSV.textCell(row.string(Column.text))])
        }
    }
}
