import Foundation
import Synchronization

/// The store as the normalize stage sees it: the indexes the readers of the input lines need.
protocol RawIndexStore {
    /// The indexes of the input lines that are missing (a bulk ingest drops them), in the order to build them.
    func missingRawIndexes() throws -> [String]
    /// Builds one of them in a transaction of its own, so a run killed later keeps it.
    func buildRawIndex(_ name: String) throws
}

/// The store as the join sees it: what changed, the links between keys, each batch's facts in and
/// its results out, the tie-out's inputs and rows, and the transactions that keep a killed run's
/// store consistent. The join names nothing else of the store, so another backend is another
/// conformance beside SQLite's (`SQLiteJoinStore`); the join's decisions stay where they are.
///
/// The results are switched in whole: an incremental join replaces its scope's rows inside the
/// caller's `transaction`; a full rebuild writes new results beside the current ones, which every
/// reader keeps seeing until `switchInRebuilt`, in the join's last transaction.
protocol JoinStore: RawIndexStore {
    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T

    // MARK: What changed since the last join

    /// The latest event time of the stored inputs, and the latest MMP wall-clock time (in the MMP's zone).
    func latestEventTimes() throws -> (ms: Int64?, mmpWallMs: Int64?)
    /// The latest Pacific day (`yyyy-MM-dd`) a stored Sales Report covers, by any row.
    func latestSalesReportDay() throws -> String?
    /// The latest day (`yyyy-MM-dd`, of the report's zone) a stored spend row names.
    func latestSpendDay() throws -> String?
    /// The settings of the last join whose results the next one may update; nil when there was
    /// none or its results have an older iaprecon's shape.
    func previousSettings() throws -> JoinSettings?
    /// Why the next join must rebuild everything whatever changed (a migration, a new catalog, …),
    /// each cause once; empty when it need not.
    func fullRebuildCauses() throws -> [String]
    /// Every key ingest recorded as changed since the last join, with its kind.
    func changedKeys() throws -> [(kind: KeyKind, key: String)]
    /// The transactions the last join decided never delivered, purchased in (`after`, `through`].
    func undeliveredTransactions(purchasedAfter after: Int64, through: Int64, _ body: (String) -> Void) throws
    /// The Pacific days of Sales Report lines ingest added or took away since the last join.
    func changedSalesDays() throws -> [String]
    /// About how many transactions the results hold.
    func transactionCountEstimate() throws -> Int

    // MARK: Links between keys

    /// About how many keys the links name: what a full rebuild sizes its tables by.
    func linkKeysEstimate() throws -> Int64
    /// Every link row of the stored facts, in batches, delivered on the calling thread, the order
    /// lines' rows first: an order id a later row names that no order line named links nothing
    /// (`JoinComponents`, `StoredLinks.listedOrder`).
    func forEachLinkRows(_ deliver: (LinkRows) throws -> Void) throws
    /// What the links reach from `frontier` that is not `known` (from its transactions, chains,
    /// orders and users), in parts whose order does not depend on how the work was spread.
    /// Inside a write transaction, it reads what was committed before it. Nil once what the
    /// closure holds passes `budget`'s limit (`ClosureMemoryBudget`): it stops reading there.
    func reach(from frontier: JoinScope, known: Set<RowFingerprint>, budget: ClosureMemoryBudget) throws -> [ReachedKeys]?
    /// The most bytes of facts a closure holds for its batches (`ClosureFacts`); past it, it holds none.
    var closureFactsBudget: Int { get }
    /// The most bytes a closure holds (link rows, the keys it finds, and its facts while it holds
    /// them) before it gives up for a full rebuild, which spills what it holds (`ClosureMemoryBudget`).
    var closureMemoryBudget: Int { get }

    // MARK: Deciding batches

    /// The kinds of keys a batch's facts are read by: the `keys` of a batch need hold only those.
    var factKeyKinds: Set<KeyKind> { get }

    /// Decides `batches` of `scope` on `pool` and replaces the scope's results with theirs, inside
    /// the caller's transaction: unchanged rows are kept, the rows no batch decided again are
    /// deleted, and what the changed rows change of `transactions.csv` is listed for the report.
    /// `facts` are what the scope's closure read of its facts. Returns what they change of the tie-out.
    func update(_ scope: JoinScope, facts: ClosureFacts, batches: some RebuildBatches, pool: WorkerPool,
                decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws -> TieOutChanges
    /// Builds the raw indexes `names` (`missingRawIndexes`) on a connection of the store's own,
    /// while the caller only reads: it writes nothing until `value()` has returned.
    func buildRawIndexesAlongside(_ names: [String]) -> Background<Void>

    /// What a full rebuild reads of its batches' facts before it writes anything (the store's own).
    associatedtype RebuildFacts
    /// Reads the facts of `batches` for `rebuild`, on `pool`; reads nothing by the raw indexes.
    func readFacts(of batches: some RebuildBatches, pool: WorkerPool) throws -> RebuildFacts
    /// Begins a full rebuild: empty results beside the current ones.
    func beginRebuild() throws
    /// Decides the batches whose facts are `facts` on `pool` into the results beside the current
    /// ones, each batch committed on its own (a killed run leaves the current results whole and the
    /// rebuild pending).
    func rebuild(_ facts: RebuildFacts, pool: WorkerPool, decide: @escaping JoinDecision, rowsWritten: ((Int) -> Void)?) throws
    /// Builds the rebuilt results' indexes beside the current ones, on a connection of the store's
    /// own, while the caller only reads: it writes nothing until `value()` has returned.
    func buildRebuiltIndexesAlongside() -> Background<Void>
    /// The rebuilt results replace the current ones, with their indexes; the report is told that
    /// every row of `transactions.csv` may have changed.
    func switchInRebuilt() throws
    /// Keeps the settings this join decided with, and forgets the changed keys it recomputed.
    func finish(settings: JoinSettings) throws
    func findingCount() throws -> Int

    // MARK: The tie-out with Apple

    /// The Sales Report lines of `days` and the verified units of `counted` among them, in
    /// `zone` (both nil: every day's). Nil when there is nothing to do. `ofRebuilt`: the verified
    /// units of a full rebuild's results, before `switchInRebuilt` (every day's).
    func tieOutInputs(days: Set<String>?, counted: Set<String>?, zone: Zone, ofRebuilt: Bool) throws -> TieOutInputs?
    /// The stored tie-out rows of `days`.
    func tieOutRows(days: Set<String>) throws -> [TieOutRow]
    /// Replaces the tie-out rows, `unverified_apple_sales` findings, Sales Reports that repeat or
    /// overlap another, and files of rows whose proceeds came in several currencies, of `days` (nil: all).
    func replaceTieOut(days: [(day: String, startMs: Int64?)]?, rows: [TieOutRow], findings: [Finding],
                       overlaps: [SalesReportOverlap], mixedProceeds: [SalesReportMixedProceeds], files: SourceFiles) throws
}

/// The settings a join decided with, kept with its results.
struct JoinSettings: Sendable, Equatable {
    var asOfMs: Int64
    var graceMs: Int64
    /// The MMP's zone identifier.
    var mmpZone: String
}

/// What the tie-out of some days is computed from.
struct TieOutInputs {
    /// The days recomputed; nil for every day.
    var days: Set<String>?
    var sales: [TieOutSalesLine]
    /// The days of `days` the reports cover, by an in-app row or the app's own.
    var covered: Set<String>
    var verified: [VerifiedUnits]
    /// Names the sales lines' sources.
    var files: SourceFiles
}

/// One batch as the store hands it to the join: its facts to read, and where its decisions go.
protocol JoinBatch {
    /// Names the sources of the batch's facts.
    var files: SourceFiles { get }
    /// Hands `receiver` every stored fact of the batch, in the store's order (`ScopeFactsReceiver`).
    func readFacts(into receiver: inout some ScopeFactsReceiver) throws
    /// Saves a resolved transaction; `ids` holds its ids' texts.
    func save(_ resolved: ResolvedTransaction, ids: IDTable) throws
    /// Saves a finding; `files` names its sources.
    func save(_ finding: Finding, files: SourceFiles) throws
}

/// The join's decision of one batch, which the store calls on a worker of its pool.
typealias JoinDecision = @Sendable (any JoinBatch) throws -> Void

/// Rows of links, packed: each row's keys (kind, fingerprint, bytes); the first is linked to the others.
struct LinkRows: Sendable {
    var kinds: [KeyKind] = []
    var fingerprints: [RowFingerprint] = []
    var bytes: [UInt8] = []
    /// Where each key's bytes end in `bytes`.
    var keyEnds: [Int32] = []
    /// Where each row's keys end.
    var rowEnds: [Int32] = []

    /// Adds a key of the row at hand: its first key is linked to the others.
    mutating func append(_ key: UnsafeBufferPointer<UInt8>, kind: KeyKind) {
        kinds.append(kind)
        fingerprints.append(kind.fingerprint(of: key))
        bytes.append(contentsOf: key)
        keyEnds.append(Int32(bytes.count))
    }

    /// Ends the row at hand.
    mutating func endRow() {
        rowEnds.append(Int32(kinds.count))
    }

    /// About how many bytes the rows take.
    var footprint: Int {
        bytes.count + kinds.count * (MemoryLayout<KeyKind>.stride + MemoryLayout<RowFingerprint>.stride + MemoryLayout<Int32>.stride)
            + rowEnds.count * MemoryLayout<Int32>.stride
    }
}

/// What a closure holds, in bytes, against the most it may: every query of every round adds the
/// rows it keeps as it reads them, from whichever thread reads them. A closure that passes it
/// reaches so far (a receipt replayed thousands of times links every sighting of it) that holding
/// its links, and deciding its scope from them, would take memory without bound: the join
/// rebuilds in full instead, and a full rebuild spills what it holds.
///
/// What counts is what stays held: the link rows and the keys, and the facts only while they are
/// kept for the batches. Facts past `factsLimit` are let go (`ClosureFacts`), the queries keep no
/// more of them, and the batches read theirs by key; a store with years of history then reads
/// long histories of the night's users without giving up on them for their facts alone.
final class ClosureMemoryBudget: Sendable {
    let limit: Int
    /// The most bytes of facts the closure keeps for its batches.
    let factsLimit: Int
    private let links = Atomic<Int>(0)
    private let facts = Atomic<Int>(0)

    init(limit: Int, factsLimit: Int = .max) {
        (self.limit, self.factsLimit) = (limit, factsLimit)
    }

    /// Whether the closure still keeps the facts it reads: false once they passed `factsLimit`.
    var holdsFacts: Bool { facts.load(ordering: .relaxed) <= factsLimit }

    /// The bytes held so far: the facts only while they are kept.
    var bytes: Int { Self.held(links: links.load(ordering: .relaxed), facts: facts.load(ordering: .relaxed), factsLimit: factsLimit) }

    /// Adds `links` bytes of link rows and keys and `facts` bytes of facts kept; false once what
    /// the closure holds is past the limit.
    func spend(links: Int, facts: Int) -> Bool {
        let factsRead = facts > 0 ? self.facts.add(facts, ordering: .relaxed).newValue : self.facts.load(ordering: .relaxed)
        let linksHeld = links > 0 ? self.links.add(links, ordering: .relaxed).newValue : self.links.load(ordering: .relaxed)
        return Self.held(links: linksHeld, facts: factsRead, factsLimit: factsLimit) <= limit
    }

    private static func held(links: Int, facts: Int, factsLimit: Int) -> Int {
        links + (facts <= factsLimit ? facts : 0)
    }

    /// Thrown by a reader that passed the limit, which stops the round's other readers.
    struct Exceeded: Error {}
}

/// What a round (or a part of one) reached: the keys the scope did not know, each once, and the link rows among what it read.
struct ReachedKeys: Sendable {
    var keys: [(fingerprint: RowFingerprint, key: String, kind: KeyKind)] = []
    var links = LinkRows()
    /// The fact rows the link rows were read from, whole, where the store reads them so (`ClosureFacts`).
    var facts: PackedRows?
    /// The last join's resolved transactions of the frontier's transactions, whole, where the
    /// store reads them so (`ClosureFacts.currentResolved`).
    var currentResolved: PackedRows?
}

/// The facts a closure read with its link rows (`ReachedKeys.facts`): of each fact table a
/// store's link queries read whole, the rows of every key of the scope, each read once, in the
/// round its key joined the scope. The store hands them to the batches instead of reading them
/// again (`JoinStore.update`). Past the budget's facts limit (`ClosureMemoryBudget`) none is held,
/// and the batches read theirs by key. A reference: the store takes the rows (`take`) and lets
/// each go as it routes it, whoever else still holds the closure's result.
final class ClosureFacts {
    private(set) var rows: [PackedRows] = []
    /// The scope's current resolved transactions, as the last join wrote them: what the store
    /// compares the decided ones with (`ScopeRows`), read with the links it follows.
    private(set) var currentResolved: [PackedRows] = []
    private(set) var bytes = 0
    /// False once the facts outgrew the budget and were let go.
    private(set) var isHeld = true

    /// The rows, handed over and forgotten here.
    func take() -> [PackedRows] {
        defer { rows = [] }
        return rows
    }

    /// The current resolved transactions, handed over and forgotten here.
    func takeCurrentResolved() -> [PackedRows] {
        defer { currentResolved = [] }
        return currentResolved
    }

    func add(_ reached: ReachedKeys) {
        guard isHeld else { return }
        for (part, isFacts) in [(reached.facts, true), (reached.currentResolved, false)] {
            guard let part, part.count > 0 else { continue }
            bytes += part.bytes.count
            if isFacts { rows.append(part) } else { currentResolved.append(part) }
        }
    }

    /// Lets every fact go, for good: the batches read theirs by key.
    func letGo() {
        (rows, currentResolved, isHeld) = ([], [], false)
    }
}

/// One row of the Sales Report, as ingest stored it.
struct TieOutSalesLine: Sendable {
    var day: String
    var productID: String
    var country: String
    /// Negative for refunds.
    var units: Int64
    /// Per unit, without sign.
    var customerPrice: Decimal
    var customerCurrency: String
    /// Per unit, without sign.
    var proceeds: Decimal
    var proceedsCurrency: String
    var source: SourceLine
}

/// Verified units on one Pacific day: a purchase (+quantity) or a refund (−quantity).
struct VerifiedUnits: Sendable, Equatable {
    var day: String
    var productID: String
    /// Alpha-2, or nil when the transaction has no storefront ISO 3166 knows.
    var country: String?
    var units: Int64

    /// Appends what a verified transaction adds to the tie-out: its quantity on its purchase's
    /// day, and the same taken back on its refund's day, unless the refund is a Family Sharing
    /// revocation (which refunds nothing). `purchase` and `refund` say which of the two to count.
    static func append(_ transaction: AppleSale, purchase: Bool = true, refund: Bool = true, days: inout DayNames,
                       to units: inout [VerifiedUnits]) {
        guard purchase || refund else { return }
        let country = transaction.storefront.flatMap(StorefrontCountry.alpha2(ofStorefront:))
        if purchase {
            units.append(.init(day: days(transaction.purchaseMs), productID: transaction.productID, country: country,
                               units: transaction.quantity))
        }
        if refund, let refundMs = transaction.refundMs, transaction.refundType != "FAMILY_REVOKE" {
            units.append(.init(day: days(refundMs), productID: transaction.productID, country: country, units: -transaction.quantity))
        }
    }
}

/// What the tie-out reads of a verified transaction Apple counts as a sale (`ResolvedTransaction.isAppleSale`).
struct AppleSale: Sendable, Equatable {
    var productID: String
    var storefront: String?
    var quantity: Int64
    var purchaseMs: Int64
    var refundMs: Int64?
    var refundType: String?
}

/// What an incremental join changed of the units the tie-out counts (`ScopeRows`): each
/// verified transaction it wrote differently, as it was and as it is now. The tie-out of the
/// days they fall on is what was stored less the one and plus the other (`AppleTieOut.refresh`).
struct TieOutChanges: Sendable {
    /// Verified transactions as they were, before the join changed or removed them.
    var removed: [AppleSale] = []
    /// Verified transactions as the join wrote them, new or changed.
    var added: [AppleSale] = []
}

/// One row of `fct_apple_tieout`, money as exact decimal text.
struct TieOutRow: Sendable {
    var day: String
    var productID: String
    var country: String
    var appleUnits: Int64
    var verifiedUnits: Int64
    var customerPrice: String?
    var customerCurrency: String?
    var proceeds: String?
    var proceedsCurrency: String?
    /// How many verified purchases and refunds the row's units add up (a row with none is kept
    /// only for Apple's units), and of the storefront-less row (`??`), its purchases' units apart
    /// from its refunds: what a night adds its changes to.
    var verifiedChanges: Int64 = 0
    var unplacedPurchases: Int64 = 0
    /// The units of purchases alone on either side (`fct_apple_tieout_purchases`): a shortfall is of
    /// purchases, refunds held against refunds apart (`AppleTieOut.findings`).
    var applePurchases: Int64 = 0
    var verifiedPurchases: Int64 = 0

    /// Apple's units less the verified ones: positive where Apple sold more than the store knows.
    var difference: Int64 { appleUnits - verifiedUnits }

    /// Apple's purchases less the verified ones: what a shortfall is of (`AppleTieOut.Row.purchaseShortfall`).
    var purchaseShortfall: Int64 { applePurchases - verifiedPurchases }
}

/// A Sales Report file whose rows of a day another file, earlier in path order, reports too: one
/// row of `fct_apple_report_overlaps`, one per pair of files (a file may overlap several earlier
/// ones). Files are named by path, as a finding names its sources.
struct SalesReportOverlap: Sendable, Equatable {
    enum Kind: String, Sendable {
        /// The same rows (in any order): the day is counted once, from the earlier file.
        case repeated
        /// Other rows, some for a product and country the earlier file has too: both are counted.
        case overlapping
    }

    var day: String
    var path: String
    var earlierPath: String
    var kind: Kind
}

/// A Sales Report file with lines of a tie-out row whose proceeds Apple paid in more than one
/// currency (`AppleTieOut.MixedProceeds`), so the row's `apple_proceeds` is empty: one row of
/// `fct_apple_mixed_proceeds`, kept so every report page can say which file to ask Apple about.
struct SalesReportMixedProceeds: Sendable, Equatable {
    var day: String
    var productID: String
    var country: String
    var path: String
}

/// The batches of whole components a full rebuild decides, as the join cut them: each batch's
/// keys of the kinds the store reads facts by (`JoinStore.factKeyKinds`).
protocol RebuildBatches: Sendable {
    var count: Int { get }
    /// The keys of batch `batch`.
    func scope(_ batch: Int) -> JoinScope
    /// Calls `body` with every key of every batch, as its bytes, with its kind and batch: what a
    /// store that routes facts to batches looks keys up by, without a `String` for each.
    func forEachKey(_ body: (_ key: UnsafeBufferPointer<UInt8>, _ kind: KeyKind, _ batch: Int) -> Void)
}
