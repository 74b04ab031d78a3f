/// A batch of parsed lines packed on the worker that parsed them: per raw table, its rows as
/// `line, item, values…` in one byte buffer (`PackedRows`), plus the rejects and the line counts.
/// The writer binds bytes instead of walking Swift values, and the parser's strings are freed on
/// the thread that made them rather than by the writer, which would contend for their allocator.
struct LineBatch: Sendable {
    struct Reject: Sendable {
        var line: Int
        var reason: String
        var text: String
    }

    private(set) var lines = 0
    private(set) var counts = LineCounts()
    /// By `RawTable.rawValue`.
    private(set) var rows: [PackedRows] = RawTable.allCases.map { PackedRows(table: $0.rawValue) }
    private(set) var rejects: [Reject] = []

    init(_ parsed: [ParsedLine]) {
        for line in parsed {
            lines += 1
            counts.count(line.outcome)
            switch line.outcome {
            case .accepted(let raw):
                for row in raw {
                    rows[row.table.rawValue].append([.integer(Int64(line.line)), .integer(Int64(row.item))] + row.values)
                }
            case .rejected(let reason):
                rejects.append(Reject(line: line.line, reason: reason, text: line.rejectedText ?? ""))
            case .blank, .ignored:
                break
            }
        }
    }
}
