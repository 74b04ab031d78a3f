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
/// file in the store's folder, deleted as it is made, and a batch too large to sort in memory is
/// sorted in runs (`FactTable.hand`), so memory stays bounded whatever the store's size and
/// however large one component is.
final class RoutedFacts: Sendable {
    /// Rows a scanning thread gathers for one batch before it hands them over. A mapped block's
    /// size (`ProcessMemory`): a chunk's pages are touched only as rows fill it, and a spill that
    /// frees the chunks gives their pages back at once; smaller chunks would stay resident in the
    /// heap after a spill, freed, beside the chunks that follow it.
    static let chunkBytes = ProcessMemory.mappedBlockBytes
    /// A chunk's room: made once, since a buffer that doubles past `chunkBytes` holds twice what it needs.
    private static let chunkCapacity = chunkBytes + (16 << 10)
    /// What one scanning thread's partly filled chunks (one per batch) may hold together: with
    /// more batches, each chunk is handed over sooner, so that a larger store does not hold more.
    static let pendingBytesPerScan = 32 << 20

    /// The bytes at which a scanning thread hands a batch's chunk over, with `batches` batches.
    /// A chunk's pages beyond it are never touched, so it holds no more memory than it is filled with.
    static func handOverBytes(batches: Int) -> Int {
        min(chunkBytes, max(64 << 10, pendingBytesPerScan / max(1, batches)))
    }

    /// What a full rebuild's routing aims to hold at most: the batches' keys and routes already in
    /// the heap, and the facts it holds before spilling them. The batches grow with the store;
    /// the facts give way to them, down to `leastBudget`, so that a larger store spills sooner
    /// rather than holding more.
    static let heapCeiling = 384 << 20
    /// Held facts below which spilling would cost more than the memory it saves.
    static let leastBudget = 32 << 20

    /// The bytes of facts to hold before spilling: at most `most`, and no more than leaves the
    /// heap, with `heapInUse` bytes in use already, under `heapCeiling`.
    static func budget(most: Int, heapInUse: Int) -> Int {
        min(most, max(leastBudget, heapCeiling - heapInUse))
    }

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
    fileprivate struct Chunk {
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
    /// a row whose key no batch has is read by none, as when batches read by key. A scanning thread
    /// hands a batch's rows over at `handOver` bytes (tests), else at `handOverBytes(batches:)`.
    static func read(path: String, batches: some RebuildBatches, pool: WorkerPool, budget: Int, handOver: Int? = nil) throws -> RoutedFacts {
        let routes = Routes(batches)
        Trace.mark("join facts' routes")
        let facts = RoutedFacts(batches: batches.count, budget: budget, directory: PathParent.of(path))
        // The largest first, so that no worker starts it last.
        let tables = StoredScopeFacts.FactTable.allCases.sorted { $0.scanOrder < $1.scanOrder }
        try pool.run(count: tables.count, bound: 1, produce: { (index: Int, send: (Result<Void, any Error>) -> Void) in
            do {
                try facts.scan(tables[index], Database(path: path, readOnly: true), routes: routes, batches: batches.count,
                               handOver: handOver ?? handOverBytes(batches: batches.count))
            } catch {
                send(.failure(error))
            }
        }, consume: { _, result in try result.get() })
        return facts
    }

    /// Rows read already (an incremental join's closure: `ClosureFacts`), each routed to the batch
    /// its key is in, as `read` routes the rows it scans, and held; the closure's own are let go
    /// as they are routed. Nothing is spilled: the closure held them within its budget.
    static func holding(_ facts: ClosureFacts, routedTo batches: some RebuildBatches, folder: String) -> RoutedFacts {
        let routes = Routes(batches)
        let routed = RoutedFacts(batches: batches.count, budget: .max, directory: folder)
        let tables = StoredScopeFacts.FactTable.allCases
        var rows = (0..<batches.count).map { _ in tables.map { PackedRows(table: $0.rawValue) } }
        var chunks = facts.take()
        while let chunk = chunks.popLast() {
            guard let table = StoredScopeFacts.FactTable(rawValue: chunk.table) else { continue }
            let keys = table.isKeyedByOrder ? routes.orders : routes.transactions
            chunk.forEachRow(columns: table.columns) { row in
                guard let key = row.fingerprint(table.key), let batch = keys[key].map(Int.init) else { return }
                rows[batch][table.rawValue].append(row)
            }
        }
        routed.held.withLock { held in
            for (batch, tables) in rows.enumerated() {
                held.rows[batch] = tables.filter { $0.count > 0 }
                held.bytes += held.rows[batch].reduce(0) { $0 + $1.bytes.count }
            }
        }
        return routed
    }

    /// Bytes written to the spill file so far.
    var spilledBytes: Int { held.withLock { $0.spilledBytes } }

    /// Takes batch `batch`'s rows, by table (`FactTable.rawValue`), and forgets them. Spilled rows
    /// stay in the spill file until `RoutedRows` reads them.
    func take(batch: Int) -> [RoutedRows] {
        let (rows, spilled) = held.withLock { held in
            held.bytes -= held.rows[batch].reduce(0) { $0 + $1.bytes.count }
            defer { (held.rows[batch], held.spilled[batch]) = ([], []) }
            return (held.rows[batch], held.spilled[batch])
        }
        return StoredScopeFacts.FactTable.allCases.map { table in
            let pieces = rows.filter { $0.table == table.rawValue }.map(RoutedRows.Piece.held)
                + spilled.filter { $0.table == table.rawValue }.map(RoutedRows.Piece.spilled)
            return RoutedRows(pieces: pieces, facts: self)
        }
    }

    /// A spilled chunk's rows, read back under the lock.
    fileprivate func read(_ chunk: Chunk) throws -> PackedRows {
        try held.withLock { held in
            guard let spill = held.spill else { throw SpillError(action: "read the join's spill file", code: EBADF) }
            return PackedRows(table: chunk.table, bytes: try spill.read(at: chunk.offset, count: chunk.length), count: chunk.count)
        }
    }

    /// Where sorted runs of a batch too large to sort in memory go (`RoutedRows`).
    fileprivate var folder: String { directory }

    private func scan(_ table: StoredScopeFacts.FactTable, _ reader: Database, routes: Routes, batches: Int, handOver: Int) throws {
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
            if pending[batch].bytes.count >= handOver {
                try add(pending[batch], batch: batch)
                pending[batch] = chunk()
            }
        }
        // The last chunks are mostly smaller, and kept as they are: a chunk is a mapped block
        // (`chunkBytes`), whose room past its rows was never touched and holds no memory.
        for (batch, rows) in pending.enumerated() where rows.count > 0 {
            try add(rows, batch: batch)
        }
    }

    private func add(_ rows: PackedRows, batch: Int) throws {
        try held.withLock { held in
            held.rows[batch].append(rows)
            held.bytes += rows.bytes.count
            guard held.bytes > budget else { return }
            let spill = try held.spill ?? SpillFile(folder: directory, prefix: ".iaprecon-join-", name: "the join's spill file")
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
            var (transactionKeys, orderKeys) = (0, 0)
            batches.forEachKey { _, kind, _ in
                switch kind {
                case .transaction: transactionKeys += 1
                case .order: orderKeys += 1
                default: break
                }
            }
            transactions.reserveCapacity(transactionKeys)
            orders.reserveCapacity(orderKeys)
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
    ///
    /// Up to `sortBytes` of rows are sorted in memory. A batch is whole components, and one
    /// component can be larger than any budget (one receipt replayed by a client a million times),
    /// so more rows than that are sorted in runs of `sortBytes`, each written to a file in the
    /// store's folder, and the runs merged: memory stays bounded by the runs' size and count.
    func hand(routed rows: RoutedRows, files: SourceFiles, to facts: inout some ScopeFactsReceiver,
              sortBytes: Int = RoutedRows.sortBytes) throws {
        guard rows.bytes > sortBytes else {
            // Sorted where they are: copied into one buffer, every byte of the batch's rows was
            // written again, to pages touched for that copy alone.
            var chunks: [PackedRows] = []
            chunks.reserveCapacity(rows.pieceCount)
            while let chunk = try rows.next() { chunks.append(chunk) }
            try inHandOrder(chunks, files: files) { try hand($0, to: &facts) }
            return
        }
        let runs = try SortedRuns(folder: rows.folder, readBytes: min(256 << 10, max(64, sortBytes / 8)))
        var run = PackedRows(table: rawValue)
        func sortRun() throws {
            try inHandOrder([run], files: files) { try runs.append($0, columns: columns) }
            try runs.endRun()
            run = PackedRows(table: rawValue)
        }
        while let chunk = try rows.next() {
            try chunk.forEachRow(columns: columns) { row in
                if run.count > 0, run.bytes.count + row.bytes.count > sortBytes { try sortRun() }
                run.append(row)
            }
        }
        if run.count > 0 { try sortRun() }
        try runs.merge(self, files: files) { try hand($0, to: &facts) }
    }

    /// Calls `body` with each row of `chunks` (rows of this table) in hand order, leaving out rows
    /// of files the ledger no longer has.
    fileprivate func inHandOrder(_ chunks: [PackedRows], files: SourceFiles, _ body: (PackedFields) throws -> Void) throws {
        let chunks = chunks.filter { $0.count > 0 }
        var borrowed: [UnsafeBufferPointer<UInt8>] = []
        borrowed.reserveCapacity(chunks.count)
        try withBytes(of: chunks, borrowed: &borrowed) { buffers in
            let columns = columns
            // Row `n` (counting through the chunks) is in the last chunk whose first row is at most `n`.
            // (Constant: a variable captured below would have each access checked for exclusivity.)
            var rowCount = 0
            let firstRows = chunks.map { rows in
                defer { rowCount += rows.count }
                return rowCount
            }
            // Each value's start in its chunk.
            var starts: [Int] = []
            starts.reserveCapacity(rowCount * columns)
            for (bytes, rows) in zip(buffers, chunks) {
                var offset = 0
                for _ in 0..<(rows.count * columns) {
                    starts.append(offset)
                    offset = PackedRow.end(ofValueAt: offset, in: bytes)
                }
            }
            try starts.withUnsafeBufferPointer { starts in
                func fields(_ row: Int) -> PackedFields {
                    var (low, high) = (0, firstRows.count - 1)
                    while low < high {
                        let middle = (low + high + 1) / 2
                        if firstRows[middle] <= row { low = middle } else { high = middle - 1 }
                    }
                    return PackedFields(bytes: buffers[low], starts: starts, first: row * columns)
                }
                // Each row's key prefix (`KeyPrefix`), then its place in file order, line and item:
                // what sorts it after its key.
                var order: [(row: Int, key: KeyPrefix, file: Int64, line: Int64, item: Int64)] = []
                order.reserveCapacity(rowCount)
                let key = key
                var row = 0
                for (bytes, rows) in zip(buffers, chunks) {
                    for _ in 0..<rows.count {
                        let fields = PackedFields(bytes: bytes, starts: starts, first: row * columns)
                        if let place = self.place(of: fields, files: files) {
                            order.append((row, fields.withText(key) { KeyPrefix($0) }, place, fields.int(line), fields.int(item)))
                        }
                        row += 1
                    }
                }
                order.sort { a, b in
                    var keyOrder = a.key.compare(with: b.key)
                    if keyOrder == nil { keyOrder = fields(a.row).compareText(key, with: fields(b.row), key) }
                    if let keyOrder, keyOrder != 0 { return keyOrder < 0 }
                    return (a.file, a.line, a.item) < (b.file, b.line, b.item)
                }
                for entry in order { try body(fields(entry.row)) }
            }
        }
    }

    /// Calls `body` with the bytes of every chunk of `chunks` from `index` on, after `borrowed`,
    /// all borrowed at once. One call deep per chunk: a batch's rows sorted in memory are at most
    /// `RoutedRows.sortBytes`, handed over in chunks of at least the least hand-over
    /// (`RoutedFacts.handOverBytes`) but the last of each scan, a few hundred chunks at most.
    private func withBytes(of chunks: [PackedRows], from index: Int = 0, borrowed: inout [UnsafeBufferPointer<UInt8>],
                           _ body: ([UnsafeBufferPointer<UInt8>]) throws -> Void) throws {
        guard index < chunks.count else { return try body(borrowed) }
        try chunks[index].bytes.withUnsafeBufferPointer { bytes in
            borrowed.append(bytes)
            try withBytes(of: chunks, from: index + 1, borrowed: &borrowed, body)
        }
    }

    /// Where a row's file is in file order: its path's place where the file is joined
    /// (`isOrderedByPath`), else its id; nil for a file the ledger no longer has.
    fileprivate func place(of fields: PackedFields, files: SourceFiles) -> Int64? {
        let fileID = fields.int(file)
        guard isOrderedByPath else { return fileID }
        return files.place(of: fileID).map(Int64.init)
    }
}

/// A key's first 16 bytes, as two big-endian integers (zeros past its end), and its length: two
/// keys sorted by these are sorted byte by byte (`PackedFields.compareText`) without reading
/// either key again, unless they share their first 16 bytes and one is longer. A sort compares
/// each row many times; ids (Apple's transaction ids, UUIDs) mostly differ in their first 16 bytes.
struct KeyPrefix {
    var high: UInt64 = 0
    var low: UInt64 = 0
    var length: Int

    init(_ key: UnsafeBufferPointer<UInt8>) {
        length = key.count
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { words in
            words.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(key).prefix(16)))
        }
        (high, low) = (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1))
    }

    /// Negative, zero or positive as the keys' bytes order them; nil when only the whole keys can tell.
    func compare(with other: KeyPrefix) -> Int? {
        if high != other.high { return high < other.high ? -1 : 1 }
        if low != other.low { return low < other.low ? -1 : 1 }
        // The same first bytes (a shorter key's zeros past its end being bytes of the longer one).
        guard length <= 16, other.length <= 16 else { return nil }
        return length - other.length
    }
}

/// One batch's routed rows of one table, as the scans handed them over: chunks held in memory or
/// in the spill file, each read and let go as `hand` takes it.
final class RoutedRows {
    /// Past this many bytes of one table's rows, a batch is sorted in runs (`FactTable.hand`).
    static let sortBytes = 32 << 20

    fileprivate enum Piece {
        case held(PackedRows)
        case spilled(RoutedFacts.Chunk)
    }

    /// Bytes of packed rows in all.
    let bytes: Int
    private var pieces: [Piece]
    private let facts: RoutedFacts

    fileprivate init(pieces: [Piece], facts: RoutedFacts) {
        self.bytes = pieces.reduce(0) { total, piece in
            switch piece {
            case .held(let rows): total + rows.bytes.count
            case .spilled(let chunk): total + chunk.length
            }
        }
        self.pieces = pieces.reversed()
        self.facts = facts
    }

    /// The chunks not yet handed on.
    var pieceCount: Int { pieces.count }

    /// The store's folder, where sorted runs are written.
    var folder: String { facts.folder }

    /// The next chunk's rows, forgotten here; nil after the last.
    func next() throws -> PackedRows? {
        switch pieces.popLast() {
        case nil: nil
        case .held(let rows): rows
        case .spilled(let chunk): try facts.read(chunk)
        }
    }
}

/// Rows sorted in runs, each run in hand order, in a file deleted as it is made, then merged.
private final class SortedRuns {
    private var runs: SpillRuns
    /// How much of a run is read at a time while merging: the runs' heads are in memory at once.
    private let readBytes: Int

    init(folder: String, readBytes: Int) throws {
        runs = SpillRuns(file: try SpillFile(folder: folder, prefix: ".iaprecon-join-", name: "the join's spill file"), flushBytes: readBytes)
        self.readBytes = readBytes
    }

    func append(_ row: PackedFields, columns: Int) throws {
        let start = row.starts[row.first]
        let end = PackedRow.end(ofValueAt: row.starts[row.first + columns - 1], in: row.bytes)
        try runs.append(UnsafeBufferPointer(rebasing: row.bytes[start..<end]))
    }

    func endRun() throws {
        try runs.endRun()
    }

    /// Calls `body` with every row of every run in hand order: the smallest head of the runs each time.
    func merge(_ table: StoredScopeFacts.FactTable, files: SourceFiles, _ body: (PackedFields) throws -> Void) throws {
        var readers = runs.runs.map { Reader(SpillRuns.Reader($0, readBytes: readBytes)) }
        var live: [Int] = []
        for index in readers.indices where try readers[index].advance(runs.file, table, files) { live.append(index) }
        func less(_ a: Int, _ b: Int) -> Bool {
            let order = readers[a].compareKey(with: readers[b])
            if order != 0 { return order < 0 }
            return (readers[a].place, readers[a].line, readers[a].item, a) < (readers[b].place, readers[b].line, readers[b].item, b)
        }
        var heap = RunHeap(live, by: less)
        while let smallest = heap.smallest {
            try readers[smallest].withFields(body)
            heap.smallestAdvanced(exhausted: try !readers[smallest].advance(runs.file, table, files), by: less)
        }
    }

    /// One run as it is merged: its current row, and what orders it.
    private struct Reader {
        private var run: SpillRuns.Reader
        private var row: [UInt8] = []
        private var starts: [Int] = []
        private var key: [UInt8] = []
        private(set) var place: Int64 = 0
        private(set) var line: Int64 = 0
        private(set) var item: Int64 = 0

        init(_ run: SpillRuns.Reader) {
            self.run = run
        }

        /// Reads the run's next row; false at its end.
        mutating func advance(_ file: SpillFile, _ table: StoredScopeFacts.FactTable, _ files: SourceFiles) throws -> Bool {
            guard try run.next(into: &row, from: file) else { return false }
            let columns = table.columns
            try row.withUnsafeBufferPointer { bytes in
                starts.removeAll(keepingCapacity: true)
                var offset = 0
                for _ in 0..<columns {
                    starts.append(offset)
                    offset = PackedRow.end(ofValueAt: offset, in: bytes)
                }
                try starts.withUnsafeBufferPointer { starts in
                    let fields = PackedFields(bytes: bytes, starts: starts, first: 0)
                    // Written by `inHandOrder`, which left out rows of files the ledger no longer has.
                    guard let place = table.place(of: fields, files: files) else {
                        throw SpillError(action: "find a sorted row's file", code: EIO)
                    }
                    self.place = place
                    line = fields.int(table.line)
                    item = fields.int(table.item)
                    key.removeAll(keepingCapacity: true)
                    fields.withText(table.key) { key.append(contentsOf: $0) }
                }
            }
            return true
        }

        /// Byte by byte, as `PackedFields.compareText` orders keys.
        func compareKey(with other: Reader) -> Int {
            key.withUnsafeBufferPointer { mine in other.key.withUnsafeBufferPointer { theirs in BinaryOrder.compare(mine, theirs) } }
        }

        func withFields(_ body: (PackedFields) throws -> Void) rethrows {
            try row.withUnsafeBufferPointer { bytes in
                try starts.withUnsafeBufferPointer { starts in try body(PackedFields(bytes: bytes, starts: starts, first: 0)) }
            }
        }
    }
}

extension PackedRow {
    /// The fingerprint of column `index`'s text (an integer's decimal digits), as a store's row
    /// gives it (`StoredRow.fingerprint`); nil when it is NULL.
    fileprivate func fingerprint(_ index: Int) -> RowFingerprint? {
        switch value(index) {
        case .null: return nil
        case .bytes(let bytes): return RowFingerprint(bytes)
        case .integer(let integer):
            var digits = String(integer)
            return digits.withUTF8 { RowFingerprint($0) }
        }
    }
}
