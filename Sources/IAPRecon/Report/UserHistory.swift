import Foundation

/// One user's whole story in time order, for support (`iaprecon history`).
///
/// Answers from indexed `stg_*`, `int_*` and `fct_*` tables only, so a lookup
/// stays fast on a store of millions of transactions. Never shows receipt
/// blobs or JWS strings, and masks IDFAs.
public struct UserHistory: Sendable {
    public struct Event: Sendable, Equatable {
        public var ms: Int64
        public var event: String
        public var id: String
        public var product: String
        public var amount: String
        public var detail: String
        public var source: String
    }

    public var userID: String
    public var events: [Event]
    public var findingIDs: [String]
    /// Why this history may be incomplete right now (a run updating the store, a rebuild that did
    /// not finish, input not yet reconciled); nil when the store is settled.
    public var caveat: String?

    /// Which user a lookup names.
    public enum Lookup: Sendable {
        case user(String)
        case transaction(String)
        case order(String)
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
        if try database.scalar("SELECT count(*) FROM dirty_keys").integerValue > 0 {
            return "input ingested since the last reconciliation is not in this history yet; 'iaprecon run' brings it in"
        }
        return nil
    }

    public static func load(_ database: Database, _ lookup: Lookup) throws -> UserHistory {
        let reconciled = try database.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('fct_findings', 'fct_user_installs')")
        guard reconciled == .integer(2) else {
            throw NotFound(what: "reconciliation", hint: "run 'iaprecon run' (or the join and report stages) on it first")
        }
        let userID: String
        switch lookup {
        case .user(let id):
            userID = id
            let known = try database.scalar("""
                SELECT 1 WHERE EXISTS (SELECT 1 FROM stg_server__orders WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM stg_server__deliveries WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM int_transactions_resolved WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM raw_registrations__users WHERE user_id = ?1)
                  OR EXISTS (SELECT 1 FROM stg_receipts__senders WHERE user_id = ?1)
                """, [.text(id)])
            if known == nil { throw NotFound(what: "user '\(id)'") }
        case .transaction(let id):
            var found: String?
            try database.forEach("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = ?", [.text(id)]) { found = $0.optionalString(0) }
            if found == nil {
                try database.forEach("SELECT user_id FROM stg_server__deliveries WHERE transaction_id = ? ORDER BY ts_ms LIMIT 1", [.text(id)]) {
                    found = $0.string(0)
                }
            }
            guard let found else { throw NotFound(what: "transaction '\(id)'") }
            userID = found
        case .order(let id):
            var found: String?
            try database.forEach("SELECT user_id FROM stg_server__orders WHERE order_id = ?", [.text(id)]) { found = $0.string(0) }
            guard let found else { throw NotFound(what: "order '\(id)'") }
            userID = found
        }
        var events: [Event] = []
        let user: [SQLValue] = [.text(userID)]
        try database.forEach("""
            SELECT r.ts_ms, r.method, r.country, r.idfa, r.appsflyer_id, f.path || ':' || r.line
            FROM raw_registrations__users r JOIN files f USING (file_id) WHERE r.user_id = ?
            """, user) { row in
            var parts = ["method " + (row.optionalString(1) ?? "?")]
            if let country = row.optionalString(2) { parts.append("country " + country) }
            if let idfa = row.optionalString(3) { parts.append("idfa " + mask(idfa)) }
            if let appsflyer = row.optionalString(4) { parts.append("appsflyer " + mask(appsflyer)) }
            events.append(Event(ms: row.int(0), event: "registered", id: userID, product: "", amount: "", detail: parts.joined(separator: ", "),
                                source: row.string(5)))
        }
        // The install the report joined this user to (CONTRACT.md §1.5), with the key it was joined by.
        try database.forEach("""
            SELECT install_ms, media_source, campaign, matched_by, source FROM fct_user_installs
            WHERE user_id = ? AND install_ms IS NOT NULL
            """, user) { row in
            var detail = "media source \(row.optionalString(1) ?? "organic")"
            if let campaign = row.optionalString(2), !campaign.isEmpty { detail += ", campaign \(campaign)" }
            detail += ", joined by \(row.string(3))"
            events.append(Event(ms: row.int(0), event: "install", id: "", product: "", amount: "", detail: detail,
                                source: row.optionalString(4) ?? ""))
        }
        try database.forEach("""
            SELECT o.ts_ms, o.order_id, o.product_id, o.price, o.currency, m.transaction_id, m.match_rule, o.source
            FROM stg_server__orders o LEFT JOIN int_orders_matched m USING (order_id) WHERE o.user_id = ?
            """, user) { row in
            let matched = row.optionalString(5).map { "matched to \($0) by \(row.string(6))" } ?? "no transaction matched"
            events.append(Event(ms: row.int(0), event: "order", id: row.string(1), product: row.string(2),
                                amount: amount(row.optionalString(3), row.optionalString(4)), detail: matched, source: row.string(7)))
        }
        var transactionIDs: [String] = []
        try database.forEach("""
            SELECT t.purchase_ms, t.transaction_id, t.product_id, t.unit_price, t.quantity, t.currency, t.environment, t.ownership,
                   t.original_transaction_id, t.refund_ms, t.refund_amount, t.refund_type, t.expires_ms, s.sources
            FROM int_transactions_resolved t JOIN stg_apple__transactions s USING (transaction_id)
            WHERE t.user_id = ?1 OR t.transaction_id IN (SELECT transaction_id FROM stg_server__deliveries WHERE user_id = ?1)
            """, user) { row in
            let id = row.string(1)
            transactionIDs.append(id)
            var parts = [row.optionalString(6) ?? "unknown environment"]
            if row.string(8) != id { parts.append("renews \(row.string(8))") }
            if let expires = row.optionalInt(12) { parts.append("expires \(Timestamp.iso8601(expires))") }
            if row.optionalString(7) == "FAMILY_SHARED" { parts.append("family shared") }
            let price = row.optionalString(3).flatMap(Money.parse).map { Money.format($0 * Decimal(row.int(4))) }
            events.append(Event(ms: row.int(0), event: "apple purchase", id: id, product: row.string(2),
                                amount: amount(price, row.optionalString(5)), detail: parts.joined(separator: ", "),
                                source: String(row.string(13).split(separator: ";").first ?? "")))
            if let refundMs = row.optionalInt(9) {
                events.append(Event(ms: refundMs, event: "refund", id: id, product: row.string(2),
                                    amount: amount(row.optionalString(10), row.optionalString(5)),
                                    detail: row.optionalString(11) ?? "refund", source: ""))
            }
        }
        try database.forEach("""
            SELECT ts_ms, transaction_id, product_id, quantity, user_id, delivery_id, copies, source FROM stg_server__deliveries
            WHERE user_id = ?1 OR transaction_id IN (SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1)
            """, user) { row in
            var parts = ["to \(row.string(4))"]
            if row.int(3) != 1 { parts.append("quantity \(row.int(3))") }
            if row.int(6) > 1 { parts.append("\(row.int(6)) copies in the log") }
            events.append(Event(ms: row.int(0), event: "delivered", id: row.string(1), product: row.string(2), amount: "",
                                detail: parts.joined(separator: ", "), source: row.string(7)))
        }
        try database.forEach("""
            SELECT r.ts_ms, r.transaction_id, r.user_id, f.path || ':' || r.line FROM raw_server__revocations r JOIN files f USING (file_id)
            WHERE r.user_id = ?
            """, user) { row in
            events.append(Event(ms: row.int(0), event: "revoked", id: row.string(1), product: "", amount: "",
                                detail: "from \(row.string(2))", source: row.string(3)))
        }
        var findingIDs: [String] = []
        try database.forEach("""
            SELECT event_ms, finding_id, kind, severity, product_id, amount, currency, detail FROM fct_findings
            WHERE user_id = ?1 OR transaction_id IN (SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1)
            """, user) { row in
            findingIDs.append(row.string(1))
            events.append(Event(ms: row.int(0), event: "FINDING \(row.string(2))", id: row.string(1), product: row.optionalString(4) ?? "",
                                amount: amount(row.optionalString(5), row.optionalString(6)),
                                detail: "\(row.string(3)): \(row.string(7))", source: ""))
        }
        events.sort { ($0.ms, $0.event.hasPrefix("FINDING") ? 1 : 0, $0.event, $0.id) < ($1.ms, $1.event.hasPrefix("FINDING") ? 1 : 0, $1.event, $1.id) }
        return UserHistory(userID: userID, events: events, findingIDs: findingIDs.sorted(), caveat: try caveat(database))
    }

    private static func amount(_ value: String?, _ currency: String?) -> String {
        guard let value else { return "" }
        return currency.map { "\(value) \($0)" } ?? value
    }

    /// A device id shows only its last four characters: what follows the `…` of the pseudonym the store keeps.
    static func mask(_ id: String) -> String {
        if let marker = id.lastIndex(of: "…") { return String(id[marker...]) }
        return "…" + String(id.suffix(4))
    }
}
