import Foundation

/// What one input line became.
public enum LineOutcome: Sendable, Equatable {
    case accepted([RawRow])
    case rejected(String)
    case blank
    /// A well-formed line of a kind iaprecon does not use (an unknown server event).
    case ignored
}

/// The input sources of CONTRACT.md §1, by their place in the input folder.
public enum SourceKind: String, CaseIterable, Sendable {
    case server, receipts, notifications, registrations, attribution, spend, catalog, fx

    var isCSV: Bool {
        switch self {
        case .attribution, .spend, .catalog, .fx: true
        default: false
        }
    }

    /// The source of a path relative to the input folder, or nil when it is not an input.
    static func of(relativePath: String) -> SourceKind? {
        let name = relativePath.hasSuffix(".gz") ? String(relativePath.dropLast(3)) : relativePath
        let parts = name.split(separator: "/")
        if parts.count == 1 {
            switch parts[0] {
            case "catalog.csv": return .catalog
            case "fx.csv": return .fx
            default: return nil
            }
        }
        guard parts.count == 2, let kind = SourceKind(rawValue: String(parts[0])) else { return nil }
        switch kind {
        case .server, .receipts, .notifications, .registrations: return parts[1].hasSuffix(".jsonl") ? kind : nil
        case .attribution, .spend: return parts[1].hasSuffix(".csv") ? kind : nil
        case .catalog, .fx: return nil
        }
    }

    func parse(json object: JSONObject, signatures: JWSVerifier) throws(LineReject) -> LineOutcome {
        switch self {
        case .server: try ServerLogParser.parse(object)
        case .receipts: try ReceiptParser.parse(object, signatures: signatures)
        case .notifications: try NotificationParser.parse(object, signatures: signatures)
        case .registrations: try RegistrationParser.parse(object)
        case .attribution, .spend, .catalog, .fx: .ignored
        }
    }

    var csvParser: (any CSVRowParser.Type)? {
        switch self {
        case .attribution: MMPEventParser.self
        case .spend: SpendParser.self
        case .catalog: CatalogParser.self
        case .fx: FXParser.self
        default: nil
        }
    }
}

/// An input file found in the input folder.
public struct SourceFile: Sendable, Equatable {
    /// The path relative to the input folder, as stored and reported (`server/2026-11-28.jsonl`).
    public var relativePath: String
    public var absolutePath: String
    public var kind: SourceKind

    /// Lists every input file under `folder`, sorted by relative path.
    ///
    /// Two layouts: the contract's (`server/`, `receipts/`, ..., `catalog.csv`), or a
    /// partitioned root whose `YYYY-MM-DD/` folders each hold that layout, as servers
    /// write them day by day; their files are named `2026-11-28/server/x.jsonl`.
    /// - Throws: `InputError` when the folder or a source sub-folder cannot be read.
    public static func list(in folder: String) throws(InputError) -> [SourceFile] {
        var files: [SourceFile] = []
        for name in try entries(of: folder) {
            let path = folder + "/" + name
            if isDirectory(path), isPartitionName(name) {
                files += try layout(in: path, prefix: name + "/")
            }
        }
        files += try layout(in: folder, prefix: "")
        return files.sorted { $0.relativePath < $1.relativePath }
    }

    /// `YYYY-MM-DD`, the name of a daily partition.
    public static func isPartitionName(_ name: String) -> Bool {
        name.utf8.count == 10 && Timestamp.startOfDay(name) != nil
    }

    private static func entries(of folder: String) throws(InputError) -> [String] {
        guard isDirectory(folder) else { throw InputError(path: folder, reason: "no such folder") }
        guard FileManager.default.isReadableFile(atPath: folder),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw InputError(path: folder, reason: "permission denied")
        }
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// The contract's layout inside `folder`.
    private static func layout(in folder: String, prefix: String) throws(InputError) -> [SourceFile] {
        var files: [SourceFile] = []
        for name in try entries(of: folder) {
            let path = folder + "/" + name
            if isDirectory(path) {
                guard let kind = SourceKind(rawValue: name), kind != .catalog, kind != .fx else { continue }
                for child in try entries(of: path) {
                    let relative = name + "/" + child
                    // A folder named like a source file is listed too: reading it fails, naming it (exit 3).
                    if let kind = SourceKind.of(relativePath: relative) {
                        files.append(SourceFile(relativePath: prefix + relative, absolutePath: path + "/" + child, kind: kind))
                    }
                }
            } else if let kind = SourceKind.of(relativePath: name) {
                files.append(SourceFile(relativePath: prefix + name, absolutePath: path, kind: kind))
            }
        }
        return files
    }
}

/// One parsed line, in file order.
public struct ParsedLine: Sendable, Equatable {
    public var line: Int
    public var outcome: LineOutcome
    /// The line's text, redacted, for rejects only.
    public var rejectedText: String?
}

/// Line accounting for one file: read = accepted + rejected + blank + ignored.
public struct LineCounts: Sendable, Equatable, Codable {
    public var read = 0
    public var accepted = 0
    public var rejected = 0
    public var blank = 0
    public var ignored = 0

    public init(read: Int = 0, accepted: Int = 0, rejected: Int = 0, blank: Int = 0, ignored: Int = 0) {
        self.read = read
        self.accepted = accepted
        self.rejected = rejected
        self.blank = blank
        self.ignored = ignored
    }

    mutating func count(_ outcome: LineOutcome) {
        read += 1
        switch outcome {
        case .accepted: accepted += 1
        case .rejected: rejected += 1
        case .blank: blank += 1
        case .ignored: ignored += 1
        }
    }

    public static func + (lhs: LineCounts, rhs: LineCounts) -> LineCounts {
        LineCounts(read: lhs.read + rhs.read, accepted: lhs.accepted + rhs.accepted, rejected: lhs.rejected + rhs.rejected,
                   blank: lhs.blank + rhs.blank, ignored: lhs.ignored + rhs.ignored)
    }
}

/// Parses the lines of one source file into `ParsedLine`s, handed over in batches.
///
/// JSON Lines: each line is one record. CSV: line 1 is the header and each
/// later line one record (see `CSVRecordAssembler`).
enum SourceFileParser {
    static let batchLines = 1024

    /// Parses `file`, or the chunk `range` of a plain JSON Lines file; returns the lines read.
    @discardableResult
    static func parse(_ file: SourceFile, range: Range<Int>? = nil, signatures: JWSVerifier,
                      batch: ([ParsedLine]) throws -> Void) throws -> Int {
        var pending: [ParsedLine] = []
        pending.reserveCapacity(batchLines)
        func add(_ parsed: ParsedLine) throws {
            pending.append(parsed)
            if pending.count >= batchLines {
                try batch(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        let count: Int
        if file.kind.isCSV {
            var reader = CSVRecordAssembler(kind: file.kind)
            count = try LineReader.forEachLine(path: file.absolutePath) { line in
                for parsed in reader.feed(line) { try add(parsed) }
            }
        } else {
            count = try LineReader.forEachLine(path: file.absolutePath, range: range) { line in
                try add(parseJSONLine(line, kind: file.kind, signatures: signatures))
            }
        }
        if !pending.isEmpty { try batch(pending) }
        return count
    }

    static func parseJSONLine(_ line: LineReader.Line, kind: SourceKind, signatures: JWSVerifier) -> ParsedLine {
        if line.tooLong { return reject(line, "line longer than \(LineReader.maximumLineBytes >> 20) MiB") }
        if line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
            return ParsedLine(line: line.number, outcome: .blank)
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line.bytes)
        } catch {
            return reject(line, "not JSON: \(error)")
        }
        guard case .object(let object) = value else { return reject(line, "not a JSON object") }
        do {
            return ParsedLine(line: line.number, outcome: try kind.parse(json: object, signatures: signatures))
        } catch {
            return reject(line, error.reason)
        }
    }

    static func reject(_ line: LineReader.Line, _ reason: String) -> ParsedLine {
        ParsedLine(line: line.number, outcome: .rejected(reason), rejectedText: Redaction.rejectText(line.bytes))
    }
}

/// Parses CSV lines into records: line 1 is the header, each later line one record.
///
/// A record never spans lines: a line whose quotes do not balance is rejected
/// as `unbalanced quotes`, so one stray quote costs exactly its own line and
/// never swallows the good lines after it. (MMP exports keep JSON in
/// `Event Value` on one line; a quoted newline would be split and rejected,
/// which the accounting shows.)
struct CSVRecordAssembler {
    let kind: SourceKind
    private var header: CSVHeader?
    private var missingColumns: [String] = []

    init(kind: SourceKind) { self.kind = kind }

    mutating func feed(_ line: LineReader.Line) -> [ParsedLine] {
        if line.tooLong {
            return [SourceFileParser.reject(line, "line longer than \(LineReader.maximumLineBytes >> 20) MiB")]
        }
        guard let fields = CSV.row(line.bytes) else {
            if header == nil {
                // The header itself is broken: every row will say which column it lacks.
                header = CSVHeader([])
                missingColumns = kind.csvParser?.requiredColumns ?? []
                return []
            }
            return [SourceFileParser.reject(line, "unbalanced quotes")]
        }
        return record(fields, line: line.number).map { [$0] } ?? []
    }

    /// A parsed record, or nil for the header (which is not counted as a line read).
    private mutating func record(_ fields: CSVRow, line: Int) -> ParsedLine? {
        let text = fields.bytes
        guard let header else {
            let parsedHeader = CSVHeader((0..<fields.count).map { fields[$0] }, columns: kind.csvParser?.columns ?? [])
            self.header = parsedHeader
            missingColumns = (kind.csvParser?.requiredColumns ?? []).filter { !parsedHeader.has($0) }
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
            return reject("row has \(fields.count) fields, the header has \(header.names.count)")
        }
        guard let parser = kind.csvParser else { return ParsedLine(line: line, outcome: .ignored) }
        do {
            return ParsedLine(line: line, outcome: try parser.parse(fields, header: header))
        } catch {
            return reject(error.reason)
        }
    }
}

/// Keeps receipt blobs and JWS strings out of `rejects` (data minimisation).
enum Redaction {
    static let maximumBytes = 300
    static let longTokenBytes = 64
    /// Only the start of a huge line is looked at.
    static let scanBytes = 64 * 1024

    /// The line as text, with every long base64-like run replaced and the whole cut to 300 bytes.
    static func rejectText(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var output: [UInt8] = []
        var run: [UInt8] = []
        var runLength = 0
        func flush() {
            if runLength >= longTokenBytes {
                output += Array("[\(runLength) bytes redacted]".utf8)
            } else {
                output += run
            }
            run.removeAll(keepingCapacity: true)
            runLength = 0
        }
        for byte in bytes.prefix(scanBytes) {
            if output.count > maximumBytes { break }
            let tokenByte = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2B || byte == 0x2F || byte == 0x3D || byte == 0x5F || byte == 0x2D || byte == 0x2E
            if tokenByte {
                runLength += 1
                if run.count < longTokenBytes { run.append(byte) }
            } else {
                flush()
                output.append(byte)
            }
        }
        flush()
        var cut = output.count > maximumBytes || bytes.count > scanBytes
        var text = String(decoding: output.prefix(maximumBytes), as: UTF8.self)
        // Invalid bytes decode as U+FFFD (3 bytes each): cut again to the limit.
        while text.utf8.count > maximumBytes {
            text.removeLast()
            cut = true
        }
        return cut ? text + "…" : text
    }
}
