import Foundation

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
public final class OutputSet {
    public let folder: String
    private let setName: String
    private var written: [String] = []

    public init(folder: String) throws(OutputError) {
        self.folder = folder
        setName = "set-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())"
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: folder + "/.sets/" + setName, withIntermediateDirectories: true)
        } catch {
            throw OutputError(path: folder, reason: Self.reason(error))
        }
    }

    private var setPath: String { folder + "/.sets/" + setName }

    /// Writes one output file of the set.
    public func write(_ name: String, _ body: (inout TextSink) throws -> Void) throws {
        let path = setPath + "/" + name
        var sink = try TextSink(path: path)
        try body(&sink)
        try sink.close()
        written.append(name)
    }

    /// Makes the written files the current set, atomically, and removes older sets.
    public func commit() throws(OutputError) {
        let manager = FileManager.default
        let temporaryLink = folder + "/.current.tmp-\(getpid())"
        unlink(temporaryLink)
        guard symlink(".sets/" + setName, temporaryLink) == 0 else {
            throw OutputError(path: temporaryLink, reason: String(cString: strerror(errno)))
        }
        guard rename(temporaryLink, folder + "/.current") == 0 else {
            throw OutputError(path: folder + "/.current", reason: String(cString: strerror(errno)))
        }
        syncFolder(folder)
        for name in written {
            let link = folder + "/" + name
            let target = ".current/" + name
            if (try? manager.destinationOfSymbolicLink(atPath: link)) == target { continue }
            let temporary = link + ".tmp-\(getpid())"
            unlink(temporary)
            guard symlink(target, temporary) == 0, rename(temporary, link) == 0 else {
                throw OutputError(path: link, reason: String(cString: strerror(errno)))
            }
        }
        syncFolder(folder)
        if let sets = try? manager.contentsOfDirectory(atPath: folder + "/.sets") {
            for name in sets where name != setName { try? manager.removeItem(atPath: folder + "/.sets/" + name) }
        }
    }

    /// Removes an uncommitted set (after a failure).
    public func discard() {
        try? FileManager.default.removeItem(atPath: setPath)
    }

    private func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    static func reason(_ error: any Error) -> String {
        if let cocoa = error as? CocoaError, let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return (error as NSError).localizedDescription
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
