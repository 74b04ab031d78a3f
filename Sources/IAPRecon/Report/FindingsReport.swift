import Foundation

/// `findings.csv` and `findings.json`: one row per finding (CONTRACT.md §3).
///
/// Sorted by severity (critical first), kind, event time and id, so a support
/// reader sees the money-losing rows first and two runs write the same bytes.
struct FindingsReport {
    static let columns = [
        "finding_id", "kind", "severity", "user_id", "order_id", "transaction_id", "original_transaction_id", "product_id",
        "amount", "currency", "event_time", "detail", "sources",
    ]

    struct Row {
        var values: [String?]
        var severity: String { values[2] ?? "" }
        var kind: String { values[1] ?? "" }
    }

    var rows: [Row] = []

    init(database: Database) throws {
        try database.forEach("""
            SELECT finding_id, kind, severity, user_id, order_id, transaction_id, original_transaction_id, product_id,
                   amount, currency, event_ms, detail, sources
            FROM fct_findings
            ORDER BY CASE severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, kind, event_ms, finding_id
            """) { row in
            var values: [String?] = (0..<13).map { row.optionalString($0) }
            values[10] = Timestamp.iso8601(row.int(10))
            rows.append(Row(values: values))
        }
    }

    func writeCSV(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.columns)
        for row in rows {
            try sink.csvRecord(row.values.enumerated().map { index, value in
                index == 8 ? CSV.numberCell(value ?? "") : CSV.textCell(value ?? "")
            })
        }
    }

    func writeJSON(_ sink: inout TextSink) throws {
        let array = JSONValue.array(rows.map { row in
            .object(zip(Self.columns, row.values).map { ($0, JSONValue.optional($1)) })
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
