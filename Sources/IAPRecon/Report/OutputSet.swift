import Foundation
import Synchronization

/// Why an output could not be written.
public struct OutputError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "cannot write \(path): \(reason)" }

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// `--out` names a folder that holds something iaprecon did not write (exit code 2).
public struct ForeignOutputError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "will not write into \(path): \(reason)" }
}

/// Writes a run's output files so that `--out` always holds one complete set.
///
/// Files are written into a fresh folder `.sets/<name>/` and fsynced; then a
/// single `rename` points the symlink `.current` at it. Each output name in
/// `--out` (`findings.csv`, ...) is a symlink into `.current/`, so a reader,
/// or a run killed at any moment, sees either the previous complete set or
/// the new one, never a mix or a partial file.
///
/// The first run into a missing `--out` builds the whole folder (set, `.current`,
/// names) beside it and renames it into place, so even then the names appear all
/// at once. An existing empty folder is filled in place instead (it may be a mount
/// point, which no rename can replace): its names point into `.current` before
/// `.current` exists, so their contents still appear all at once.
///
/// iaprecon removes only what it made: a folder it writes into carries the marker
/// file `.iaprecon-out` (written first, so a killed first run leaves it too). A
/// non-empty folder without it is refused, and so is an output name that is not
/// iaprecon's link (a file someone put there); leftovers of a killed run are only
/// its own temporary links and staging folders. The caller holds the run lock, so
/// none of those can be live.
///
/// Files of one set may be written from several threads at once; `commit` comes after them all.
public final class OutputSet: Sendable {
    public let folder: String
    private let setName: String
    /// Where the set is built: `folder` itself, or a sibling staging folder on a first run.
    private let root: String
    private let staging: Bool
    private let written = Mutex<[String]>([])

    /// The file that marks a folder as iaprecon's outputs.
    public static let markerName = ".iaprecon-out"
    static let markerText = "iaprecon writes its reports here and replaces only the links and sets it made.\n"

    public init(folder: String) throws {
        self.folder = folder
        setName = "set-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())"
        let fresh = try Self.checkTarget(folder)
        Self.removeLeftovers(in: folder)
        staging = !Self.exists(folder)
        root = staging ? Self.stagingPath(for: folder) : folder
        try Self.makeDirectories(root)
        if fresh || !Self.exists(root + "/" + Self.markerName) { try Self.writeMarker(in: root) }
        try Self.makeDirectories(root + "/.sets/" + setName)
    }

    /// Checks that a run may write its outputs into `folder`, before any work is done; creates the
    /// folders above it. Returns true when the folder is missing or empty (a first run).
    /// - Throws: `ForeignOutputError` for a folder holding what iaprecon did not write,
    ///   `OutputError` when it cannot be written.
    @discardableResult
    public static func checkTarget(_ folder: String) throws -> Bool {
        guard exists(folder) else {
            let parent = URL(fileURLWithPath: folder).deletingLastPathComponent().path
            do {
                try makeDirectories(parent)
            } catch {
                throw OutputError(path: folder, reason: error.reason)
            }
            return true
        }
        try makeDirectories(folder)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0 != "lost+found" }.sorted()
        if names.isEmpty { return true }
        if !exists(folder + "/" + markerName), !isLegacySet(folder) {
            let shown = names.prefix(3).map { "'\($0)'" }.joined(separator: ", ") + (names.count > 3 ? ", …" : "")
            throw ForeignOutputError(path: folder, reason: "it holds files iaprecon did not write (\(shown)); name a new or empty folder")
        }
        for name in names where !name.hasPrefix(".") {
            var status = stat()
            guard lstat(folder + "/" + name, &status) == 0 else { continue }
            let isOurs = status.st_mode & S_IFMT == S_IFLNK
                && (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)) == ".current/" + name
            if !isOurs, outputNames.contains(name) {
                throw ForeignOutputError(path: folder, reason: "'\(name)' is not iaprecon's (it writes a link into .current/); move it away")
            }
        }
        return false
    }

    /// The names iaprecon writes into `--out` (a name it would replace must be its own link).
    static let outputNames: Set<String> = [
        "findings.csv", "findings.json", "summary.json", "revenue_daily.csv", "attribution.csv", "rejects.csv",
        "apple_tieout.csv", "consumption_requests.jsonl",
    ]

    /// An output folder of an iaprecon from before the marker: `.current` links into `.sets/`.
    private static func isLegacySet(_ folder: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/.current"))?.hasPrefix(".sets/") == true
    }

    private static func writeMarker(in folder: String) throws(OutputError) {
        var sink = try TextSink(path: folder + "/" + markerName)
        try sink.write(markerText)
        try sink.close()
    }

    private var setPath: String { root + "/.sets/" + setName }

    /// Writes one output file of the set.
    public func write(_ name: String, _ body: (inout TextSink) throws -> Void) throws {
        let path = setPath + "/" + name
        var sink = try TextSink(path: path)
        do {
            try body(&sink)
        } catch {
            sink.abandon()
            throw error
        }
        Trace.mark("output \(name) written")
        try sink.close()
        Trace.mark("output \(name) synced")
        written.withLock { $0.append(name) }
    }

    /// Where this set's file `name` is once the set is committed, as an absolute path.
    func committedPath(of name: String) -> String {
        let absolute = folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        return absolute + "/.sets/" + setName + "/" + name
    }

    /// Where this set is once committed, as an absolute path: `<folder>/.sets/<set>`.
    var committedSetPath: String {
        let absolute = folder.hasPrefix("/") ? folder : FileManager.default.currentDirectoryPath + "/" + folder
        return absolute + "/.sets/" + setName
    }

    /// `folder` as one spelling, however a run named it (relative, with `.` or `..`, through a link above it): absolute,
    /// standardized, the links of its parent resolved. The folder itself may not exist yet (a first run).
    static func canonicalFolder(_ folder: String) -> String {
        let url = URL(fileURLWithPath: folder).standardizedFileURL
        return url.deletingLastPathComponent().resolvingSymlinksInPath().path + "/" + url.lastPathComponent
    }

    /// Whether the set at `setPath` (a `committedSetPath`) is its folder's current one: its commit switched it in
    /// and no later one replaced it. False when the folder is gone.
    static func isCurrent(setPath: String) -> Bool {
        let url = URL(fileURLWithPath: setPath)
        let sets = url.deletingLastPathComponent()
        guard sets.lastPathComponent == ".sets" else { return false }
        let current = sets.deletingLastPathComponent().path + "/.current"
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: current)) == ".sets/" + url.lastPathComponent
    }

    /// This set's file `name`, as written (`write`); nil before.
    func identity(of name: String) -> FileIdentity? {
        FileIdentity(path: setPath + "/" + name)
    }

    /// Makes the written files the current set, atomically, and removes older sets.
    public func commit() throws(OutputError) {
        let written = written.withLock { $0 }.sorted()
        Self.syncFolder(setPath)
        Self.syncFolder(root + "/.sets")
        if staging {
            try Self.link(".sets/" + setName, at: root + "/.current")
            for name in written { try Self.link(".current/" + name, at: root + "/" + name) }
            Self.syncFolder(root)
            // The empty --out gives way to the complete one in a single rename.
            rmdir(folder)
            guard rename(root, folder) == 0 else { throw OutputError(path: folder, reason: String(cString: strerror(errno))) }
        } else {
            // Names missing from an older layout point into `.current` before it switches.
            for name in written where (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + name)) != ".current/" + name {
                try Self.link(".current/" + name, at: folder + "/" + name)
            }
            try Self.link(".sets/" + setName, at: folder + "/.current")
            Self.removeLinks(in: folder, except: Set(written))
        }
        Self.syncFolder(folder)
        let manager = FileManager.default
        if let sets = try? manager.contentsOfDirectory(atPath: folder + "/.sets") {
            for name in sets where name != setName { try? manager.removeItem(atPath: folder + "/.sets/" + name) }
        }
    }

    /// Removes iaprecon's links (`<name>` to `.current/<name>`) in `folder` whose file the current set
    /// does not hold: `apple_tieout.csv` once no Sales Report is left. Such a link leads nowhere, and
    /// a loader that lists the folder fails to open it (CONTRACT.md §3 writes the file only when
    /// `apple/` has reports).
    private static func removeLinks(in folder: String, except written: Set<String>) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where !name.hasPrefix(".") && !written.contains(name) {
            guard (try? manager.destinationOfSymbolicLink(atPath: folder + "/" + name)) == ".current/" + name else { continue }
            unlink(folder + "/" + name)
        }
    }

    /// Points a symlink at `target`, replacing whatever was at `path` in one rename.
    private static func link(_ target: String, at path: String) throws(OutputError) {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        guard symlink(target, temporary) == 0, rename(temporary, path) == 0 else {
            throw OutputError(path: path, reason: String(cString: strerror(errno)))
        }
    }

    private static func stagingPath(for folder: String) -> String {
        let url = URL(fileURLWithPath: folder)
        return url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tmp-\(getpid())"
    }

    /// Removes what a killed run left, and nothing else: its temporary links in `folder`
    /// (`<name>.tmp-<pid>`, symlinks into `.current/` or `.sets/`), and its staging folders beside
    /// `folder` (`.<folder>.tmp-<pid>`, carrying the marker).
    private static func removeLeftovers(in folder: String) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where isTemporaryName(name) {
            guard let target = try? manager.destinationOfSymbolicLink(atPath: folder + "/" + name),
                  target.hasPrefix(".current/") || target.hasPrefix(".sets/") else { continue }
            unlink(folder + "/" + name)
        }
        let url = URL(fileURLWithPath: folder)
        let parent = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent
        for name in (try? manager.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix + ".tmp-") && isTemporaryName(name) {
            let path = parent + "/" + name
            guard !isSymlink(path), exists(path + "/" + markerName) else { continue }
            try? manager.removeItem(atPath: path)
        }
    }

    /// `…​.tmp-<digits>`, the names `link` and `stagingPath` give.
    private static func isTemporaryName(_ name: String) -> Bool {
        guard let range = name.range(of: ".tmp-", options: .backwards) else { return false }
        let pid = name[range.upperBound...]
        return !pid.isEmpty && pid.allSatisfy(\.isASCII) && pid.allSatisfy(\.isNumber)
    }

    private static func isSymlink(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// `mkdir -p`, with the system's reason when it fails.
    static func makeDirectories(_ path: String) throws(OutputError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw OutputError(path: path, reason: String(cString: strerror(errno)))
            }
        }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw OutputError(path: path, reason: "Not a directory")
        }
        guard access(path, W_OK) == 0 else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
    }

    /// Removes an uncommitted set (after a failure).
    public func discard() {
        try? FileManager.default.removeItem(atPath: staging ? root : setPath)
    }

    private static func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }
}

/// A buffered UTF-8 text file writer that reports write errors (a full disk) at once.
public struct TextSink {
    private let file: UnsafeMutablePointer<FILE>
    /// The file's stdio buffer, ours: glibc takes a size only with a buffer given.
    private let buffer: UnsafeMutablePointer<CChar>
    private let path: String
    /// The record being assembled; empty between records, so a copy of the sink holds nothing unwritten.
    private var record: [UInt8] = []
    /// Where the kernel was last asked to start writing the file out, and how much came since.
    private var writebackFrom: off_t = 0
    private var sinceWriteback = 0
    /// How much a file grows before the kernel is asked to write it out (`wrote`).
    static let writebackChunk = 8 << 20
    /// The size of the file's stdio buffer (`buffer`).
    static let bufferBytes = 1 << 20

    init(path: String) throws(OutputError) {
        guard let file = fopen(path, "w") else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        self.file = file
        self.path = path
        // Written in whole megabytes, not stdio's 4 KiB: far fewer calls into the file system for
        // transactions.csv.
        buffer = .allocate(capacity: Self.bufferBytes)
        setvbuf(file, buffer, _IOFBF, Self.bufferBytes)
    }

    public mutating func write(_ text: String) throws(OutputError) {
        var text = text
        let count = text.withUTF8 { bytes in fwrite(bytes.baseAddress, 1, bytes.count, file) }
        if count != text.utf8.count { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        try wrote(count)
    }

    /// One CSV record from already-escaped cells, ending in CRLF (RFC 4180): assembled in one
    /// reused buffer and written at once, not joined into a new string per record.
    public mutating func csvRecord(_ cells: [String]) throws(OutputError) {
        record.removeAll(keepingCapacity: true)
        for (index, cell) in cells.enumerated() {
            if index > 0 { record.append(UInt8(ascii: ",")) }
            var cell = cell
            cell.withUTF8 { record.append(contentsOf: $0) }
        }
        record.append(contentsOf: [0x0D, 0x0A])
        try writeRecord()
    }

    /// One CSV record added cell by cell (`CSVCells`) into the same reused buffer: a report
    /// streaming store rows copies their bytes into the record instead of making a `String` per cell.
    mutating func csvRecord(_ fill: (inout CSVCells) -> Void) throws(OutputError) {
        var cells = CSVCells(bytes: record)
        record = []
        cells.bytes.removeAll(keepingCapacity: true)
        fill(&cells)
        cells.bytes.append(contentsOf: [0x0D, 0x0A])
        record = cells.bytes
        try writeRecord()
        record.removeAll(keepingCapacity: true)
    }

    /// Writes the assembled record.
    private mutating func writeRecord() throws(OutputError) {
        // Taken out while it is written: the write changes the sink, which holds the record.
        let assembled = record
        record = []
        defer { record = assembled }
        try assembled.withUnsafeBufferPointer { bytes throws(OutputError) in try write(bytes: bytes) }
    }

    /// Bytes already in the file's form: a record copied from the file an earlier run wrote.
    mutating func write(bytes: UnsafeBufferPointer<UInt8>) throws(OutputError) {
        let count = fwrite(bytes.baseAddress, 1, bytes.count, file)
        if count != bytes.count { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        try wrote(count)
    }

    /// Drops what was written, to write the file again from its start.
    mutating func restart() throws(OutputError) {
        guard fflush(file) == 0, ftruncate(fileno(file), 0) == 0, fseeko(file, 0, SEEK_SET) == 0 else {
            throw OutputError(path: path, reason: String(cString: strerror(errno)))
        }
        (writebackFrom, sinceWriteback) = (0, 0)
    }

    /// Counts `count` bytes written; past every `writebackChunk`, hands them to the kernel and asks
    /// it to start writing them to disk while the rest is produced. A file far smaller than the
    /// kernel's own writeback threshold (transactions.csv) would otherwise wait whole for `close`'s
    /// fsync. `POSIX_FADV_DONTNEED` starts the writeback of the range's dirty pages and lets the
    /// clean ones go: the file is not read again by this run.
    private mutating func wrote(_ count: Int) throws(OutputError) {
        sinceWriteback += count
        guard sinceWriteback >= Self.writebackChunk else { return }
        guard fflush(file) == 0 else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        let end = ftello(file)
        if end > writebackFrom { _ = posix_fadvise(fileno(file), writebackFrom, end - writebackFrom, POSIX_FADV_DONTNEED) }
        (writebackFrom, sinceWriteback) = (end, 0)
    }

    func close() throws(OutputError) {
        let flushed = fflush(file) == 0 && fsync(fileno(file)) == 0
        let error = errno
        abandon()
        if !flushed { throw OutputError(path: path, reason: String(cString: strerror(error))) }
    }

    /// Closes the file without making sure of what it holds (its set is being discarded).
    func abandon() {
        fclose(file)
        buffer.deallocate()
    }
}

/// The cells of one CSV record as `TextSink.csvRecord` assembles them: each is escaped as
/// `CSV.textCell` or `CSV.numberCell` would escape its text, and only a cell that needs escaping
/// is made into a `String`.
struct CSVCells {
    fileprivate var bytes: [UInt8]
    private var started = false

    fileprivate init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func separate() {
        if started { bytes.append(UInt8(ascii: ",")) }
        started = true
    }

    /// A cell that is already escaped (`CSV.textCell`'s, a number, a time).
    mutating func escaped(_ cell: String) {
        separate()
        // Copied from its contiguous bytes at once, not element by element through its UTF-8 view.
        var cell = cell
        cell.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// `String(value)`'s digits, written in place.
    mutating func integer(_ value: Int64) {
        separate()
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // a sign and up to 19 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// `Timestamp.iso8601(ms)`, written in place; an empty cell for nil.
    mutating func time(_ ms: Int64?) {
        guard let ms else { return escaped("") }
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let written = withUnsafeMutableBytes(of: &text) { buffer -> Bool in
            guard let count = Timestamp.iso8601(ms, into: buffer.bindMemory(to: UInt8.self)) else { return false }
            separate()
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            return true
        }
        // A year outside 0...9999: spelled as `iso8601` spells it.
        if !written { escaped(Timestamp.iso8601(ms)) }
    }

    /// A text cell from UTF-8 bytes: `CSV.textCell` of their text.
    mutating func text(_ value: UnsafeBufferPointer<UInt8>) {
        separate()
        if CSV.isPlain(bytes: value, text: true) {
            bytes.append(contentsOf: value)
        } else {
            bytes.append(contentsOf: CSV.textCell(String(decoding: value, as: UTF8.self)).utf8)
        }
    }

    /// A text cell from column `column` of a store row (NULL as empty): `CSV.textCell(row.optionalString(column) ?? "")`.
    mutating func text(_ row: some StoredRow, _ column: some StoredColumn) {
        row.withText(column) { text($0) }
    }

    /// A numeric cell from column `column` of a store row (NULL as empty): `CSV.numberCell(row.optionalString(column) ?? "")`.
    mutating func number(_ row: some StoredRow, _ column: some StoredColumn) {
        separate()
        row.withText(column) { value in
            if CSV.isPlain(bytes: value, text: false) {
                bytes.append(contentsOf: value)
            } else {
                bytes.append(contentsOf: CSV.numberCell(String(decoding: value, as: UTF8.self)).utf8)
            }
        }
    }
}

extension FileIdentity {
    /// The file at `path` (a link followed); nil when there is none.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(device: Int64(status.st_dev), inode: Int64(status.st_ino), bytes: Int64(status.st_size),
                  modifiedNs: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
    }
}
