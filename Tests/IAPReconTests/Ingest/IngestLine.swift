import Foundation
@testable import IAPRecon

/// Feeds text to the ingest parsers the way `LineReader` hands lines over.
enum IngestLine {
    /// What a line says, its signatures unchecked: the signature tests pass their own rules.
    static let unsigned = LineRules(signatures: .trustUnsigned)

    /// One JSON Lines line of `kind`, as line `number`.
    static func parse(_ text: String, _ kind: SourceKind, number: Int = 1, tooLong: Bool = false, rules: LineRules = IngestLine.unsigned) -> ParsedLine {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            SourceFileParser.parseJSONLine(LineReader.Line(number: number, bytes: buffer, tooLong: tooLong), kind: kind, rules: rules)
        }
    }

    /// The reject reason of a line, or nil when it was not rejected.
    static func reason(_ text: String, _ kind: SourceKind, rules: LineRules = IngestLine.unsigned) -> String? {
        if case .rejected(let reason) = parse(text, kind, rules: rules).outcome { return reason }
        return nil
    }

    /// The rows of an accepted line, or nil when it was not accepted.
    static func rows(_ text: String, _ kind: SourceKind, rules: LineRules = IngestLine.unsigned) -> [RawRow]? {
        if case .accepted(let rows) = parse(text, kind, rules: rules).outcome { return rows }
        return nil
    }

    /// Physical CSV lines, numbered from 1, through a fresh assembler, then the end of the file.
    static func csv(_ kind: SourceKind, _ lines: [String], rules: LineRules = IngestLine.unsigned) -> [ParsedLine] {
        var assembler = CSVRecordAssembler(kind: kind, rules: rules)
        var parsed: [ParsedLine] = []
        for (index, text) in lines.enumerated() {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBufferPointer { buffer in
                assembler.feed(LineReader.Line(number: index + 1, bytes: buffer, tooLong: false)) { parsed.append($0) }
            }
        }
        assembler.finish { parsed.append($0) }
        return parsed
    }

    /// What became of each line, as `"3 rejected: reason"`.
    static func outcomes(_ parsed: [ParsedLine]) -> [String] {
        parsed.map { line in
            switch line.outcome {
            case .accepted: "\(line.line) accepted"
            case .rejected(let reason): "\(line.line) rejected: \(reason)"
            case .blank: "\(line.line) blank"
            case .ignored, .ignoredKeeping: "\(line.line) ignored"
            }
        }
    }

    /// `body` with the fields of the object `text` holds, read onto a tape as ingest reads a line.
    static func withFields<Result>(_ text: String, _ body: (Fields) throws -> Result) throws -> Result {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            let tape = JSONTape()
            try tape.read(buffer)
            return try tape.withRoot(in: buffer) { root in
                guard root.kind == .object else { throw NotAnObject() }
                return try body(Fields(root))
            }
        }
    }

    /// `body` with the fields of `object`, written out and read onto a tape.
    static func withFields<Result>(_ object: JSONObject, _ body: (Fields) throws -> Result) throws -> Result {
        try withFields(JSONWriter.compact(.object(object)), body)
    }

    /// A notification line's outcome, or its reject thrown.
    static func notification(_ text: String, rules: LineRules = IngestLine.unsigned) throws -> LineOutcome {
        try withFields(text) { try NotificationParser.parse($0, rules: rules) }
    }

    /// The object of a JSON text.
    static func object(_ text: String) throws -> JSONObject {
        guard let object = try JSONParser.parse(text).objectValue else { throw NotAnObject() }
        return object
    }

    struct NotAnObject: Error {}

    /// A raw `raw_apple__transactions` row: every column null except `values`.
    static func appleTransactionRow(_ values: [String: SQLValue]) -> [String: SQLValue] {
        var row: [String: SQLValue] = [:]
        for column in RawTable.appleTransactions.columns { row[column] = .null }
        for (column, value) in values {
            precondition(row[column] != nil, "no column \(column)")
            row[column] = value
        }
        return row
    }
}

extension RawRow {
    /// The row's values by column name.
    var byColumn: [String: SQLValue] {
        Dictionary(uniqueKeysWithValues: zip(table.columns, values))
    }
}
