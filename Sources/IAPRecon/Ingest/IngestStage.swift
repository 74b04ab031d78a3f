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

/// How far ingest has come, for a progress line.
public enum IngestProgress: Sendable {
    /// The bytes of the files that will be parsed (unchanged files are skipped).
    case planned(bytes: Int)
    case lines(Int)
    /// A file was stored; its size on disk.
    case fileDone(bytes: Int)
}

/// One rejected line, for a person reading `validate`'s output.
public struct RejectedLine: Sendable, Equatable {
    public var path: String
    public var line: Int
    public var reason: String
    public var text: String
}

/// The result of an ingest: per file, plus the files that could not be read.
public struct IngestReport: Sendable {
    public var files: [IngestedFile] = []
    public var unreadable: [InputError] = []
    /// Paths under the input folder that match no source, so were not read.
    public var ignored: [String] = []
    /// `validate`: the first rejected lines, in file order (their text redacted as in `rejects.csv`).
    public var firstRejects: [RejectedLine] = []

    public var totals: LineCounts { files.reduce(LineCounts()) { $0 + $1.counts } }
    public var bytes: Int { files.reduce(0) { $0 + $1.bytes } }
}

/// Stage 1, ingest: input files → `raw_*` tables and `rejects`, with `file:line` provenance.
///
/// First every file's content hash is taken (in parallel): a file whose hash
/// is already stored is skipped, a changed one replaces its earlier rows, so
/// nothing is counted twice. Then the files are parsed on the worker pool —
/// whole, or for a large plain JSON Lines file, in newline-aligned chunks of
/// `chunkBytes` — while the calling thread, the one writer, stores each file
/// in one transaction, in path order. Chunk line numbers are made global by
/// the writer, which sees the chunks in order. A file that cannot be read is
/// rolled back and named in `unreadable`; the others are stored.
public enum IngestStage {
    /// Plain JSON Lines files larger than this are parsed in chunks of this size.
    public static let chunkBytes = 8 << 20

    enum Message: Sendable {
        case lines(LineBatch)
        /// The job is done; it read this many lines.
        case end(Int)
        case failed(InputError)

        var byteCount: Int {
            if case .lines(let batch) = self { return batch.byteCount }
            return 0
        }
    }

    /// What parsed batches may wait for the writer beyond the pool's few per job, all jobs
    /// together. A file that is one job (a CSV, a gzip) may hold many batches: without this, the
    /// other worker would stop after a few batches of the next file until it was written.
    static let runAhead = RunAhead<Message>(bytes: 32 << 20) { $0.byteCount }

    struct Job: Sendable {
        var fileIndex: Int
        var range: Range<Int>?
        var isFirst: Bool
        var isLast: Bool
    }

    struct Fingerprint: Sendable {
        var hash: String
        var bytes: Int
        var modifiedNs: Int64
        /// The file's hash of the kind an older store holds, when its stored hash is of that kind.
        var oneLaneHash: String?

        func matches(_ stored: String) -> Bool { stored == hash || stored == oneLaneHash }
    }

    /// Content hashes of `files`, in parallel; an unreadable file gives its error.
    ///
    /// A file whose size and modification time are what they were when it was stored, and which
    /// had then been left alone for a second already, is not read again: any later write would
    /// have moved its modification time. So a night over months of history reads only new files.
    static func fingerprints(_ files: [SourceFile], known: [String: KnownFile], jobs: Int) throws -> [Result<Fingerprint, InputError>] {
        var results: [Result<Fingerprint, InputError>] = []
        try WorkerPool(width: jobs).run(count: files.count, produce: { index, send in
            send(Result { () throws(InputError) -> Fingerprint in
                let file = files[index]
                var status = stat()
                guard stat(file.absolutePath, &status) == 0 else {
                    throw InputError(path: file.absolutePath, reason: String(cString: strerror(errno)))
                }
                let modifiedNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
                if let previous = known[file.relativePath], previous.bytes == Int(status.st_size), previous.modifiedNs == modifiedNs,
                   modifiedNs / 1_000_000 <= previous.ingestedMs - 1_000 {
                    return Fingerprint(hash: previous.hash, bytes: previous.bytes, modifiedNs: modifiedNs)
                }
                let stored = known[file.relativePath]?.hash
                let (hash, oneLane, bytes) = try ContentHash.of(path: file.absolutePath, oneLaneToo: stored.map(ContentHash.isOneLane) ?? false)
                return Fingerprint(hash: hash, bytes: bytes, modifiedNs: modifiedNs, oneLaneHash: oneLane)
            })
        }, consume: { _, result in results.append(result) })
        return results
    }

    /// The parse jobs of one file: one, or one per chunk of a large plain JSON Lines file.
    static func jobs(for file: SourceFile, fileIndex: Int, bytes: Int, chunkBytes: Int) -> [Job] {
        guard !file.kind.isCSV, !file.absolutePath.hasSuffix(".gz"), bytes > chunkBytes else {
            return [Job(fileIndex: fileIndex, range: nil, isFirst: true, isLast: true)]
        }
        let count = (bytes + chunkBytes - 1) / chunkBytes
        return (0..<count).map { chunk in
            let lower = chunk * chunkBytes
            let upper = chunk == count - 1 ? Int.max : (chunk + 1) * chunkBytes
            return Job(fileIndex: fileIndex, range: lower..<upper, isFirst: chunk == 0, isLast: chunk == count - 1)
        }
    }

    static func run(
        files: [SourceFile], store: some IngestStore, jobs width: Int, chunkBytes: Int = IngestStage.chunkBytes,
        rules: LineRules = LineRules(), progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestReport {
        Trace.mark("ingest start")
        let known = try store.knownFiles()
        let pseudonyms = try store.deviceIDPseudonyms()
        var report = IngestReport()
        var jobs: [Job] = []
        var outcomes: [IngestedFile?] = Array(repeating: nil, count: files.count)
        var failures: [InputError?] = Array(repeating: nil, count: files.count)
        let prints = try fingerprints(files, known: known, jobs: width)
        Trace.mark("ingest fingerprints")
        for (index, file) in files.enumerated() {
            switch prints[index] {
            case .failure(let error):
                failures[index] = error
            case .success(let print):
                if let previous = known[file.relativePath], print.matches(previous.hash) {
                    if previous.modifiedNs != print.modifiedNs {
                        // Same bytes, touched: remember the new time so the next night need not read it (and
                        // the hash of the current kind).
                        try store.touched(file.relativePath, modifiedNs: print.modifiedNs, hash: print.hash)
                    }
                    outcomes[index] = IngestedFile(path: file.relativePath, kind: file.kind, status: .unchanged,
                                                   counts: previous.counts, bytes: print.bytes)
                } else {
                    jobs += Self.jobs(for: file, fileIndex: index, bytes: print.bytes, chunkBytes: chunkBytes)
                }
            }
        }
        var writer: (any StoredFileWriter)?
        var lineOffset = 0
        let jobList = jobs
        let plannedBytes = Set(jobs.map(\.fileIndex)).reduce(0) { total, index in
            if case .success(let print) = prints[index] { return total + print.bytes }
            return total
        }
        progress?(.planned(bytes: plannedBytes))
        // A load that adds a quarter or more of what the store holds is a bulk load: the store
        // may then drop what it would otherwise update row by row (normalize rebuilds it).
        let bulk = try plannedBytes > 0 && Int64(plannedBytes) * 4 >= store.storedBytes()
        try store.beginLoad(bulk: bulk)
        defer { store.endLoad(bulk: bulk) }
        Trace.mark("ingest planned (\(bulk ? "bulk" : "adding"))")
        try WorkerPool(width: width).run(count: jobList.count, runAhead: Self.runAhead, produce: { index, send in
            parse(files[jobList[index].fileIndex], range: jobList[index].range, rules: rules, pseudonyms: pseudonyms, send: send)
        }, consume: { (index: Int, message: Message) in
            let job = jobList[index]
            let file = files[job.fileIndex]
            guard failures[job.fileIndex] == nil, case .success(let print) = prints[job.fileIndex] else { return }
            if job.isFirst, writer == nil {
                writer = try store.beginFile(path: file.relativePath, source: file.kind, hash: print.hash, bytes: print.bytes,
                                             modifiedNs: print.modifiedNs)
                lineOffset = 0
            }
            switch message {
            case .lines(let batch):
                try writer?.write(batch, lineOffset: lineOffset)
                progress?(.lines(batch.lines))
            case .end(let count):
                lineOffset += count
                guard job.isLast, let finished = try writer?.commit() else { return }
                progress?(.fileDone(bytes: finished.bytes))
                outcomes[job.fileIndex] = IngestedFile(
                    path: file.relativePath, kind: file.kind, status: known[file.relativePath] == nil ? .added : .replaced,
                    counts: finished.counts, bytes: finished.bytes)
                writer = nil
            case .failed(let error):
                writer?.rollback()
                writer = nil
                failures[job.fileIndex] = error
            }
        })
        Trace.mark("ingest parsed and written")
        report.files = outcomes.compactMap { $0 }
        report.unreadable = failures.compactMap { $0 }
        return report
    }

    /// Parses one file, or one chunk of it, on a worker: its lines in batches, then its line count or why it failed.
    static func parse(
        _ file: SourceFile, range: Range<Int>?, rules: LineRules, packingRows: Bool = true, pseudonyms: DeviceIDPseudonyms? = nil,
        send: (Message) -> Void
    ) {
        do {
            send(.end(try SourceFileParser.parse(file, range: range, rules: rules) {
                send(.lines(LineBatch($0, packingRows: packingRows, pseudonyms: pseudonyms)))
            }))
        } catch let error as InputError {
            send(.failed(error))
        } catch {
            send(.failed(InputError(path: file.absolutePath, reason: "\(error)")))
        }
    }

    /// Parses files without a store: the accounting `validate` prints, and its first `keepRejects` rejects.
    public static func validate(files: [SourceFile], jobs width: Int, keepRejects: Int = 10, rules: LineRules = LineRules()) throws -> IngestReport {
        var report = IngestReport()
        var counts = LineCounts()
        try WorkerPool(width: width).run(count: files.count, runAhead: Self.runAhead, produce: { index, send in
            parse(files[index], range: nil, rules: rules, packingRows: false, send: send)
        }, consume: { (index: Int, message: Message) in
            switch message {
            case .lines(let batch):
                counts = counts + batch.counts
                for reject in batch.rejects where report.firstRejects.count < keepRejects {
                    report.firstRejects.append(RejectedLine(path: files[index].relativePath, line: reject.line,
                                                            reason: reject.reason, text: reject.text))
                }
            case .end:
                let bytes = ((try? FileManager.default.attributesOfItem(atPath: files[index].absolutePath))?[.size] as? Int) ?? 0
                report.files.append(IngestedFile(path: files[index].relativePath, kind: files[index].kind, status: .added,
                                                 counts: counts, bytes: bytes))
                counts = LineCounts()
            case .failed(let error):
                report.unreadable.append(error)
                counts = LineCounts()
            }
        })
        return report
    }
}
