/// The keys of a part of the store a join decides at once, by kind: what its facts are read by
/// (`StoredScopeFacts`) and its links followed from (`StoredLinks`). The join finds them
/// (`JoinScope.closure`, `JoinComponents`).
struct JoinScope {
    // Keys compare by their bytes, as the store's do: a scope holding one spelling of an accented
    // id and not the other would read the rows of only one.
    var transactions: Set<StoredText> = []
    var orders: Set<StoredText> = []
    var users: Set<StoredText> = []
    var chains: Set<StoredText> = []

    var isEmpty: Bool { transactions.isEmpty && orders.isEmpty && users.isEmpty && chains.isEmpty }

    /// Adds every key of `other`, kind by kind.
    mutating func formUnion(_ other: JoinScope) {
        transactions.formUnion(other.transactions)
        orders.formUnion(other.orders)
        users.formUnion(other.users)
        chains.formUnion(other.chains)
    }

    /// Adds `key` to the keys of its kind; kinds a scope does not hold (files, days) add nothing.
    mutating func insert(_ key: String, as kind: KeyKind) {
        switch kind {
        case .transaction: transactions.insert(StoredText(key))
        case .order: orders.insert(StoredText(key))
        case .user: users.insert(StoredText(key))
        case .chain: chains.insert(StoredText(key))
        case .all, .mmpFile, .registration, .salesDay: break
        }
    }

    /// The keys of one kind; none for kinds a scope does not hold.
    func keys(_ kind: KeyKind) -> Set<StoredText> {
        switch kind {
        case .transaction: transactions
        case .order: orders
        case .user: users
        case .chain: chains
        case .all, .mmpFile, .registration, .salesDay: []
        }
    }

    /// Calls `body` with every key and its kind.
    func forEachKey(_ body: (String, KeyKind) -> Void) {
        for key in transactions { body(key.text, .transaction) }
        for key in orders { body(key.text, .order) }
        for key in users { body(key.text, .user) }
        for key in chains { body(key.text, .chain) }
    }
}

/// What a key names: the kinds of `JoinScope`, and what else ingest records as changed (`ChangedKeys`).
public enum KeyKind: String, Sendable {
    case transaction, order, user, chain, all
    /// A new, replaced or forgotten MMP file (key: its file id). Nothing is recomputed for it
    /// before the report, which reads every MMP row; it tells `history` that attribution waits.
    case mmpFile = "mmp_file"
    /// A new, replaced or forgotten registrations file (key: its file id). Only the report reads
    /// sign-ups (all of them, every run), so nothing is recomputed for it; it tells `history`
    /// that attribution waits.
    case registration
    /// A Pacific day (`yyyy-MM-dd`) of Sales Report rows a file added or took away: the join
    /// recomputes that day's tie-out with Apple.
    case salesDay = "sales_day"
}

extension KeyKind: Hashable {
    /// By case, not through the raw text (the default for a raw-valued enum): the join looks a
    /// kind up in a set or a count for every key it routes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(caseNumber)
    }

    /// A case number is its own hash: a set or a dictionary of kinds takes one multiply of it, with
    /// the process's seed, instead of running SipHash over one byte.
    public func _rawHashValue(seed: Int) -> Int {
        let mixed = (UInt64(caseNumber) ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    public static func == (a: KeyKind, b: KeyKind) -> Bool {
        a.caseNumber == b.caseNumber
    }

    fileprivate var caseNumber: UInt8 {
        switch self {
        case .transaction: 0
        case .order: 1
        case .user: 2
        case .chain: 3
        case .all: 4
        case .mmpFile: 5
        case .registration: 6
        case .salesDay: 7
        }
    }
}

extension KeyKind {
    /// The fingerprint of a key of this kind, `RowFingerprint(rawValue, key)`: its kind's name and
    /// the separator are fingerprinted once per process, not again for every key read.
    func fingerprint(of key: UnsafeBufferPointer<UInt8>) -> RowFingerprint {
        var fingerprint = Self.namePrefixes[Int(caseNumber)]
        fingerprint.add(key)
        return fingerprint
    }

    /// By case number: each kind's name and the separator, fingerprinted.
    private static let namePrefixes: [RowFingerprint] = [KeyKind.transaction, .order, .user, .chain, .all, .mmpFile, .registration, .salesDay]
        .map { kind in RowFingerprint(kind.rawValue, UnsafeBufferPointer(start: nil, count: 0)) }
}
