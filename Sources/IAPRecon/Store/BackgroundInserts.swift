/// Inserts rows on a second connection on a worker thread while the calling thread computes them
/// and reads on its own connection: the mirror of `ReaderJobs`, for a stage that reads a lot and
/// writes a table it does not read back. The rows are handed over packed (`PackedRows`), at most
/// `bound` batches waiting, and committed in one transaction by `finish()`.
final class BackgroundInserts {
    private let channel = OrderedChannel<PackedRows>(jobs: 1, bound: 16)
    private let work: Background<Void>
    private let sink: RowSink
    private var finished = false

    /// Opens a connection to `path`, begins a write transaction, runs `setup` (DDL), then inserts
    /// what arrives with `inserts[table]`.
    init(path: String, setup: String, inserts: [String]) {
        sink = RowSink(tables: inserts.count, send: { [channel] in channel.put(0, $0) })
        work = Background { [channel] in
            do {
                let database = try Database(path: path)
                try database.execute("BEGIN IMMEDIATE")
                do {
                    try database.execute(setup)
                    let statements = try inserts.map { try database.cached($0) }
                    while let rows = channel.take(0) { try rows.insert(with: statements[rows.table]) }
                    // Cancelled by the producer: what arrived is not the whole table.
                    if channel.isCancelled { throw Cancelled() }
                    try database.execute("COMMIT")
                } catch {
                    try? database.execute("ROLLBACK")
                    throw error
                }
            } catch {
                // Unblock the producer: its later rows have nowhere to go.
                channel.cancel()
                throw error
            }
        }
    }

    struct Cancelled: Error {}

    deinit {
        if !finished { cancel() }
    }

    func insert(table: Int, _ values: [SQLValue]) {
        sink.insert(table: table, values)
    }

    /// Sends what is pending, waits for the inserts and commits them; rethrows their first error.
    func finish() throws {
        finished = true
        sink.flush()
        channel.finish(0)
        try work.value()
    }

    /// Gives up: the transaction rolls back, nothing is written.
    func cancel() {
        finished = true
        channel.cancel()
        work.wait()
    }
}
