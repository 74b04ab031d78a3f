import Foundation
import Synchronization

/// A history's events in time order (`UserHistory`): oldest first; at one instant a finding after
/// what it is about, then by event and id, then in the order they were found.
///
/// A customer's story can run to millions of events. Up to `memoryBytes` of them are held in
/// memory, encoded; past that they are sorted in runs in a spill file and merged as they are read,
/// so the story costs a bounded amount of memory however long it is. Reading them again (the table
/// measures its columns, then writes its lines) merges them again.
public final class HistoryEvents: Sequence, Sendable, Equatable {
    public typealias Event = UserHistory.Event

    /// How many bytes of encoded events are held before they go to a run on disk.
    public static let memoryBytes = 16 << 20
    /// How much of a run is read at a time while merging: one such buffer per run.
    static let readBytes = 64 << 10

    public let count: Int
    /// Why the events could not be sorted in runs on disk (no temporary folder it may write, a full
    /// disk), if so: those past the budget were then held in memory, and all are here.
    public let spillFailure: String?
    private let file: SpillFile?
    private let runs: [Range<Int64>]
    /// The events no run holds, encoded (`Record`), and where each starts, in time order.
    private let held: [UInt8]
    private let heldStarts: [Int]
    /// How many of the earliest events reading passes over (`droppingFirst`).
    private let skipped: Int
    private let failure = Mutex<String?>(nil)

    private init(count: Int, spillFailure: String? = nil, file: SpillFile?, runs: [Range<Int64>], held: [UInt8], heldStarts: [Int],
                 skipped: Int = 0) {
        self.count = count
        self.spillFailure = spillFailure
        self.file = file
        self.runs = runs
        self.held = held
        self.heldStarts = heldStarts
        self.skipped = skipped
    }

    /// These events without the earliest `earliest` of them: the latest ones of a long story
    /// (`history --limit`), read from the same runs, which are merged past the others as they are read.
    func droppingFirst(_ earliest: Int) -> HistoryEvents {
        let dropped = Swift.min(Swift.max(earliest, 0), count)
        return HistoryEvents(count: count - dropped, spillFailure: spillFailure, file: file, runs: runs, held: held, heldStarts: heldStarts,
                             skipped: skipped + dropped)
    }

    /// No events.
    public convenience init() {
        self.init(count: 0, file: nil, runs: [], held: [], heldStarts: [])
    }

    public var isEmpty: Bool { count == 0 }

    public var first: Event? {
        var events = makeIterator()
        return events.next()
    }

    public var last: Event? {
        reduce(nil) { $1 }
    }

    /// Why reading the events back stopped before their end (the spill file could not be read), if it did.
    public var readFailure: String? {
        failure.withLock { $0 }
    }

    public static func == (lhs: HistoryEvents, rhs: HistoryEvents) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs)
    }

    public func makeIterator() -> Iterator {
        Iterator(self)
    }

    public struct Iterator: IteratorProtocol {
        private let events: HistoryEvents
        private var nextHeld = 0
        private var merge: Merge?
        /// The earliest events still to pass over.
        private var toSkip: Int

        fileprivate init(_ events: HistoryEvents) {
            self.events = events
            toSkip = events.skipped
        }

        public mutating func next() -> Event? {
            while toSkip > 0 {
                toSkip -= 1
                // Held alone, they are in order already: the first ones are passed over unread.
                if events.file == nil {
                    nextHeld += 1
                } else if nextEvent() == nil {
                    return nil
                }
            }
            return nextEvent()
        }

        private mutating func nextEvent() -> Event? {
            let events = events
            guard let file = events.file else {
                // Nothing went to disk: the held events, in order.
                guard nextHeld < events.heldStarts.count else { return nil }
                defer { nextHeld += 1 }
                return events.held.withUnsafeBytes { Record.event(Record.at(events.heldStarts[nextHeld], in: $0)) }
            }
            do {
                if merge == nil { merge = try Merge(events, file: file) }
                return try merge?.next()
            } catch {
                events.failure.withLock { $0 = $0 ?? String(describing: error) }
                merge = nil
                nextHeld = events.heldStarts.count
                return nil
            }
        }
    }

    /// The runs and the held events merged: each source's head, and which is smallest.
    private final class Merge {
        private let events: HistoryEvents
        private let file: SpillFile
        /// By source: the runs, then the held events as the last.
        private var readers: [SpillRuns.Reader]
        private var heads: [[UInt8]]
        private var nextHeld = 0
        private var heap = RunHeap([], by: { _, _ in false })

        init(_ events: HistoryEvents, file: SpillFile) throws {
            self.events = events
            self.file = file
            readers = events.runs.map { SpillRuns.Reader($0, readBytes: HistoryEvents.readBytes) }
            heads = Array(repeating: [], count: events.runs.count + 1)
            var live: [Int] = []
            for source in heads.indices where try advance(source) { live.append(source) }
            heap = RunHeap(live, by: precedes)
        }

        func next() throws -> Event? {
            guard let smallest = heap.smallest else { return nil }
            let event = heads[smallest].withUnsafeBytes { Record.event($0) }
            heap.smallestAdvanced(exhausted: try !advance(smallest), by: precedes)
            return event
        }

        private func precedes(_ a: Int, _ b: Int) -> Bool {
            heads[a].withUnsafeBytes { a in heads[b].withUnsafeBytes { b in Record.precedes(a, b) } }
        }

        /// Puts the source's next event in its head; false past its last.
        private func advance(_ source: Int) throws -> Bool {
            guard source == readers.count else { return try readers[source].next(into: &heads[source], from: file) }
            guard nextHeld < events.heldStarts.count else { return false }
            let start = events.heldStarts[nextHeld]
            nextHeld += 1
            heads[source].removeAll(keepingCapacity: true)
            events.held.withUnsafeBytes { heads[source].append(contentsOf: Record.at(start, in: $0)) }
            return true
        }
    }

    /// Gathers events in any order; `finished()` hands them back in time order.
    struct Builder {
        private let memoryBytes: Int
        private let folder: String
        /// The events held: each its length (4 bytes), then its record.
        private var bytes: [UInt8] = []
        private var starts: [Int] = []
        private var runs: SpillRuns?
        private var count = 0
        /// What went wrong making or writing a run: from then on every event is held in memory, as
        /// all were before a story could go to disk, rather than the story fail.
        private var spillFailure: String?

        init(memoryBytes: Int = HistoryEvents.memoryBytes, folder: String = FileManager.default.temporaryDirectory.path) {
            self.memoryBytes = memoryBytes
            self.folder = folder
        }

        mutating func add(_ event: Event) {
            starts.append(bytes.count)
            Record.append(event, sequence: count, to: &bytes)
            count += 1
            if bytes.count >= memoryBytes, spillFailure == nil {
                do { try spill() } catch { spillFailure = String(describing: error) }
            }
        }

        /// The held events' starts in time order.
        private func sorted() -> [Int] {
            bytes.withUnsafeBytes { bytes in
                starts.sorted { Record.precedes(Record.at($0, in: bytes), Record.at($1, in: bytes)) }
            }
        }

        /// Writes the held events to a run of their own. Until it has, they stay held: a run that fails
        /// part way is not one of `runs`, and loses nothing.
        private mutating func spill() throws {
            var runs = try runs ?? SpillRuns(file: SpillFile(folder: folder, prefix: ".iaprecon-history-", name: "history's spill file"),
                                             flushBytes: HistoryEvents.readBytes)
            let order = sorted()
            try bytes.withUnsafeBytes { bytes in
                for start in order { try runs.append(Record.at(start, in: bytes).assumingMemoryBound(to: UInt8.self)) }
            }
            try runs.endRun()
            self.runs = runs
            bytes.removeAll(keepingCapacity: true)
            starts.removeAll(keepingCapacity: true)
        }

        func finished() -> HistoryEvents {
            HistoryEvents(count: count, spillFailure: spillFailure, file: runs?.file, runs: runs?.runs ?? [], held: bytes, heldStarts: sorted())
        }
    }

    /// One event, encoded: its time (8 bytes), the order it was found in (8), whether it is a
    /// finding (1), then each text as its length (4) and its UTF-8.
    private enum Record {
        static let textsStart = 17

        static func append(_ event: Event, sequence: Int, to bytes: inout [UInt8]) {
            let lengthAt = bytes.count
            bytes.append(contentsOf: [0, 0, 0, 0])
            withUnsafeBytes(of: event.ms.littleEndian) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: Int64(sequence).littleEndian) { bytes.append(contentsOf: $0) }
            bytes.append(event.event.hasPrefix("FINDING") ? 1 : 0)
            for text in [event.event, event.id, event.product, event.amount, event.currency, event.detail, event.shownDetail, event.source] {
                var text = text
                text.withUTF8 { utf8 in
                    withUnsafeBytes(of: UInt32(utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
                    bytes.append(contentsOf: utf8)
                }
            }
            let length = UInt32(bytes.count - lengthAt - 4).littleEndian
            withUnsafeBytes(of: length) { length in
                for index in 0..<4 { bytes[lengthAt + index] = length[index] }
            }
        }

        /// The record whose length starts at `start` in `bytes`.
        static func at(_ start: Int, in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
            return UnsafeRawBufferPointer(rebasing: bytes[(start + 4)..<(start + 4 + length)])
        }

        /// The text at `offset`, and where the next one starts.
        private static func text(_ record: UnsafeRawBufferPointer, at offset: Int) -> (UnsafeRawBufferPointer, next: Int) {
            let length = Int(UInt32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            return (UnsafeRawBufferPointer(rebasing: record[(offset + 4)..<(offset + 4 + length)]), offset + 4 + length)
        }

        static func event(_ record: UnsafeRawBufferPointer) -> Event {
            var offset = textsStart
            func next() -> String {
                let (bytes, after) = text(record, at: offset)
                offset = after
                return String(decoding: bytes, as: UTF8.self)
            }
            let ms = Int64(littleEndian: record.loadUnaligned(fromByteOffset: 0, as: Int64.self))
            let (event, id, product, amount, currency) = (next(), next(), next(), next(), next())
            let (detail, shownDetail, source) = (next(), next(), next())
            return Event(ms: ms, event: event, id: id, product: product, amount: amount, currency: currency,
                         detail: detail, shownDetail: shownDetail, source: source)
        }

        /// Time order: by time; at one instant a finding after the rest; then by event and id as
        /// strings compare; then in the order found.
        static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
            let (msA, msB) = (a.loadUnaligned(fromByteOffset: 0, as: Int64.self), b.loadUnaligned(fromByteOffset: 0, as: Int64.self))
            if msA != msB { return Int64(littleEndian: msA) < Int64(littleEndian: msB) }
            if a[16] != b[16] { return a[16] < b[16] }
            let (eventA, idAtA) = text(a, at: textsStart), (eventB, idAtB) = text(b, at: textsStart)
            let byEvent = compare(eventA, eventB)
            if byEvent != 0 { return byEvent < 0 }
            let byID = compare(text(a, at: idAtA).0, text(b, at: idAtB).0)
            if byID != 0 { return byID < 0 }
            return Int64(littleEndian: a.loadUnaligned(fromByteOffset: 8, as: Int64.self))
                < Int64(littleEndian: b.loadUnaligned(fromByteOffset: 8, as: Int64.self))
        }

        /// As the texts compare as strings: ASCII by its bytes, anything else as Swift orders strings
        /// (canonically equivalent texts are equal).
        private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
            guard ASCIIBytes.only(a), ASCIIBytes.only(b) else {
                let (textA, textB) = (String(decoding: a, as: UTF8.self), String(decoding: b, as: UTF8.self))
                return textA == textB ? 0 : (textA < textB ? -1 : 1)
            }
            return BinaryOrder.compare(a.assumingMemoryBound(to: UInt8.self), b.assumingMemoryBound(to: UInt8.self))
        }
    }
}
