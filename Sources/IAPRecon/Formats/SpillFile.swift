import Foundation
import Synchronization

/// A file for what does not fit in memory, removed from its folder as soon as it is made: nothing
/// is left behind, whether the process ends or is killed. Written at its end, read anywhere.
final class SpillFile: Sendable {
    private let descriptor: Int32
    private let end = Mutex<Int64>(0)
    /// What it holds, as its errors name it ("the join's spill file").
    private let name: String

    /// Made in `folder` (the current one when empty), its momentary name starting with `prefix`.
    init(folder: String, prefix: String, name: String) throws {
        var template = Array(((folder.isEmpty ? "." : folder) + "/" + prefix + "XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw SpillError(action: "make a spill file in \(folder)", code: errno) }
        unlink(template)
        self.descriptor = descriptor
        self.name = name
    }

    deinit {
        close(descriptor)
    }

    /// Writes `bytes` at the end; returns where they start.
    func append(_ bytes: UnsafeRawBufferPointer) throws -> Int64 {
        try end.withLock { end throws -> Int64 in
            let start = end
            var done = 0
            while done < bytes.count {
                let written = pwrite(descriptor, bytes.baseAddress.map { $0 + done }, bytes.count - done, off_t(start) + off_t(done))
                guard written > 0 else { throw SpillError(action: "write \(name)", code: errno) }
                done += written
            }
            end += Int64(bytes.count)
            return start
        }
    }

    func append(_ bytes: [UInt8]) throws -> Int64 {
        try bytes.withUnsafeBytes { try append($0) }
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let read = pread(descriptor, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
                guard read > 0 else { throw SpillError(action: "read \(name)", code: errno) }
                done += read
            }
            initialized = count
        }
    }
}

/// A spill file could not be made, written or read (a full disk, most likely).
struct SpillError: Error, CustomStringConvertible {
    var action: String
    var code: Int32
    var description: String { "could not \(action): \(String(cString: strerror(code)))" }
}

/// Records sorted in runs in a spill file of their own, each record its length (4 bytes) then its
/// bytes, gathered until `flushBytes` before they are written.
struct SpillRuns {
    let file: SpillFile
    /// Each finished run's place in the file.
    private(set) var runs: [Range<Int64>] = []
    private var runStart: Int64 = 0
    private var written: Int64 = 0
    private var pending: [UInt8] = []
    private let flushBytes: Int

    init(file: SpillFile, flushBytes: Int) {
        self.file = file
        self.flushBytes = flushBytes
    }

    mutating func append(_ record: UnsafeBufferPointer<UInt8>) throws {
        withUnsafeBytes(of: UInt32(record.count).littleEndian) { pending.append(contentsOf: $0) }
        pending.append(contentsOf: record)
        if pending.count >= flushBytes { try flush() }
    }

    /// Ends the run the records since the last were in order for.
    mutating func endRun() throws {
        try flush()
        runs.append(runStart..<written)
        runStart = written
    }

    private mutating func flush() throws {
        guard !pending.isEmpty else { return }
        _ = try file.append(pending)
        written += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }

    /// Reads one run's records in order, `readBytes` of the file at a time.
    struct Reader {
        private var next: Int64
        private let end: Int64
        private let readBytes: Int
        private var buffer: [UInt8] = []
        private var position = 0

        init(_ run: Range<Int64>, readBytes: Int) {
            next = run.lowerBound
            end = run.upperBound
            self.readBytes = readBytes
        }

        /// Puts the run's next record in `record`; false at the run's end.
        mutating func next(into record: inout [UInt8], from file: SpillFile) throws -> Bool {
            guard try fill(4, from: file) else { return false }
            let length = buffer.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: position, as: UInt32.self))) }
            position += 4
            guard try fill(length, from: file) else { throw SpillError(action: "read a sorted run", code: EIO) }
            record.removeAll(keepingCapacity: true)
            record.append(contentsOf: buffer[position..<(position + length)])
            position += length
            return true
        }

        /// Makes `count` unread bytes available at `position`; false when the run has fewer left.
        private mutating func fill(_ count: Int, from file: SpillFile) throws -> Bool {
            if buffer.count - position >= count { return true }
            buffer.removeFirst(position)
            position = 0
            let wanted = min(max(count - buffer.count, readBytes), Int(end - next))
            if wanted > 0 {
                buffer.append(contentsOf: try file.read(at: next, count: wanted))
                next += Int64(wanted)
            }
            return buffer.count >= count
        }
    }
}

/// The runs being merged that still have a head, as a min-heap of their indices: the smallest head
/// is the next record out.
struct RunHeap {
    private var heap: [Int]

    init(_ runs: [Int], by less: (Int, Int) -> Bool) {
        heap = runs
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index, less) }
    }

    /// The run whose head is smallest.
    var smallest: Int? { heap.first }

    /// After the smallest run's head moved on to its next record, or (`exhausted`) past its last.
    mutating func smallestAdvanced(exhausted: Bool, by less: (Int, Int) -> Bool) {
        if exhausted {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
        }
        siftDown(0, less)
    }

    private mutating func siftDown(_ from: Int, _ less: (Int, Int) -> Bool) {
        var parent = from
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var child = left
            if left + 1 < heap.count, less(heap[left + 1], heap[left]) { child = left + 1 }
            guard less(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            parent = child
        }
    }
}
