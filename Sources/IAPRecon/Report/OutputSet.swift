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

/// Writes a run's output files so that `--out` always holds one complete set.
///
/// Files are written into a fresh folder `.sets/<name>/` and fsynced; then a
/// single `rename` points the symlink `.current` at it. Each output name in
/// `--out` (`findings.csv`, ...) is a symlink into `.current/`, so a reader,
/// or a run killed at any moment, sees either the previous complete set or
/// the new one, never a mix or a partial file.
///
/// The first run into an empty or missing `--out` builds the whole folder
/// (set, `.current`, names) beside it and renames it into place, so even
/// then the names appear all at once. Leftovers of a killed run (`*.tmp-*`)
/// are removed; the caller holds the run lock, so none can be live.
///
/// Files of one set may be written from several threads at once; `commit` comes after them all.
public final class OutputSet: Sendable {
    public let folder: String
    private let setName: String
    /// Where the set is built: `folder` itself, or a sibling staging folder on a first run.
    private let root: String
    private let staging: Bool
    private let written = Mutex<[String]>([])

    public init(folder: String) throws(OutputError) {
        self.folder = folder
        setName = "set-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())"
        try Self.makeDirectories(folder)
        Self.removeLeftovers(in: folder)
        var fresh = false
        if !Self.exists(folder + "/.current"), let names = try? FileManager.default.contentsOfDirectory(atPath: folder), names.isEmpty {
            fresh = true
        }
        staging = fresh
        root = fresh ? Self.stagingPath(for: folder) : folder
        try Self.makeDirectories(root + "/.sets/" + setName)
    }

    private var setPath: String { root + "/.sets/" + setName }

    /// Writes one output file of the set.
    public func write(_ name: String, _ body: (inout TextSink) throws -> Void) throws {
        let path = setPath + "/" + name
        var sink = try TextSink(path: path)
        try body(&sink)
        Trace.mark("output \(name) written")
        try sink.close()
        Trace.mark("output \(name) synced")
        written.withLock { $0.append(name) }
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
        }
        Self.syncFolder(folder)
        let manager = FileManager.default
        if let sets = try? manager.contentsOfDirectory(atPath: folder + "/.sets") {
            for name in sets where name != setName { try? manager.removeItem(atPath: folder + "/.sets/" + name) }
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

    /// Removes what a killed run left: temporary links in `folder`, and staging folders beside it.
    private static func removeLeftovers(in folder: String) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where name.contains(".tmp-") {
            try? manager.removeItem(atPath: folder + "/" + name)
        }
        let url = URL(fileURLWithPath: folder)
        let parent = url.deletingLastPathComponent().path
        let prefix = "." + url.lastPathComponent + ".tmp-"
        for name in (try? manager.contentsOfDirectory(atPath: parent)) ?? [] where name.hasPrefix(prefix) {
            try? manager.removeItem(atPath: parent + "/" + name)
        }
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
    private let path: String

    init(path: String) throws(OutputError) {
        guard let file = fopen(path, "w") else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        self.file = file
        self.path = path
    }

    public mutating func write(_ text: String) throws(OutputError) {
        var text = text
        let count = text.withUTF8 { bytes in fwrite(bytes.baseAddress, 1, bytes.count, file) }
        if count != text.utf8.count { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
    }

    /// One CSV record from already-escaped cells, ending in CRLF (RFC 4180).
    public mutating func csvRecord(_ cells: [String]) throws(OutputError) {
        try write(cells.joined(separator: ",") + "\r\n")
    }

    func close() throws(OutputError) {
        let flushed = fflush(file) == 0 && fsync(fileno(file)) == 0
        let error = errno
        fclose(file)
        if !flushed { throw OutputError(path: path, reason: String(cString: strerror(error))) }
    }
}
