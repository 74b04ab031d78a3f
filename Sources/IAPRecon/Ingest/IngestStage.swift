import Foundation

/// What ingest did with one input file.
public struct IngestedFile: Sendable, Equatable {
    public enum Status: String, Sendable { case added, replaced, unchanged }
    public var path: String
    public var kind: SourceKind
    public var status: Status
    public var counts: LineCounts
    public var bytes: Int
}

/// The result of an ingest: per file, plus the files that could not be read.
public struct IngestReport: Sendable {
    public var files: [IngestedFile] = []
    public var unreadable: [InputError] = []

    public var totals: LineCounts { files.reduce(LineCounts()) { $0 + $1.counts } }
    public var bytes: Int { files.reduce(0) { $0 + $1.bytes } }
}

/// Stage 1, ingest: input files → `raw_*` tables and `rejects`, with `file:line` provenance.
///
/// Files are parsed in parallel on the worker pool; the calling thread is the
/// one writer and stores each file in one transaction, in path order. A file
/// whose content hash is already stored is skipped; a file whose content
/// changed replaces its earlier rows, so nothing is counted twice. A file
/// that cannot be read is rolled back and named in `unreadable`.
public enum IngestStage {
    enum Message: Sendable {
        case unchanged(bytes: Int)
        case start(hash: String, bytes: Int)
        case lines([ParsedLine])
        case end
        case failed(InputError)
    }

    public static func run(
        files: [SourceFile], database: Database, jobs: Int, progress: ((Int) -> Void)? = nil
    ) throws -> IngestReport {
        var known: [String: (hash: String, counts: LineCounts)] = [:]
        try database.forEach("SELECT path, content_hash, lines_read, accepted, rejected, blank, ignored FROM files") { row in
            known[row.string(0)] = (
                row.string(1),
                LineCounts(read: Int(row.int(2)), accepted: Int(row.int(3)), rejected: Int(row.int(4)),
                           blank: Int(row.int(5)), ignored: Int(row.int(6)))
            )
        }
        let knownHashes = known.mapValues(\.hash)
        var report = IngestReport()
        var writer: FileWriter?
        try WorkerPool(width: jobs).run(count: files.count, produce: { index, send in
            parse(files[index], knownHash: knownHashes[files[index].relativePath], send: send)
        }, consume: { index, message in
            let file = files[index]
            switch message {
            case .unchanged(let bytes):
                let counts = known[file.relativePath]?.counts ?? LineCounts()
                report.files.append(IngestedFile(path: file.relativePath, kind: file.kind, status: .unchanged, counts: counts, bytes: bytes))
            case .start(let hash, let bytes):
                writer = try FileWriter(database: database, file: file, hash: hash, bytes: bytes)
            case .lines(let lines):
                try writer?.write(lines)
                progress?(lines.count)
            case .end:
                if let finished = try writer?.commit() {
                    let status: IngestedFile.Status = known[file.relativePath] == nil ? .added : .replaced
                    report.files.append(IngestedFile(path: file.relativePath, kind: file.kind, status: status,
                                                     counts: finished.counts, bytes: finished.bytes))
                }
                writer = nil
            case .failed(let error):
                writer?.rollback()
                writer = nil
                report.unreadable.append(error)
            }
        })
        return report
    }

    /// Parses every line of `file` (on a worker thread), or reports it unchanged.
    static func parse(_ file: SourceFile, knownHash: String?, send: (Message) -> Void) {
        do {
            let (hash, bytes) = try ContentHash.of(path: file.absolutePath)
            if knownHash == hash {
                send(.unchanged(bytes: bytes))
                return
            }
            send(.start(hash: hash, bytes: bytes))
            try SourceFileParser.parse(file) { send(.lines($0)) }
            send(.end)
        } catch let error as InputError {
            send(.failed(error))
        } catch {
            send(.failed(InputError(path: file.absolutePath, reason: "\(error)")))
        }
    }

    /// Parses files without a store: the accounting `validate` prints.
    public static func validate(files: [SourceFile], jobs: Int) throws -> IngestReport {
        var report = IngestReport()
        var counts = LineCounts()
        var bytes = 0
        try WorkerPool(width: jobs).run(count: files.count, produce: { index, send in
            parse(files[index], knownHash: nil, send: send)
        }, consume: { index, message in
            switch message {
            case .start(_, let size):
                counts = LineCounts()
                bytes = size
            case .lines(let lines):
                for line in lines { counts.count(line.outcome) }
            case .end:
                report.files.append(IngestedFile(path: files[index].relativePath, kind: files[index].kind, status: .added,
                                                 counts: counts, bytes: bytes))
            case .failed(let error):
                report.unreadable.append(error)
            case .unchanged:
                break
            }
        })
        return report
    }
}

/// Stores one file's parsed lines in one transaction.
final class FileWriter {
    private let database: Database
    private let fileID: Int64
    private(set) var counts = LineCounts()
    let bytes: Int

    init(database: Database, file: SourceFile, hash: String, bytes: Int) throws {
        self.database = database
        self.bytes = bytes
        try database.execute("BEGIN IMMEDIATE")
        do {
            try database.run("DELETE FROM files WHERE path = ?", [.text(file.relativePath)])
            var id: Int64 = 0
            try database.forEach("""
                INSERT INTO files (path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
                VALUES (?, ?, ?, ?, 0, 0, 0, 0, 0, ?) RETURNING file_id
                """, [.text(file.relativePath), .text(file.kind.rawValue), .text(hash), .integer(Int64(bytes)),
                      .integer(Int64(Date().timeIntervalSince1970 * 1000))]) { id = $0.int(0) }
            fileID = id
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
    }

    func write(_ lines: [ParsedLine]) throws {
        for parsed in lines {
            counts.count(parsed.outcome)
            switch parsed.outcome {
            case .accepted(let rows):
                for row in rows {
                    let statement = try database.cached(row.table.insertSQL)
                    try statement.insert([.integer(fileID), .integer(Int64(parsed.line)), .integer(Int64(row.item))] + row.values)
                }
            case .rejected(let reason):
                try database.cached("INSERT INTO rejects (file_id, line, reason, text) VALUES (?, ?, ?, ?)")
                    .insert([.integer(fileID), .integer(Int64(parsed.line)), .text(reason), .text(parsed.rejectedText ?? "")])
            case .blank, .ignored:
                break
            }
        }
    }

    func commit() throws -> (counts: LineCounts, bytes: Int) {
        try database.run(
            "UPDATE files SET lines_read = ?, accepted = ?, rejected = ?, blank = ?, ignored = ? WHERE file_id = ?",
            [.integer(Int64(counts.read)), .integer(Int64(counts.accepted)), .integer(Int64(counts.rejected)),
             .integer(Int64(counts.blank)), .integer(Int64(counts.ignored)), .integer(fileID)])
        try database.execute("COMMIT")
        return (counts, bytes)
    }

    func rollback() {
        try? database.execute("ROLLBACK")
    }
}
