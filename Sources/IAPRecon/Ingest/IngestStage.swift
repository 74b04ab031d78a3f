import Foundation

/// What ingest did with one input file.
public struct IngestedFile: Sendable, Equatable {
    /// `emptied`: the file holds no byte now (cut to nothing, or a gzip of nothing) while the store
    /// holds lines of it, which are kept as a file's that left the folder are (CONTRACT.md §1).
    public enum Status: String, Sendable { case added, replaced, unchanged, emptied }
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
    /// What a person should know of the lines this ingest read: consumption requests no report can
    /// answer, notifications and Sales Report rows of a type Apple does not document.
    public var warnings: [String] = []
    /// What must be seen even under `--quiet`, since stored lines depend on it: a file empty now
    /// whose stored lines are kept, a changed file holding fewer lines than the ones it replaces.
    public var alerts: [String] = []
    /// The accepted notifications of a type Apple does not document in the files this ingest read.
    public var unknownNotificationTypes = UndocumentedTypes(.notifications)
    /// The Sales Report rows of a Product Type Identifier Apple does not list, in the files this ingest read.
    public var unknownProductTypes = UndocumentedTypes(.salesReportRows)

    public var totals: LineCounts { files.reduce(LineCounts()) { $0 + $1.counts } }
    public var bytes: Int { files.reduce(0) { $0 + $1.bytes } }
}

/// Lines of types Apple does not document: how many of each type, and the first few lines.
public struct UndocumentedTypes: Sendable {
    /// What the lines are: notifications (of a `notificationType`), or Sales Report rows (of a Product Type Identifier).
    public enum Subject: Sendable {
        case notifications, salesReportRows
    }

    /// How many lines the warning names; the rest are counted.
    static let named = 5
    public let subject: Subject
    public private(set) var counts: [String: Int] = [:]
    public private(set) var total = 0
    /// The first `named` of them, in file and line order, as `path:line`.
    public private(set) var firstSources: [String] = []

    init(_ subject: Subject) {
        self.subject = subject
    }

    mutating func add(type: String, source: @autoclosure () -> String) {
        counts[type, default: 0] += 1
        total += 1
        if firstSources.count < Self.named { firstSources.append(source()) }
    }

    mutating func add(_ other: UndocumentedTypes) {
        for (type, count) in other.counts { counts[type, default: 0] += count }
        total += other.total
        firstSources += other.firstSources.prefix(Self.named - firstSources.count)
    }

    /// The warning that names them, said once, by the ingest that reads them.
    var warnings: [String] {
        guard total > 0 else { return [] }
        let types = counts.keys.sorted().map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
        let shown = firstSources.joined(separator: ", ") + (total > firstSources.count ? " and \(total - firstSources.count) more" : "")
        if subject == .salesReportRows {
            let rows = total == 1 ? "1 Sales Report row has" : "\(total) Sales Report rows have"
            let them = total == 1 ? "it is read as one of the app's own rows, so it is" : "they are read as the app's own rows, so they are"
            return ["\(rows) a Product Type Identifier iaprecon does not know (\(types)); \(them) left out of the tie-out: "
                    + "if Apple added an in-app type, its sales are not compared; \(shown)"]
        }
        // What iaprecon does with them, in a reader's words: a new type may mean a refund, and is not read as one.
        let notifications = total == 1 ? "1 notification has" : "\(total) notifications have"
        let treated = total == 1
            ? "it is treated as any other notification: a transaction it carries counts as a purchase Apple confirmed, "
                + "and as refunded only if it gives a refund date"
            : "they are treated as any other notification: the transactions they carry count as purchases Apple confirmed, "
                + "and as refunded only if they give a refund date"
        let meaning = counts.count == 1 ? "what it means" : "what they mean"
        return ["\(notifications) a type iaprecon does not know (\(types)); \(treated); check Apple's notes for \(meaning): \(shown)"]
    }
}

/// Stage 1, ingest: input files → `raw_*` tables and `rejects`, with `file:line` provenance.
///
/// First every stored file's content hash is taken (in parallel): a file whose
/// hash is already stored is skipped, a changed one replaces its earlier rows,
/// so nothing is counted twice (one that holds no byte now keeps them, and says
/// so); a new file is hashed by the jobs that parse it, from the bytes they
/// read, so it is read once. The files are parsed on the worker pool —
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
        /// The job is done; it read this many lines, and for a file planning did not hash, hashed
        /// the bytes of its lines (`ContentHash.Pieces` joins the file's in order).
        case end(lines: Int, read: ContentHash.Piece?)
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
        var olderHash: String?
        /// The hash of its first bytes, as many as the store holds of it, when it is that long: the stored
        /// hash when the file was only appended to since.
        var storedPrefixHash: String?

        func matches(_ stored: String) -> Bool { stored == hash || stored == olderHash }
    }

    /// What planning knows of a file.
    enum Planned: Sendable {
        /// Its fingerprint, to tell whether the store holds these bytes already.
        case hashed(Fingerprint)
        /// A file the store has never held, or one this run judges otherwise: it is parsed
        /// whatever its bytes, so only its size and time are taken here, and the jobs that parse
        /// it hash the bytes they read.
        case unseen(bytes: Int, modifiedNs: Int64)

        var bytes: Int {
            switch self {
            case .hashed(let print): print.bytes
            case .unseen(let bytes, _): bytes
            }
        }

        var modifiedNs: Int64 {
            switch self {
            case .hashed(let print): print.modifiedNs
            case .unseen(_, let modifiedNs): modifiedNs
            }
        }
    }

    /// What planning needs of `files`, in parallel: the content hash of each file the store holds
    /// (of the others, their size); an unreadable file gives its error.
    ///
    /// A file whose size and modification time are what they were when it was stored, and which
    /// had then been left alone for a second already, is not read again: any later write would
    /// have moved its modification time. So a night over months of history reads only new files.
    ///
    /// A stored file whose lines this run judges otherwise (`LineRules.judgesOtherwise`: other
    /// settings, or a clock that moved past its lines; `earliestFuture` holds, by path, the earliest
    /// event time each file's lines were rejected for as in the future) is parsed again whatever
    /// its bytes, as a fresh store would read it.
    static func plan(_ files: [SourceFile], known: [String: KnownFile], rules: LineRules = LineRules(), earliestFuture: [String: Int64] = [:],
                     jobs: Int) throws -> [Result<Planned, InputError>] {
        var results: [Result<Planned, InputError>] = []
        try WorkerPool(width: jobs).run(count: files.count, produce: { index, send in
            send(Result { () throws(InputError) -> Planned in
                let file = files[index]
                var status = stat()
                guard stat(file.absolutePath, &status) == 0 else {
                    throw InputError(path: file.absolutePath, reason: String(cString: strerror(errno)))
                }
                let modifiedNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
                guard let previous = known[file.relativePath],
                      !rules.judgesOtherwise(previous, kind: file.kind, earliestFutureMs: earliestFuture[file.relativePath]) else {
                    return .unseen(bytes: Int(status.st_size), modifiedNs: modifiedNs)
                }
                if previous.bytes == Int(status.st_size), previous.modifiedNs == modifiedNs, modifiedNs / 1_000_000 <= previous.ingestedMs - 1_000 {
                    return .hashed(Fingerprint(hash: previous.hash, bytes: previous.bytes, modifiedNs: modifiedNs))
                }
                return .hashed(try fingerprint(file, modifiedNs: modifiedNs, alsoAs: ContentHash.kind(of: previous.hash),
                                               storedBytes: file.isLiveLog ? previous.bytes : nil))
            })
        }, consume: { _, result in results.append(result) })
        return results
    }

    /// The stored files that a new path of the same partition and source holds byte for byte, in path order: a file
    /// renamed, or moved into place, or the copy logrotate makes of a log it then cuts to nothing; or that a `.gz` of
    /// the stored plain file's name holds once inflated (compressed in place, to be read again from its new bytes).
    ///
    /// A stored file keeps its rows when it leaves the folder (CONTRACT.md §1), so without this the same lines
    /// would count twice, under both names: spend doubled, every line read twice, where a fresh store of the
    /// folder reads them once. Only a stored file no longer in the folder (`inFolder`, the whole folder's
    /// paths, not only the days a night reads), or empty there now, is looked for; and only in its own day
    /// partition, since a cumulative file (a catalog in every day folder) is each day's own.
    static func moves(_ files: [SourceFile], known: [String: KnownFile], inFolder: Set<String>) throws -> [(from: String, to: String)] {
        guard files.contains(where: { known[$0.relativePath] == nil }) else { return [] }
        let absolutePaths = Dictionary(files.map { ($0.relativePath, $0.absolutePath) }, uniquingKeysWith: { first, _ in first })
        var left: [String: [(path: String, file: KnownFile)]] = [:]
        for (path, file) in known where file.counts.read > 0 {
            guard let place = movePlace(path) else { continue }
            if inFolder.contains(path) {
                // Still there: only one cut to no byte (logrotate's copytruncate) may have left its lines elsewhere.
                var status = stat()
                guard let absolute = absolutePaths[path], stat(absolute, &status) == 0, status.st_size == 0 else { continue }
            }
            left[place, default: []].append((path, file))
        }
        guard !left.isEmpty else { return [] }
        var moves: [(from: String, to: String)] = []
        var claimed = Set<String>()
        for file in files where known[file.relativePath] == nil {
            guard let place = movePlace(file.relativePath), let candidates = left[place] else { continue }
            if file.relativePath.hasSuffix(".gz"), let plain = candidates.first(where: { $0.path + ".gz" == file.relativePath }),
               !claimed.contains(plain.path), ContentHash.kind(of: plain.file.hash) == .polynomial,
               let inflated = try? ContentHash.ofInflated(gzip: file.absolutePath), inflated.hash == plain.file.hash {
                // Compressed in place, as archives are: the same lines, read again from the .gz (its bytes are other).
                claimed.insert(plain.path)
                moves.append((plain.path, file.relativePath))
                continue
            }
            var status = stat()
            guard stat(file.absolutePath, &status) == 0 else { continue }
            let same = candidates.filter { $0.file.bytes == Int(status.st_size) && !claimed.contains($0.path) }.sorted { $0.path < $1.path }
            guard let first = same.first else { continue }
            let modifiedNs = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
            // An unreadable file is named by the ingest that reads it.
            guard let print = try? fingerprint(file, modifiedNs: modifiedNs, alsoAs: ContentHash.kind(of: first.file.hash)),
                  let match = same.first(where: { print.matches($0.file.hash) }) else { continue }
            claimed.insert(match.path)
            moves.append((match.path, file.relativePath))
        }
        return moves
    }

    /// Where a file may move to and still be the same file: its day partition (or none) and its source.
    static func movePlace(_ relativePath: String) -> String? {
        let parts = relativePath.split(separator: "/", maxSplits: 1).map(String.init)
        let dated = parts.count == 2 && SourceFile.isPartitionName(parts[0])
        guard let kind = SourceKind.of(relativePath: dated ? parts[1] : relativePath) else { return nil }
        return (dated ? parts[0] : "") + "|" + kind.rawValue
    }

    /// The file's content hash, read now, and of the kind `alsoAs` when that is an older kind;
    /// `modifiedNs` is its time when it was planned.
    /// With `storedBytes`, the hash of that many first bytes too, when the stored hash is of the current kind.
    static func fingerprint(_ file: SourceFile, modifiedNs: Int64, alsoAs kind: ContentHash.Kind? = nil,
                            storedBytes: Int? = nil) throws(InputError) -> Fingerprint {
        let (hash, older, bytes, prefixHash) = try ContentHash.of(path: file.absolutePath, alsoAs: kind == .polynomial ? nil : kind,
                                                                  prefix: kind == .polynomial ? storedBytes : nil)
        return Fingerprint(hash: hash, bytes: bytes, modifiedNs: modifiedNs, olderHash: older, storedPrefixHash: prefixHash)
    }

    /// What a file whose jobs' pieces do not join is stored with (it was cut or rewritten while
    /// being read): no file's hash, so the next run reads it again.
    static let changedWhileRead = "read again: it changed while being read"

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
        rules: LineRules = LineRules(), inFolder: Set<String>? = nil, progress: ((IngestProgress) -> Void)? = nil
    ) throws -> IngestReport {
        Trace.mark("ingest start")
        var known = try store.knownFiles()
        let pseudonyms = try store.deviceIDPseudonyms()
        var report = IngestReport()
        // Paths that took a stored file's row: their bytes are that file's, or its bytes compressed.
        var movedTo = Set<String>()
        for move in try moves(files, known: known, inFolder: inFolder ?? Set(files.map(\.relativePath))) {
            try store.moved(move.from, to: move.to)
            guard let previous = known.removeValue(forKey: move.from) else { continue }
            known[move.to] = previous
            movedTo.insert(move.to)
            let how = move.to == move.from + ".gz" ? "compressed" : "byte for byte"
            report.warnings.append("\(move.from) is now \(move.to), \(how): its \(Self.lines(previous.counts.read, "stored")) "
                                   + "go with it, counted once")
        }
        var jobs: [Job] = []
        var outcomes: [IngestedFile?] = Array(repeating: nil, count: files.count)
        var failures: [InputError?] = Array(repeating: nil, count: files.count)
        var earliestFuture: [String: Int64] = [:]
        for (path, reason) in try store.rejectReasons(startingWith: LineRules.futureReasonPrefix) {
            guard let ms = LineRules.futureEventTime(inReason: reason) else { continue }
            earliestFuture[path] = min(earliestFuture[path] ?? ms, ms)
        }
        let planned = try plan(files, known: known, rules: rules, earliestFuture: earliestFuture, jobs: width)
        Trace.mark("ingest planned files")
        // The fingerprint planning took of each file it hashed.
        var prints: [Fingerprint?] = Array(repeating: nil, count: files.count)
        for (index, file) in files.enumerated() {
            switch planned[index] {
            case .failure(let error):
                failures[index] = error
            case .success(.unseen(let bytes, _)):
                jobs += Self.jobs(for: file, fileIndex: index, bytes: bytes, chunkBytes: chunkBytes)
            case .success(.hashed(let print)):
                prints[index] = print
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
        // The file being written's bytes, as its jobs hashed them.
        var pieces = ContentHash.Pieces()
        // The file being written's lines of unknown types, reported once it is stored.
        var unknownTypes = UndocumentedTypes(.notifications)
        let jobList = jobs
        let plannedBytes = Set(jobs.map(\.fileIndex)).reduce(0) { total, index in
            if case .success(let plan) = planned[index] { return total + plan.bytes }
            return total
        }
        progress?(.planned(bytes: plannedBytes))
        // A load that adds a quarter or more of what the store holds is a bulk load: the store
        // may then drop what it would otherwise update row by row (normalize rebuilds it).
        let bulk = try plannedBytes > 0 && Int64(plannedBytes) * 4 >= store.storedBytes()
        try store.beginLoad(bulk: bulk)
        defer { store.endLoad(bulk: bulk) }
        Trace.mark("ingest planned (\(bulk ? "bulk" : "adding"))")
        do {
            try WorkerPool(width: width).run(count: jobList.count, runAhead: Self.runAhead, produce: { index, send in
                let job = jobList[index]
                // Planning hashed a file the store holds; the jobs of one it does not, hash it.
                var unseen = false
                if case .success(.unseen) = planned[job.fileIndex] { unseen = true }
                parse(files[job.fileIndex], range: job.range, rules: rules, pseudonyms: pseudonyms, hashing: unseen, send: send)
            }, consume: { (index: Int, message: Message) in
                let job = jobList[index]
                let file = files[job.fileIndex]
                guard failures[job.fileIndex] == nil else { return }
                if case .failed(let error) = message {
                    writer?.rollback()
                    writer = nil
                    failures[job.fileIndex] = error
                    return
                }
                if job.isFirst, job.isLast, writer == nil, case .end(0, _) = message, let previous = known[file.relativePath],
                   previous.counts.read > 0 {
                    // Empty now, and the store holds lines of it: a log cut in place (logrotate's copytruncate)
                    // or a file cut short by a failed copy would take them all away unseen. They are kept, as a
                    // file's that left the folder are; `forget` drops them.
                    outcomes[job.fileIndex] = IngestedFile(path: file.relativePath, kind: file.kind, status: .emptied,
                                                           counts: previous.counts, bytes: previous.bytes)
                    report.alerts.append("\(file.absolutePath) is empty now; its \(Self.lines(previous.counts.read, "stored")) "
                                         + "\(previous.counts.read == 1 ? "is" : "are") kept (iaprecon forget \(file.relativePath) drops them)")
                    return
                }
                if job.isFirst, writer == nil, case .success(let plan) = planned[job.fileIndex] {
                    writer = try store.beginFile(path: file.relativePath, source: file.kind, readWith: rules.readWith(file.kind), modifiedNs: plan.modifiedNs)
                    lineOffset = 0
                    unknownTypes = UndocumentedTypes(file.kind == .apple ? .salesReportRows : .notifications)
                    pieces = ContentHash.Pieces()
                }
                switch message {
                case .lines(let batch):
                    try writer?.write(batch, lineOffset: lineOffset)
                    for found in batch.undocumentedTypes {
                        unknownTypes.add(type: found.type, source: "\(file.relativePath):\(found.line + lineOffset)")
                    }
                    progress?(.lines(batch.lines))
                case .end(let count, let read):
                    lineOffset += count
                    if let read { pieces.add(read) }
                    guard job.isLast, let fileWriter = writer else { return }
                    // Planning's hash, or the one of the bytes the jobs read.
                    let hash = prints[job.fileIndex]?.hash ?? pieces.hash ?? Self.changedWhileRead
                    let bytes = prints[job.fileIndex]?.bytes ?? pieces.end
                    let finished = try fileWriter.commit(hash: hash, bytes: bytes)
                    progress?(.fileDone(bytes: finished.bytes))
                    if let previous = known[file.relativePath], finished.counts.read < previous.counts.read {
                        // A changed file replaces its rows (it may have been corrected), but never loses lines unsaid.
                        report.alerts.append("\(file.absolutePath) holds fewer lines than when it was read: its "
                                             + "\(Self.lines(previous.counts.read, "stored")) \(previous.counts.read == 1 ? "is" : "are") "
                                             + "replaced by the \(finished.counts.read) it holds now")
                    } else if let previous = known[file.relativePath], previous.counts.read > 0, file.isLiveLog,
                              !movedTo.contains(file.relativePath), case .success(.hashed(let print)) = planned[job.fileIndex],
                              ContentHash.kind(of: previous.hash) == .polynomial, print.storedPrefixHash != previous.hash {
                        // Nor when it holds more: a log rotated in place and written to again before the night (logrotate's
                        // copytruncate), or one rewritten, no longer holds the lines stored, and they go with its rows.
                        report.alerts.append("\(file.absolutePath) was rewritten, not appended to: it no longer begins with the "
                                             + "bytes stored from it, and its \(Self.lines(previous.counts.read, "stored")) "
                                             + "\(previous.counts.read == 1 ? "is" : "are") replaced by the \(finished.counts.read) it holds now")
                    }
                    if unknownTypes.subject == .salesReportRows {
                        report.unknownProductTypes.add(unknownTypes)
                    } else {
                        report.unknownNotificationTypes.add(unknownTypes)
                    }
                    outcomes[job.fileIndex] = IngestedFile(
                        path: file.relativePath, kind: file.kind, status: known[file.relativePath] == nil ? .added : .replaced,
                        counts: finished.counts, bytes: finished.bytes)
                    writer = nil
                case .failed:
                    break
                }
            })
        } catch {
            // A file whose rows or commit the store refused mid-file (a full disk, an I/O error) leaves its
            // transaction open: undone here, nothing of the file stays, and the run's end that its caller
            // records is not written inside it, to be lost with it.
            writer?.rollback()
            throw error
        }
        Trace.mark("ingest parsed and written")
        report.files = outcomes.compactMap { $0 }
        report.unreadable = failures.compactMap { $0 }
        return report
    }

    /// The most files that left the folder one warning names; the rest are counted.
    static let leftNamed = 5

    /// What the run that finds stored files gone from the folder says, once: their lines are kept (CONTRACT.md §1),
    /// which is right for an archived partition, and wrong for a feed that failed to arrive (a source folder
    /// missing for a night), which only a person can tell apart. `left` holds their paths and lines read.
    static func leftTheFolder(_ left: [(path: String, lines: Int)], input: String) -> [String] {
        guard let first = left.first else { return [] }
        if left.count == 1 {
            return ["\(input)/\(first.path) is no longer in the input folder; its \(lines(first.lines, "stored")) "
                    + "\(first.lines == 1 ? "is" : "are") kept (iaprecon forget \(first.path) drops them)"]
        }
        let total = left.reduce(0) { $0 + $1.lines }
        let named = left.prefix(leftNamed).map(\.path).joined(separator: ", ")
            + (left.count > leftNamed ? " and \(left.count - leftNamed) more" : "")
        return ["\(left.count) stored files are no longer in the input folder \(input); their \(lines(total, "stored")) are kept "
                + "(iaprecon forget drops a file's): \(named)"]
    }

    /// `12 stored lines`, `1 stored line`.
    static func lines(_ count: Int, _ adjective: String) -> String {
        "\(count) \(adjective) line\(count == 1 ? "" : "s")"
    }

    /// Parses one file, or one chunk of it, on a worker: its lines in batches, then its line count or why it failed.
    /// Each batch carries the clocks by which the chains its lines had judged at the run's clock keep their verdicts.
    /// With `hashing`, hashes the bytes of the lines it reads, sent with its end.
    static func parse(
        _ file: SourceFile, range: Range<Int>?, rules: LineRules, packingRows: Bool = true, pseudonyms: DeviceIDPseudonyms? = nil,
        hashing: Bool = false, send: (Message) -> Void
    ) {
        var rules = rules
        let clockJudged = ClockJudgedChains()
        rules.clockJudged = clockJudged
        let reading = hashing ? ContentHash.Reading() : nil
        do {
            let lines = try SourceFileParser.parse(file, range: range, rules: rules, hashing: reading) {
                var batch = LineBatch($0, packingRows: packingRows, pseudonyms: pseudonyms)
                batch.clockSpan = clockJudged.take()
                send(.lines(batch))
            }
            send(.end(lines: lines, read: reading?.piece))
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
