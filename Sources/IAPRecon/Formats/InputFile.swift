import Foundation

/// Why an input file or folder could not be read (exit code 3).
public struct InputError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String
    public var description: String { "cannot read \(path): \(reason)" }

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// A readable input file, plain or gzip (by its `.gz` suffix), read in blocks.
final class InputFile {
    private enum Handle {
        case plain(Int32)
        case gzip(GzipReader)
    }

    private let handle: Handle
    let path: String
    var isGzip: Bool {
        if case .gzip = handle { return true }
        return false
    }

    /// With `hashing`, a gzip file's compressed bytes are hashed as they are read (a plain file's
    /// are hashed by the reader of its lines, which knows which are its own).
    init(path: String, hashing: ContentHash.Reading? = nil) throws(InputError) {
        self.path = path
        // A folder read for its content hash is named as reading it says, as ingest names a new path that is one.
        let descriptor = try Self.openRegularFile(path, folderReason: hashing != nil ? Self.folderRead : Self.notRegular)
        handle = path.hasSuffix(".gz") ? .gzip(try GzipReader(descriptor: descriptor, path: path, hashing: hashing)) : .plain(descriptor)
    }

    /// Opens `path` to read when it is a regular file; throws otherwise: `folderReason` for a folder,
    /// "not a regular file" for anything else.
    static func openRegularFile(_ path: String, folderReason: String) throws(InputError) -> Int32 {
        // O_NONBLOCK: opening a FIFO that replaced the file since it was listed must not wait for a writer.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        guard descriptor >= 0 else { throw InputError(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw InputError(path: path, reason: status.st_mode & S_IFMT == S_IFDIR ? folderReason : notRegular)
        }
        return descriptor
    }

    /// Why a path that is no regular file cannot be read.
    static let notRegular = "not a regular file"
    /// What reading a folder says: the system's "Is a directory".
    static var folderRead: String { String(cString: strerror(EISDIR)) }

    deinit {
        // A gzip reader closes its own descriptor.
        if case .plain(let descriptor) = handle { close(descriptor) }
    }

    /// Moves to byte `offset` of a plain file.
    func seek(to offset: Int) throws(InputError) {
        guard case .plain(let descriptor) = handle, lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
            throw InputError(path: path, reason: "cannot seek")
        }
    }

    /// Reads up to `count` bytes into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws(InputError) -> Int {
        switch handle {
        case .plain(let descriptor): try Self.read(descriptor, into: buffer, count: count, path: path)
        case .gzip(let reader): try reader.read(into: buffer, count: count)
        }
    }

    /// Reads up to `count` bytes of the open file `descriptor` (of `path`, named in errors); 0 at the end.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawPointer, count: Int, path: String) throws(InputError) -> Int {
        while true {
            let result = Foundation.read(descriptor, buffer, count)
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw InputError(path: path, reason: String(cString: strerror(errno)))
        }
    }
}

/// Streams the lines of an input file with their 1-based numbers.
///
/// Lines end at `\n`; a trailing `\r` is dropped, and so is a UTF-8 byte
/// order mark at the start of the file (not of a chunk). A last line without a newline is still a line.
/// Memory is one block plus the longest line; a line longer than
/// `maximumLineBytes` is passed on truncated, flagged `tooLong`.
///
/// With a byte `range` (plain files only) it reads one chunk of a large file:
/// the lines that *start* inside the range, numbered from 1 within it, so a
/// caller that reads the chunks in order adds the earlier chunks' line counts.
enum LineReader {
    static let blockSize = 1 << 20
    static let maximumLineBytes = 64 << 20

    struct Line {
        var number: Int
        var bytes: UnsafeBufferPointer<UInt8>
        var tooLong: Bool
        /// The line ended in `\r\n`, its `\r` dropped: a CSV record that goes on past the line keeps
        /// the break it had.
        var endsWithCR = false
    }

    /// Reads the lines of `path` (or of the chunk `range`); returns how many lines it read.
    ///
    /// With `hashing`, the bytes of the lines it reads are hashed, each once: for a chunk, from
    /// the start of its first line to the start of the next chunk's, which the next chunk's
    /// reader finds where this one does (past its range's end) while the file stays as it is.
    /// A gzip file's compressed bytes are hashed instead, all of them.
    @discardableResult
    static func forEachLine(path: String, range: Range<Int>? = nil, hashing: ContentHash.Reading? = nil, _ body: (Line) throws -> Void) throws -> Int {
        let file = try InputFile(path: path, hashing: hashing)
        var buffer = uninitializedBuffer(count: blockSize)
        var base = 0          // absolute offset of buffer[0]
        var start = 0         // first byte of the current line
        var end = 0           // bytes filled
        var scanned = 0       // bytes already searched for a newline
        var lineNumber = 0
        var skipping = false  // discard until the next newline (an over-long line, or a chunk's partial first line)
        var atEOF = false
        let stopOffset = range?.upperBound ?? Int.max
        let lineHash = file.isGzip ? nil : hashing
        /// Hashes the bytes from where hashing is up to `offset`, all still in the buffer: those
        /// before the range's end as soon as they are read (while the processor holds them), the
        /// rest of its last line once it is found.
        func hash(upTo offset: Int) {
            guard let lineHash, let from = lineHash.end, offset > from else { return }
            buffer.withUnsafeBytes { raw in
                guard let pointer = raw.baseAddress else { return }
                lineHash.add(pointer + (from - base), count: offset - from)
            }
        }
        /// Its lines end at `offset`: a chunk that held none of its own hashed none, there.
        func hashed(to offset: Int) -> Int {
            lineHash?.start(at: offset)
            hash(upTo: offset)
            return lineNumber
        }
        if let range, range.lowerBound > 0 {
            // Start one byte early: the line that straddles the boundary belongs to the previous chunk.
            try file.seek(to: range.lowerBound - 1)
            base = range.lowerBound - 1
            skipping = true
        } else {
            lineHash?.start(at: 0)
        }
        while true {
            while true {
                let newline: Int? = buffer.withUnsafeBufferPointer { raw in
                    guard scanned < end, let pointer = raw.baseAddress,
                          let found = memchr(pointer + scanned, 0x0A, end - scanned) else { return nil }
                    return pointer.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                guard let newline else { scanned = end; break }
                if skipping {
                    skipping = false
                    // The chunk's own lines start here (an over-long line's rest was its own already).
                    lineHash?.start(at: base + newline + 1)
                    hash(upTo: min(base + end, stopOffset))
                } else {
                    if base + start >= stopOffset { return hashed(to: base + start) }
                    lineNumber += 1
                    try emit(buffer: buffer, from: start, to: newline, number: lineNumber, fileStart: base + start == 0, tooLong: false, body)
                }
                start = newline + 1
                scanned = start
            }
            if atEOF {
                if start < end, !skipping {
                    // The next chunk's line.
                    if base + start >= stopOffset { return hashed(to: base + start) }
                    lineNumber += 1
                    try emit(buffer: buffer, from: start, to: end, number: lineNumber, fileStart: base + start == 0, tooLong: false, body)
                }
                return hashed(to: base + end)
            }
            // Make room: move the partial line to the front, or grow, or give up on an over-long line.
            if start > 0 {
                hash(upTo: base + start)
                let remaining = end - start
                if remaining > 0 {
                    buffer.withUnsafeMutableBufferPointer { raw in
                        guard let pointer = raw.baseAddress else { return }
                        memmove(pointer, pointer + start, remaining)
                    }
                }
                base += start
                end = remaining
                scanned -= start
                start = 0
            }
            if end == buffer.count {
                if skipping {
                    hash(upTo: base + end)
                    base += end
                    end = 0
                    scanned = 0
                } else if buffer.count >= maximumLineBytes {
                    if base >= stopOffset { return hashed(to: base) }
                    lineNumber += 1
                    try emit(buffer: buffer, from: 0, to: min(end, 4096), number: lineNumber, fileStart: base == 0, tooLong: true, body)
                    hash(upTo: base + end)
                    skipping = true
                    base += end
                    end = 0
                    scanned = 0
                } else {
                    buffer.append(contentsOf: repeatElement(0, count: buffer.count))
                }
            }
            let count = try buffer.withUnsafeMutableBytes { raw throws(InputError) -> Int in
                guard let pointer = raw.baseAddress else { return 0 }
                return try file.read(into: pointer + end, count: raw.count - end)
            }
            if count == 0 {
                atEOF = true
            } else {
                end += count
                hash(upTo: min(base + end, stopOffset))
            }
        }
    }

    /// Reads a plain file in blocks of whole lines, each line with its `\n`: a block holds as many
    /// lines as fit in `blockSize` bytes (more, for a longer line), so a caller copying most lines
    /// as they are writes them a block at a time. The last block may end without a `\n`.
    static func forEachBlock(path: String, blockSize: Int = blockSize, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        let file = try InputFile(path: path)
        var buffer = uninitializedBuffer(count: blockSize)
        var end = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { raw throws(InputError) -> Int in
                guard let pointer = raw.baseAddress else { return 0 }
                return try file.read(into: pointer + end, count: raw.count - end)
            }
            end += count
            try buffer.withUnsafeMutableBufferPointer { raw in
                guard let pointer = raw.baseAddress, end > 0 else { return }
                if count == 0 {
                    try body(UnsafeBufferPointer(start: pointer, count: end))
                    end = 0
                    return
                }
                var last = end - 1
                while last >= 0, pointer[last] != 0x0A { last -= 1 }
                guard last >= 0 else { return }
                let lines = last + 1
                try body(UnsafeBufferPointer(start: pointer, count: lines))
                memmove(pointer, pointer + lines, end - lines)
                end -= lines
            }
            if count == 0 { return }
            if end == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        }
    }

    /// A read buffer of `count` bytes, not zeroed: only the bytes a read filled are ever looked at,
    /// and zeroing a block for every file and chunk is work that `read` does over again.
    private static func uninitializedBuffer(count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// `fileStart`: the line starts the file, not only a chunk (whose lines are numbered from 1 too): a
    /// mark on a later line is part of it, and read so whichever chunk the line starts.
    private static func emit(
        buffer: [UInt8], from start: Int, to stop: Int, number: Int, fileStart: Bool, tooLong: Bool, _ body: (Line) throws -> Void
    ) throws {
        try buffer.withUnsafeBufferPointer { raw in
            guard let pointer = raw.baseAddress else { return }
            var lineStart = start
            var lineEnd = stop
            let endsWithCR = lineEnd > lineStart && pointer[lineEnd - 1] == 0x0D
            if endsWithCR { lineEnd -= 1 }
            if fileStart, lineEnd - lineStart >= 3, pointer[lineStart] == 0xEF, pointer[lineStart + 1] == 0xBB, pointer[lineStart + 2] == 0xBF {
                lineStart += 3
            }
            try body(Line(number: number, bytes: UnsafeBufferPointer(start: pointer + lineStart, count: lineEnd - lineStart), tooLong: tooLong,
                          endsWithCR: endsWithCR))
        }
    }
}
