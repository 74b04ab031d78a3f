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

    /// With `packingRows` false, only the counts (what `validate` prints). Device ids are
    /// packed as their `pseudonyms`.
    init(_ parsed: [ParsedLine], packingRows: Bool = true, pseudonyms: DeviceIDPseudonyms? = nil) {
        for line in parsed {
            lines += 1
            counts.count(line.outcome)
            switch line.outcome {
            case .accepted(let raw) where packingRows:
                for row in raw {
                    let table = row.table.rawValue
                    rows[table].appendValue(.integer(Int64(line.line)))
                    rows[table].appendValue(.integer(Int64(row.item)))
                    for value in pseudonyms?.pseudonymising(row.values, of: row.table) ?? row.values { rows[table].appendValue(value) }
                    rows[table].endRow()
                }
            case .accepted:
                break
            case .rejected(let reason):
                rejects.append(Reject(line: line.line, reason: reason, text: line.rejectedText ?? ""))
            case .blank, .ignored:
                break
            }
        }
    }
}
