/// The store as ingest sees it: the ledger of the files it read, the key device ids are
/// pseudonymised with, and one transaction per file for the file's rows, rejects and the keys
/// they change. Ingest names nothing else of the store; SQLite's conformance is `SQLiteIngestStore`.
protocol IngestStore {
    /// What the store knows of each file it read, by path under the input folder.
    func knownFiles() throws -> [String: KnownFile]
    /// The reasons of the stored rejects that start with `prefix`, with their file's path.
    func rejectReasons(startingWith prefix: String) throws -> [(path: String, reason: String)]
    /// The store's device-id key, made on first use.
    func deviceIDPseudonyms() throws -> DeviceIDPseudonyms
    /// A stored file found with the same bytes and a new modification time: the time (and the
    /// hash, of the current kind) is kept.
    func touched(_ path: String, modifiedNs: Int64, hash: String) throws
    /// A stored file is at `newPath` now, the same bytes: its rows, rejects and accounting go with it, and
    /// the keys they touch are recorded as changed, so what names its lines names the new path.
    func moved(_ path: String, to newPath: String) throws
    /// The bytes of every stored file.
    func storedBytes() throws -> Int64
    /// A load begins; `bulk` when it adds a quarter or more of what the store holds.
    func beginLoad(bulk: Bool) throws
    /// The load ended, whether or not every file was stored.
    func endLoad(bulk: Bool)
    /// Begins storing the file at `path` (relative to the input folder) of `source`, modified at
    /// `modifiedNs`: it replaces a stored file of that path when it commits.
    func beginFile(path: String, source: SourceKind, readWith: String?, modifiedNs: Int64) throws -> any StoredFileWriter
    /// Records what the input folder held: each stored file is present or not, and the files
    /// that match no source replace the previous run's list. Returns the stored files that were
    /// present and are not now, with their lines read, in path order.
    func recordListing(present: [String], ignored: [String]) throws -> [(path: String, lines: Int)]
    /// Where the stored files at `paths` hold a `CONSUMPTION_REQUEST` that names no uuid or signing
    /// time (as every V1 one does; a V2 one without its transaction is a rejected line), as `path:line`,
    /// in file order.
    func unanswerableConsumptionRequests(in paths: [String]) throws -> [String]
}

/// One file's lines on their way into the store, all in one transaction.
protocol StoredFileWriter: AnyObject {
    /// Writes a batch of the file's lines; `lineOffset` is the lines of the chunks before the batch's.
    func write(_ batch: LineBatch, lineOffset: Int) throws
    /// Stores the file with its rows, its accounting and the keys they change, and the content
    /// hash and length of the bytes read (known once they all are).
    func commit(hash: String, bytes: Int) throws -> (counts: LineCounts, bytes: Int)
    /// Stores nothing of the file; a stored file of its path stays as it was.
    func rollback()
}

/// What the store knows of a file from an earlier ingest.
struct KnownFile: Sendable {
    var hash: String
    var bytes: Int
    var modifiedNs: Int64?
    var ingestedMs: Int64
    var counts: LineCounts
    /// The latest event time of its accepted lines (UTC) and of its MMP rows (`Event Time` on the
    /// wall clock): what a run's clock accepted of it.
    var latestMs: Int64? = nil
    var latestMMPWallMs: Int64? = nil
    /// The rules its lines were judged by besides the clock (`LineRules.readWith`).
    var readWith: String? = nil
    /// The clocks that judge alike the chains its lines had judged at the run's clock, and the
    /// refund times and spend or Sales Report days they had accepted (`ClockJudgedChains`); nil
    /// when none was, or it was stored before these were recorded.
    var clockSpan: ClosedRange<Int64>? = nil
}
