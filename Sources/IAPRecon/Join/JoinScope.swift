/// The part of the store an incremental join recomputes: every transaction, order, user and
/// subscription chain whose outcome the changed keys can reach.
///
/// Matching and findings only ever compare things linked to each other: an order (an id an order
/// line has; another id matches nothing) and the transactions a delivery line, a receipt line or an
/// `appAccountToken` names with it; a
/// transaction and the orders of the users who sent it or received it (the heuristic rule); a
/// chain and every renewal in it; a user and every chain delivered to them (multi-Apple-ID).
/// The scope is the closure of the changed keys under those links, taken both in the stored rows
/// as they are now (orders, deliveries and claims as raw lines, whose copies link no less than
/// their first lines) and in the previous join's decisions (an order it matched, a user it
/// resolved), so a link that new data breaks is revisited too. Inside a closed scope the rules
/// see exactly what a full rebuild shows them, in the same order, so they decide the same.
extension JoinScope {
    /// Why a night's changes were not closed into a scope, for the run's log: the join rebuilt in full.
    enum Unclosed: Error, Equatable {
        /// They reach more than `limit` transactions.
        case reachesTooFar(limit: Int)
        /// What the closure held passed `limit` bytes.
        case holdsTooMuch(limit: Int)

        var reason: String {
            switch self {
            case .reachesTooFar(let limit): "the changes reach more than \(limit) transactions, which a full rebuild reads faster"
            case .holdsTooMuch(let limit): "the changes link more than \(limit >= 1 << 20 ? "\(limit >> 20) MB" : "\(limit) bytes") of lines to hold"
            }
        }
    }

    /// The closure of `seeds`, or why there is none (`Unclosed`): when it would reach more than
    /// `limit` transactions (a full rebuild is then the cheaper way to the same answer) or hold more than the store's
    /// `closureMemoryBudget` bytes of rows (a full rebuild is then the bounded way: `ClosureMemoryBudget`),
    /// with the links between its keys (`JoinComponents`): the rows the closure reads from each key's
    /// side are exactly the link rows of the scope, each read once, in the round its key joined the
    /// scope. The facts the store read those rows from are kept too, for the batches, up to the
    /// store's `closureFactsBudget` (`ClosureFacts`).
    ///
    /// Each round follows the links of the new keys, inside the join's transaction before it writes.
    /// `budget` is the store's unless given (tests read what a closure held from it).
    static func closure(of seeds: JoinScope, in store: some JoinStore, limit: Int, budget: ClosureMemoryBudget? = nil) throws
        -> Result<(scope: JoinScope, links: [LinkRows], facts: ClosureFacts), Unclosed> {
        var scope = JoinScope()
        var links: [LinkRows] = []
        let facts = ClosureFacts()
        let budget = budget ?? ClosureMemoryBudget(limit: store.closureMemoryBudget, factsLimit: store.closureFactsBudget)
        // Every key of the scope, by kind and bytes: a row's key already known is skipped before it
        // is made into a string. Most keys a round reads are known (an order's user, a
        // transaction's chain), and a set of strings would hash each of them in full.
        var known = Set<RowFingerprint>()
        seeds.forEachKey { key, kind in
            var key = key
            known.insert(key.withUTF8 { kind.fingerprint(of: $0) })
        }
        var frontier = seeds
        while !frontier.isEmpty {
            scope.formUnion(frontier)
            if scope.transactions.count > limit { return .failure(.reachesTooFar(limit: limit)) }
            guard let reached = try store.reach(from: frontier, known: known, budget: budget) else {
                Trace.mark("join closure held past \(budget.limit) bytes")
                return .failure(.holdsTooMuch(limit: budget.limit))
            }
            links += reached.map(\.links)
            for part in reached { facts.add(part) }
            if !budget.holdsFacts { facts.letGo() }
            Trace.mark("join closure round: frontier \(frontier.transactions.count) transactions, \(frontier.orders.count) orders, \(frontier.users.count) users, \(frontier.chains.count) chains; \(budget.bytes) bytes held")
            // Both sides may reach one key: it joins the next frontier once.
            frontier = JoinScope()
            for new in reached.map(\.keys) {
                for (fingerprint, key, kind) in new where known.insert(fingerprint).inserted { frontier.insert(key, as: kind) }
            }
        }
        return .success((scope, links, facts))
    }

    /// The keys `ChangedKeys` recorded, plus the undelivered transactions whose `lost_delivery`
    /// due time the as-of moved across (purchased in the window between the two as-of times, less grace).
    static func seeds(in store: some JoinStore, previousAsOfMs: Int64, asOfMs: Int64, graceMs: Int64) throws -> JoinScope {
        var seeds = JoinScope()
        for (kind, key) in try store.changedKeys() { seeds.insert(key, as: kind) }
        if previousAsOfMs != asOfMs {
            // Only lost_delivery reads the as-of, and only for a transaction never delivered.
            // As the last join left them: what changed since is among the recorded keys already.
            try store.undeliveredTransactions(purchasedAfter: min(previousAsOfMs, asOfMs) - graceMs,
                                              through: max(previousAsOfMs, asOfMs) - graceMs) {
                seeds.insert($0, as: .transaction)
            }
        }
        return seeds
    }
}
