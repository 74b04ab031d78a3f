/// Every table of the store, declared once: what layer it belongs to, the one module that writes
/// it, the modules that read it, and its columns (a frozen migration's, or its definition here).
///
/// Data flows down the layers: the ledger and the raw rows ingest keeps per input line (`raw_*`,
/// defined by `Schema`'s migrations), which every reader normalizes as it reads them (no stage
/// keeps a normalized copy: `NormalizeStage`), and the results the join and the report keep
/// (`int_*`, `fct_*`). A module touches only the tables declared here as its own or as its reads.
/// `TableOwnershipTests` checks every source file's SQL against this.
enum Tables {
    /// A source folder of the package: the unit that owns or reads a table.
    enum Module: String, Sendable, CaseIterable {
        case store = "Store", pipeline = "Pipeline", ingest = "Ingest", normalize = "Normalize", join = "Join", report = "Report"
        /// The `iaprecon` executable's commands.
        case cli = "CLI"
    }

    enum Layer: Sendable {
        /// What was read and run: files, rejects, runs, and the change log between stages.
        case ledger
        /// One row per accepted input line (or per transaction a line lists), as ingest parsed it.
        case raw
        /// What the join and the report decided, kept for the next night and for `history`.
        case result
    }

    struct Declaration: Sendable {
        let name: String
        let layer: Layer
        let writer: Module
        let readers: Set<Module>
        /// The migration that creates it (the last, when a later one made it anew); nil when its
        /// writer creates it from the definition below.
        var migration: Int? = nil
    }

    static let all: [Declaration] = [
        // The ledger.
        .init(name: "schema_migrations", layer: .ledger, writer: .store, readers: []),
        .init(name: "files", layer: .ledger, writer: .ingest, readers: [.store, .normalize, .join, .report], migration: 1),
        // What judged each file's lines besides the clock (`LineRules.readWith`): other rules read it again.
        .init(name: "file_rules", layer: .ledger, writer: .ingest, readers: [.report], migration: 24),
        // The clocks that judge alike the chains a file's lines had judged at the run's clock, and the refund times and
        // days they accepted: another reads it again.
        .init(name: "file_clock_span", layer: .ledger, writer: .ingest, readers: [], migration: 25),
        .init(name: "rejects", layer: .ledger, writer: .ingest, readers: [.report], migration: 1),
        .init(name: "ignored_files", layer: .ledger, writer: .ingest, readers: [.report], migration: 4),
        // The report's MMP segments name the key (`MMPSegment.chainSeed`): a new one rewrites an older store's ids.
        .init(name: "device_id_key", layer: .ledger, writer: .ingest, readers: [.report]),
        .init(name: "runs", layer: .ledger, writer: .pipeline, readers: [], migration: 1),
        .init(name: "run_stages", layer: .ledger, writer: .pipeline, readers: []),
        // Which run's turn last checked each table (`Store.checkTurn`).
        .init(name: "store_checks", layer: .ledger, writer: .pipeline, readers: []),
        // Written through `ChangedKeys` only, by the stage that learns of a change, and emptied by the join.
        .init(name: "dirty_keys", layer: .ledger, writer: .store, readers: [], migration: 3),
        // Raw rows, written by ingest.
        // Each reader takes an order's first line, or a delivery's, as it reads them (`ServerOrders`,
        // `ServerDeliveries`).
        .init(name: "raw_server__orders", layer: .raw, writer: .ingest, readers: [.store, .normalize, .join, .report], migration: 1),
        .init(name: "raw_server__deliveries", layer: .raw, writer: .ingest, readers: [.store, .normalize, .join, .report], migration: 1),
        // Revocations need no normalizing: the join and `history` read every one.
        .init(name: "raw_server__revocations", layer: .raw, writer: .ingest, readers: [.store, .join, .report], migration: 1),
        // Its lines naming an order and a transaction are the claims the join reads as they are
        // (`ReceiptClaims`); the summary counts its failed verifications and bundle ids.
        .init(name: "raw_receipts__verifications", layer: .raw, writer: .ingest, readers: [.store, .join, .report], migration: 1),
        // Each reader merges a transaction's sightings as it reads them (`AppleTransactions`).
        .init(name: "raw_apple__transactions", layer: .raw, writer: .ingest, readers: [.store, .join, .report], migration: 14),
        // `consumption_requests.jsonl` answers each CONSUMPTION_REQUEST notification as it came.
        .init(name: "raw_notifications__notifications", layer: .raw, writer: .ingest, readers: [.report], migration: 22),
        // Each user's first sign-up is picked as it is read (`FirstRegistrations`); `history` lists every sign-up.
        .init(name: "raw_registrations__users", layer: .raw, writer: .ingest, readers: [.store, .normalize, .report], migration: 11),
        // Attribution reads it through `MMPEvents`, which drops repeats in memory.
        .init(name: "raw_mmp__events", layer: .raw, writer: .ingest, readers: [.store, .normalize], migration: 11),
        // The join takes its latest day for the as-of of an input no event time dates.
        .init(name: "raw_spend__days", layer: .raw, writer: .ingest, readers: [.join, .report], migration: 1),
        .init(name: "raw_catalog__products", layer: .raw, writer: .ingest, readers: [.store, .join, .report], migration: 1),
        .init(name: "raw_fx__rates", layer: .raw, writer: .ingest, readers: [.report], migration: 1),
        // The report names the days the reports leave out between the first and the last they cover.
        .init(name: "raw_apple__sales", layer: .raw, writer: .ingest, readers: [.store, .join, .report], migration: 6),
        // The summary names the apps of the kept rows, when no `--app-sku` chose one.
        .init(name: "raw_apple__sales_apps", layer: .raw, writer: .ingest, readers: [.report], migration: 37),
        // The summary lists its apps with the lines' (`AppleTransaction.bundleApartFromLine`).
        .init(name: "raw_apple__transaction_bundles", layer: .raw, writer: .ingest, readers: [.report], migration: 23),
        // Read with each sighting that tells of an upgrade, wherever sightings are read (`StoredSightings`).
        .init(name: "raw_apple__transaction_upgrades", layer: .raw, writer: .ingest, readers: [.store], migration: 39),
        // Results.
        .init(name: "int_transactions_resolved", layer: .result, writer: .join, readers: [.report]),
        .init(name: "fct_findings", layer: .result, writer: .join, readers: [.report]),
        // Each chain a finding about subscription chains is about (`Finding.chainIDs`): transactions.csv
        // and `history` list the finding on every transaction of each, not only of the first its row names.
        .init(name: "fct_finding_chains", layer: .result, writer: .join, readers: [.report]),
        // The as-of, grace and MMP zone the join decided with: the report and `history` judge by the
        // same, read through the join's part of the store (`StoredJoinResults.settings`).
        .init(name: "int_run_settings", layer: .result, writer: .join, readers: []),
        .init(name: "fct_apple_tieout", layer: .result, writer: .join, readers: [.report], migration: 15),
        // Each tie-out row's units of purchases alone, Apple's and the verified ones, replaced with it: a shortfall is
        // of purchases, so a refund's timing neither makes nor hides one (`AppleTieOut.findings`).
        .init(name: "fct_apple_tieout_purchases", layer: .result, writer: .join, readers: [.report], migration: 43),
        // Sales Report files whose rows of a day repeat or overlap an earlier file's (`SalesReportOverlap`), one row per
        // pair, replaced with the day's tie-out rows: every report page names them while the files are stored.
        .init(name: "fct_apple_report_overlaps", layer: .result, writer: .join, readers: [.report], migration: 33),
        // The files of the tie-out rows whose proceeds came in two currencies (`SalesReportMixedProceeds`), replaced
        // with the day's tie-out rows: every report page names them while the files are stored.
        .init(name: "fct_apple_mixed_proceeds", layer: .result, writer: .join, readers: [.report], migration: 33),
        // What each join changed of the rows transactions.csv shows (`StoredTransactionChanges`).
        .init(name: "int_transaction_changes", layer: .result, writer: .join, readers: [.report], migration: 16),
        // The report's own memory across runs: when it first reported each finding, whom it attributed
        // each user to, which transactions.csv it wrote, and what each MMP file counts.
        .init(name: "fct_finding_first_seen", layer: .result, writer: .report, readers: []),
        .init(name: "fct_user_installs", layer: .result, writer: .report, readers: []),
        .init(name: "fct_transactions_file", layer: .result, writer: .report, readers: [], migration: 16),
        // What each MMP file counts for attribution (`StoredMMPSegments`): a night counts its new file's rows only.
        .init(name: "fct_mmp_segments", layer: .result, writer: .report, readers: [], migration: 19),
        // The revenue figures published reports showed, each value once with the publications it was valid between;
        // each report (its zone, folder and as-of day) with its publication, currency and the order reports were first
        // published in; a report's figures until its outputs' switch (`StoredPublishedRevenue`): a report names the
        // days it restates.
        .init(name: "fct_published_revenue", layer: .result, writer: .report, readers: [], migration: 42),
        .init(name: "fct_published_report", layer: .result, writer: .report, readers: [], migration: 42),
        .init(name: "fct_pending_revenue", layer: .result, writer: .report, readers: [], migration: 42),
    ]

    /// The declaration of `name`, if it is a table of the store.
    static func named(_ name: String) -> Declaration? {
        all.first { $0.name == name }
    }

    // MARK: - Definitions of the tables no migration creates

    /// The join's results (`JoinStage`).
    ///
    /// Each is keyed by a unique index (its `indexes`), not a PRIMARY KEY: a full rebuild inserts
    /// batch by batch, in no key order, and a key index kept up to date row by row took a random
    /// b-tree page per row, read back from the WAL once the table outgrew the cache. A store
    /// written before keeps its PRIMARY KEY tables until its next full join; either kind refuses a
    /// second row for a key.
    static let joinResults = RebuiltTables(tables: [
        ("int_transactions_resolved", """
            (
              transaction_id TEXT NOT NULL, original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL,
              purchase_ms INTEGER NOT NULL, expires_ms INTEGER, environment TEXT, user_id TEXT, order_id TEXT, match_rule TEXT,
              unit_price TEXT, currency TEXT, price_source TEXT NOT NULL, quantity INTEGER NOT NULL, storefront TEXT,
              is_revenue INTEGER NOT NULL, refund_ms INTEGER, refund_amount TEXT, refund_type TEXT, deliveries INTEGER NOT NULL,
              ownership TEXT, delivered_to TEXT NOT NULL, is_apple_sale INTEGER NOT NULL
            )
            """),
        ("fct_findings", """
            (
              finding_id TEXT NOT NULL, kind TEXT NOT NULL, severity TEXT NOT NULL, user_id TEXT, order_id TEXT,
              transaction_id TEXT, original_transaction_id TEXT, product_id TEXT, amount TEXT, currency TEXT,
              event_ms INTEGER NOT NULL, detail TEXT NOT NULL, sources TEXT NOT NULL
            )
            """),
        // One row per chain a finding is about: a shared subscription's chain, each chain of a
        // user's multi-Apple-ID finding. Written with the findings, by the same batches.
        ("fct_finding_chains", """
            (
              finding_id TEXT NOT NULL, original_transaction_id TEXT NOT NULL
            )
            """),
    ], indexes: [
        // Built after a full rebuild's rows are in and switched in: one sort per index instead of a
        // b-tree update per row. The first three are the tables' keys.
        .init(name: "int_transactions_key", table: "int_transactions_resolved", definition: "(transaction_id)", unique: true),
        .init(name: "fct_findings_key", table: "fct_findings", definition: "(finding_id)", unique: true),
        .init(name: "fct_finding_chains_key", table: "fct_finding_chains", definition: "(finding_id, original_transaction_id)", unique: true),
        .init(name: "int_transactions_by_user", table: "int_transactions_resolved", definition: "(user_id)"),
        // A match is kept once, on its transaction: an order's transaction is found here (`history`,
        // the summary's unmatched orders, a night's closure). Unmatched transactions are left out;
        // a query spells `order_id IS NOT NULL` (or an equality on it) for SQLite to use it.
        .init(name: matchedOrderIndex, table: "int_transactions_resolved", definition: "(order_id) WHERE order_id IS NOT NULL"),
        .init(name: "fct_findings_by_user", table: "fct_findings", definition: "(user_id)"),
        .init(name: "fct_findings_by_transaction", table: "fct_findings", definition: "(transaction_id)"),
        .init(name: "fct_findings_by_original", table: "fct_findings", definition: "(original_transaction_id)"),
        .init(name: "fct_finding_chains_by_chain", table: "fct_finding_chains", definition: "(original_transaction_id)"),
        // The tie-out with Apple of a night's days reads their purchases and refunds, not every transaction.
        .init(name: "int_transactions_by_purchase", table: "int_transactions_resolved", definition: "(purchase_ms) WHERE is_apple_sale = 1"),
        .init(name: "int_transactions_by_refund", table: "int_transactions_resolved",
              definition: "(refund_ms) WHERE is_apple_sale = 1 AND refund_ms IS NOT NULL"),
    ])

    /// The index that finds a matched order's transaction. Not `int_transactions_by_order`: that
    /// name was an older index's, which migration 9 drops.
    static let matchedOrderIndex = "int_transactions_by_matched_order"

    static let runSettings = "CREATE TABLE IF NOT EXISTS int_run_settings (as_of_ms INTEGER NOT NULL, grace_ms INTEGER NOT NULL, mmp_tz TEXT NOT NULL)"

    /// Each finding's first sighting, kept across runs (a finding that goes away and comes back keeps it).
    static let findingFirstSeen = """
        CREATE TABLE IF NOT EXISTS fct_finding_first_seen (
          finding_id TEXT PRIMARY KEY, first_seen_ms INTEGER NOT NULL, first_report INTEGER NOT NULL
        ) WITHOUT ROWID
        """

    /// Each user's install, for `history`; brought up to date by every report. The install's line
    /// is its file's id and line number, which `history` names as `path:line`.
    static let userInstalls = """
        CREATE TABLE IF NOT EXISTS fct_user_installs (
          user_id TEXT PRIMARY KEY, install_ms INTEGER, media_source TEXT, campaign TEXT, matched_by TEXT NOT NULL,
          file_id INTEGER, line INTEGER
        ) WITHOUT ROWID;
        """

    /// Each stage's wall time of a run: kept here and in the run log, never in `summary.json`,
    /// so the reports of two runs over the same inputs are the same bytes.
    static let runStages = """
        CREATE TABLE IF NOT EXISTS run_stages (
          run_id INTEGER NOT NULL, stage TEXT NOT NULL, seconds REAL NOT NULL, UNIQUE (run_id, stage)
        )
        """

    /// The turn in which a run's check last read each table, and the pages it read (`Store.checkTurn`).
    static let storeChecks = """
        CREATE TABLE IF NOT EXISTS store_checks (
          table_name TEXT PRIMARY KEY, turn INTEGER NOT NULL, pages INTEGER NOT NULL
        ) WITHOUT ROWID
        """

    /// The key device ids are pseudonymised with (`DeviceIDPseudonyms`).
    static let deviceIDKey = "CREATE TABLE IF NOT EXISTS device_id_key (key TEXT NOT NULL)"
}
