/// The store as the report stage sees it: the join's results and the input lines each output
/// file is made of, as values where a file takes a few and as rows (`StoredRow`, in the columns
/// each method names) where it streams many; and the tables the report keeps (each finding's
/// first sighting, each user's install, the transactions.csv it wrote, what each MMP file
/// counts). SQLite's conformance is `SQLiteReportStore`.
protocol ReportStore: SendableMetatype {
    associatedtype Row: StoredRow

    /// Opens the same store on a connection of its own, for another thread: the files that read
    /// much are written side by side.
    var opener: @Sendable () throws -> Self { get }
    /// Runs `body` reading one snapshot of the store, while another connection may write.
    func readTransaction<T>(_ body: () throws -> T) throws -> T

    /// Whether a join reconciled the store, and with what settings.
    func reconciliation() throws -> Reconciliation
    /// Every stored fx rate, by day then file.
    func fxRates() throws -> [FXRow]
    /// Every stored catalog line, in path then line order (`CatalogRow`).
    func catalogRows() throws -> [CatalogRow]
    /// What `summary.json` and the report page count, as of `asOfMs` with `graceMs` of grace.
    func summaryCounts(asOfMs: Int64, graceMs: Int64) throws -> SummaryCounts

    // MARK: Findings, rejects, revenue and the tie-out

    /// Records this report's sighting of each finding no published report has shown, pending
    /// until `publishFirstSightings`: those are the report's new findings; pending ones of a report
    /// that never published are this report's. A published sighting is never rewritten. The
    /// published sightings of the store at `earlierIn` made before `asOfMs` are taken first.
    /// Returns the findings that store's reports published judging `asOfMs` or later: new to this
    /// report as that night saw them, but already announced, so no alert names them again.
    @discardableResult
    func recordFirstSightings(asOfMs: Int64, earlierIn: String?) throws -> Set<String>
    /// Makes the pending sightings the report's own, once its outputs are switched in.
    func publishFirstSightings() throws
    /// Every finding, most severe first, then by kind, time and id (`ReportFindingColumn`); those a
    /// published report first showed judging `shownAgainAt` are new too.
    func forEachFinding(shownAgainAt: Int64?, _ body: (Row) throws -> Void) throws
    /// Every rejected line in file order (`RejectColumn`).
    func forEachReject(_ body: (Row) throws -> Void) throws
    /// Every revenue transaction (`RevenueTransactionColumn`).
    func forEachRevenueTransaction(_ body: (Row) throws -> Void) throws
    /// The tie-out with Apple the join wrote, by day, product and country.
    func tieOutRows() throws -> [TieOutRow]
    /// The Sales Report files the join found repeating or overlapping an earlier one's day, by day, path and earlier path.
    func salesReportOverlaps() throws -> [SalesReportOverlap]
    /// The Sales Report files of tie-out rows whose proceeds came in several currencies, by day, product, country and path.
    func salesReportMixedProceeds() throws -> [SalesReportMixedProceeds]
    /// The type and `path:line` of each stored notification line whose transaction came with a type not in `known`, in path then line order.
    func forEachNotification(ofTypeOtherThan known: [String], _ body: (_ type: String, _ source: String) throws -> Void) throws

    // MARK: Transactions

    /// Every place a finding is listed, by finding id (`FindingSubjectColumn`): its transaction,
    /// or one of the chains it is about (`fct_finding_chains`), one a row.
    func forEachFindingSubject(_ body: (Row) throws -> Void) throws
    /// Every resolved transaction in transaction id order (`ReportTransactionColumn`).
    func transactionsByID() throws -> any StoredCursor<Row>
    /// Every transaction merged from its sightings, in transaction id order.
    func mergedTransactionsByID() throws -> any MergedTransactionCursor
    /// `transactionID` merged from its sightings; nil when Apple never showed it.
    func mergedTransaction(_ transactionID: String) throws -> AppleTransactions.Merged?
    /// The number of the last join that listed its changes (0 for none), and what the joins after
    /// `joinNumber` changed of `transactions.csv`'s rows; nil changes when one of them may have changed every row.
    func transactionChanges(after joinNumber: Int64) throws -> (latest: Int64, changes: TransactionChanges?)
    /// Calls `body` with `transactionID`'s resolved row (`ReportTransactionColumn`); false when it has none.
    func withTransaction(_ transactionID: String, _ body: (Row) throws -> Void) throws -> Bool
    /// The `transactions.csv` the last report recorded writing, if any.
    func transactionsFile() throws -> TransactionsFileRecord?
    /// Records the `transactions.csv` this report wrote, in place of the last one's.
    func saveTransactionsFile(_ record: TransactionsFileRecord) throws

    // MARK: Restated figures

    /// The published figures the report of `zone`, `folder` and `throughDay` is compared with (`ComparedRevenue`). A
    /// report saved but never made published (`savePendingRevenue`) is taken as published when `switchedIn` says its
    /// set is the current one of its folder (the run was killed between the switch and `publishPendingRevenue`), else
    /// dropped. A replayed night's store has published nothing of the nights before: the store at `earlierIn`, which
    /// published them, is read too.
    func publishedRevenue(zone: String, folder: String, throughDay: Int64, earlierIn: String?,
                          switchedIn: (_ setPath: String) -> Bool) throws -> ComparedRevenue
    /// Keeps `figures` as this report's, pending until `publishPendingRevenue`: saved before its outputs' switch.
    func savePendingRevenue(_ figures: PublishedRevenue) throws
    /// Makes the pending figures the published ones, once the outputs that show them are switched in.
    func publishPendingRevenue() throws

    // MARK: Consumption requests

    /// Each `CONSUMPTION_REQUEST` once (by its uuid), at its earliest signing, by time then uuid;
    /// only those about `transactionID` when one is given.
    func consumptionRequests(about transactionID: String?) throws -> [(uuid: String, transactionID: String, ms: Int64)]
    /// The user the join resolved `transactionID` to, if it resolved one.
    func resolvedUser(of transactionID: String) throws -> String?
    /// Each delivery of `transactionID` (`ServerDeliveries`) as its first line has it.
    func deliveries(of transactionID: String) throws -> [(ms: Int64, userID: String, productID: String)]
    /// Each `delivery_revoked` line of `transactionID`: when, and from which user, the server log took its goods back.
    func revocations(of transactionID: String) throws -> [(ms: Int64, userID: String)]
    /// `user`'s first registration: its time and whether it named an IDFV.
    func firstRegistration(of user: String) throws -> (ms: Int64, hasIDFV: Bool)?
    /// `user`'s revenue transactions purchased by `untilMs` (`UserPurchaseColumn`).
    func forEachPurchase(of user: String, through untilMs: Int64, _ body: (Row) throws -> Void) throws

    // MARK: Attribution

    /// The MMP rows attribution reads, in file order, each `install` and `af_purchase` once
    /// (`MMPEventColumn`). What a file read from its rows counts is kept as it is counted, for the
    /// next report to read instead of the rows: nothing else may be writing the store meanwhile.
    func forEachCountedMMPEvent(_ body: (MMPSegment.Row) throws -> Void) throws
    /// Each user's first registration, in user id order, byte by byte (`FirstRegistrationColumn`).
    func firstRegistrationsByUser() throws -> any StoredCursor<Row>
    /// Every verified purchase by user (those with none first), time and id (`PurchaseByUserColumn`).
    func purchasesByUser() throws -> any StoredCursor<Row>
    /// The users' installs the last report kept, by user id (`UserInstallColumn`).
    func storedUserInstalls() throws -> any StoredCursor<Row>
    /// Where this report keeps each user's install, written beside the reading.
    func userInstallWriter() -> any UserInstallWriter
    /// Every stored spend row (`SpendColumn`).
    func forEachSpendRow(_ body: (Row) throws -> Void) throws
}

/// One stored `catalog.csv` line and the file it came from.
struct CatalogRow: Equatable, Sendable {
    var path: String
    var line: Int64
    var productID: String
    var type: String?
    var subscriptionGroup: String?
    var price: String?
    var currency: String?
}

/// The revenue figures one report publishes, per day of its zone and currency: the sums of the cells revenue_daily.csv
/// prints for that day in that local currency (`reporting` false), or in the reporting currency (`reporting` true,
/// `currency` naming it), an empty cell counting as nothing. Amounts are the files' exact texts.
struct PublishedRevenue: Equatable, Sendable {
    struct Figure: Equatable, Sendable {
        /// Days since 1970-01-01 in `zone`, and their `yyyy-MM-dd`.
        var day: Int64
        var date: String
        var reporting: Bool
        var currency: String
        var gross: String
        var refunds: String
        var net: String
    }

    /// Where the outputs that show them are once switched in: `<out>/.sets/<set>`, an absolute path.
    var setPath: String
    /// `--out`, as `OutputSet.canonicalFolder` spells it: with `zone` and `throughDay`, which report these are. A run
    /// into the same folder for the same day rewrites that report.
    var folder: String
    var zone: String
    var reportingCurrency: String
    /// The as-of's day in `zone`: the report covered every day up to it.
    var throughDay: Int64
    /// By day, then local currencies before the reporting currency, then currency.
    var figures: [Figure]
}

/// The published reports a report's figures are compared with (`StoredPublishedRevenue`).
struct ComparedRevenue: Equatable, Sendable {
    /// The report this one rewrites (its folder's, of its zone and day) as it was last published; nil the first time.
    var rewritten: PublishedRevenue?
    /// The report published before `rewritten` first was (before this one, the first time), of its zone and of a day
    /// up to its own: what its restated revenue is said against, the same on every run of the report.
    var earlier: PublishedRevenue?
}

/// A `transactions.csv` a report wrote: from the results of which join (`transactionChanges`), with
/// which settings (a digest of all else its rows depend on), where (an absolute path: a nightly
/// run writes each night into a folder of its own), and which file it is.
struct TransactionsFileRecord: Equatable, Sendable {
    var joinNumber: Int64
    var settings: String
    var path: String
    var file: FileIdentity
}

/// A file as the file system tells it apart: a file written anew, or changed in place, differs.
struct FileIdentity: Equatable, Sendable {
    var device: Int64
    var inode: Int64
    var bytes: Int64
    var modifiedNs: Int64
}

/// Whether a join reconciled the store.
enum Reconciliation {
    /// No join ever did.
    case none
    /// An older iaprecon's join: its results have another shape, and the next join rebuilds them.
    case older
    /// The settings the last join decided with.
    case current(JoinSettings)
}

/// Transactions merged from their sightings, one at a time in transaction id order.
protocol MergedTransactionCursor: AnyObject {
    /// The next transaction; nil when none is left.
    func next() throws -> AppleTransactions.Merged?
}

/// Each user's install as attribution matched them (`fct_user_installs`), kept on a writer of
/// its own while the report reads and matches; only what changed is sent.
protocol UserInstallWriter: AnyObject {
    /// Keeps `user`'s install: the one matched (`install`, nil for none) and how.
    func save(user: String, install: (ms: Int64, mediaSource: String, campaign: String, file: Int64, line: Int64)?, matchedBy: String)
    /// Forgets a user no longer reported.
    func remove(user: String)
    /// Waits for what was sent and keeps it; rethrows the first error. Until then nothing is kept.
    func finish() throws
}

/// What the summary counts in the store.
struct SummaryCounts: Sendable {
    /// A file of the ledger, as the summary lists it.
    struct InputFile: Sendable {
        var path: String
        var source: String
        var bytes: Int64
        var counts: LineCounts
        /// Whether the last listing of the input folder found it.
        var present: Bool
        /// Why a store migration asked for the file to be read again, while no ingest has (its
        /// lines are as an older iaprecon read them); nil when none did.
        var readAgainFor: String? = nil
    }

    /// Every file of the ledger, by path.
    var files: [InputFile]
    /// Paths under the input folder that match no source (`ignored_files`), sorted.
    var ignoredFiles: [String]
    var totals: LineCounts
    var orders: Int64
    var unmatched: Int64
    var ordersByRule: [String: Int64]
    var unpaid: Int64
    /// Resolved transactions by environment, the names in byte order.
    var environments: [(name: String, count: Int64)]
    var unmatchedTransactions: Int64
    var familyShared: Int64
    var failedVerifications: Int64
    var missingFromCatalog: Int64
    var bundleIDs: [String]
    /// What the stored receipts and notifications files were read with (`LineRules.readWith`), each once.
    var readWith: Set<String> = []
    /// The apps (`Parent Identifier`) of the Sales Report rows tied out as this app's by reports
    /// read without `--app-sku`, in byte order: more than one means other apps' sales are in the tie-out.
    var salesReportApps: [String] = []
    /// The Pacific days the Sales Reports cover, by any row (the app's own included), in order.
    var salesReportDays: [String] = []

    /// An order id more than one user logged: its users, each with their first line
    /// (`path:line`), in the order of those lines. The join takes the first user's order.
    struct OrderOfSeveralUsers: Sendable {
        var orderID: String
        var users: [(userID: String, source: String)]
    }

    /// The order ids more than one user logged, in id order.
    var ordersOfSeveralUsers: [OrderOfSeveralUsers] = []
}

/// `forEachFinding`'s columns: the stored finding's, in `findings.csv`'s order (the report
/// copies them as they come), then when it was first seen and by which report.
enum ReportFindingColumn: Int, StoredColumn {
    case findingID, kind, severity, userID, orderID, transactionID, originalTransactionID, productID
    case amount, currency, eventMs, detail, sources
    /// When the finding was first seen, and whether it is new: no report showed it before, or one
    /// first showed it judging the moment of a night reported again (`forEachFinding`'s `shownAgainAt`).
    case firstSeenMs, isNew
    /// Whether a report of this store showed the finding before (its alert said it then).
    case wasReported
    /// The purchase time of the finding's transaction, when iaprecon knows the transaction.
    case purchaseMs

    /// The stored finding's columns: every one before `firstSeenMs`.
    static let stored = allCases.filter { $0.rawValue < firstSeenMs.rawValue }
}

/// `forEachReject`'s columns.
enum RejectColumn: Int, StoredColumn {
    case path, line, reason, text
}

/// `forEachRevenueTransaction`'s columns.
enum RevenueTransactionColumn: Int, StoredColumn {
    case purchaseMs, productID, storefront, currency, unitPrice, quantity, refundMs, refundAmount, priceSource
}

/// `forEachFindingSubject`'s columns.
enum FindingSubjectColumn: Int, StoredColumn {
    case findingID, transactionID, originalTransactionID
}

/// `transactionsByID`'s columns: `transactions.csv`'s first columns, in its order, which the
/// report copies as they come.
enum ReportTransactionColumn: Int, StoredColumn {
    case transactionID, originalTransactionID, userID, orderID, matchRule, productID
    /// NULL, for the report to fill in.
    case productType
    case storefront, environment, ownership, currency, unitPrice, quantity, priceSource
    case purchaseMs, expiresMs, refundMs, refundType, refundAmount, isRevenue
    case deliveries, deliveredTo
}

/// `forEachPurchase`'s columns.
enum UserPurchaseColumn: Int, StoredColumn {
    case purchaseMs, unitPrice, quantity, currency, refundMs, refundAmount
}

/// `forEachCountedMMPEvent`'s columns.
enum MMPEventColumn: Int, StoredColumn {
    case eventWallMs, installWallMs, eventName, mediaSource, campaign, customerUserID, idfv, idfa, appsflyerID, revenue
    case revenueCurrency, revenueUSD, retargeting, eventValueKey, line, fileID
}

/// `firstRegistrationsByUser`'s columns.
enum FirstRegistrationColumn: Int, StoredColumn {
    case userID, ms, idfv, idfa, appsflyerID
}

/// `purchasesByUser`'s columns.
enum PurchaseByUserColumn: Int, StoredColumn {
    case userID, purchaseMs, unitPrice, quantity, currency, refundAmount
}

/// `storedUserInstalls`' columns.
enum UserInstallColumn: Int, StoredColumn {
    case userID, installMs, mediaSource, campaign, matchedBy, fileID, line
}

/// `forEachSpendRow`'s columns: the row's cells, then its file's path and its line.
enum SpendColumn: Int, StoredColumn {
    case day, mediaSource, campaign, spend, currency, path, line
}
