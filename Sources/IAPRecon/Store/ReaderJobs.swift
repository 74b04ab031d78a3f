/// Where a job's rows go: the writer's INSERT statements, directly or through a reader thread's `RowSink`.
protocol RowTarget {
    /// Inserts `values` into the job's table number `table`.
    func insert(table: Int, _ values: [SQLValue]) throws
    /// Inserts columns `0..<columns` of `row` (as stored) into the job's table number `table`.
    func insert(table: Int, _ row: Row, columns: Int) throws
}

/// Work that reads the store and writes rows of new tables: run on the writer connection itself
/// (`runHere`), or many at once on pool workers with read-only connections while the writer only
/// inserts (`ReaderJobs.run`). The same `produce` code serves both, so both write the same rows.
struct ReaderJob: Sendable {
    /// The INSERT statements the job writes with, by table number.
    var inserts: [String]
    var produce: @Sendable (_ reader: Database, _ target: any RowTarget) throws -> Void

    /// Runs the job on `database`, reading and inserting on the calling thread.
    func runHere(_ database: Database) throws {
        try produce(database, try DirectInserts(database: database, inserts: inserts))
    }
}

/// Runs `ReaderJob`s on a worker pool, each on its own read-only connection, streaming packed
/// rows to the calling thread, which inserts them on the writer and commits each job's rows in
/// one transaction, in job order. The writer then spends its time on inserts alone while the
/// workers scan, sort and merge: two cores busy where one statement used one.
///
/// The readers see the store as last committed, so what the jobs read must be committed first,
/// and no job may read what another writes. Each job holds at most `bound` batches of about
/// `RowSink.batchBytes` waiting, so memory stays bounded whatever the row counts.
enum ReaderJobs {
    enum Message: Sendable {
        case rows(PackedRows)
        case failed(any Error)
    }

    /// With `inCallersTransaction`, the rows go into the transaction the caller holds open (and
    /// commits or rolls back) instead of one per job. `prepare`, when given, runs on the calling
    /// thread while the workers read, before the first batch is taken: the writer's own work that
    /// the readers need not wait for. `keep`, when given, picks on the calling thread the rows of
    /// each batch that are inserted. `rowsWritten` hears of each batch the writer received, on the
    /// calling thread (a progress line).
    static func run(
        _ jobs: [ReaderJob], database: Database, pool: WorkerPool, inCallersTransaction: Bool = false,
        prepare: (() throws -> Void)? = nil, keep: ((PackedRows) throws -> PackedRows)? = nil, rowsWritten: ((Int) -> Void)? = nil
    ) throws {
        // The job whose rows the open write transaction holds, and its statements.
        var openJob: Int?
        var statements: [Statement] = []
        var prepare = prepare
        func prepared() throws {
            guard let work = prepare else { return }
            prepare = nil
            try work()
        }
        do {
            try pool.run(count: jobs.count, bound: 16, produce: produce(jobs, path: database.path), consume: { (index: Int, message: Message) in
                try prepared()
                switch message {
                case .failed(let error):
                    throw error
                case .rows(let rows):
                    if openJob != index {
                        if let open = openJob, !inCallersTransaction {
                            try database.execute("COMMIT")
                            Trace.mark("reader job \(open) written")
                        }
                        openJob = nil
                        statements = try jobs[index].inserts.map { try database.cached($0) }
                        if !inCallersTransaction { try database.execute("BEGIN IMMEDIATE") }
                        openJob = index
                    }
                    try (keep?(rows) ?? rows).insert(with: statements[rows.table])
                    rowsWritten?(rows.count)
                }
            })
            try prepared()
            if openJob != nil, !inCallersTransaction { try database.execute("COMMIT") }
        } catch {
            if openJob != nil, !inCallersTransaction { try? database.execute("ROLLBACK") }
            throw error
        }
    }


    /// A job's work on a pool worker: its own read-only connection, its rows sent in batches.
    private static func produce(_ jobs: [ReaderJob], path: String) -> @Sendable (Int, (Message) -> Void) -> Void {
        { index, send in
            do {
                let reader = try Database(path: path, readOnly: true)
                try withoutActuallyEscaping(send) { send in
                    let sink = RowSink(tables: jobs[index].inserts.count, send: { send(.rows($0)) })
                    try jobs[index].produce(reader, sink)
                    sink.flush()
                    Trace.mark("reader job \(index) read")
                }
            } catch {
                send(.failed(error))
            }
        }
    }
}

/// A `RowTarget` on a reader thread: packs rows per table and sends a batch when it is full.
final class RowSink: RowTarget {
    static let batchBytes = 1 << 20
    private var pending: [PackedRows]
    private let send: (PackedRows) -> Void

    init(tables: Int, send: @escaping (PackedRows) -> Void) {
        pending = (0..<tables).map { PackedRows(table: $0) }
        self.send = send
    }

    func insert(table: Int, _ values: [SQLValue]) {
        pending[table].append(values)
        if pending[table].bytes.count >= Self.batchBytes { flush(table) }
    }

    func insert(table: Int, _ row: Row, columns: Int) {
        pending[table].append(row, columns: columns)
        if pending[table].bytes.count >= Self.batchBytes { flush(table) }
    }

    /// Sends every table's rows still pending.
    func flush() {
        for table in pending.indices { flush(table) }
    }

    private func flush(_ table: Int) {
        guard pending[table].count > 0 else { return }
        send(pending[table])
        pending[table] = PackedRows(table: table)
    }
}

/// A `RowTarget` on the writer: each row goes straight to its INSERT statement.
struct DirectInserts: RowTarget {
    private let statements: [Statement]

    init(database: Database, inserts: [String]) throws {
        statements = try inserts.map { try database.cached($0) }
    }

    func insert(table: Int, _ values: [SQLValue]) throws {
        try statements[table].insert(values)
    }

    func insert(table: Int, _ row: Row, columns: Int) throws {
        try statements[table].insert((0..<columns).map { row.value($0) })
    }
}
