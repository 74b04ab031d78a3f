/// The store as `history` sees it (`UserHistory`): what tells whose story a lookup names, then
/// the facts of that story as values, each found through an index by the keys gathered so far,
/// so a lookup stays fast on a store of millions of transactions. It only reads. SQLite's
/// conformance is `SQLiteHistoryStore`.
protocol HistoryStore {
    /// Refuses a store whose schema this build does not read yet: an older iaprecon's, which only a writer migrates.
    func checkSchema() throws
    /// Whether a join and a report have reconciled the store.
    func isReconciled() throws -> Bool
    /// Why what the store shows may be unsettled now; nil when nothing is under way or waiting.
    func pendingWork() throws -> PendingWork?
    /// Whether any order, delivery, resolved transaction, registration or sighting a user sent names `user`.
    func knows(user: String) throws -> Bool
    /// Whoever the log delivered `transactionID` to first, if it delivered it.
    func firstRecipient(of transactionID: String) throws -> String?
    /// The user who created order `orderID` (its first line's), if the log has it.
    func creator(of orderID: String) throws -> String?
    /// Every user an order line of `orderID` names, each once, in the order of their first line.
    func usersLogging(order orderID: String) throws -> [String]
    /// The subscription chain the join put `transactionID` in, if it resolved it.
    func chain(of transactionID: String) throws -> String?
    /// The transactions of subscription chain `originalTransactionID`, by purchase time.
    func transactions(ofChain originalTransactionID: String) throws -> [String]
    /// The transactions whose merged sightings carry `appAccountToken`, in any case (a UUID's
    /// letters mean the same in capitals), by purchase time.
    func transactions(withToken appAccountToken: String) throws -> [String]
    /// The rejected input lines whose text holds one of `keys` as a whole id (not inside a longer
    /// one), in file then line order.
    func rejectedLines(naming keys: [String]) throws -> [HistoryFacts.RejectedInput]
    /// The users whose sign-up gave `deviceID` (as typed, or a UUID in capitals) as its IDFV or IDFA (a UUID) or
    /// its AppsFlyer ID, each with which of them (`IDFV`, `IDFA`, `AppsFlyer ID`), by sign-up time.
    func users(withDeviceID deviceID: String, shaped shape: DeviceIDShape) throws -> [(userID: String, kind: String)]
    /// The users whose sign-up names them by an id that differs from `user` only in the case of its ASCII letters.
    func users(differingOnlyInCaseFrom user: String) throws -> [String]
    /// Whether the join resolved `transactionID`, and to which user.
    func resolution(of transactionID: String) throws -> (resolved: Bool, user: String?)
    /// The as-of moment the last join judged by.
    func joinedAsOfMs() throws -> Int64?
    /// Every stored fx rate, by day then file.
    func fxRates() throws -> [FXRow]

    /// The transactions the join resolved to `user`.
    func transactionIDs(resolvedTo user: String) throws -> [String]
    func registrations(of user: String) throws -> [HistoryFacts.Registration]
    /// The install the report joined `user` to (CONTRACT.md §1.5); none when it joined them to none.
    func installs(of user: String) throws -> [HistoryFacts.Install]
    /// `user`'s orders, each once, with what the join matched each to, handed `atOnce` at a time
    /// after their matches are read: a customer can have hundreds of thousands.
    func forEachOrder(ofUser user: String, atOnce: Int, _ body: (HistoryFacts.Order) throws -> Void) throws
    /// The orders the transactions matched.
    func matchedOrders(of transactionIDs: [String]) throws -> [HistoryFacts.Order]
    /// The transactions as the join resolved them, each with the line that first verified it and
    /// the line that told its refund.
    func transactions(_ transactionIDs: [String]) throws -> [HistoryFacts.Transaction]
    /// The transactions delivered to `user`: of every transaction some line delivers to them, those
    /// with a delivery whose first line does.
    func transactionIDs(deliveredTo user: String) throws -> [String]
    /// The deliveries of the transactions.
    func deliveries(of transactionIDs: [String]) throws -> [HistoryFacts.Delivery]
    func revocations(ofUser user: String) throws -> [HistoryFacts.Revocation]
    /// The refunds and reversals Apple told of the transactions that have a reversal, each once:
    /// the join keeps only what stands, and support must see both.
    func reversedRefunds(of transactionIDs: [String]) throws -> [HistoryFacts.RefundNotice]
    /// The revocations of the transactions.
    func revocations(of transactionIDs: [String]) throws -> [HistoryFacts.Revocation]
    /// Findings on the transactions and on their subscription chains (every chain a finding is
    /// about, `Finding.chainIDs`); a chain's once for each of its transactions asked about, and a
    /// finding on a transaction and its chain once more.
    func findings(of transactionIDs: [String]) throws -> [HistoryFacts.Finding]
    /// Findings on `user` themselves.
    func findings(ofUser user: String) throws -> [HistoryFacts.Finding]
}

/// What a device id looks like, and so which of a sign-up's ids it can be.
enum DeviceIDShape: Equatable {
    /// An IDFV or an IDFA.
    case uuid
    /// AppsFlyer's `1795549202000-5007017`.
    case appsFlyerID
}

/// Why a lookup may see the store unsettled.
enum PendingWork: Equatable {
    /// A run holds the store's lock (its note says which).
    case runUnderWay(holder: String)
    /// An older iaprecon reconciled the store: the join's results have an older shape that the
    /// next join rebuilds in full.
    case upgradePending
    /// A full rebuild started and did not finish.
    case fullRebuildPending
    /// Input was ingested since the last reconciliation.
    case inputNotReconciled
}

/// One stored fx rate and the file it came from.
typealias FXRow = (path: String, line: Int64, day: String, currency: String, rate: String)

/// The facts of one customer's story, as `history` reads them.
enum HistoryFacts {
    /// A registration line of the user.
    struct Registration {
        var ms: Int64
        var method: String?
        var country: String?
        /// As stored: a pseudonym (blob) or, in a store written before pseudonyms, the whole id.
        var idfv: SQLValue
        var idfa: SQLValue
        var appsflyerID: SQLValue
        var source: String
    }

    /// The install the report joined the user to, and the key it joined by.
    struct Install {
        var ms: Int64
        var mediaSource: String?
        var campaign: String?
        var matchedBy: String
        var source: String?
    }

    /// An order (`ServerOrders`), and the transaction the join matched to it, if any.
    struct Order {
        var ms: Int64
        var orderID: String
        var productID: String
        var price: String?
        var currency: String?
        var source: String
        var match: (transactionID: String, rule: String)?
        /// When another user logged the same order id first: that user and line. The
        /// reconciliation takes an order id's first line (`ServerOrders`), so this user's order is
        /// matched to no transaction of its own.
        var loggedFirstBy: (userID: String, source: String)? = nil
    }

    /// A transaction as the join resolved it, and where it was first seen.
    struct Transaction {
        var purchaseMs: Int64
        var transactionID: String
        var originalTransactionID: String
        var productID: String
        var unitPrice: String?
        var quantity: Int64
        var currency: String?
        var environment: String?
        var ownership: String?
        var expiresMs: Int64?
        var refundMs: Int64?
        var refundAmount: String?
        var refundType: String?
        var userID: String?
        var isRevenue: Bool
        /// The line that first verified the purchase.
        var firstSighting: String?
        /// The line that told the refund that stands, if one does.
        var refundSource: String? = nil

        /// What it cost: the unit price times the quantity, when the price is known.
        var price: Amount? { unitPrice.flatMap(Amount.parse).map { $0 * quantity } }
    }

    /// A delivery (`ServerDeliveries`), with how many lines of the log it is.
    struct Delivery {
        var ms: Int64
        var transactionID: String
        var productID: String
        var quantity: Int64
        var userID: String
        var copies: Int
        /// Where its first line is: the file's path and the line.
        var path: String
        var line: Int64
        var source: String { path + ":" + String(line) }

        /// Whether it comes before `other` in time, then in file order (path bytes, then line number):
        /// `source` as text would put line 10 before line 9.
        func precedes(_ other: Delivery) -> Bool {
            if ms != other.ms { return ms < other.ms }
            // By bytes, not `!=`: Swift finds two names equal that differ only in how an accent is encoded.
            if !path.utf8.elementsEqual(other.path.utf8) { return path.utf8.lexicographicallyPrecedes(other.path.utf8) }
            return line < other.line
        }
    }

    /// A revocation line of the server log.
    struct Revocation {
        var ms: Int64
        var transactionID: String
        var userID: String
        var source: String
    }

    /// A refund Apple told of, or its reversal (`REFUND_REVERSED`), and the line that told it.
    struct RefundNotice {
        var transactionID: String
        var isReversal: Bool
        var ms: Int64
        var revocationType: String?
        var source: String
    }

    /// An input line ingest rejected, and why.
    struct RejectedInput: Sendable, Equatable {
        /// `path:line`.
        var source: String
        var reason: String
    }

    /// A finding of the join.
    struct Finding {
        var eventMs: Int64
        var findingID: String
        var kind: String
        var severity: String
        var productID: String?
        var amount: String?
        var currency: String?
        var detail: String
        /// Whose finding it is (`findings.csv`'s `user_id`): another user's, for a chain the story's user holds too.
        var userID: String?
    }
}
