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
/// subscription; each chain of a user paying from several Apple IDs).
public struct UserHistory: Sendable {
    public struct Event: Sendable, Equatable {
        public var ms: Int64
        public var event: String
        public var id: String
        public var product: String
        /// Exact decimal text in `currency`, or empty.
        public var amount: String
        public var currency: String
        /// For scripts (json, csv): its times in ISO 8601 UTC, as the event's own time.
        public var detail: String
        /// For people (the table, the page): its times in the history's zone, as the time column.
        public var shownDetail: String
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

    /// An input line ingest rejected that names the customer, and why it was rejected.
    public struct RejectedInput: Sendable, Equatable {
        /// `path:line`.
        public var source: String
        public var reason: String

        init(_ line: HistoryFacts.RejectedInput) {
            source = line.source
            reason = line.reason
        }
    }

    /// Which events of a story are shown (`history --since`, `--limit`): a QA or reseller account's
    /// story runs to hundreds of thousands of events, of which support reads the latest.
    public struct Window: Sendable, Equatable {
        /// Events before this instant are not shown.
        public var sinceMs: Int64?
        /// Of the rest, only the latest this many are shown.
        public var limit: Int?

        public init(sinceMs: Int64? = nil, limit: Int? = nil) {
            self.sinceMs = sinceMs
            self.limit = limit
        }

        var isWhole: Bool { sinceMs == nil && limit == nil }
    }

    /// What the history is of, in words: `user u_1005`, `transaction 2000000630024936`, ...
    public var subject: String
    /// What the header says of the key before the totals: the other users a shared key names.
    public var notes: [String]
    /// The user the lookup resolved to (for a transaction, the one who bought it).
    public var userID: String
    /// The events shown: those of the story `window` keeps.
    public var events: HistoryEvents
    public var window = Window()
    /// The events of the story before `window.sinceMs`, and those before the latest `window.limit`: not in `events`.
    public var eventsBeforeSince = 0
    public var eventsPastLimit = 0
    public var eventsNotShown: Int { eventsBeforeSince + eventsPastLimit }
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
    /// The rejected input lines that name the key or the user looked up, in file then line order:
    /// a revocation or a sign-up that never got in is part of what support must answer.
    public var rejectedLines: [RejectedInput]
    /// Why this history may be incomplete right now (a run updating the store, a rebuild that did
    /// not finish, input not yet reconciled); nil when the store is settled.
    public var caveat: String?

    /// Each stage switches its tables in whole, but a lookup made while a run is under way can see
    /// one stage's new tables beside the next one's old ones, and a killed run leaves the store a
    /// night behind: say so rather than show it in silence.
    static func caveat(_ store: some HistoryStore) throws -> String? {
        switch try store.pendingWork() {
        case .runUnderWay(let holder):
            "a run is updating this store (\(holder)): what it has not reconciled yet may be missing or change; look again when it finishes"
        case .upgradePending:
            "this store was reconciled by an older iaprecon: this shows its results as that version judged them; the next 'iaprecon run' (or nightly) rebuilds them"
        case .fullRebuildPending:
            "a full rebuild of this store started and did not finish: this shows the store as it was before; 'iaprecon run' completes it"
        // The lookup reads the lines as stored and the join's and report's results as they last
        // wrote them: say which is which, rather than that the new input is missing.
        case .inputNotReconciled:
            "input ingested since the last reconciliation is listed but not reconciled yet: its sign-ups, orders, deliveries and "
                + "revocations are shown, while purchases, matches, installs, findings and the totals are as of the last reconciliation; "
                + "'iaprecon run' reconciles it"
        case nil:
            nil
        }
    }

    /// Transactions whose facts are read at a time: a customer's story is read a part at a time, so
    /// that only what the header sums up and the events (`HistoryEvents`) grow with it.
    static let transactionsReadAtOnce = 2_000

    /// Loads a history; `zone` names the days whose fx rates convert, `currency` is the reporting
    /// currency (by default the one the store's fx.csv converts into).
    /// - Throws: `ReportingCurrency.Mismatch` when fx.csv does not convert into `currency`: amounts
    ///   are never shown under another currency's name.
    /// `window` leaves out events (`Window`); the header (totals, subscriptions, findings, rejected lines) still covers the whole story.
    static func load(_ store: some HistoryStore, _ lookup: Lookup, currency: String? = nil, zone: Zone = .utc, window: Window = Window(),
                     memoryBytes: Int = HistoryEvents.memoryBytes, transactionsAtOnce: Int = transactionsReadAtOnce) throws -> UserHistory {
        try store.checkSchema()
        guard try store.isReconciled() else {
            // A store's first run past its ingest: a run started now would only be refused, so name the one under way.
            if case .runUnderWay(let holder)? = try store.pendingWork() {
                throw NotFound(what: "reconciliation", hint: "the run that holds it (\(holder)) is making the first; look again when it finishes",
                               inStore: "in the store yet")
            }
            throw NotFound(what: "reconciliation", hint: "run 'iaprecon run' (or the normalize, join and report stages) on it first")
        }
        let resolved = try resolve(store, lookup)
        let (scope, userID) = (resolved.scope, resolved.userID)
        var subject = resolved.subject
        let rates = try store.fxRates()
        let currency = currency ?? FXRates.convertsInto(rates) ?? "USD"
        let fx = FXRates(rows: rates, reportingCurrency: currency)
        try fx.checkStored(rates)

        var transactionIDs: [String]
        var events = Events(zone: zone, sinceMs: window.sinceMs, found: HistoryEvents.Builder(memoryBytes: memoryBytes))
        let user: String?
        switch scope {
        case .user(let id):
            user = id
            transactionIDs = try store.transactionIDs(resolvedTo: id)
            // And those delivered to them, so their deliveries are shown with the rest.
            var listed = Set(transactionIDs)
            for delivered in try store.transactionIDs(deliveredTo: id) where listed.insert(delivered).inserted {
                transactionIDs.append(delivered)
            }
            for registration in try store.registrations(of: id) { events.add(registration, user: id) }
            for install in try store.installs(of: id) { events.add(install) }
            try store.forEachOrder(ofUser: id, atOnce: transactionsAtOnce) { events.add($0) }
            for revocation in try store.revocations(ofUser: id) { events.add(revocation) }
        case .transactions(let ids):
            user = nil
            transactionIDs = ids
            for part in ids.parts(of: transactionsAtOnce) {
                for order in try store.matchedOrders(of: part) { events.add(order) }
            }
            for part in ids.parts(of: transactionsAtOnce) {
                for revocation in try store.revocations(of: part) { events.add(revocation) }
            }
        }
        let parts = transactionIDs.parts(of: transactionsAtOnce)
        // A user's own purchases; for a transaction or a chain, all of them.
        var totals = Totals(fx: fx, reporting: ReportingCurrency(currency), zone: zone, buyer: user == nil ? nil : userID)
        var expires = false
        for part in parts {
            // The join keeps only a refund that stands; one Apple reversed is shown with its reversal.
            let reversed = Dictionary(grouping: try store.reversedRefunds(of: part), by: \.transactionID)
            for transaction in try store.transactions(part) {
                events.add(transaction, buyer: user == nil ? nil : userID, reversedRefunds: reversed[transaction.transactionID] ?? [])
                totals.add(transaction)
                expires = expires || transaction.expiresMs != nil
            }
        }
        // A one-time purchase is its own "chain" of one: it is no subscription.
        if case .originalTransaction(let id) = lookup, !expires { subject = "transaction \(id)" }
        for part in parts {
            let deliveries = try store.deliveries(of: part)
            if let user { events.add(deliveries, storyOf: user) } else { for delivery in deliveries { events.add(delivery) } }
        }
        // Each finding once: a subscription chain's are found through each of its transactions.
        var openFindings: [OpenFinding] = []
        var seen = Set<String>()
        func add(_ findings: [HistoryFacts.Finding]) {
            for finding in findings where seen.insert(finding.findingID).inserted {
                events.add(finding, storyOf: user)
                openFindings.append(OpenFinding(findingID: finding.findingID, kind: finding.kind, severity: finding.severity))
            }
        }
        for part in parts { add(try store.findings(of: part)) }
        if let user { add(try store.findings(ofUser: user)) }

        let asOfMs = try store.joinedAsOfMs() ?? 0
        let active = totals.activeSubscriptions(asOfMs: asOfMs)

        // Critical first.
        let findings = openFindings.sorted {
            (-(Severity(rawValue: $0.severity)?.rank ?? -1), $0.findingID) < (-(Severity(rawValue: $1.severity)?.rank ?? -1), $1.findingID)
        }
        // A token is found in any case, as its lookup finds it.
        var searched = resolved.rejectedKeys
        if case .appAccountToken(let token) = lookup { searched += [token.lowercased(), token.uppercased()] }
        let rejected = try store.rejectedLines(naming: Array(Set(searched)).sorted()).map(RejectedInput.init)
        var shown = events.found.finished()
        let pastLimit = window.limit.map { max(0, shown.count - $0) } ?? 0
        if pastLimit > 0 { shown = shown.droppingFirst(pastLimit) }
        return UserHistory(
            subject: subject, notes: resolved.notes, userID: userID, events: shown, window: window, eventsBeforeSince: events.beforeSince,
            eventsPastLimit: pastLimit, findingIDs: findings.map(\.findingID).sorted(),
            findings: findings, spent: Money.format(totals.spent), refunded: Money.format(totals.refunded), reportingCurrency: currency,
            unconverted: totals.unconverted, activeSubscriptions: active, asOfMs: asOfMs, rejectedLines: rejected,
            caveat: try caveat(store))
    }

    /// What the header sums up of the purchases, as they are read: what was spent and refunded in the
    /// reporting currency, and the latest period of each subscription chain.
    private struct Totals {
        let fx: FXRates
        let reporting: ReportingCurrency
        var days: DayNames
        /// The user whose own purchases count, for a user's history; nil counts every purchase.
        let buyer: String?
        var spent = Amount.zero, refunded = Amount.zero, unconverted = 0
        var latest: [String: HistoryFacts.Transaction] = [:]

        init(fx: FXRates, reporting: ReportingCurrency, zone: Zone, buyer: String?) {
            self.fx = fx
            self.reporting = reporting
            days = DayNames(zone)
            self.buyer = buyer
        }

        mutating func add(_ purchase: HistoryFacts.Transaction) {
            if purchase.isRevenue, buyer == nil || purchase.userID == buyer {
                if let rate = fx.rate(purchase.currency ?? "", on: days(purchase.purchaseMs)) {
                    // Each purchase rounded as transactions.csv rounds its row, so the totals are its rows' sums.
                    spent += reporting.rounded((purchase.price ?? .zero) * rate)
                    if purchase.refundMs != nil { refunded += reporting.rounded((purchase.refundAmount.flatMap(Amount.parse) ?? .zero) * rate) }
                } else {
                    unconverted += 1
                }
            }
            // Latest by purchase, not by expiry: an upgrade starts a period that can end before the one it
            // replaced (a yearly plan upgraded to a higher level billed monthly), and the old one no longer runs.
            guard purchase.expiresMs != nil else { return }
            if let known = latest[purchase.originalTransactionID],
               (known.purchaseMs, known.transactionID) >= (purchase.purchaseMs, purchase.transactionID) { return }
            latest[purchase.originalTransactionID] = purchase
        }

        /// The latest period of each chain the customer holds, if it runs past as-of and was not refunded.
        func activeSubscriptions(asOfMs: Int64) -> [ActiveSubscription] {
            latest.values.compactMap { purchase -> ActiveSubscription? in
                guard let expires = purchase.expiresMs, expires > asOfMs, purchase.refundMs == nil else { return nil }
                return ActiveSubscription(originalTransactionID: purchase.originalTransactionID, productID: purchase.productID,
                                          expiresMs: expires, environment: purchase.environment ?? "unknown")
            }.sorted { ($0.expiresMs, $0.originalTransactionID) < ($1.expiresMs, $1.originalTransactionID) }
        }
    }

    /// How many deliveries to other users of each of a user's transactions their story shows.
    static let otherDeliveriesShown = 10

    /// The events of a history as support reads them, worded from the facts the store reads (`HistoryFacts`).
    private struct Events {
        /// The zone people read the history in (`shownDetail`).
        let zone: Zone
        /// Events before it are counted, not kept (`Window.sinceMs`).
        let sinceMs: Int64?
        /// The events so far, which it puts in time order.
        var found: HistoryEvents.Builder
        var beforeSince = 0

        mutating func add(_ ms: Int64, _ event: String, id: String = "", product: String = "", amount: String? = nil, currency: String? = nil,
                          detail: String, shownDetail: String? = nil, source: String = "") {
            if let sinceMs, ms < sinceMs {
                beforeSince += 1
                return
            }
            found.add(Event(ms: ms, event: event, id: id, product: product, amount: amount ?? "", currency: amount == nil ? "" : currency ?? "",
                            detail: detail, shownDetail: shownDetail ?? detail, source: source))
        }

        mutating func add(_ registration: HistoryFacts.Registration, user: String) {
            var parts = ["method " + (registration.method ?? "?")]
            if let country = registration.country { parts.append("country " + country) }
            // Every device id the sign-up gave, as the store keeps it: the story is what an access request is answered with.
            if let idfv = UserHistory.mask(registration.idfv) { parts.append("idfv " + idfv) }
            if let idfa = UserHistory.mask(registration.idfa) { parts.append("idfa " + idfa) }
            if let appsflyer = UserHistory.mask(registration.appsflyerID) { parts.append("appsflyer " + appsflyer) }
            add(registration.ms, "registered", id: user, detail: parts.joined(separator: ", "), source: registration.source)
        }

        mutating func add(_ install: HistoryFacts.Install) {
            var detail = "media source \(install.mediaSource ?? "organic")"
            if let campaign = install.campaign, !campaign.isEmpty { detail += ", campaign \(campaign)" }
            detail += ", joined by \(install.matchedBy)"
            add(install.ms, "install", detail: detail, source: install.source ?? "")
        }

        mutating func add(_ order: HistoryFacts.Order) {
            var matched = order.match.map { "matched to \($0.transactionID) by \($0.rule)" } ?? "no transaction matched"
            if let first = order.loggedFirstBy {
                matched = "order id logged first by \(first.userID) (\(first.source)), whose order the reconciliation takes: "
                    + "none of this user's transactions is matched to it"
            }
            // Support reads "no transaction matched" as "the customer paid nothing": say what it means.
            let shown = order.match == nil && order.loggedFirstBy == nil
                ? matched + ": no receipt, notification or delivery links an Apple purchase to this order" : matched
            add(order.ms, "order", id: order.orderID, product: order.productID, amount: order.price, currency: order.currency, detail: matched,
                shownDetail: shown, source: order.source)
        }

        /// `buyer`: the user whose story it is, for a user's history. `reversedRefunds`: the refunds
        /// and reversals Apple told of it, when it reversed one.
        mutating func add(_ transaction: HistoryFacts.Transaction, buyer: String?, reversedRefunds: [HistoryFacts.RefundNotice]) {
            let id = transaction.transactionID
            var before = [transaction.environment ?? "unknown environment"]
            if transaction.originalTransactionID != id { before.append("renews \(transaction.originalTransactionID)") }
            var after: [String] = []
            if transaction.ownership == "FAMILY_SHARED" { after.append("family shared") }
            if let buyer, let owner = transaction.userID, owner != buyer { after.append("bought by \(owner)") }
            let detail = { (time: (Int64) -> String) in
                (before + (transaction.expiresMs.map { ["expires " + time($0)] } ?? []) + after).joined(separator: ", ")
            }
            // The row's amount is the purchase's price: people are told when this user paid none of it.
            var shown = [detail { UserHistory.localTime($0, zone) }]
            if let environment = transaction.environment, environment != "Production" {
                shown[0] = shown[0].replacingOccurrences(of: environment, with: environment + ": a test purchase, nobody was charged",
                                                         options: .anchored)
            }
            if transaction.ownership == "FAMILY_SHARED" {
                shown = [shown[0].replacingOccurrences(of: ", family shared", with: ""), "family shared: a family member bought it, this user was not charged"]
            }
            add(transaction.purchaseMs, "apple purchase", id: id, product: transaction.productID, amount: transaction.price.map(Money.format),
                currency: transaction.currency, detail: detail(Timestamp.iso8601), shownDetail: shown.joined(separator: ", "),
                source: transaction.firstSighting ?? "")
            guard !reversedRefunds.isEmpty else {
                if let refundMs = transaction.refundMs {
                    let type = transaction.refundType ?? "refund"
                    add(refundMs, "refund", id: id, product: transaction.productID, amount: transaction.refundAmount, currency: transaction.currency,
                        detail: type, shownDetail: UserHistory.refundInWords(type), source: transaction.refundSource ?? "")
                }
                return
            }
            for notice in reversedRefunds {
                if notice.isReversal {
                    add(notice.ms, "refund reversed", id: id, product: transaction.productID, detail: "Apple reversed the refund", source: notice.source)
                } else {
                    // What was refunded is known of the refund that stands, if one does.
                    let stands = notice.ms == transaction.refundMs
                    let type = notice.revocationType ?? transaction.refundType ?? "refund"
                    add(notice.ms, "refund", id: id, product: transaction.productID, amount: stands ? transaction.refundAmount : nil,
                        currency: transaction.currency, detail: type, shownDetail: UserHistory.refundInWords(type), source: notice.source)
                }
            }
        }

        mutating func add(_ delivery: HistoryFacts.Delivery) {
            var parts = ["to \(delivery.userID)"]
            if delivery.quantity != 1 { parts.append("quantity \(delivery.quantity)") }
            if delivery.copies > 1 { parts.append("\(delivery.copies) copies in the log") }
            add(delivery.ms, "delivered", id: delivery.transactionID, product: delivery.productID, detail: parts.joined(separator: ", "),
                source: delivery.source)
        }

        /// In a user's story: every delivery to them, and of the same transactions' deliveries to other
        /// users the first `otherDeliveriesShown` of each, then one line counting the rest. One Apple ID
        /// restored by thousands of users would fill every holder's story with the others' deliveries
        /// (and their ids); the transaction's own story lists them all.
        mutating func add(_ deliveries: [HistoryFacts.Delivery], storyOf user: String) {
            var shown: [String: Int] = [:]
            var more: [String: (ms: Int64, productID: String, count: Int)] = [:]
            for delivery in deliveries.sorted(by: { $0.precedes($1) }) {
                let others = shown[delivery.transactionID, default: 0]
                if delivery.userID == user || others < UserHistory.otherDeliveriesShown {
                    if delivery.userID != user { shown[delivery.transactionID] = others + 1 }
                    add(delivery)
                } else {
                    more[delivery.transactionID, default: (delivery.ms, delivery.productID, 0)].count += 1
                }
            }
            for (transactionID, rest) in more {
                add(rest.ms, "more deliveries", id: transactionID, product: rest.productID,
                    detail: "\(rest.count) more to other users; iaprecon history --transaction \(transactionID) lists them")
            }
        }

        mutating func add(_ revocation: HistoryFacts.Revocation) {
            add(revocation.ms, "revoked", id: revocation.transactionID, detail: "from \(revocation.userID)", source: revocation.source)
        }

        /// In a user's story, a finding of another user (one on a chain both hold: the other's
        /// `multi_apple_id_subscription`, whose detail names no user) says whose it is, so support
        /// does not act on this user for it.
        mutating func add(_ finding: HistoryFacts.Finding, storyOf user: String? = nil) {
            let detail = "\(finding.severity): \(finding.detail)"
            var shown = UserHistory.counted(UserHistory.shownTimes(detail, zone))
            if let user, let owner = finding.userID, !owner.utf8.elementsEqual(user.utf8) { shown += " (finding of user \(owner))" }
            add(finding.eventMs, "FINDING \(finding.kind)", id: finding.findingID, product: finding.productID ?? "", amount: finding.amount,
                currency: finding.currency, detail: detail, shownDetail: shown)
        }
    }

    /// `text` with findings.csv's "N time(s)" read as people say it: "1 time", "2 times". Scripts
    /// (json, csv) keep the finding's detail as findings.csv words it.
    static func counted(_ text: String) -> String {
        guard text.contains(" time(s)") else { return text }
        var pieces = text.components(separatedBy: " time(s)")
        for index in pieces.indices.dropLast() {
            let count = String(pieces[index].reversed().prefix { $0.isNumber }.reversed())
            pieces[index] += count == "1" ? " time" : " times"
        }
        return pieces.joined()
    }

    /// Apple's revocation type with what it means for the customer, for people; scripts keep Apple's word.
    static func refundInWords(_ type: String) -> String {
        switch type {
        case "REFUND_FULL": type + ": Apple refunded the whole price"
        case "REFUND_PRORATED": type + ": Apple refunded part of the price"
        case "FAMILY_REVOKE": type + ": Apple took back the family-shared access; nothing was refunded to this user"
        default: type
        }
    }

    /// `count` and `noun`, the noun in the plural unless the count is one.
    static func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? noun : plural ?? noun + "s")
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
    /// `text` with each time in it as iaprecon writes one in UTC (`2026-11-27T05:12:00.000Z`,
    /// `Timestamp.iso8601`) shown in `zone` as the time column shows it, where the zone is not UTC:
    /// a finding's detail is stored in UTC, and a table in another zone would read it beside local
    /// times. In UTC the text is kept: its times say so themselves.
    static func shownTimes(_ text: String, _ zone: Zone) -> String {
        guard zone.canonicalIdentifier != Zone.utc.canonicalIdentifier, text.utf8.count >= 24 else { return text }
        let bytes = Array(text.utf8)
        // `yyyy-MM-ddTHH:mm:ss.SSSZ`: a digit where 0 stands, the other characters as they are.
        let pattern = Array("0000-00-00T00:00:00.000Z".utf8)
        func isTime(at start: Int) -> Bool {
            zip(bytes[start..<(start + pattern.count)], pattern).allSatisfy { byte, expected in
                expected == UInt8(ascii: "0") ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == expected
            }
        }
        var shown: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if index + pattern.count <= bytes.count, isTime(at: index),
               let ms = Timestamp.parse(String(decoding: bytes[index..<(index + pattern.count)], as: UTF8.self)) {
                shown.append(contentsOf: localTime(ms, zone).utf8)
                index += pattern.count
            } else {
                shown.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: shown, as: UTF8.self)
    }

    /// `yyyy-MM-dd HH:mm:ss` of an instant in `zone`, for people. In the hour a zone shows twice (its
    /// clocks going back), the same wall clock names two instants an hour apart: there the time
    /// carries its offset (`2026-11-01 01:30:00 -07:00`, then `... -08:00`), so the order reads right.
    public static func localTime(_ ms: Int64, _ zone: Zone) -> String {
        // On bytes: a long history shows one or two per event.
        let offset = zone.offsetMs(atUTC: ms)
        let wall = ms + offset
        let bytes = Timestamp.iso8601(wall).utf8.prefix(19).map { $0 == UInt8(ascii: "T") ? UInt8(ascii: " ") : $0 }
        let text = String(decoding: bytes, as: UTF8.self)
        guard zone.utc(fromLocal: wall) != zone.latestUTC(fromLocal: wall) else { return text }
        let minutes = abs(offset) / 60_000
        let hours = String(minutes / 60), rest = String(minutes % 60)
        return text + (offset < 0 ? " -" : " +") + (hours.count < 2 ? "0" : "") + hours + ":" + (rest.count < 2 ? "0" : "") + rest
    }

    /// A total as people read it: every place of the currency's minor unit, thousands grouped, as
    /// report.html shows money (`738.50`, not `738.5`).
    private func shownAmount(_ text: String) -> String {
        ReportingCurrency(reportingCurrency).shown(Amount.parse(text) ?? .zero)
    }

    /// The most open findings the header names one by one.
    static let findingsListed = 10

    /// The most active subscriptions the header names.
    static let subscriptionsListed = 10

    /// The header's lines: what the customer spent and got back, what they can use now, what is open.
    public func headerLines(_ zone: Zone) -> [String] {
        let money = { (text: String) in shownAmount(text) + " " + reportingCurrency }
        var lines = ["\(subject) · as of \(Self.localTime(asOfMs, zone)) \(zone.identifier) · \(Self.counted(events.count + eventsNotShown, "event"))"]
            + notes
        var totals = "spent \(money(spent)), refunded \(money(refunded))"
        if unconverted > 0 { totals += " (\(Self.counted(unconverted, "purchase")) without an fx rate not counted)" }
        lines.append(totals)
        if activeSubscriptions.isEmpty {
            lines.append("active subscriptions: none")
        } else {
            // A customer holding thousands of chains would push the findings and events off the
            // screen: the first ten are named, the rest counted (json lists them all).
            var listed = activeSubscriptions.prefix(Self.subscriptionsListed).map { subscription in
                var text = "\(subscription.productID) until \(Self.localTime(subscription.expiresMs, zone)) (chain \(subscription.originalTransactionID)"
                if subscription.environment != "Production" { text += ", \(subscription.environment)" }
                return text + ")"
            }.joined(separator: "; ")
            if activeSubscriptions.count > Self.subscriptionsListed {
                listed += "; and \(activeSubscriptions.count - Self.subscriptionsListed) more (--format json lists them)"
            }
            lines.append("active subscriptions: " + listed)
        }
        if findings.isEmpty {
            lines.append("open findings: none")
        } else {
            var bySeverity: [String: Int] = [:]
            for finding in findings { bySeverity[finding.severity, default: 0] += 1 }
            let counts = ["critical", "warning", "info"].compactMap { severity in bySeverity[severity].map { "\($0) \(severity)" } }
            var listed = findings.map { "\($0.findingID) \($0.kind)" }.joined(separator: ", ")
            // A customer with many findings would push the events off the screen: their kinds
            // are counted instead, and each finding keeps its line among the events.
            if findings.count > Self.findingsListed {
                var byKind: [String: Int] = [:]
                for finding in findings { byKind[finding.kind, default: 0] += 1 }
                listed = byKind.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                    + "; each is a FINDING line below"
            }
            lines.append("open findings: \(findings.count) (\(counts.joined(separator: ", "))): " + listed)
        }
        if !rejectedLines.isEmpty {
            lines.append("rejected input lines naming this customer or key: " + Self.listed(rejectedLines))
        }
        if let shown = shownEvents(zone) { lines.append(eventsNotShown > 0 ? shown + "; the lines above cover the whole story" : shown) }
        return lines
    }

    /// Which events are shown when `window` leaves some out, and how many earlier ones are not, in
    /// words (`showing the latest 50 events; 1204 earlier events are not shown (--limit)`); nil for
    /// the whole story.
    public func shownEvents(_ zone: Zone) -> String? {
        guard !window.isWhole else { return nil }
        let since = window.sinceMs.map { " since \(Self.localTime($0, zone)) \(zone.identifier)" } ?? ""
        guard eventsNotShown > 0 else {
            let bounds = [window.sinceMs.map { _ in "earlier than --since" }, window.limit.map { _ in "past --limit" }].compactMap { $0 }
            return "showing all \(Self.counted(events.count, "event")): none is " + bounds.joined(separator: " or ")
        }
        let shown = if events.isEmpty {
            "no events" + since
        } else if eventsPastLimit > 0 {
            "showing the latest " + (since.isEmpty ? Self.counted(events.count, "event")
                : "\(events.count) of the \(Self.counted(events.count + eventsPastLimit, "event"))" + since)
        } else {
            "showing the \(Self.counted(events.count, "event"))" + since
        }
        let options = [eventsBeforeSince > 0 ? "--since" : nil, eventsPastLimit > 0 ? "--limit" : nil].compactMap { $0 }
        return shown + "; \(Self.counted(eventsNotShown, "earlier event")) \(eventsNotShown == 1 ? "is" : "are") not shown (\(options.joined(separator: ", ")))"
    }

    /// The history as a page in report.html's style, to paste into a ticket, handed to `write` in
    /// pieces: an event's row at a time, so that a long history is never held whole as text.
    public func writeHTML(_ zone: Zone, to write: (String) -> Void) {
        let header = headerLines(zone)
        var body = "<header><h1>\(HTML.escape(header[0]))</h1></header>\n<section class=\"cards\">"
        for (label, value) in [("Spent " + reportingCurrency, spent), ("Refunded " + reportingCurrency, refunded)] {
            body += "<div class=\"card\"><div class=\"label\">\(HTML.escape(label))</div>"
            body += "<div class=\"value\">\(HTML.escape(shownAmount(value)))</div></div>"
        }
        body += "<div class=\"card\"><div class=\"label\">Active subscriptions</div><div class=\"value\">\(activeSubscriptions.count)</div></div>"
        body += "<div class=\"card\"><div class=\"label\">Open findings</div><div class=\"value\">\(findings.count)</div></div></section>\n"
        body += "<section><p>" + header.dropFirst().map(HTML.escape).joined(separator: "<br>") + "</p></section>\n"
        body += "<section><h2>Events (times in \(HTML.escape(zone.identifier)))</h2>"
        write(HTML.documentStart(title: "iaprecon history: \(subject)") + body)
        let numeric: Set<Int> = [3]
        write(HTML.tableStart(["time", "event", "id / product", "amount", "detail"], numeric: numeric))
        for event in events {
            // A finding's detail starts with its severity.
            let severity = event.event.hasPrefix("FINDING") ? event.shownDetail.prefix { $0 != ":" } : ""
            write(HTML.tableRow([
                "<span class=\"time\">\(HTML.escape(Self.localTime(event.ms, zone)))</span>",
                severity.isEmpty ? HTML.escape(event.event) : "<span class=\"sev-\(HTML.escape(String(severity)))\">\(HTML.escape(event.event))</span>",
                "<span class=\"id\">\(HTML.escape(event.id))</span><div class=\"sources\">\(HTML.escape(event.product))</div>",
                HTML.escape(event.amount.isEmpty ? "" : event.amount + " " + event.currency),
                HTML.escape(event.shownDetail) + (event.source.isEmpty ? "" : "<div class=\"sources\">\(HTML.escape(event.source))</div>"),
            ], numeric: numeric))
        }
        write(HTML.tableEnd + "</section>\n" + HTML.documentEnd)
    }
}

extension Array {
    /// Its elements in consecutive parts of at most `size` each; none for none.
    fileprivate func parts(of size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: Swift.max(size, 1)).map { Array(self[$0..<Swift.min($0 + Swift.max(size, 1), count)]) }
    }
}
