/// Parses CSV lines into records: line 1 is the header, each later line one record.
///
/// A record never spans lines: a line whose quotes do not balance is rejected
/// as `unbalanced quotes`, so one stray quote costs exactly its own line and
/// never swallows the good lines after it. (MMP exports keep JSON in
/// `Event Value` on one line; a quoted newline would be split and rejected,
/// which the accounting shows.)
///
/// A header that lacks a column the parser needs rejects each row after it; when no line
/// follows it, `finish` rejects the header itself, so such a file is never read in silence
/// (a file whose lines end in a lone CR, as old Mac spreadsheets save CSV, is one such line).
struct CSVRecordAssembler {
    let kind: SourceKind
    let rules: LineRules
    private var header: CSVHeader?
    private var missingColumns: [String] = []
    /// The header's reject, until a line follows the header: a header lacking a needed column.
    private var headerReject: ParsedLine?
    /// The header positions of the columns the parser reads.
    private var readPositions: [Int] = []
    /// The columns the parser reads that the header names more than once (after its aliases), with
    /// their positions: none for nearly every header, so only a file with one pays for the check.
    private var repeatedColumns: [(name: String, positions: [Int])] = []

    init(kind: SourceKind, rules: LineRules = LineRules()) {
        self.kind = kind
        self.rules = rules
    }

    /// What became of `line`, or nil for a line that is not counted as read (the header). One line
    /// is at most one record: an optional, not an array made for every row.
    mutating func feed(_ line: LineReader.Line) -> ParsedLine? {
        if header != nil { headerReject = nil }
        if line.tooLong {
            return SourceFileParser.reject(line, "line longer than \(LineReader.maximumLineBytes >> 20) MiB")
        }
        let maximumFields = header?.names.count ?? CSV.maximumHeaderFields
        guard let fields = kind == .apple ? CSV.tabRow(line.bytes, maximumFields: maximumFields) : CSV.row(line.bytes, maximumFields: maximumFields) else {
            if header == nil {
                // The header itself is broken: every row will say which column it lacks.
                header = CSVHeader([])
                missingColumns = kind.csvParser?.requiredColumns ?? []
                headerReject = rejectingHeader(line)
                return nil
            }
            return SourceFileParser.reject(line, "unbalanced quotes")
        }
        if let fieldCount = fields.excessFieldCount {
            guard let header else {
                // A header of thousands of columns is no export's: every row will say which column it lacks.
                self.header = CSVHeader([])
                missingColumns = kind.csvParser?.requiredColumns ?? []
                headerReject = rejectingHeader(line)
                return nil
            }
            let reason = missingColumns.first.map { "header has no column '\($0)'" }
                ?? "row has \(counted(fieldCount, "field")), the header has \(header.names.count)"
            return SourceFileParser.reject(line, reason)
        }
        let wasHeader = header == nil
        let parsed = record(fields, line: line.number)
        if wasHeader, !(fields.count == 1 && trimmedSpaces(fields[0]).isEmpty) { headerReject = rejectingHeader(line) }
        return parsed
    }

    /// After the file's last line: the header's reject when it lacks a needed column and no line
    /// followed it, which would otherwise leave the file read as empty.
    mutating func finish() -> ParsedLine? {
        defer { headerReject = nil }
        return headerReject
    }

    /// The header line rejected for the first column it lacks, or nil when it has them all. A CR inside
    /// it says why a column that looks present is not: the file's lines end in a lone CR.
    private func rejectingHeader(_ line: LineReader.Line) -> ParsedLine? {
        let loneCR = line.bytes.contains(0x0D) ? " (its lines end in a lone CR)" : ""
        return missingColumns.first.map { SourceFileParser.reject(line, "header has no column '\($0)'" + loneCR) }
    }

    /// A parsed record, or nil for the header (which is not counted as a line read).
    private mutating func record(_ fields: CSVRow, line: Int) -> ParsedLine? {
        let text = fields.bytes
        guard let header else {
            let parsedHeader = CSVHeader((0..<fields.count).map { fields[$0] }, columns: kind.csvParser?.columns ?? [],
                                         aliases: kind.csvParser?.headerAliases ?? [:])
            self.header = parsedHeader
            missingColumns = (kind.csvParser?.requiredColumns ?? []).filter { !parsedHeader.has($0) }
            let read = Set(kind.csvParser?.readColumns ?? [])
            readPositions = parsedHeader.names.indices.filter { read.contains(parsedHeader.names[$0]) }
            var positionsByName: [String: [Int]] = [:]
            for position in readPositions { positionsByName[parsedHeader.names[position], default: []].append(position) }
            repeatedColumns = positionsByName.filter { $0.value.count > 1 }.map { (name: $0.key, positions: $0.value) }
                .sorted { $0.positions[0] < $1.positions[0] }
            return nil
        }
        func reject(_ reason: String) -> ParsedLine {
            ParsedLine(line: line, outcome: .rejected(reason), rejectedText: text.withUnsafeBufferPointer { Redaction.rejectText($0) })
        }
        if fields.count == 1, trimmedSpaces(fields[0]).isEmpty {
            return ParsedLine(line: line, outcome: .blank)
        }
        if let missing = missingColumns.first { return reject("header has no column '\(missing)'") }
        if fields.count != header.names.count {
            return reject("row has \(counted(fields.count, "field")), the header has \(header.names.count)")
        }
        guard let parser = kind.csvParser else { return ParsedLine(line: line, outcome: .ignored) }
        // Text is made with bad bytes replaced: an id or name read so would be another one, unsaid.
        if !fields.isASCII, let position = readPositions.first(where: { !fields.isValidUTF8($0) }) {
            return reject("invalid UTF-8 in '\(header.names[position])'")
        }
        // The parser reads a column's first cell, another reader its last: two values mean two rows.
        for column in repeatedColumns {
            let first = fields.trimmedField(column.positions[0])
            if column.positions.dropFirst().contains(where: { fields.trimmedField($0) != first }) {
                return reject(LineReject.columnGivenTwice(column.name).reason)
            }
        }
        do {
            return ParsedLine(line: line, outcome: try parser.parse(fields, header: header, rules: rules))
        } catch {
            return reject(error.reason)
        }
    }
}
