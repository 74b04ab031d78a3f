import CZlib
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the generator could not write its folder.
public struct GeneratorError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }

    static func system(_ action: String, _ path: String) -> GeneratorError {
        GeneratorError("cannot \(action) \(path): \(String(cString: strerror(errno)))")
    }
}

/// One input file of the generated folder: lines arrive in user order, wait in memory
/// (and, past the folder's memory budget, in a hidden spool file) with their time, and
/// are written out sorted by time.
///
/// Users are simulated one at a time, so a day file receives lines from the whole
/// user base in no particular order; real logs are in time order, and sorting one
/// day file at the end keeps memory bounded by the budget plus the largest day file
/// rather than by the whole folder. Lines with equal times keep their arrival order.
///
/// `@unchecked Sendable`: while users are simulated only the generating thread touches
/// a file; `finish()` then runs on one worker per file, and nothing else touches it.
final class SpooledFile: @unchecked Sendable {
    let relativePath: String
    let finalPath: String
    let spoolPath: String
    let header: [UInt8]
    let gzip: Bool
    private var buffer: [UInt8] = []
    private var spooled = false
    private(set) var lines = 0
    private(set) var bytes = 0

    init(directory: String, relativePath: String, header: String? = nil, gzip: Bool = false) {
        self.relativePath = relativePath
        self.finalPath = directory + "/" + relativePath
        let slash = relativePath.lastIndex(of: "/")
        let name = slash.map { String(relativePath[relativePath.index(after: $0)...]) } ?? relativePath
        let folder = slash.map { directory + "/" + String(relativePath[..<$0]) } ?? directory
        // Hidden and not ending in .jsonl/.csv/.gz, so a reader never takes a leftover spool for input.
        self.spoolPath = folder + "/." + name + ".spool"
        self.header = header.map { Array($0.utf8) + [10] } ?? []
        self.gzip = gzip
        bytes = self.header.count
    }

    /// Adds one line (without its newline) that belongs at `time` in the file's order;
    /// returns the bytes it now holds in memory for it.
    @discardableResult
    func append(_ line: [UInt8], at time: Millis) -> Int {
        var key = UInt64(bitPattern: time).littleEndian
        withUnsafeBytes(of: &key) { buffer.append(contentsOf: $0) }
        var length = UInt32(line.count).littleEndian
        withUnsafeBytes(of: &length) { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: line)
        lines += 1
        bytes += line.count + 1
        return line.count + 12
    }

    /// Moves the lines held in memory to the end of the spool file (the buffer keeps its capacity).
    func flush() throws {
        guard !buffer.isEmpty else { return }
        let flags = O_WRONLY | O_CREAT | (spooled ? O_APPEND : O_TRUNC)
        let descriptor = open(spoolPath, flags, 0o644)
        guard descriptor >= 0 else { throw GeneratorError.system("create", spoolPath) }
        defer { closeDescriptor(descriptor) }
        try writeAll(descriptor, buffer, path: spoolPath)
        spooled = true
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes the final file: header, then every line sorted by time; removes the spool.
    func finish() throws {
        var spool: MappedFile?
        if spooled {
            try flush()
            spool = try MappedFile(path: spoolPath)
            unlink(spoolPath)
        }
        let memory = buffer
        buffer = []
        let sink = try FileSink(path: finalPath, gzip: gzip)
        if let spool {
            try spool.withBytes { try write(records: $0, to: sink) }
        } else {
            try memory.withUnsafeBytes { try write(records: $0, to: sink) }
        }
        try sink.close()
    }

    private func write(records: UnsafeRawBufferPointer, to sink: FileSink) throws {
        var keys: [(time: Int64, start: Int, length: Int)] = []
        keys.reserveCapacity(lines)
        var offset = 0
        while offset + 12 <= records.count {
            let time = Int64(bitPattern: UInt64(littleEndian: records.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            let length = Int(UInt32(littleEndian: records.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)))
            keys.append((time, offset + 12, length))
            offset += 12 + length
        }
        // Equal times keep arrival order: the sort key includes the arrival index.
        var order = Array(keys.indices)
        order.sort { keys[$0].time != keys[$1].time ? keys[$0].time < keys[$1].time : $0 < $1 }
        let chunkSize = 1 << 20
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var used = 0
        try chunk.withUnsafeMutableBytes { target in
            guard let base = target.baseAddress, let source = records.baseAddress else { return }
            func put(_ from: UnsafeRawPointer, _ count: Int) throws {
                if used + count > chunkSize {
                    try sink.write(UnsafeRawBufferPointer(start: base, count: used))
                    used = 0
                }
                if count > chunkSize {
                    try sink.write(UnsafeRawBufferPointer(start: from, count: count))
                } else {
                    (base + used).copyMemory(from: from, byteCount: count)
                    used += count
                }
            }
            try header.withUnsafeBytes { if let start = $0.baseAddress { try put(start, $0.count) } }
            var newline: UInt8 = 10
            for index in order {
                let key = keys[index]
                try put(source + key.start, key.length)
                try put(&newline, 1)
            }
            try sink.write(UnsafeRawBufferPointer(start: base, count: used))
        }
    }
}

/// A whole file mapped read-only into memory.
final class MappedFile {
    private let address: UnsafeMutableRawPointer?
    private let size: Int

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw GeneratorError.system("open", path) }
        defer { closeDescriptor(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw GeneratorError.system("stat", path) }
        size = Int(status.st_size)
        if size == 0 {
            address = nil
            return
        }
        #if os(Linux)
        let flags = MAP_PRIVATE | MAP_POPULATE
        #else
        let flags = MAP_PRIVATE
        #endif
        let mapped = mmap(nil, size, PROT_READ, flags, descriptor, 0)
        guard let mapped, mapped != MAP_FAILED else { throw GeneratorError.system("map", path) }
        madvise(mapped, size, MADV_WILLNEED)
        address = mapped
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: address, count: size))
    }

    deinit {
        if let address { munmap(address, size) }
    }
}

/// A plain or gzip output file.
final class FileSink {
    private let path: String
    private var descriptor: Int32 = -1
    private var gz: gzFile?

    init(path: String, gzip: Bool) throws {
        self.path = path
        if gzip {
            guard let file = gzopen(path, "wb6") else { throw GeneratorError.system("create", path) }
            gz = file
        } else {
            descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else { throw GeneratorError.system("create", path) }
        }
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if let gz {
            let written = gzwrite(gz, base, UInt32(bytes.count))
            guard written == Int32(bytes.count) else { throw GeneratorError("cannot write \(path): gzip error") }
        } else {
            try writeAll(descriptor, bytes, path: path)
        }
    }

    func close() throws {
        if let gz {
            self.gz = nil
            guard gzclose(gz) == Z_OK else { throw GeneratorError("cannot finish \(path): gzip error") }
        } else if descriptor >= 0 {
            let result = closeDescriptor(descriptor)
            descriptor = -1
            guard result == 0 else { throw GeneratorError.system("close", path) }
        }
    }

    deinit {
        if let gz { gzclose(gz) }
        if descriptor >= 0 { closeDescriptor(descriptor) }
    }
}

@discardableResult
func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}

func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
    try bytes.withUnsafeBytes { try writeAll(descriptor, $0, path: path) }
}

func writeAll(_ descriptor: Int32, _ raw: UnsafeRawBufferPointer, path: String) throws {
    guard let base = raw.baseAddress else { return }
    var offset = 0
    while offset < raw.count {
        let written = write(descriptor, base + offset, raw.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            throw GeneratorError.system("write", path)
        }
        offset += written
    }
}

/// Writes a small whole file (catalog, fx, spend, truth).
func writeWholeFile(_ path: String, _ bytes: [UInt8]) throws {
    let sink = try FileSink(path: path, gzip: false)
    try sink.write(bytes)
    try sink.close()
}

func makeDirectory(_ path: String) throws {
    var partial = path.hasPrefix("/") ? "" : "."
    for component in path.split(separator: "/") {
        partial += "/" + component
        if mkdir(partial, 0o755) != 0, errno != EEXIST {
            throw GeneratorError.system("create folder", partial)
        }
    }
}
