/// The stages on the SQLite store: where a stage that reaches the store through its interface
/// (`IngestStore`, `RawIndexStore`, `JoinStore`, `ReportStore`, `HistoryStore`) is handed SQLite's conformance.
/// Another backend would be handed here instead.
extension Pipeline {
    /// Stage 2 on the SQLite store: builds the raw indexes a bulk ingest dropped; returns how many.
    @discardableResult
    public static func normalize(database: Database) throws -> Int {
        try NormalizeStage.run(store: SQLiteRawIndexStore(database))
    }

    /// Stage 3 on the SQLite store (`JoinStage.run`).
    public static func join(database: Database, settings: ReconcileSettings, missingRawIndexes: MissingRawIndexes = .refused,
                            workers: WorkerPool = WorkerPool(width: WorkerPool.defaultWidth),
                            batchTransactions: Int = JoinStage.batchTransactions, rowsWritten: ((Int) -> Void)? = nil) throws -> JoinSummary {
        try JoinStage.run(store: SQLiteJoinStore(database), settings: settings, missingRawIndexes: missingRawIndexes, workers: workers,
                          batchTransactions: batchTransactions, rowsWritten: rowsWritten)
    }

    /// Stage 2 as `iaprecon run` does it: nothing, when the join that follows with `settings`
    /// rebuilds in full and builds the indexes beside its reading (`MissingRawIndexes.builtByTheJoin`).
    /// Returns how many indexes it built, and how many it left to the join.
    public static func normalize(database: Database, beforeJoining settings: ReconcileSettings) throws -> (built: Int, leftToTheJoin: Int) {
        let store = SQLiteJoinStore(database)
        if try JoinStage.rebuildsInFull(store, settings: settings) { return (0, try store.missingRawIndexes().count) }
        return (try normalize(database: database), 0)
    }
}

extension UserHistory {
    /// One customer's history from the SQLite store (`load(_:_:currency:zone:)` on `SQLiteHistoryStore`).
    public static func load(_ database: Database, _ lookup: Lookup, currency: String? = nil, zone: Zone = .utc, window: Window = Window()) throws -> UserHistory {
        try load(SQLiteHistoryStore(database), lookup, currency: currency, zone: zone, window: window)
    }
}

extension ReportStage {
    /// Stage 4 on the SQLite store (`run(store:settings:filesDone:)`).
    public static func run(database: Database, settings: ReportSettings, filesDone: ((Int) -> Void)? = nil) throws -> ReportSummary {
        try run(store: SQLiteReportStore(database), settings: settings, filesDone: filesDone)
    }

    /// `markReported(_:)` on the SQLite store.
    public static func markReported(database: Database, outFolder: String) throws {
        try markReported(SQLiteReportStore(database), outFolder: outFolder)
    }
}

extension ConsumptionRequestsReport {
    /// The answers to the store's consumption requests (`answers(store:zone:currency:transactionID:)`).
    public static func answers(database: Database, zone: Zone = .utc, currency: String = "USD",
                               transactionID: String? = nil) throws -> [ConsumptionAnswer] {
        try answers(store: SQLiteReportStore(database), zone: zone, currency: currency, transactionID: transactionID)
    }
}
