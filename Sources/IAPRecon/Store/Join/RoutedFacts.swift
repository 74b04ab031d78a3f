import Foundation
import Synchronization

/// The facts of a full rebuild's batches, read once: each fact table scanned in its stored order,
/// every row routed to the batch its key belongs to and held until that batch is decided.
///
/// A batch of whole components has rows on pages all over each table (a long-lived user's lines
/// are in every day's files), so reading batch by batch through the key indexes reads most pages
/// once per batch, and more batches for a larger store means more reads per page. A scan reads
/// each page once, without the indexes. An incremental join's scope is small: it reads by key.
///
/// Rows are held packed (`PackedRows`). Past `budget` bytes held, every held row goes to a spill
/// file in the store's folder, deleted as it is made, so memory stays bounded whatever the store's size.
final class RoutedFacts: Sendable {
    /// Rows a scanning thread gathers for one batch before it hands them over. A mapped block's
    /// size (`ProcessMemory`): a chunk's pages are touched only as rows fill it, and a spill that
    /// frees the chunks gives their pages back at once; smaller chunks would stay resident in the
    /// heap after a spill, freed, beside the chunks that follow it.
    static let chunkBytes = ProcessMemory.mappedBlockBytes
    /// A chunk's room: made once, since a buffer that doubles past `chunkBytes` holds twice what it needs.
    private static let chunkCapacity = chunkBytes + (16 << 10)

    private struct Held: ~Copyable {
        /// By batch: the chunks of rows as the scans handed them over, each of one table.
        var rows: [[PackedRows]]
        var bytes = 0
        /// By batch: where its spilled rows are.
        var spilled: [[Chunk]]
        var spill: SpillFile?
        var spilledBytes = 0
    }

    /// Rows of one table spilled in one piece.
    private struct Chunk {
        var table: Int
        var offset: Int64
        var length: Int
        var count: Int
    }

    private let held: Mutex<Held>
    private let budget: Int
    private let directory: String
    /// How many batches the rows are routed to.
    let batches: Int

    private init(batches: Int, budget: Int, directory: String) {
        held = Mutex(Held(rows: Array(repeating: [], count: batches), spilled: Array(repeating: [], count: batches)))
        self.batches = batches
        self.budget = budget
        self.directory = directory
    }

    /// Scans every fact table of the store at `path` on `pool`'s workers (a table per worker,
    /// each on a read-only connection of its own) and routes each row to the batch its key is in;
    /// a row whose key no batch has is read by none, as when batches read by key.
    static func read(path: String, batches: some RebuildBatches, pool: WorkerPool, budget: Int) throws -> RoutedFacts {
        let routes = Routes(batches)
        Trace.mark("join facts' routes")
        let facts = RoutedFacts(batches: batches.count, budget: budget, directory: PathParent.of(path))
        // The largest first, so that no worker starts it last.
        let tables = StoredScopeFacts.FactTable.allCases.sorted { $0.scanOrder < $1.scanOrder }
        try pool.run(count: tables.count, bound: 1, produce: { (index: Int, send: (Result<Void, any Error>) -> Void) in
            do {
                try facts.scan(tables[index], Database(path: path, readOnly: true), routes: routes, batches: batches.count)
            } catch {
                send(.failure(error))
            }
        }, consume: { _, result in try result.get() })
        return facts
    }

    /// Bytes written to the spill file so far.
    var spilledBytes: Int { held.withLock { $0.spilledBytes } }

    /// Takes batch `batch`'s rows, by table (`FactTable.rawValue`), and forgets them.
    func take(batch: Int) throws -> [PackedRows] {
        // The spilled rows are read back under the lock too: a batch's are a few megabytes.
        let chunks = try held.withLock { held in
            held.bytes -= held.rows[batch].reduce(0) { $0 + $1.bytes.count }
            var chunks = held.rows[batch]
            held.rows[batch] = []
            if let spill = held.spill {
                for chunk in held.spilled[batch] {
                    chunks.append(PackedRows(table: chunk.table, bytes: try spill.read(at: chunk.offset, count: chunk.length), count: chunk.count))
                }
            }
            held.spilled[batch] = []
            return chunks
        }
        var rows = StoredScopeFacts.FactTable.allCases.map { table in
            var rows = PackedRows(table: table.rawValue)
            rows.reserveCapacity(chunks.reduce(0) { $0 + ($1.table == table.rawValue ? $1.bytes.count : 0) })
            return rows
        }
        for chunk in chunks { rows[chunk.table].append(contentsOf: chunk) }
        return rows
    }

    private func scan(_ table: StoredScopeFacts.FactTable, _ reader: Database, routes: Routes, batches: Int) throws {
        func chunk() -> PackedRows {
            var rows = PackedRows(table: table.rawValue)
            rows.reserveCapacity(Self.chunkCapacity)
            return rows
        }
        var pending = (0..<batches).map { _ in chunk() }
        let keys = table.isKeyedByOrder ? routes.orders : routes.transactions
        try reader.forEach(table.selection(keysIn: nil)) { row in
            guard let key = row.fingerprint(table.key), let batch = keys[key].map(Int.init) else { return }
            pending[batch].append(row, columns: table.columns)
            if pending[batch].bytes.count >= Self.chunkBytes {
                try add(pending[batch], batch: batch)
                pending[batch] = chunk()
            }
        }
        // The last chunks are mostly smaller: each kept at its size, not with a whole chunk's room.
        for (batch, rows) in pending.enumerated() where rows.count > 0 {
            try add(PackedRows(table: rows.table, bytes: Array(rows.bytes), count: rows.count), batch: batch)
        }
    }

    private func add(_ rows: PackedRows, batch: Int) throws {
        try held.withLock { held in
            held.rows[batch].append(rows)
            held.bytes += rows.bytes.count
            guard held.bytes > budget else { return }
            let spill = try held.spill ?? SpillFile(directory: directory)
            held.spill = spill
            for batch in held.rows.indices {
                for rows in held.rows[batch] {
                    let offset = try spill.append(rows.bytes)
                    held.spilled[batch].append(Chunk(table: rows.table, offset: offset, length: rows.bytes.count, count: rows.count))
                    held.spilledBytes += rows.bytes.count
                }
                held.rows[batch] = []
            }
            held.bytes = 0
        }
    }

    /// Which batch each transaction and order is in, by the fingerprint of its id.
    private struct Routes: Sendable {
        var transactions: [RowFingerprint: Int32] = [:]
        var orders: [RowFingerprint: Int32] = [:]

        init(_ batches: some RebuildBatches) {
            // Sized once: growing a table hashes every key in it again.
            var counts: [KeyKind: Int] = [:]
            batches.forEachKey { _, kind, _ in counts[kind, default: 0] += 1 }
            transactions.reserveCapacity(counts[.transaction] ?? 0)
            orders.reserveCapacity(counts[.order] ?? 0)
            batches.forEachKey { key, kind, batch in
                switch kind {
                case .transaction: transactions[RowFingerprint(key)] = Int32(batch)
                case .order: orders[RowFingerprint(key)] = Int32(batch)
                default: break
                }
            }
        }
    }
}

/// A file for rows that do not fit in memory, removed from its directory as soon as it is made:
/// nothing is left behind, whether the run ends or is killed.
private final class SpillFile {
    private let descriptor: Int32
    private var end: Int64 = 0

    init(directory: String) throws {
        // In the store's own folder, which its user can write, not beside it.
        var template = Array(((directory.isEmpty ? "." : directory) + "/.iaprecon-join-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw SpillError(action: "make a spill file in \(directory)", code: errno) }
        unlink(template)
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Writes `bytes` at the end; returns where they start.
    func append(_ bytes: [UInt8]) throws -> Int64 {
        let start = end
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = pwrite(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(start) + off_t(done))
                guard written > 0 else { throw SpillError(action: "write the join's spill file", code: errno) }
                done += written
            }
        }
        end += Int64(bytes.count)
        return start
    }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let read = pread(descriptor, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
                guard read > 0 else { throw SpillError(action: "read the join's spill file", code: errno) }
                done += read
            }
            initialized = count
        }
    }
}

/// The spill file could not be made, written or read (a full disk, most likely).
struct SpillError: Error, CustomStringConvertible {
    var action: String
    var code: Int32
    var description: String { "could not \(action): \(String(cString: strerror(code)))" }
}

extension StoredScopeFacts.FactTable {
    /// Sightings have the most rows and columns, revocations the fewest.
    fileprivate var scanOrder: Int {
        switch self {
        case .sightings: 0
        case .deliveries: 1
        case .orders: 2
        case .claims: 3
        case .revocations: 4
        }
    }

    /// Hands `receiver` every row of `rows` (routed rows of this table, in any order) as `read`
    /// hands a scope's rows: a key's rows together, keys in byte order, then file order.
    /// Rows of a file the ledger no longer has are left out where `read` joins the files.
    func hand(routed rows: PackedRows, files: SourceFiles, to facts: inout some ScopeFactsReceiver) throws {
        let columns = columns
        try rows.bytes.withUnsafeBufferPointer { bytes in
            var starts: [Int] = []
            starts.reserveCapacity(rows.count * columns)
            var offset = 0
            for _ in 0..<(rows.count * columns) {
                starts.append(offset)
                offset = PackedRow.end(ofValueAt: offset, in: bytes)
            }
            try starts.withUnsafeBufferPointer { starts in
                // Each row's place in file order, then line and item: what sorts it after its key.
                var order: [(row: Int, file: Int64, line: Int64, item: Int64)] = []
                order.reserveCapacity(rows.count)
                for row in 0..<rows.count {
                    let fields = PackedFields(bytes: bytes, starts: starts, first: row * columns)
                    let fileID = fields.int(file)
                    let place: Int64
                    if isOrderedByPath {
                        guard let known = files.place(of: fileID) else { continue }
                        place = Int64(known)
                    } else {
                        place = fileID
                    }
                    order.append((row, place, fields.int(line), fields.int(item)))
                }
                let key = key
                order.sort { a, b in
                    let keyOrder = PackedFields(bytes: bytes, starts: starts, first: a.row * columns)
                        .compareText(key, with: PackedFields(bytes: bytes, starts: starts, first: b.row * columns), key)
                    if keyOrder != 0 { return keyOrder < 0 }
                    return (a.file, a.line, a.item) < (b.file, b.line, b.item)
                }
                for entry in order {
                    try hand(PackedFields(bytes: bytes, starts: starts, first: entry.row * columns), to: &facts)
                }
            }
        }
    }
}
