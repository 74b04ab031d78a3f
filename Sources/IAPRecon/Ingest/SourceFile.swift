import Foundation

/// What one input line became.
public enum LineOutcome: Sendable, Equatable {
    case accepted([RawRow])
    case rejected(String)
    case blank
    /// A well-formed line of a kind iaprecon does not use (an unknown server event).
    case ignored
    /// Ignored, as `ignored`, but a fact of it is kept: a Sales Report row of the app itself says
    /// which day the report covers, though it sells no in-app purchase.
    case ignoredKeeping([RawRow])
}

extension SourceKind {
    /// Read as a header row and records (`apple/` is tab-separated).
    var isCSV: Bool {
        switch self {
        case .attribution, .spend, .catalog, .fx, .apple: true
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
        case .apple: return parts[1].hasSuffix(".txt") ? kind : nil
        case .catalog, .fx: return nil
        }
    }

    func parse(json fields: Fields, rules: LineRules) throws(LineReject) -> LineOutcome {
        switch self {
        case .server: try ServerLogParser.parse(fields, rules: rules)
        case .receipts: try ReceiptParser.parse(fields, rules: rules)
        case .notifications: try NotificationParser.parse(fields, rules: rules)
        case .registrations: try RegistrationParser.parse(fields, rules: rules)
        case .attribution, .spend, .catalog, .fx, .apple: .ignored
        }
    }

    var csvParser: (any CSVRowParser.Type)? {
        switch self {
        case .attribution: MMPEventParser.self
        case .spend: SpendParser.self
        case .catalog: CatalogParser.self
        case .fx: FXParser.self
        case .apple: AppleSalesParser.self
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

    /// A plain JSON Lines log, which its system only ever appends to: one that no longer begins with the
    /// bytes stored from it was rotated or rewritten in place. A CSV export is corrected by writing it again,
    /// and a gzip is written whole: compressed again with lines added, it never begins with its old bytes.
    var isLiveLog: Bool { !kind.isCSV && !absolutePath.hasSuffix(".gz") }

    /// What an input folder holds: its source files, and the files under it that match no source.
    public struct Listing: Sendable, Equatable {
        /// Every source file, sorted by relative path.
        public var files: [SourceFile] = []
        /// Files under the input folder that are not read: relative paths, sorted; a folder (`misc/`)
        /// stands for files under it that are not listed one by one.
        public var ignored: [String] = []
    }

    /// The most entries (files and folders) looked at under one folder inside a source's folder:
    /// a stray deep tree (a backup, a checkout) must not flood the warnings and `summary.json`.
    public static let ignoredEntriesPerFolder = 100

    /// Lists every input file under `folder`, sorted by relative path.
    /// - Throws: `InputError` as `scan(_:)` does.
    public static func list(in folder: String) throws(InputError) -> [SourceFile] {
        try scan(folder).files
    }

    /// Lists every input file under `folder`, and what else is there.
    ///
    /// Two layouts: the contract's (`server/`, `receipts/`, ..., `catalog.csv`), or a
    /// partitioned root whose `YYYY-MM-DD/` folders each hold that layout, as servers
    /// write them day by day; their files are named `2026-11-28/server/x.jsonl`.
    /// A hidden name (starting with `.`) is never a source: a file is listed as not read like any
    /// other, a folder by its own name (`.git/`), not file by file. Only the spool files
    /// `iaprecon generate` writes beside the files it makes pass unlisted (`isOwnTemporary`).
    ///
    /// Only regular files are read: a source that is a FIFO, a device or a socket would block or
    /// never end, and a symlink leading outside the folder reads what the folder's owner did
    /// not put there, so each is an error before anything is read.
    /// - Throws: `InputError` when the folder or a source sub-folder cannot be read, or a source is
    ///   not a regular file inside the folder.
    public static func scan(_ folder: String) throws(InputError) -> Listing {
        let realFolder = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        var listing = Listing()
        for name in try entries(of: folder) {
            let path = folder + "/" + name
            if isDirectory(path), isPartitionName(name) {
                try layout(in: path, prefix: name + "/", root: realFolder, into: &listing)
            }
        }
        try layout(in: folder, prefix: "", root: realFolder, into: &listing, partitionRoot: true)
        for index in listing.files.indices {
            try checkRegular(listing.files[index], root: realFolder)
        }
        listing.files.sort { $0.relativePath < $1.relativePath }
        listing.ignored.sort()
        return listing
    }

    /// Whether the day partition `folder` holds a source file, listed as `scan` lists a partitioned
    /// root's: a folder made ahead of its files, one holding only empty folders, names starting with
    /// `.` (an uploader's temporary files) or files that match no source, holds none. A source file
    /// counts whatever it holds (an empty one too), and whatever it is (reading a FIFO fails later,
    /// naming it), as ingest would list it.
    /// - Throws: `InputError` when the folder or a source sub-folder cannot be read, as `scan` does.
    public static func holdsSourceFile(partition folder: String) throws(InputError) -> Bool {
        var listing = Listing()
        try layout(in: folder, prefix: "", root: folder, into: &listing)
        return !listing.files.isEmpty
    }

    /// An input folder with no source file at all: a mistyped `--input` must not check or
    /// reconcile nothing in silence.
    public static func noSourceFile(in folder: String) -> InputError {
        InputError(path: folder, reason: "no source file (server/, receipts/, notifications/, registrations/, attribution/, "
                   + "spend/, apple/, catalog.csv, fx.csv, or YYYY-MM-DD folders holding them)")
    }

    /// Refuses an input folder that is not there: a mistyped `--input`, which a run refuses before
    /// it makes a store, as a mistyped `--out`.
    public static func checkFolder(_ folder: String) throws(InputError) {
        guard isDirectory(folder) else {
            throw InputError(path: folder, reason: FileManager.default.fileExists(atPath: folder) ? "not a folder" : "no such folder")
        }
    }

    /// `YYYY-MM-DD`, the name of a daily partition.
    public static func isPartitionName(_ name: String) -> Bool {
        name.utf8.count == 10 && Timestamp.startOfDay(name) != nil
    }

    private static func entries(of folder: String) throws(InputError) -> [String] {
        try checkFolder(folder)
        guard FileManager.default.isReadableFile(atPath: folder),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            throw InputError(path: folder, reason: "permission denied")
        }
        return names.filter { !isOwnTemporary($0) }.sorted()
    }

    /// A file iaprecon itself makes inside an input folder while it writes one: `iaprecon generate`
    /// spools each file it makes as `.NAME.spool` beside it (`SpooledFile`). Passed over in silence,
    /// during a generate and after one that was stopped (the next generate removes it).
    static func isOwnTemporary(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".spool") && name.utf8.count > ".spool".utf8.count + 1
    }

    private static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }

    /// A source must be a regular file (or, to fail naming itself when read, a folder) whose real
    /// path lies inside the input folder's.
    private static func checkRegular(_ file: SourceFile, root: String) throws(InputError) {
        var status = stat()
        guard stat(file.absolutePath, &status) == 0 else {
            let failure = errno
            // A name listed but not there is one that is not UTF-8 (`campaña.csv` saved by a Latin-1 tool): its
            // bytes were read as U+FFFD, a name no file has. "No such file" would send a person looking for it.
            if failure == ENOENT, file.relativePath.unicodeScalars.contains("\u{FFFD}") {
                throw InputError(path: file.absolutePath, reason: "its name is not UTF-8 (rename it)")
            }
            throw InputError(path: file.absolutePath, reason: String(cString: strerror(failure)))
        }
        let type = status.st_mode & S_IFMT
        switch type {
        case S_IFREG, S_IFDIR: break
        case S_IFIFO: throw InputError(path: file.absolutePath, reason: "not a regular file (a FIFO)")
        case S_IFCHR, S_IFBLK: throw InputError(path: file.absolutePath, reason: "not a regular file (a device)")
        case S_IFSOCK: throw InputError(path: file.absolutePath, reason: "not a regular file (a socket)")
        default: throw InputError(path: file.absolutePath, reason: "not a regular file")
        }
        let real = URL(fileURLWithPath: file.absolutePath).resolvingSymlinksInPath().path
        guard real.hasPrefix(root + "/") else {
            throw InputError(path: file.absolutePath, reason: "a symlink leading outside the input folder (to \(real))")
        }
    }

    /// The files under a folder inside a source's folder, each by its path, as CONTRACT.md §1 names
    /// `receipts/sub/y.jsonl`: they look like inputs, so each one not read is named. Depth first
    /// in name order, a symlink named and not followed. A
    /// folder holding no file, or that cannot be read, is named itself (`misc/`), and so is one
    /// holding more than `ignoredEntriesPerFolder` entries, after the files found before that.
    private static func ignoredFiles(in folder: String, relativePath: String) -> [String] {
        var files: [String] = []
        var looked = 0
        var complete = true
        func walk(_ path: String, _ relative: String) {
            guard let names = try? entries(of: path) else {
                complete = false
                return
            }
            for name in names {
                looked += 1
                guard looked <= ignoredEntriesPerFolder else {
                    complete = false
                    return
                }
                let child = path + "/" + name
                if isRealDirectory(child) {
                    // A hidden folder (`.git/`) is named as itself: its files are no one's input.
                    if name.hasPrefix(".") { files.append(relative + name + "/") } else { walk(child, relative + name + "/") }
                } else {
                    files.append(relative + name)
                }
            }
        }
        walk(folder, relativePath)
        return files.isEmpty || !complete ? files + [relativePath] : files
    }

    /// A folder itself, not a symlink to one: a link back up the tree would never end.
    private static func isRealDirectory(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// The contract's layout inside `folder`; in a partitioned root, the day folders are not ignored.
    private static func layout(
        in folder: String, prefix: String, root: String, into listing: inout Listing, partitionRoot: Bool = false
    ) throws(InputError) {
        for name in try entries(of: folder) {
            let path = folder + "/" + name
            if isDirectory(path) {
                if partitionRoot, isPartitionName(name) { continue }
                // A folder beside the sources (`expected/`, `trust/`) is plainly not input: named as a folder.
                guard let kind = SourceKind(rawValue: name), kind != .catalog, kind != .fx else {
                    listing.ignored.append(prefix + name + "/")
                    continue
                }
                for child in try entries(of: path) {
                    let relative = name + "/" + child
                    if child.hasPrefix(".") {
                        // Hidden: never read, however it is named; a folder named as itself.
                        listing.ignored.append(prefix + relative + (isDirectory(path + "/" + child) ? "/" : ""))
                        continue
                    }
                    // A folder named like a source file is listed too: reading it fails, naming it (exit 3).
                    if let kind = SourceKind.of(relativePath: relative) {
                        listing.files.append(SourceFile(relativePath: prefix + relative, absolutePath: path + "/" + child, kind: kind))
                    } else if isDirectory(path + "/" + child) {
                        listing.ignored += ignoredFiles(in: path + "/" + child, relativePath: prefix + relative + "/")
                    } else {
                        listing.ignored.append(prefix + relative)
                    }
                }
            } else if let kind = SourceKind.of(relativePath: name) {
                listing.files.append(SourceFile(relativePath: prefix + name, absolutePath: path, kind: kind))
            } else {
                listing.ignored.append(prefix + name)
            }
        }
    }
}

/// One parsed line, in file order.
public struct ParsedLine: Sendable, Equatable {
    public var line: Int
    public var outcome: LineOutcome
    /// The line's text, redacted, for rejects only.
    public var rejectedText: String?
}

extension LineCounts {
    /// Counts one more line, which became `outcome`.
    mutating func count(_ outcome: LineOutcome) {
        read += 1
        switch outcome {
        case .accepted: accepted += 1
        case .rejected: rejected += 1
        case .blank: blank += 1
        case .ignored, .ignoredKeeping: ignored += 1
        }
    }
}

/// Parses the lines of one source file into `ParsedLine`s, handed over in batches.
///
/// JSON Lines: each line is one record. CSV: line 1 is the header and each
/// later line one record, or the first of its lines where a quoted cell holds a
/// line break (see `CSVRecordAssembler`).
enum SourceFileParser {
    static let batchLines = 1024

    /// Parses `file`, or the chunk `range` of a plain JSON Lines file; returns the lines read.
    /// With `hashing`, hashes the bytes it reads (`LineReader.forEachLine`).
    @discardableResult
    static func parse(
        _ file: SourceFile, range: Range<Int>? = nil, rules: LineRules = LineRules(), hashing: ContentHash.Reading? = nil,
        batch: ([ParsedLine]) throws -> Void
    ) throws -> Int {
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
            var reader = CSVRecordAssembler(kind: file.kind, rules: rules)
            count = try LineReader.forEachLine(path: file.absolutePath, hashing: hashing) { line in
                try reader.feed(line, add)
            }
            try reader.finish(add)
        } else {
            // One tape for the lines of the file (or chunk): each line is read onto it in place of the last.
            let tape = JSONTape()
            count = try LineReader.forEachLine(path: file.absolutePath, range: range, hashing: hashing) { line in
                try add(parseJSONLine(line, kind: file.kind, rules: rules, tape: tape))
            }
        }
        if !pending.isEmpty { try batch(pending) }
        return count
    }

    /// Parses one JSON Lines line into `tape`, in place of the line before it.
    static func parseJSONLine(_ line: LineReader.Line, kind: SourceKind, rules: LineRules = LineRules(), tape: JSONTape = JSONTape()) -> ParsedLine {
        if line.tooLong { return reject(line, "line longer than \(LineReader.maximumLineBytes >> 20) MiB") }
        guard let first = line.bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else {
            return ParsedLine(line: line.number, outcome: .blank)
        }
        // An array is never a record: it is rejected unparsed, whatever it holds.
        if first == UInt8(ascii: "[") { return reject(line, "not a JSON object") }
        do {
            try tape.read(line.bytes)
        } catch {
            return reject(line, "not JSON: \(error)")
        }
        return tape.withRoot(in: line.bytes) { object in
            guard object.kind == .object else { return reject(line, "not a JSON object") }
            do throws(LineReject) {
                return ParsedLine(line: line.number, outcome: try kind.parse(json: Fields(object), rules: rules))
            } catch {
                return reject(line, error.reason)
            }
        }
    }

    static func reject(_ line: LineReader.Line, _ reason: String) -> ParsedLine {
        ParsedLine(line: line.number, outcome: .rejected(reason), rejectedText: Redaction.rejectText(line.bytes))
    }
}
