import Foundation

/// One customer's story in time order, for support (`iaprecon history`): a user's, one
/// transaction's, or one subscription chain's.
///
/// Answers from indexed tables only (the results, and the input lines normalized as
/// `AppleTransactions`, `ServerOrders` and `ServerDeliveries` do), one indexed lookup per key, so
/// a lookup stays fast on a store of millions of transactions. Never shows receipt blobs or JWS
/// strings, and masks IDFAs. A user sees every finding that involves them: their own, those on
/// transactions delivered to them (the account that received a cross-user duplicate or a
/// wrong-user delivery), and those on the subscription chains they hold (every holder of a shared
/// subscription).
public struct UserHistory: Sendable {
    public struct Event: Sendable, Equatable {
        public var ms: Int64
        public var event: String
        public var id: String
        public var product: String
        /// Exact decimal text in `currency`, or empty.
        public var amount: String
        public var currency: String
        public var detail: String
        public var source: String
    }

    /// A subscription the customer can use at as-of: the latest period of its chain, not refunded.
    public struct ActiveSubscription: Sendable, Equatable {
        public var originalTransactionID: String
        public var productID: String
        public var expiresMs: Int64
        public var environment: String
    }

    public struct OpenFinding: Sendable, Equatable {
        public var findingID: String
        public var kind: String
        public var severity: String
    }

    /// What the history is of, in words: `user u_1005`, `transaction 2000000630024936`, ...
    public var subject: String
    /// The user the lookup resolved to (for a transaction, the one who bought it).
    public var userID: String
    public var events: [Event]
    public var findingIDs: [String]
    public var findings: [OpenFinding]
    /// Verified production purchases made by the customer (or the transaction looked up), and
    /// what was refunded of them, in the reporting currency at the purchase day's rate.
    public var spent: String
    public var refunded: String
    public var reportingCurrency: String
    /// Purchases fx.csv has no rate for: left out of `spent` and `refunded`, and said so.
    public var unconverted: Int
    public var activeSubscriptions: [ActiveSubscription]
    public var asOfMs: Int64
    /// Why this history may be incomplete right now (a run updating the store, a rebuild that did
    /// not finish, input not yet reconciled); nil when the store is settled.
    public var caveat: String?

    /// Which customer a lookup names.
    public enum Lookup: Sendable {
        case user(String)
        /// That transaction's story only.
        case transaction(String)
        /// The story of the user who created the order.
        case order(String)
        /// The story of every transaction of one subscription chain.
        case originalTransaction(String)
        /// The story of the user whose purchases carry this `appAccountToken`.
        case appAccountToken(String)
    }

    public struct NotFound: Error, CustomStringConvertible, Sendable {
        public var what: String
        public var hint: String?
        public var description: String { "no \(what) in the store" + (hint.map { "; \($0)" } ?? "") }
    }

    /// Each stage switches its tables in whole, but a lookup made while a run is under way can see
    /// one stage's new tables beside the next one's old ones, and a killed run leaves the store a
    /// night behind: say so rather than show it in silence.
    static func caveat(_ database: Database) throws -> String? {
        if let holder = RunLock.holder(databasePath: database.path) {
            return "a run is updating this store (\(holder)): what it has not reconciled yet may be missing or change; look again when it finishes"
        }
        if try ChangedKeys.isFullRebuildPending(database) {
            return "a full rebuild of this store started and did not finish: this shows the store as it was before; 'iaprecon run' completes it"
        }
        if try !ChangedKeys.isEmpty(database) {
            return "input ingested since the last reconciliation is not in this history yet; 'iaprecon run' brings it in"
        }
        return nil
    }

    /// Whose story a lookup tells: a user's whole story, or only some transactions'.
    private enum Scope {
        case user(String)
        case transactions([String])
    }

    /// Loads a history; `zone` names the days whose fx rates convert, `currency` is fx.csv's reporting currency.
    public static func load(_ database: Database, _ lookup: Lookup, currency: String = "USD", zone: Zone = .utc) throws -> UserHistory {
        let reconciled = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('fct_findings', 'fct_user_installs')")
        guard reconciled == .integer(2) else {
            throw NotFound(what: "reconciliation", hint: "run 'iaprecon run' (or the join and report stages) on it first")
        }
        let (scope, userID, subject) = try resolve(database, lookup)
        var loader = Loader(database: database)
        switch scope {
        case .user(let user):
            loader.transactionIDs = try loader.strings("SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1", user)
            // And those delivered to them, so their deliveries are shown with the rest.
            for delivery in try loader.deliveries(to: user) where !loader.transactionIDs.contains(delivery.transactionID) {
                loader.transactionIDs.append(delivery.transactionID)
            }
            try loader.signUp(user)
            try loader.orders(ofUser: user)
            try loader.revocations(ofUser: user)
        case .transactions(let ids):
            loader.transactionIDs = ids
            try loader.matchedOrders()
            try loader.revocations(ofTransactions: ())
        }
        let user: String? = if case .user(let user) = scope { user } else { nil }
        try loader.transactions(buyer: userID, isUser: user != nil)
        try loader.deliveries()
        try loader.findings(user: user)
        loader.events.sort {
            ($0.ms, $0.event.hasPrefix("FINDING") ? 1 : 0, $0.event, $0.id) < ($1.ms, $1.event.hasPrefix("FINDING") ? 1 : 0, $1.event, $1.id)
        }

        let asOfMs = try database.scalar("SELECT max(as_of_ms) FROM int_run_settings").integerValue
        let fx = try FXRates(database: database, reportingCurrency: currency)
        var days = DayNames(zone)
        var spent = Amount.zero, refunded = Amount.zero, unconverted = 0
        // A user's own purchases; for a transaction or a chain, all of them.
        let isUserScope = if case .user = scope { true } else { false }
        for purchase in loader.purchases where purchase.isRevenue && (!isUserScope || purchase.buyer == userID) {
            guard let rate = fx.rate(purchase.currency, on: days(purchase.ms)) else {
                unconverted += 1
                continue
            }
            spent += purchase.gross * rate
            refunded += purchase.refund * rate
        }
        // The latest period of each chain the customer holds, if it runs past as-of and was not refunded.
        var latest: [String: Purchase] = [:]
        for purchase in loader.purchases where purchase.expiresMs != nil {
            if let known = latest[purchase.originalID], (known.expiresMs ?? 0) >= (purchase.expiresMs ?? 0) { continue }
            latest[purchase.originalID] = purchase
        }
        let active = latest.values.compactMap { purchase -> ActiveSubscription? in
            guard let expires = purchase.expiresMs, expires > asOfMs, !purchase.isRefunded else { return nil }
            return ActiveSubscription(originalTransactionID: purchase.originalID, productID: purchase.product, expiresMs: expires,
                                      environment: purchase.environment)
        }.sorted { ($0.expiresMs, $0.originalTransactionID) < ($1.expiresMs, $1.originalTransactionID) }

        // Critical first.
        let findings = loader.findings.sorted {
            (-(Severity(rawValue: $0.severity)?.rank ?? -1), $0.findingID) < (-(Severity(rawValue: $1.severity)?.rank ?? -1), $1.findingID)
        }
        return UserHistory(
            subject: subject, userID: userID, events: loader.events, findingIDs: loader.findings.map(\.findingID).sorted(), findings: findings,
            spent: Money.format(spent), refunded: Money.format(refunded), reportingCurrency: currency, unconverted: unconverted,
            activeSubscriptions: active, asOfMs: asOfMs, caveat: try caveat(database))
    }

    /// The scope, user and subject a lookup names, or NotFound.
    private static func resolve(_ database: Database, _ lookup: Lookup) throws -> (Scope, String, String) {
        func first(_ sql: String, _ key: String) throws -> String? {
            var found: String?
            try database.forEach(sql, [.text(key)]) { row in if found == nil { found = row.optionalString(0) } }
            return found
        }
        switch lookup {
        case .user(let id):
            let known = try database.scalar("""
                SELECT 1 WHERE EXISTS (SELECT 1 FROM raw_server__orders WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_server__deliveries WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM int_transactions_resolved WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_registrations__users WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_apple__transactions WHERE user_id = ?1 AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL))
                """, [.text(id)])
            if known == nil { throw NotFound(what: "user '\(id)'") }
            return (.user(id), id, "user \(id)")
        case .transaction(let id):
            var user: String?
            var known = false
            try database.forEach("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?", [.text(id)]) {
                known = true
                user = $0.optionalString(0)
            }
            if user == nil {
                // Whoever the log delivered it to first.
                var earliest: (ms: Int64, user: String)?
                try StoredDeliveries.withDeliveries(of: id, in: database) { deliveries in
                    while deliveries.hasDelivery {
                        let ms = deliveries.row.int(StoredDeliveries.Column.ms)
                        if ms < earliest?.ms ?? .max { earliest = (ms, deliveries.row.string(StoredDeliveries.Column.userID)) }
                        _ = try deliveries.advance()
                    }
                }
                user = earliest?.user
            }
            guard known || user != nil else { throw NotFound(what: "transaction '\(id)'") }
            return (.transactions([id]), user ?? "", "transaction \(id)")
        case .order(let id):
            var user: String?
            try ServerOrders.forEachFirst(in: database, where: "o.order_id = ?1", [.text(id)]) { user = $0.string(ServerOrders.Column.userID) }
            guard let user else { throw NotFound(what: "order '\(id)'") }
            return (.user(user), user, "user \(user)")
        case .originalTransaction(let id):
            // Every transaction a sighting names the chain of, and the one of its own id: those whose merge names it.
            let ids = try mergedTransactions(database, where: """
                a.transaction_id IN (
                  SELECT transaction_id FROM raw_apple__transactions WHERE original_transaction_id = ?1 AND original_transaction_id != transaction_id)
                OR a.transaction_id = ?1
                """, [.text(id)]) { $0.originalTransactionID == id }
            guard let firstID = ids.first else { throw NotFound(what: "subscription chain '\(id)'") }
            let user = try first("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?", firstID) ?? ""
            return (.transactions(ids), user, "subscription chain \(id)")
        case .appAccountToken(let token):
            let ids = try mergedTransactions(database, where: """
                a.transaction_id IN (
                  SELECT transaction_id FROM raw_apple__transactions WHERE app_account_token = ?1 AND app_account_token IS NOT NULL)
                """, [.text(token)]) { $0.appAccountToken == token }
            guard !ids.isEmpty else { throw NotFound(what: "app account token '\(token)'") }
            for id in ids {
                if let user = try first("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?", id) {
                    return (.user(user), user, "user \(user)")
                }
            }
            return (.transactions(ids), "", "app account token \(token)")
        }
    }

    /// The ids of the transactions merged from the sightings `condition` selects (as `a`, whole
    /// transactions) that `include` keeps, by purchase time, then id.
    private static func mergedTransactions(_ database: Database, where condition: String, _ arguments: [SQLValue],
                                           including include: (AppleTransactions.Merged) -> Bool) throws -> [String] {
        var found: [(purchaseMs: Int64, id: String)] = []
        let sightings = try AppleTransactions.Cursor(database, where: condition, arguments)
        while let merged = try sightings.next() {
            if include(merged) { found.append((merged.purchaseMs, merged.transactionID)) }
        }
        return found.sorted { $0.purchaseMs != $1.purchaseMs ? $0.purchaseMs < $1.purchaseMs : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            .map(\.id)
    }

    /// A verified transaction of the history, for the header's totals and subscriptions.
    private struct Purchase {
        var ms: Int64
        var originalID: String
        var product: String
        var buyer: String?
        var isRevenue: Bool
        var currency: String
        var gross: Amount
        var refund: Amount
        var isRefunded: Bool
        var expiresMs: Int64?
        var environment: String
    }

    /// Gathers the events of one history; each query reads one index with the keys gathered so far.
    private struct Loader {
        let database: Database
        var transactionIDs: [String] = []
        var events: [Event] = []
        var purchases: [Purchase] = []
        var findings: [OpenFinding] = []
        /// Orders already shown, so a matched order is listed once.
        var orderIDs = Set<StoredText>()

        init(database: Database) { self.database = database }

        /// The transaction ids as one JSON array parameter, read with `json_each` into an indexed `IN`.
        var idList: SQLValue { .text("[" + transactionIDs.map(JSONWriter.quote).joined(separator: ",") + "]") }

        func strings(_ sql: String, _ key: String) throws -> [String] {
            var values: [String] = []
            try database.forEach(sql, [.text(key)]) { values.append($0.string(0)) }
            return values
        }

        mutating func add(_ ms: Int64, _ event: String, id: String = "", product: String = "", amount: String? = nil, currency: String? = nil,
                          detail: String, source: String = "") {
            events.append(Event(ms: ms, event: event, id: id, product: product, amount: amount ?? "", currency: amount == nil ? "" : currency ?? "",
                                detail: detail, source: source))
        }

        mutating func signUp(_ user: String) throws {
            try database.forEach("""
                SELECT r.ts_ms, r.method, r.country, r.idfa, r.appsflyer_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line"))
                FROM raw_registrations__users r WHERE r.user_id = ?
                """, [.text(user)]) { row in
                var parts = ["method " + (row.optionalString(1) ?? "?")]
                if let country = row.optionalString(2) { parts.append("country " + country) }
                if let idfa = mask(row.value(3)) { parts.append("idfa " + idfa) }
                if let appsflyer = mask(row.value(4)) { parts.append("appsflyer " + appsflyer) }
                add(row.int(0), "registered", id: user, detail: parts.joined(separator: ", "), source: row.string(5))
            }
            // The install the report joined this user to (CONTRACT.md §1.5), with the key it was joined by.
            try database.forEach("""
                SELECT i.install_ms, i.media_source, i.campaign, i.matched_by, \(StoredLedger.pathAndLineSQL(file: "i.file_id", line: "i.line"))
                FROM fct_user_installs i WHERE i.user_id = ? AND i.install_ms IS NOT NULL
                """, [.text(user)]) { row in
                var detail = "media source \(row.optionalString(1) ?? "organic")"
                if let campaign = row.optionalString(2), !campaign.isEmpty { detail += ", campaign \(campaign)" }
                detail += ", joined by \(row.string(3))"
                add(row.int(0), "install", detail: detail, source: row.optionalString(4) ?? "")
            }
        }

        /// The orders (`ServerOrders`) of the order lines `condition` selects, and for each what the join matched it to;
        /// with `user`, only that user's orders.
        private mutating func orders(where condition: String, _ arguments: [SQLValue], user: String? = nil) throws {
            typealias O = ServerOrders.Column
            var orders: [(ms: Int64, id: String, product: String, price: String?, currency: String?, source: String)] = []
            try ServerOrders.forEachFirst(in: database, where: condition, arguments) { row in
                guard user.map({ row.string(O.userID).utf8.elementsEqual($0.utf8) }) ?? true,
                      !orderIDs.contains(StoredText(row.string(O.orderID))) else { return }
                orders.append((row.int(O.ms), row.string(O.orderID), row.string(O.productID), row.optionalString(O.price),
                               row.optionalString(O.currency), row.string(O.path) + ":" + String(row.int(O.line))))
            }
            for order in orders where orderIDs.insert(StoredText(order.id)).inserted {
                var matched = "no transaction matched"
                // The match is kept on the transaction's row; an unmatched order is on none.
                try database.forEach("SELECT transaction_id, match_rule FROM int_transactions_resolved WHERE order_id = ?1", [.text(order.id)]) { row in
                    matched = "matched to \(row.string(0)) by \(row.string(1))"
                }
                add(order.ms, "order", id: order.id, product: order.product, amount: order.price, currency: order.currency, detail: matched,
                    source: order.source)
            }
        }

        mutating func orders(ofUser user: String) throws {
            try orders(where: "o.order_id IN (SELECT order_id FROM raw_server__orders WHERE user_id = ?1)", [.text(user)], user: user)
        }

        /// The orders the transactions matched.
        mutating func matchedOrders() throws {
            try orders(where: """
                o.order_id IN (SELECT order_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
                """, [idList])
        }

        mutating func transactions(buyer: String, isUser: Bool) throws {
            // Where each transaction was first seen, from its merged sightings.
            var files = try StoredLedger.sourceFiles(database)
            var firstSighting: [String: String] = [:]
            let sightings = try AppleTransactions.Cursor(database, where: "a.transaction_id IN (SELECT value FROM json_each(?1))", [idList])
            while let merged = try sightings.next() {
                if let first = merged.sources.first { firstSighting[merged.transactionID] = files.text(files.line(file: first.file, first.line)) }
            }
            try database.forEach("""
                SELECT t.purchase_ms, t.transaction_id, t.product_id, t.unit_price, t.quantity, t.currency, t.environment, t.ownership,
                       t.original_transaction_id, t.refund_ms, t.refund_amount, t.refund_type, t.expires_ms,
                       NULL, t.user_id, t.is_revenue
                FROM int_transactions_resolved t
                WHERE t.transaction_id IN (SELECT value FROM json_each(?1))
                """, [idList]) { row in
                let id = row.string(1)
                var parts = [row.optionalString(6) ?? "unknown environment"]
                if row.string(8) != id { parts.append("renews \(row.string(8))") }
                if let expires = row.optionalInt(12) { parts.append("expires \(Timestamp.iso8601(expires))") }
                if row.optionalString(7) == "FAMILY_SHARED" { parts.append("family shared") }
                if isUser, let owner = row.optionalString(14), owner != buyer { parts.append("bought by \(owner)") }
                let price = row.optionalString(3).flatMap(Amount.parse).map { $0 * row.int(4) }
                add(row.int(0), "apple purchase", id: id, product: row.string(2), amount: price.map(Money.format), currency: row.optionalString(5),
                    detail: parts.joined(separator: ", "), source: firstSighting[id] ?? "")
                if let refundMs = row.optionalInt(9) {
                    add(refundMs, "refund", id: id, product: row.string(2), amount: row.optionalString(10), currency: row.optionalString(5),
                        detail: row.optionalString(11) ?? "refund")
                }
                purchases.append(Purchase(
                    ms: row.int(0), originalID: row.string(8), product: row.string(2), buyer: row.optionalString(14), isRevenue: row.int(15) == 1,
                    currency: row.optionalString(5) ?? "", gross: price ?? .zero, refund: row.isNull(9) ? .zero : row.optionalString(10).flatMap(Amount.parse) ?? .zero,
                    isRefunded: !row.isNull(9), expiresMs: row.optionalInt(12), environment: row.optionalString(6) ?? "unknown"))
            }
        }

        /// A delivery as the history shows it.
        struct ShownDelivery {
            var ms: Int64
            var transactionID: String
            var productID: String
            var quantity: Int64
            var userID: String
            var copies: Int
            var source: String
        }

        /// The deliveries (`ServerDeliveries`) of the delivery lines `condition` selects.
        func deliveries(where condition: String, _ arguments: [SQLValue]) throws -> [ShownDelivery] {
            typealias D = StoredDeliveries.Column
            var shown: [ShownDelivery] = []
            let lines = try StoredDeliveries.Cursor(database, where: condition, arguments)
            while lines.hasDelivery {
                let row = lines.row
                var delivery = ShownDelivery(
                    ms: row.int(D.ms), transactionID: row.string(D.transactionID), productID: row.string(D.productID),
                    quantity: row.int(D.quantity), userID: row.string(D.userID), copies: 0,
                    source: row.string(D.path) + ":" + String(row.int(D.line)))
                delivery.copies = try lines.advance()
                shown.append(delivery)
            }
            return shown
        }

        /// The deliveries to `user`: of every transaction some line delivers to them, those whose first line does.
        func deliveries(to user: String) throws -> [ShownDelivery] {
            try deliveries(where: "d.transaction_id IN (SELECT transaction_id FROM raw_server__deliveries WHERE user_id = ?1)", [.text(user)])
                .filter { $0.userID == user }
        }

        /// Deliveries of the transactions (for a user, they include every transaction delivered to
        /// them, Apple's or not).
        mutating func deliveries() throws {
            for delivery in try deliveries(where: "d.transaction_id IN (SELECT value FROM json_each(?1))", [idList]) {
                var parts = ["to \(delivery.userID)"]
                if delivery.quantity != 1 { parts.append("quantity \(delivery.quantity)") }
                if delivery.copies > 1 { parts.append("\(delivery.copies) copies in the log") }
                add(delivery.ms, "delivered", id: delivery.transactionID, product: delivery.productID, detail: parts.joined(separator: ", "),
                    source: delivery.source)
            }
        }

        mutating func revocations(ofUser user: String) throws {
            try database.forEach("""
                SELECT r.ts_ms, r.transaction_id, r.user_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")) FROM raw_server__revocations r
                WHERE r.user_id = ?
                """, [.text(user)]) { add($0.int(0), "revoked", id: $0.string(1), detail: "from \($0.string(2))", source: $0.string(3)) }
        }

        mutating func revocations(ofTransactions: Void) throws {
            try database.forEach("""
                SELECT r.ts_ms, r.transaction_id, r.user_id, \(StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")) FROM raw_server__revocations r
                WHERE r.transaction_id IN (SELECT value FROM json_each(?1))
                """, [idList]) { add($0.int(0), "revoked", id: $0.string(1), detail: "from \($0.string(2))", source: $0.string(3)) }
        }

        /// Findings on the transactions, on their subscription chains, and (for a user) their own.
        mutating func findings(user: String?) throws {
            var seen = Set<String>()
            func add(_ row: Row) {
                guard seen.insert(row.string(1)).inserted else { return }
                findings.append(OpenFinding(findingID: row.string(1), kind: row.string(2), severity: row.string(3)))
                self.add(row.int(0), "FINDING \(row.string(2))", id: row.string(1), product: row.optionalString(4) ?? "",
                         amount: row.optionalString(5), currency: row.optionalString(6), detail: "\(row.string(3)): \(row.string(7))")
            }
            let columns = "event_ms, finding_id, kind, severity, product_id, amount, currency, detail"
            // `+transaction_id` keeps the planner on the chain index: chain findings have no transaction.
            try database.forEach("""
                SELECT \(columns) FROM fct_findings WHERE transaction_id IN (SELECT value FROM json_each(?1))
                UNION ALL
                SELECT \(columns) FROM fct_findings WHERE +transaction_id IS NULL AND original_transaction_id IN (
                  SELECT original_transaction_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
                """, [idList]) { add($0) }
            if let user {
                try database.forEach("SELECT \(columns) FROM fct_findings WHERE user_id = ?1", [.text(user)]) { add($0) }
            }
        }
    }

    /// A device id shows only its last four characters, as its pseudonym keeps them; an id a store
    /// kept whole (written before pseudonyms, and not yet read again by ingest) shows no more.
    static func mask(_ id: SQLValue) -> String? {
        switch id {
        case .blob(let pseudonym): DeviceIDPseudonyms.shown(pseudonym)
        case .text(let id): "…" + String(id.suffix(4))
        case .integer(let id): "…" + String(String(id).suffix(4))
        case .null: nil
        }
    }
}

extension UserHistory {
    /// `yyyy-MM-dd HH:mm:ss` of an instant in `zone`, for people.
    public static func localTime(_ ms: Int64, _ zone: Zone) -> String {
        String(Timestamp.iso8601(ms + zone.offsetMs(atUTC: ms)).prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    /// The header's lines: what the customer spent and got back, what they can use now, what is open.
    public func headerLines(_ zone: Zone) -> [String] {
        let money = { (text: String) in Money.format(Money.parse(text) ?? 0, scale: 2) + " " + reportingCurrency }
        var lines = ["\(subject) · as of \(Self.localTime(asOfMs, zone)) \(zone.identifier) · \(events.count) events"]
        var totals = "spent \(money(spent)), refunded \(money(refunded))"
        if unconverted > 0 { totals += " (\(unconverted) purchase(s) without an fx rate not counted)" }
        lines.append(totals)
        if activeSubscriptions.isEmpty {
            lines.append("active subscriptions: none")
        } else {
            lines.append("active subscriptions: " + activeSubscriptions.map { subscription in
                var text = "\(subscription.productID) until \(Self.localTime(subscription.expiresMs, zone)) (chain \(subscription.originalTransactionID)"
                if subscription.environment != "Production" { text += ", \(subscription.environment)" }
                return text + ")"
            }.joined(separator: "; "))
        }
        if findings.isEmpty {
            lines.append("open findings: none")
        } else {
            var bySeverity: [String: Int] = [:]
            for finding in findings { bySeverity[finding.severity, default: 0] += 1 }
            let counts = ["critical", "warning", "info"].compactMap { severity in bySeverity[severity].map { "\($0) \(severity)" } }
            lines.append("open findings: \(findings.count) (\(counts.joined(separator: ", "))): "
                         + findings.map { "\($0.findingID) \($0.kind)" }.joined(separator: ", "))
        }
        return lines
    }

    /// The history as a page in report.html's style, to paste into a ticket.
    public func html(_ zone: Zone) -> String {
        let header = headerLines(zone)
        var body = "<header><h1>\(HTML.escape(header[0]))</h1></header>\n<section class=\"cards\">"
        for (label, value) in [("Spent " + reportingCurrency, spent), ("Refunded " + reportingCurrency, refunded)] {
            body += "<div class=\"card\"><div class=\"label\">\(HTML.escape(label))</div>"
            body += "<div class=\"value\">\(HTML.escape(Money.format(Money.parse(value) ?? 0, scale: 2)))</div></div>"
        }
        body += "<div class=\"card\"><div class=\"label\">Active subscriptions</div><div class=\"value\">\(activeSubscriptions.count)</div></div>"
        body += "<div class=\"card\"><div class=\"label\">Open findings</div><div class=\"value\">\(findings.count)</div></div></section>\n"
        body += "<section><p>" + header.dropFirst().map(HTML.escape).joined(separator: "<br>") + "</p></section>\n"
        let rows = events.map { event -> [String] in
            // A finding's detail starts with its severity.
            let severity = event.event.hasPrefix("FINDING") ? event.detail.prefix { $0 != ":" } : ""
            return ["<span class=\"time\">\(HTML.escape(Self.localTime(event.ms, zone)))</span>",
                    severity.isEmpty ? HTML.escape(event.event) : "<span class=\"sev-\(HTML.escape(String(severity)))\">\(HTML.escape(event.event))</span>",
                    "<span class=\"id\">\(HTML.escape(event.id))</span><div class=\"sources\">\(HTML.escape(event.product))</div>",
                    HTML.escape(event.amount.isEmpty ? "" : event.amount + " " + event.currency),
                    HTML.escape(event.detail) + (event.source.isEmpty ? "" : "<div class=\"sources\">\(HTML.escape(event.source))</div>")]
        }
        body += "<section><h2>Events (times in \(HTML.escape(zone.identifier)))</h2>"
            + HTML.table(["time", "event", "id / product", "amount", "detail"], rows, numeric: [3]) + "</section>\n"
        return HTML.document(title: "iaprecon history: \(subject)", body: body)
    }
}
