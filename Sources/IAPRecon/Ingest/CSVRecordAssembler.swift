/// Parses CSV lines into records: line 1 is the header, each later line one record.
///
/// A quoted cell may hold line breaks (RFC 4180; a user agent, an address, pretty-printed JSON):
/// its record goes on over the lines up to the one where the cell closes, is one line read, and
/// is numbered by the line it starts on; the lines after it keep their own numbers, so `file:line`
/// still points at each record's first line. Parsing is sequential within a file (CSV files are
/// never parsed in chunks), so the lines of one record never reach two workers.
///
/// A stray quote must not swallow the good lines after it, which RFC 4180 alone would read as one
/// cell up to the next stray quote or the end of the file. So a record over several lines is given
/// up when its quote is still open at the end of the file, or after `maximumRecordLines` lines or
/// `LineReader.maximumLineBytes` bytes, or when closing it makes a row whose width is not the
/// header's: its first line is rejected as `unbalanced quotes` (saying which, but at the end of the
/// file) and reading resumes at the line after that one, so one stray quote costs its own line.
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
    /// The record being read whose quoted cell is still open at the end of its last line so far.
    private var open: OpenRecord?

    /// The most lines one record may span: a quoted line break is a cell's few lines of text, and
    /// a quote still open after this many is a stray one.
    static let maximumRecordLines = 1000

    /// A record read over several lines: its bytes with the line breaks between them, and each line's place.
    private struct OpenRecord {
        struct Piece {
            var number: Int
            var range: Range<Int>
            var endsWithCR: Bool
        }

        var bytes: [UInt8] = []
        var lines: [Piece] = []

        init(_ line: LineReader.Line) { add(line) }

        var number: Int { lines[0].number }

        /// Adds `line`, after the break that ended the line before.
        mutating func add(_ line: LineReader.Line) {
            if let last = lines.last { bytes += last.endsWithCR ? [0x0D, 0x0A] : [0x0A] }
            let start = bytes.count
            bytes.append(contentsOf: line.bytes)
            lines.append(Piece(number: line.number, range: start..<bytes.count, endsWithCR: line.endsWithCR))
        }
    }

    init(kind: SourceKind, rules: LineRules = LineRules()) {
        self.kind = kind
        self.rules = rules
    }

    /// Reads `line`, passing `emit` what became of each record it ends: none while a quoted cell
    /// goes on past it or for the header, which is not counted as a line read; one most often;
    /// more when a record given up is read again line by line.
    mutating func feed(_ line: LineReader.Line, _ emit: (ParsedLine) throws -> Void) rethrows {
        if header != nil { headerReject = nil }
        if open != nil { return try extend(with: line, emit) }
        if let parsed = read(line) { try emit(parsed) }
    }

    /// After the file's last line: a record whose quoted cell never closed, given up, and the
    /// header's reject when it lacks a needed column and no line followed it, which would otherwise
    /// leave the file read as empty.
    mutating func finish(_ emit: (ParsedLine) throws -> Void) rethrows {
        while let record = open {
            try giveUp(record, "unbalanced quotes", emit)
        }
        if let headerReject { try emit(headerReject) }
        headerReject = nil
    }

    /// What became of the single line `line`, or nil for the header or a line that opens a quoted
    /// cell it does not close (then `open`).
    private mutating func read(_ line: LineReader.Line) -> ParsedLine? {
        if line.tooLong {
            return SourceFileParser.reject(line, "line longer than \(LineReader.maximumLineBytes >> 20) MiB")
        }
        let maximumFields = header?.names.count ?? CSV.maximumHeaderFields
        guard let fields = kind == .apple ? CSV.tabRow(line.bytes, maximumFields: maximumFields) : CSV.row(line.bytes, maximumFields: maximumFields) else {
            open = OpenRecord(line)
            return nil
        }
        return take(fields, line)
    }

    /// Adds `line` to the open record; once its quoted cell closes, the record is read.
    private mutating func extend(with line: LineReader.Line, _ emit: (ParsedLine) throws -> Void) rethrows {
        guard var record = open else { return }
        open = nil
        guard !line.tooLong, record.bytes.count + 2 + line.bytes.count <= LineReader.maximumLineBytes else {
            try giveUp(record, "unbalanced quotes (a quoted cell still open after \(LineReader.maximumLineBytes >> 20) MiB)", emit)
            return try feed(line, emit)
        }
        guard record.lines.count < Self.maximumRecordLines else {
            try giveUp(record, "unbalanced quotes (a quoted cell still open after \(Self.maximumRecordLines) lines)", emit)
            return try feed(line, emit)
        }
        record.add(line)
        guard !CSV.quotedCellStaysOpen(continuing: line.bytes) else {
            open = record
            return
        }
        let maximumFields = header?.names.count ?? CSV.maximumHeaderFields
        guard let fields = record.bytes.withUnsafeBufferPointer({ CSV.row($0, maximumFields: maximumFields) }) else {
            // `quotedCellStaysOpen` reads quotes as `row` does: not met, but then the cell is open still.
            open = record
            return
        }
        if let header {
            let fieldCount = fields.excessFieldCount ?? fields.count
            if fieldCount != header.names.count {
                let reason = "unbalanced quotes (closing its quoted cell on line \(line.number) makes a row of "
                    + "\(counted(fieldCount, "field")), the header has \(header.names.count))"
                return try giveUp(record, reason, emit)
            }
        }
        let parsed = record.bytes.withUnsafeBufferPointer { bytes in
            take(fields, LineReader.Line(number: record.number, bytes: bytes, tooLong: false))
        }
        if let parsed { try emit(parsed) }
    }

    /// Rejects the first line of `record` for `reason` (a header so is read as broken), and reads its
    /// other lines again one by one, as if that line had ended the record.
    private mutating func giveUp(_ record: OpenRecord, _ reason: String, _ emit: (ParsedLine) throws -> Void) rethrows {
        open = nil
        try record.bytes.withUnsafeBufferPointer { bytes in
            func line(_ piece: OpenRecord.Piece) -> LineReader.Line {
                LineReader.Line(number: piece.number, bytes: UnsafeBufferPointer(rebasing: bytes[piece.range]), tooLong: false,
                                endsWithCR: piece.endsWithCR)
            }
            if header == nil {
                brokenHeader(line(record.lines[0]))
            } else {
                try emit(SourceFileParser.reject(line(record.lines[0]), reason))
            }
            for piece in record.lines.dropFirst() { try feed(line(piece), emit) }
        }
    }

    /// A header that cannot be read: every row will say which column it lacks.
    private mutating func brokenHeader(_ line: LineReader.Line) {
        header = CSVHeader([])
        missingColumns = kind.csvParser?.requiredColumns ?? []
        headerReject = rejectingHeader(line)
    }

    /// What became of the record of `fields`, read from `line` (its lines joined), or nil for the header.
    private mutating func take(_ fields: CSVRow, _ line: LineReader.Line) -> ParsedLine? {
        if let fieldCount = fields.excessFieldCount {
            guard let header else {
                // A header of thousands of columns is no export's.
                brokenHeader(line)
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

    /// The header line rejected for the first column it lacks, or nil when it has them all. A lone CR
    /// inside it says why a column that looks present is not: the file's lines end in a lone CR.
    private func rejectingHeader(_ line: LineReader.Line) -> ParsedLine? {
        let bytes = line.bytes
        let loneCR = bytes.indices.contains { bytes[$0] == 0x0D && ($0 + 1 == bytes.count || bytes[$0 + 1] != 0x0A) }
        return missingColumns.first.map { SourceFileParser.reject(line, "header has no column '\($0)'" + (loneCR ? " (its lines end in a lone CR)" : "")) }
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
