/// A batch of parsed lines packed on the worker that parsed them: per raw table, its rows as
/// `line, item, values…` in one byte buffer (`PackedRows`), plus the rejects and the line counts.
/// The writer binds bytes instead of walking Swift values, and the parser's strings are freed on
/// the thread that made them rather than by the writer, which would contend for their allocator.
/// Ingest fills it from its parsed lines (`LineBatch(_:packingRows:pseudonyms:)`); `FileWriter` stores it.
struct LineBatch: Sendable {
    struct Reject: Sendable {
        var line: Int
        var reason: String
        var text: String
    }

    /// Lines of the batch, whatever became of them.
    var lines = 0
    var counts = LineCounts()
    /// By `RawTable.rawValue`.
    private(set) var rows: [PackedRows] = RawTable.allCases.map { PackedRows(table: $0.rawValue) }
    private(set) var rejects: [Reject] = []
    /// Lines of a type Apple does not document, by line of the batch (ingest names them): accepted
    /// notifications of an unknown `notificationType`, Sales Report rows of an unknown Product Type Identifier.
    var undocumentedTypes: [(line: Int, type: String)] = []
    /// The clocks by which the chains its lines had judged at the run's clock keep their verdicts,
    /// and the refund times and days they accepted stay accepted (`ClockJudgedChains`); nil when none was.
    var clockSpan: ClosedRange<Int64>?

    init() {}

    /// Packs what the store keeps of `row` of line `line` (`RawTable.forEachKeptValue`), its device ids as their `pseudonyms`.
    mutating func append(_ row: RawRow, line: Int, pseudonyms: DeviceIDPseudonyms?) {
        let table = row.table.rawValue
        // The table's rows are taken out while the row is packed (and put back): each value
        // appended to them in place would look its table up in `rows` again.
        var packed = PackedRows(table: table)
        swap(&packed, &rows[table])
        defer { swap(&packed, &rows[table]) }
        packed.appendValue(.integer(Int64(line)))
        packed.appendValue(.integer(Int64(row.item)))
        row.table.forEachKeptValue(of: row.values, pseudonyms: pseudonyms) { packed.appendValue($0) }
        packed.endRow()
    }

    mutating func append(_ reject: Reject) {
        rejects.append(reject)
    }

    /// About what the batch holds in memory: its packed rows and rejected lines.
    var byteCount: Int {
        rows.reduce(0) { $0 + $1.bytes.count } + rejects.reduce(0) { $0 + $1.reason.utf8.count + $1.text.utf8.count }
    }
}
