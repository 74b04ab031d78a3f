/// `history`'s store in SQLite (`HistoryStore`): each query reads one index with the keys
/// gathered so far; a lookup's transactions go in as one JSON array parameter, read with
/// `json_each` into an indexed `IN`.
struct SQLiteHistoryStore: HistoryStore {
    let database: Database

    init(_ database: Database) { self.database = database }

    /// `history` opens the store read-only, so it may still lack this build's migrations: its queries are this build's,
    /// and an older schema would fail them (a column added since) or, worse, answer them wrongly (a column whose values
    /// a migration recoded). Refused, naming what upgrades it, rather than read.
    func checkSchema() throws {
        let pending = try Schema.pending(database)
        guard !pending.isEmpty else { return }
        let version = try Schema.appliedVersion(database)
        let written = version < Schema.latestVersion
            ? "it was written by an older iaprecon (schema version \(version); this one reads \(Schema.latestVersion))"
            : "it lacks migration \(pending.map { String($0.id) }.joined(separator: ", ")) of this iaprecon"
        let upgrade = RunLock.holder(databasePath: database.path).map { "a run is upgrading it now (\($0)); look again when it finishes" }
            ?? "the next 'iaprecon run' (or nightly) on it upgrades it; look again after that"
        throw StoreError(path: database.path, reason: written + " and is not upgraded yet: " + upgrade)
    }

    func isReconciled() throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('fct_findings', 'fct_user_installs')") == .integer(2)
    }

    func knows(user: String) throws -> Bool {
        try database.scalar("""
            SELECT 1 WHERE EXISTS (SELECT 1 FROM raw_server__orders WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_server__deliveries WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM int_transactions_resolved WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_registrations__users WHERE user_id = ?1)
              OR EXISTS (SELECT 1 FROM raw_apple__transactions WHERE user_id = ?1 AND user_id IS NOT NULL AND \(TransactionOrigin.sentByUserSQL))
            """, [.text(user)]) != nil
    }

    func firstRecipient(of transactionID: String) throws -> String? {
        var earliest: (ms: Int64, user: String)?
        try StoredDeliveries.withDeliveries(of: transactionID, in: database) { deliveries in
            while deliveries.hasDelivery {
                let ms = deliveries.row.int(StoredDeliveries.Column.ms)
                if ms < earliest?.ms ?? .max { earliest = (ms, deliveries.row.string(StoredDeliveries.Column.userID)) }
                _ = try deliveries.advance()
            }
        }
        return earliest?.user
    }

    func creator(of orderID: String) throws -> String? {
        var user: String?
        try ServerOrders.forEachFirst(in: database, where: "o.order_id = ?1", [.text(orderID)]) { user = $0.string(ServerOrders.Column.userID) }
        return user
    }

    func usersLogging(order orderID: String) throws -> [String] {
        var users: [String] = []
        // By the id's bytes: Swift finds ids equal that differ only in how an accent is encoded.
        var seen = Set<StoredText>()
        try database.forEach("""
            SELECT o.user_id FROM raw_server__orders o JOIN files f USING (file_id) WHERE o.order_id = ?1 ORDER BY f.path, o.line, o.item
            """, [.text(orderID)]) { row in
            let user = row.string(0)
            if seen.insert(StoredText(user)).inserted { users.append(user) }
        }
        return users
    }

    func chain(of transactionID: String) throws -> String? {
        var chain: String?
        try database.forEach("SELECT original_transaction_id FROM int_transactions_resolved WHERE transaction_id = ?1", [.text(transactionID)]) {
            chain = $0.string(0)
        }
        return chain
    }

    /// Every one a sighting names the chain of, and the one of its own id, those whose merge names it.
    func transactions(ofChain originalTransactionID: String) throws -> [String] {
        try mergedTransactions(where: """
            a.transaction_id IN (
              SELECT transaction_id FROM raw_apple__transactions WHERE original_transaction_id = ?1 AND original_transaction_id != transaction_id)
            OR a.transaction_id = ?1
            """, [.text(originalTransactionID)]) { $0.originalTransactionID == originalTransactionID }
    }

    /// Apple sends tokens in lower case and the store keeps them as sent: the token is looked up as
    /// given, in lower case and in capitals, each through the token index.
    func transactions(withToken appAccountToken: String) throws -> [String] {
        let token = appAccountToken.lowercased()
        return try mergedTransactions(where: """
            a.transaction_id IN (
              SELECT transaction_id FROM raw_apple__transactions
              WHERE app_account_token IN (?1, lower(?1), upper(?1)) AND app_account_token IS NOT NULL)
            """, [.text(appAccountToken)]) { $0.appAccountToken?.lowercased() == token }
    }

    /// Rejected lines are kept apart from what was read and have no index by what they name: their
    /// texts are searched, which stays fast because a store holds few of them beside its accepted lines.
    func rejectedLines(naming keys: [String]) throws -> [HistoryFacts.RejectedInput] {
        let keys = keys.filter { !$0.isEmpty }
        guard !keys.isEmpty else { return [] }
        var lines: [HistoryFacts.RejectedInput] = []
        try database.forEach("""
            SELECT f.path, r.line, r.reason, r.text FROM rejects r JOIN files f USING (file_id)
            WHERE EXISTS (SELECT 1 FROM json_each(?1) k WHERE instr(r.text, k.value) > 0)
            ORDER BY f.path, r.line
            """, [.textList(keys)]) { row in
            let text = row.string(3)
            guard keys.contains(where: { Self.holdsWhole($0, in: text) }) else { return }
            lines.append(HistoryFacts.RejectedInput(source: row.string(0) + ":" + String(row.int(1)), reason: row.string(2)))
        }
        return lines
    }

    /// Whether `text` holds `id` as a whole value: a JSON string (`"u_1007"`), a JSON number, or a
    /// CSV field, never part of one: `u_10` is not in `"u_1007"`, nor `0` in `"0,99"`.
    static func holdsWhole(_ id: String, in text: String) -> Bool {
        let (id, text) = (Array(id.utf8), Array(text.utf8))
        guard !id.isEmpty, id.count <= text.count else { return false }
        let quote = UInt8(ascii: "\"")
        let opens: Set<UInt8> = [quote, UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "[")]
        let closes: Set<UInt8> = [quote, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r")]
        for start in 0...(text.count - id.count) where text[start] == id[0] && text[start..<(start + id.count)].elementsEqual(id) {
            let end = start + id.count
            let before = start == 0 ? nil : text[start - 1], after = end == text.count ? nil : text[end]
            guard before.map(opens.contains) ?? true, after.map(closes.contains) ?? true else { continue }
            // A quoted value ends at its closing quote.
            if (before == quote) == (after == quote) { return true }
        }
        return false
    }

    /// The ids of the transactions merged from the sightings `condition` selects (as `a`, whole
    /// transactions) that `include` keeps, by purchase time, then id.
    private func mergedTransactions(where condition: String, _ arguments: [SQLValue],
                                           including include: (AppleTransactions.Merged) -> Bool) throws -> [String] {
        var found: [(purchaseMs: Int64, id: String)] = []
        let sightings = try AppleTransactions.Cursor(database, where: condition, arguments)
        while let merged = try sightings.next() {
            if include(merged) { found.append((merged.purchaseMs, merged.transactionID)) }
        }
        return found.sorted { $0.purchaseMs != $1.purchaseMs ? $0.purchaseMs < $1.purchaseMs : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            .map(\.id)
    }

    /// Sign-ups keep device ids as pseudonyms under the store's key (`DeviceIDPseudonyms`): the id's own
    /// are searched for. Sign-ups have no index by device id (raw tables keep few, for ingest's sake): only
    /// a key no lookup found, shaped as a device id, is searched for so, in the columns of its shape.
    func users(withDeviceID deviceID: String, shaped shape: DeviceIDShape) throws -> [(userID: String, kind: String)] {
        let condition = switch shape {
        case .uuid: "r.idfv IN (?1, ?2) OR r.idfa IN (?1, ?2)"
        case .appsFlyerID: "r.appsflyer_id IN (?1, ?2)"
        }
        // Apple writes IDFVs and IDFAs in capitals.
        let ids = [deviceID, shape == .uuid ? deviceID.uppercased() : deviceID]
        guard let key = StoredDeviceIDKey.bytes(ofHex: try StoredMMPSegments.deviceIDKey(database)) else { return [] }
        let pseudonyms = DeviceIDPseudonyms(key: key)
        var found: [(userID: String, kind: String)] = []
        var seen = Set<StoredText>()
        try database.forEach("""
            SELECT r.user_id, CASE WHEN r.idfv IN (?1, ?2) THEN 'IDFV' WHEN r.idfa IN (?1, ?2) THEN 'IDFA' ELSE 'AppsFlyer ID' END
            FROM raw_registrations__users r WHERE \(condition) ORDER BY r.ts_ms
            """, ids.map { .blob(pseudonyms.pseudonym($0)) }) { row in
            let user = row.string(0)
            if seen.insert(StoredText(user)).inserted { found.append((user, row.string(1))) }
        }
        return found
    }

    /// By the sign-ups, searched (`NOCASE` folds ASCII letters only), as `users(withDeviceID:)` searches them.
    func users(differingOnlyInCaseFrom user: String) throws -> [String] {
        var users: [String] = []
        try database.forEach("""
            SELECT DISTINCT user_id FROM raw_registrations__users WHERE user_id = ?1 COLLATE NOCASE AND user_id != ?1 ORDER BY user_id
            """, [.text(user)]) { users.append($0.string(0)) }
        return users
    }

    func resolution(of transactionID: String) throws -> (resolved: Bool, user: String?) {
        try StoredReportRows.resolution(of: transactionID, in: database)
    }

    func joinedAsOfMs() throws -> Int64? {
        try StoredJoinResults.settings(database)?.asOfMs
    }

    func fxRates() throws -> [FXRow] {
        try StoredReportRows.fxRates(database)
    }

    func pendingWork() throws -> PendingWork? {
        if let holder = RunLock.holder(databasePath: database.path) { return .runUnderWay(holder: holder) }
        if try StoredJoinResults.exist(database), try !StoredJoinResults.areCurrent(database) { return .upgradePending }
        if try ChangedKeys.isFullRebuildPending(database) { return .fullRebuildPending }
        if try !ChangedKeys.isEmpty(database) { return .inputNotReconciled }
        return nil
    }

    func transactionIDs(resolvedTo user: String) throws -> [String] {
        var values: [String] = []
        try database.forEach("SELECT transaction_id FROM int_transactions_resolved WHERE user_id = ?1", [.text(user)]) { values.append($0.string(0)) }
        return values
    }

    func registrations(of user: String) throws -> [HistoryFacts.Registration] {
        var registrations: [HistoryFacts.Registration] = []
        typealias Column = RegistrationColumn
        try database.forEach("SELECT \(Column.selectList) FROM raw_registrations__users r WHERE r.user_id = ?", [.text(user)]) { row in
            registrations.append(HistoryFacts.Registration(ms: row.int(Column.ms), method: row.optionalString(Column.method),
                                                           country: row.optionalString(Column.country), idfv: row.value(Column.idfv.rawValue),
                                                           idfa: row.value(Column.idfa.rawValue),
                                                           appsflyerID: row.value(Column.appsflyerID.rawValue), source: row.string(Column.source)))
        }
        return registrations
    }

    /// What `registrations(of:)` selects of a sign-up (as `r`).
    private enum RegistrationColumn: Int, SelectedColumn {
        case ms, method, country, idfv, idfa, appsflyerID, source
        var sql: String {
            ["r.ts_ms", "r.method", "r.country", "r.idfv", "r.idfa", "r.appsflyer_id", StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")][rawValue]
        }
    }

    /// The install the report joined `user` to (CONTRACT.md §1.5); none when it joined them to none.
    func installs(of user: String) throws -> [HistoryFacts.Install] {
        var installs: [HistoryFacts.Install] = []
        typealias Column = InstallColumn
        try database.forEach("""
            SELECT \(Column.selectList) FROM fct_user_installs i WHERE i.user_id = ? AND i.install_ms IS NOT NULL
            """, [.text(user)]) { row in
            installs.append(HistoryFacts.Install(ms: row.int(Column.ms), mediaSource: row.optionalString(Column.mediaSource),
                                                 campaign: row.optionalString(Column.campaign), matchedBy: row.string(Column.matchedBy),
                                                 source: row.optionalString(Column.source)))
        }
        return installs
    }

    /// What `installs(of:)` selects of a user's install (as `i`).
    private enum InstallColumn: Int, SelectedColumn {
        case ms, mediaSource, campaign, matchedBy, source
        var sql: String {
            ["i.install_ms", "i.media_source", "i.campaign", "i.matched_by", StoredLedger.pathAndLineSQL(file: "i.file_id", line: "i.line")][rawValue]
        }
    }

    /// The orders (`ServerOrders`) of the order lines `condition` selects, each once, and what the
    /// join matched each to, handed `atOnce` at a time; with `user`, only that user's orders, among
    /// them the ones whose id another user logged first (`loggedFirstBy`), as this user's line has it.
    private func forEachOrder(where condition: String, _ arguments: [SQLValue], user: String? = nil, atOnce: Int,
                              _ body: (HistoryFacts.Order) throws -> Void) throws {
        typealias O = ServerOrders.Column
        var orders: [HistoryFacts.Order] = []
        var seen = Set<StoredText>()
        var loggedFirstByOthers: [(orderID: String, userID: String, source: String)] = []
        // The match is kept on the transaction's row; an unmatched order is on none. Read in one
        // statement for the orders at hand, by the id's bytes as `seen` (Swift finds ids equal that differ
        // only in how an accent is encoded).
        func hand() throws {
            var matches: [StoredText: (transactionID: String, rule: String)] = [:]
            try database.forEach("""
                SELECT order_id, transaction_id, match_rule FROM int_transactions_resolved WHERE order_id IN (SELECT value FROM json_each(?1))
                """, [.textList(orders.map(\.orderID))]) { row in
                matches[StoredText(row.string(0))] = (transactionID: row.string(1), rule: row.string(2))
            }
            for var order in orders {
                order.match = matches[StoredText(order.orderID)]
                try body(order)
            }
            orders.removeAll(keepingCapacity: true)
        }
        func order(_ row: Row) -> HistoryFacts.Order {
            HistoryFacts.Order(ms: row.int(O.ms), orderID: row.string(O.orderID), productID: row.string(O.productID),
                               price: row.optionalString(O.price), currency: row.optionalString(O.currency),
                               source: row.string(O.path) + ":" + String(row.int(O.line)))
        }
        try ServerOrders.forEachFirst(in: database, where: condition, arguments) { row in
            guard seen.insert(StoredText(row.string(O.orderID))).inserted else { return }
            if let user, !row.string(O.userID).utf8.elementsEqual(user.utf8) {
                loggedFirstByOthers.append((row.string(O.orderID), row.string(O.userID), row.string(O.path) + ":" + String(row.int(O.line))))
                return
            }
            orders.append(order(row))
            if orders.count >= atOnce { try hand() }
        }
        if !orders.isEmpty { try hand() }
        guard let user else { return }
        // The user's own first line of each order id another user logged first: never shown
        // matched to that user's transaction.
        for other in loggedFirstByOthers {
            try database.forEach("""
                SELECT \(O.selectList) FROM raw_server__orders o JOIN files f USING (file_id)
                WHERE o.order_id = ?1 AND o.user_id = ?2 ORDER BY f.path, o.line, o.item LIMIT 1
                """, [.text(other.orderID), .text(user)]) { row in
                var own = order(row)
                own.loggedFirstBy = (other.userID, other.source)
                try body(own)
            }
        }
    }

    func forEachOrder(ofUser user: String, atOnce: Int, _ body: (HistoryFacts.Order) throws -> Void) throws {
        try forEachOrder(where: "o.order_id IN (SELECT order_id FROM raw_server__orders WHERE user_id = ?1)", [.text(user)], user: user,
                         atOnce: atOnce, body)
    }

    func matchedOrders(of transactionIDs: [String]) throws -> [HistoryFacts.Order] {
        var orders: [HistoryFacts.Order] = []
        try forEachOrder(where: """
            o.order_id IN (SELECT order_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1)))
            """, [.textList(transactionIDs)], atOnce: .max) { orders.append($0) }
        return orders
    }

    func transactions(_ transactionIDs: [String]) throws -> [HistoryFacts.Transaction] {
        let idList = SQLValue.textList(transactionIDs)
        var files = try StoredLedger.sourceFiles(database)
        let firstSighting = try firstSightings(idList, &files)
        let refundSource = try refundSources(idList, &files)
        var transactions: [HistoryFacts.Transaction] = []
        typealias Column = TransactionColumn
        try database.forEach("""
            SELECT \(Column.selectList) FROM int_transactions_resolved t WHERE t.transaction_id IN (SELECT value FROM json_each(?1))
            """, [idList]) { row in
            let id = row.string(Column.transactionID)
            transactions.append(HistoryFacts.Transaction(
                purchaseMs: row.int(Column.purchaseMs), transactionID: id, originalTransactionID: row.string(Column.originalTransactionID),
                productID: row.string(Column.productID), unitPrice: row.optionalString(Column.unitPrice), quantity: row.int(Column.quantity),
                currency: row.optionalString(Column.currency), environment: row.optionalString(Column.environment),
                ownership: row.optionalString(Column.ownership), expiresMs: row.optionalInt(Column.expiresMs),
                refundMs: row.optionalInt(Column.refundMs), refundAmount: row.optionalString(Column.refundAmount),
                refundType: row.optionalString(Column.refundType), userID: row.optionalString(Column.userID),
                isRevenue: row.int(Column.isRevenue) == 1, firstSighting: firstSighting[id], refundSource: refundSource[id]))
        }
        return transactions
    }

    /// Where each transaction was first verified, as `path:line`: of its sightings that verify the
    /// purchase itself, the first in file order (files in path order, then line, then item), as the
    /// merge takes them (`AppleTransactions`); only when it has none, its first sighting. A
    /// notification about a refund (`refundNoticeSQL`) carries the purchase too, and its file can
    /// sort first (`notifications/` before `receipts/`), but it tells of the refund, not the
    /// purchase. Only the sightings' places are read, not the sightings merged: a receipt a client
    /// replayed thousands of times is thousands of sightings of each of its transactions.
    private func firstSightings(_ idList: SQLValue, _ files: inout SourceFiles) throws -> [String: String] {
        var first: [String: (refundNotice: Bool, place: Int32, line: Int64, item: Int64, file: Int64)] = [:]
        try database.forEach("""
            SELECT transaction_id, file_id, line, item, \(Self.refundNoticeSQL("t")) FROM raw_apple__transactions t
            WHERE transaction_id IN (SELECT value FROM json_each(?1))
            """, [idList]) { row in
            let file = row.int(1)
            // A file the ledger no longer has is no sighting, as where the merge joins the files.
            guard let place = files.place(of: file) else { return }
            let sighting = (refundNotice: row.int(4) == 1, place: place, line: row.int(2), item: row.int(3), file: file)
            let id = row.string(0)
            if let known = first[id],
               (known.refundNotice ? 1 : 0, known.place, known.line, known.item)
                <= (sighting.refundNotice ? 1 : 0, sighting.place, sighting.line, sighting.item) { return }
            first[id] = sighting
        }
        return first.mapValues { files.text(files.line(file: $0.file, $0.line)) }
    }

    /// Whether a sighting (as `table`) came in a notification about a refund: one telling of it
    /// (with its revocation, or a V1 `CANCEL`), reversing or declining it, or asking about it.
    private static func refundNoticeSQL(_ table: String) -> String {
        let codes = AppleNotificationType.codes
        let types = ["REFUND", "REVOKE", "CANCEL", "REFUND_REVERSED", "REFUND_DECLINED", "CONSUMPTION_REQUEST"]
        // A type is kept coded, or as text by an older store (`StoredReportRows`).
        let listed = (types.map(codes.sqlLiteral) + types.map { "'\($0)'" }).joined(separator: ", ")
        return "(\(table).origin = \(TransactionOrigin.notification.code) "
            + "AND (\(table).revocation_ms IS NOT NULL OR \(table).notification_type IN (\(listed))))"
    }

    /// The line that told each transaction's standing refund, as `path:line`: the line the join
    /// takes (`EffectiveRefund.resolve`), which `findings.csv` cites too. Of its sightings with the
    /// refund's time, one that says the refund's kind (Apple's notification) before one that does
    /// not (a receipt listing the refunded purchase), then the last in file order.
    private func refundSources(_ idList: SQLValue, _ files: inout SourceFiles) throws -> [String: String] {
        let reversal = AppleNotificationType.codes.sqlLiteral("REFUND_REVERSED")
        var taken: [String: (typed: Bool, place: Int32, line: Int64, file: Int64)] = [:]
        try database.forEach("""
            SELECT t.transaction_id, t.file_id, t.line, t.item, t.revocation_type IS NULL
            FROM raw_apple__transactions t JOIN int_transactions_resolved r ON r.transaction_id = t.transaction_id
            WHERE t.transaction_id IN (SELECT value FROM json_each(?1)) AND r.refund_ms IS NOT NULL AND t.revocation_ms = r.refund_ms
              AND t.notification_type IS NOT \(reversal) AND t.notification_type IS NOT 'REFUND_REVERSED'
            """, [idList]) { row in
            let file = row.int(1)
            guard let place = files.place(of: file) else { return }
            let sighting = (typed: row.int(4) == 0, place: place, line: row.int(2), file: file)
            let id = row.string(0)
            if let known = taken[id],
               (known.typed ? 1 : 0, known.place, known.line) >= (sighting.typed ? 1 : 0, sighting.place, sighting.line) {
                return
            }
            taken[id] = sighting
        }
        return taken.mapValues { files.text(files.line(file: $0.file, $0.line)) }
    }

    /// What `transactions(_:)` selects of a resolved transaction (as `t`).
    private enum TransactionColumn: Int, SelectedColumn {
        case purchaseMs, transactionID, productID, unitPrice, quantity, currency, environment, ownership, originalTransactionID
        case refundMs, refundAmount, refundType, expiresMs, userID, isRevenue
        var sql: String {
            "t." + [
                "purchase_ms", "transaction_id", "product_id", "unit_price", "quantity", "currency", "environment", "ownership",
                "original_transaction_id", "refund_ms", "refund_amount", "refund_type", "expires_ms", "user_id", "is_revenue",
            ][rawValue]
        }
    }

    /// The deliveries (`ServerDeliveries`) of the delivery lines `condition` selects.
    private func deliveries(where condition: String, _ arguments: [SQLValue]) throws -> [HistoryFacts.Delivery] {
        var deliveries: [HistoryFacts.Delivery] = []
        try forEachDelivery(where: condition, arguments) { deliveries.append($0) }
        return deliveries
    }

    private func forEachDelivery(where condition: String, _ arguments: [SQLValue], _ body: (HistoryFacts.Delivery) throws -> Void) throws {
        typealias D = StoredDeliveries.Column
        let lines = try StoredDeliveries.Cursor(database, where: condition, arguments)
        while lines.hasDelivery {
            let row = lines.row
            var delivery = HistoryFacts.Delivery(
                ms: row.int(D.ms), transactionID: row.string(D.transactionID), productID: row.string(D.productID),
                quantity: row.int(D.quantity), userID: row.string(D.userID), copies: 0,
                path: row.string(D.path), line: row.int(D.line))
            delivery.copies = try lines.advance()
            try body(delivery)
        }
    }

    func transactionIDs(deliveredTo user: String) throws -> [String] {
        var ids: [String] = []
        try forEachDelivery(where: "d.transaction_id IN (SELECT transaction_id FROM raw_server__deliveries WHERE user_id = ?1)", [.text(user)]) {
            if $0.userID == user { ids.append($0.transactionID) }
        }
        return ids
    }

    func deliveries(of transactionIDs: [String]) throws -> [HistoryFacts.Delivery] {
        try deliveries(where: "d.transaction_id IN (SELECT value FROM json_each(?1))", [.textList(transactionIDs)])
    }

    /// The revocation lines `condition` selects (on the lines as `r`).
    private func revocations(where condition: String, _ arguments: [SQLValue]) throws -> [HistoryFacts.Revocation] {
        var revocations: [HistoryFacts.Revocation] = []
        typealias Column = RevocationColumn
        try database.forEach("SELECT \(Column.selectList) FROM raw_server__revocations r WHERE \(condition)", arguments) { row in
            revocations.append(HistoryFacts.Revocation(ms: row.int(Column.ms), transactionID: row.string(Column.transactionID),
                                                       userID: row.string(Column.userID), source: row.string(Column.source)))
        }
        return revocations
    }

    /// What `revocations(where:)` selects of a revocation line (as `r`).
    private enum RevocationColumn: Int, SelectedColumn {
        case ms, transactionID, userID, source
        var sql: String { ["r.ts_ms", "r.transaction_id", "r.user_id", StoredLedger.pathAndLineSQL(file: "r.file_id", line: "r.line")][rawValue] }
    }

    /// Only the sightings of transactions Apple reversed a refund of are read, and each notice is
    /// kept once as it is read: a receipt a client replayed thousands of times tells of each refund
    /// thousands of times.
    func reversedRefunds(of transactionIDs: [String]) throws -> [HistoryFacts.RefundNotice] {
        let reversal = AppleNotificationType.codes.stored("REFUND_REVERSED")
        struct Told: Hashable {
            var transactionID: String
            var isReversal: Bool
            var ms: Int64
        }
        var notices: [HistoryFacts.RefundNotice] = []
        var told = Set<Told>()
        // A notification's type is kept coded, or as text by an older store (`StoredReportRows`).
        try database.forEach("""
            SELECT t.transaction_id, t.notification_type IN (?2, 'REFUND_REVERSED'), coalesce(t.event_ms, t.revocation_ms), t.revocation_ms,
                   t.revocation_type, \(StoredLedger.pathAndLineSQL(file: "t.file_id", line: "t.line"))
            FROM raw_apple__transactions t
            WHERE t.transaction_id IN (
                SELECT transaction_id FROM raw_apple__transactions
                WHERE transaction_id IN (SELECT value FROM json_each(?1)) AND notification_type IN (?2, 'REFUND_REVERSED')
                  AND coalesce(event_ms, revocation_ms) IS NOT NULL)
              AND (t.revocation_ms IS NOT NULL OR t.notification_type IN (?2, 'REFUND_REVERSED'))
            ORDER BY t.file_id, t.line, t.item
            """, [.textList(transactionIDs), reversal]) { row in
            let isReversal = row.int(1) == 1
            // As the merge reads a sighting: a reversal at its own time, a refund at its revocation's.
            guard let ms = isReversal ? row.optionalInt(2) : row.optionalInt(3) else { return }
            let transactionID = row.string(0)
            guard told.insert(Told(transactionID: transactionID, isReversal: isReversal, ms: ms)).inserted else { return }
            notices.append(HistoryFacts.RefundNotice(transactionID: transactionID, isReversal: isReversal, ms: ms,
                                                     revocationType: isReversal ? nil : row.optionalString(4), source: row.string(5)))
        }
        return notices
    }

    func revocations(ofUser user: String) throws -> [HistoryFacts.Revocation] {
        try revocations(where: "r.user_id = ?1", [.text(user)])
    }

    func revocations(of transactionIDs: [String]) throws -> [HistoryFacts.Revocation] {
        try revocations(where: "r.transaction_id IN (SELECT value FROM json_each(?1))", [.textList(transactionIDs)])
    }

    /// The findings on the transactions, and those about the chains they belong to: every chain a
    /// finding is about (`fct_finding_chains`). A finding may come twice (a shared subscription's
    /// names a transaction of its chain); `UserHistory` lists each once.
    func findings(of transactionIDs: [String]) throws -> [HistoryFacts.Finding] {
        let columns = FindingColumn.selectList
        let chains = "SELECT original_transaction_id FROM int_transactions_resolved WHERE transaction_id IN (SELECT value FROM json_each(?1))"
        guard try hasFindingChains() else {
            // Results an older iaprecon wrote (the caveat says so): its chain findings named no
            // transaction, and each the one chain it kept.
            return try findings("""
                SELECT \(columns) FROM fct_findings WHERE transaction_id IN (SELECT value FROM json_each(?1))
                UNION ALL
                SELECT \(columns) FROM fct_findings WHERE +transaction_id IS NULL AND original_transaction_id IN (\(chains))
                """, [.textList(transactionIDs)])
        }
        return try findings("""
            SELECT \(columns) FROM fct_findings WHERE transaction_id IN (SELECT value FROM json_each(?1))
            UNION ALL
            SELECT \(columns) FROM fct_findings WHERE finding_id IN (
              SELECT finding_id FROM fct_finding_chains WHERE original_transaction_id IN (\(chains)))
            """, [.textList(transactionIDs)])
    }

    /// Whether the store's results link findings to their chains: an older iaprecon's do not,
    /// until the next join rebuilds them.
    private func hasFindingChains() throws -> Bool {
        try database.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'fct_finding_chains'") == .integer(1)
    }

    func findings(ofUser user: String) throws -> [HistoryFacts.Finding] {
        try findings("SELECT \(FindingColumn.selectList) FROM fct_findings WHERE user_id = ?1", [.text(user)])
    }

    private func findings(_ sql: String, _ arguments: [SQLValue]) throws -> [HistoryFacts.Finding] {
        var findings: [HistoryFacts.Finding] = []
        typealias Column = FindingColumn
        try database.forEach(sql, arguments) { row in
            findings.append(HistoryFacts.Finding(
                eventMs: row.int(Column.eventMs), findingID: row.string(Column.findingID), kind: row.string(Column.kind),
                severity: row.string(Column.severity), productID: row.optionalString(Column.productID),
                amount: row.optionalString(Column.amount), currency: row.optionalString(Column.currency), detail: row.string(Column.detail),
                userID: row.optionalString(Column.userID)))
        }
        return findings
    }

    /// What `findings(of:)` and `findings(ofUser:)` select of a finding.
    private enum FindingColumn: Int, SelectedColumn {
        case eventMs, findingID, kind, severity, productID, amount, currency, detail, userID
        var sql: String { ["event_ms", "finding_id", "kind", "severity", "product_id", "amount", "currency", "detail", "user_id"][rawValue] }
    }
}
