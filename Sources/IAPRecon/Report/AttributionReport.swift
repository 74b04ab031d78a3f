import Foundation

/// `attribution.csv`: installs → registrations → payers → revenue → ROAS per cohort.
///
/// Grain: one row per install day (in `--tz`), media source and campaign
/// (CONTRACT.md §1.5, §3). A user is joined to an install by Customer User ID
/// (on the install row, or on any MMP event of that install's AppsFlyer ID),
/// else AppsFlyer ID, else IDFV, else IDFA; the user's install is the earliest
/// joined install at or before sign-up. Users with no install — and paying
/// users with no registration, at their first purchase — form one
/// `unattributed` cohort per day, so every verified dollar lands in a row.
struct AttributionReport: Sendable {
    static let dayMs: Int64 = 86_400_000

    struct CohortKey: Hashable, Comparable {
        var day: String
        var mediaSource: String
        var campaign: String
        static func < (a: CohortKey, b: CohortKey) -> Bool { (a.day, a.mediaSource, a.campaign) < (b.day, b.mediaSource, b.campaign) }
    }

    /// A spend file's line, in file order: path, then line number.
    struct SpendLine: Hashable, Comparable, Sendable, CustomStringConvertible {
        var path: String
        var line: Int64
        static func < (a: SpendLine, b: SpendLine) -> Bool { (a.path, a.line) < (b.path, b.line) }
        var description: String { "\(path):\(line)" }
    }

    struct Cohort {
        var installs = 0
        var registrations = 0
        var payers = 0
        var anchorMs: Int64 = 0   // the latest install (or sign-up) in the cohort: maturity is measured from it
        var revenueD0 = Amount.zero
        var revenueD7 = Amount.zero
        var revenueD30 = Amount.zero
        var revenue = Amount.zero
        var refunds = Amount.zero
        var spend = Amount.zero
        var hasSpend = false
        /// Some of the spend has no fx rate: the total is unknown, so it is shown empty.
        var spendUnconverted = false
        var mmpRevenue = Amount.zero
        /// Some MMP claim has no fx rate: the MMP's total is unknown, so it is shown empty.
        var mmpRevenueUnconverted = false
    }

    /// An install row: its time in UTC, its cohort's slot, and where it is (its file's id and line).
    struct Install {
        var ms: Int64
        var slot: Int
        var appsflyerID: RowFingerprint?
        var file: Int64
        var line: Int64
    }

    /// A user's `fct_user_installs` row past the user id, its texts by fingerprint: a night writes
    /// only the users whose row would change.
    struct UserInstall: Equatable {
        var ms: Int64?
        var mediaSource: RowFingerprint?
        var campaign: RowFingerprint?
        var matchedBy: RowFingerprint?
        /// The install's line: its file's id and line number.
        var file: Int64?
        var line: Int64?

        /// A `ReportStore.storedUserInstalls` row.
        init(stored row: some StoredRow) {
            typealias Column = UserInstallColumn
            (ms, mediaSource, campaign) = (row.optionalInt(Column.installMs), row.fingerprint(Column.mediaSource), row.fingerprint(Column.campaign))
            (matchedBy, file, line) = (row.fingerprint(Column.matchedBy), row.optionalInt(Column.fileID), row.optionalInt(Column.line))
        }

        init(ms: Int64?, mediaSource: RowFingerprint?, campaign: RowFingerprint?, matchedBy: RowFingerprint, file: Int64?, line: Int64?) {
            (self.ms, self.mediaSource, self.campaign, self.matchedBy, self.file, self.line) = (ms, mediaSource, campaign, matchedBy, file, line)
        }
    }

    var cohorts: [CohortKey: Cohort] = [:]
    /// While `init` runs: each cohort's place in `values`, so a user's cohort is an index, not three strings.
    private var slots = FirstSeen<CohortKey>()
    private var keys: [CohortKey] = []
    private var values: [Cohort] = []
    var matchedBy: [String: Int] = ["customer_user_id": 0, "appsflyer_id": 0, "idfv": 0, "idfa": 0, "unattributed": 0]
    var installRows = 0
    /// Verified purchases with no known user, counted in the `no_user` row of their day.
    var userlessPurchases = 0
    /// Spend rows in a currency fx.csv cannot convert, the first in file order named: their cohort's
    /// spend is shown empty (`spendFXWarnings`).
    var missingSpendRates = MissingRates<SpendLine>()
    /// The MMP purchase claims a cohort takes that fx.csv cannot convert: their cohort's `mmp_revenue` is
    /// shown empty (`claimFXWarnings`).
    var missingClaimRates = MissingRates<Never>()
    /// Cohorts whose spend more than one file gives.
    var spendOverlaps = SpendOverlaps()
    let asOfMs: Int64

    /// Computes the cohorts and, user by user, writes each user's install into `fct_user_installs` (for `history`).
    init(store: some ReportStore, zone: Zone, fx: FXRates, asOfMs: Int64) throws {
        try self.init(store: store, zone: zone, fx: fx, asOfMs: asOfMs, installs: Self.readInstalls(store: store, zone: zone, fx: fx))
    }

    /// As above, with the installs already being read (`readInstalls`).
    init(store: some ReportStore, zone: Zone, fx: FXRates, asOfMs: Int64, installs installWork: Background<InstallTable>) throws {
        self.asOfMs = asOfMs
        defer { installWork.wait() }
        var day = DayNames(zone)
        var money = AmountReader(fx: fx, zone: zone)

        // Users: registrations (each user's first), merged in user id order with their purchases;
        // a paying user who never registered signs up at their first purchase.
        // By the fingerprints of their ids, as the MMP rows name them.
        var cohortOfUser: [RowFingerprint: Int] = [:]
        var userOfAppsflyer: [RowFingerprint: RowFingerprint] = [:]
        let signups = try store.firstRegistrationsByUser()
        // Every verified purchase in one pass; those with no user come first (NULL sorts first).
        let purchases = try store.purchasesByUser()
        // The users the table holds now (none in a new store): those no longer reported are removed,
        // and those whose install is unchanged are not written again.
        let stored = try store.storedUserInstalls()
        defer {
            signups.reset()
            purchases.reset()
            stored.reset()
        }
        var hasSignup = try signups.step()
        var hasPurchase = try purchases.step()
        // Apple's money whose user nobody knows (no order, delivery or receipt): the `no_user` row
        // of its purchase day (CONTRACT.md §3), so every verified dollar lands in a row.
        typealias Purchase = PurchaseByUserColumn
        typealias Registration = FirstRegistrationColumn
        typealias Stored = UserInstallColumn
        while hasPurchase, purchases.row.isNull(Purchase.userID) {
            let purchase = Self.purchase(purchases.row, values: &money)
            let key = CohortKey(day: day(purchase.ms), mediaSource: "no_user", campaign: "")
            add(key) { cohort in
                cohort.anchorMs = max(cohort.anchorMs, purchase.ms)
                cohort.refunds += purchase.refundUSD
                cohort.revenue += purchase.grossUSD
                cohort.revenueD0 += purchase.grossUSD
                cohort.revenueD7 += purchase.grossUSD
                cohort.revenueD30 += purchase.grossUSD
            }
            userlessPurchases += 1
            hasPurchase = try purchases.step()
        }
        Trace.mark("attribution userless purchases")
        var hasStored = try stored.step()
        var table = try installWork.value()
        Trace.mark("attribution waited for installs")
        // Written on a second connection on a worker thread while this one matches. Only what
        // changed is written: a night leaves most users' installs as they were. Begun once the
        // installs are read: what their files count is written as it is counted, and one
        // writer at a time holds the store.
        let userInstalls = store.userInstallWriter()
        let slotOfCohort = table.cohorts.map { slot($0) }
        // Taken out of the table, the installs are this thread's alone: their slots change in place.
        var installs = table.installs
        table.installs = []
        for index in installs.indices { installs[index].slot = slotOfCohort[installs[index].slot] }
        let (byCUID, byAppsflyer, byIDFV, byIDFA) = (table.byCUID, table.byAppsflyer, table.byIDFV, table.byIDFA)
        let linkedAppsflyerIDs = table.linkedAppsflyerIDs
        let claims = table.claims
        table.claims = []
        installRows = installs.count
        for install in installs {
            add(install.slot) { cohort in
                cohort.installs += 1
                cohort.anchorMs = max(cohort.anchorMs, install.ms)
            }
        }
        // What a user's stored install is compared with, as fingerprints made once: the ways a
        // user is matched, and each install cohort's media source and campaign (every install's
        // cohort has its slot by now).
        let ways = ["customer_user_id", "appsflyer_id", "idfv", "idfa"]
        let wayFingerprints = ways.map { RowFingerprint($0) }
        var usersByWay = [Int](repeating: 0, count: ways.count)
        var unattributedUsers = 0
        let unattributedInstall = UserInstall(ms: nil, mediaSource: nil, campaign: nil, matchedBy: RowFingerprint("unattributed"), file: nil, line: nil)
        var cohortFingerprints = [(mediaSource: RowFingerprint, campaign: RowFingerprint)?](repeating: nil, count: keys.count)
        var userPurchases: [(ms: Int64, grossUSD: Amount, refundUSD: Amount)] = []
        while hasSignup || hasPurchase {
            let signupRow = signups.row
            let purchaseRow = purchases.row
            // The smaller of the two ids (in bytes, as SQLite orders them), made into a string once.
            let signupFirst = hasSignup && (!hasPurchase || signupRow.compareText(Registration.userID.rawValue, with: purchaseRow, Purchase.userID.rawValue) <= 0)
            let (userRow, userColumn) = signupFirst ? (signupRow, Registration.userID.rawValue) : (purchaseRow, Purchase.userID.rawValue)
            let userID = userRow.string(userColumn)
            // A stored user before this one in the same order is no longer reported.
            while hasStored, stored.row.compareText(Stored.userID.rawValue, with: userRow, userColumn) < 0 {
                userInstalls.remove(user: stored.row.string(Stored.userID))
                hasStored = try stored.step()
            }
            var storedInstall: UserInstall?
            if hasStored, stored.row.text(Stored.userID, equals: userID) {
                storedInstall = UserInstall(stored: stored.row)
                hasStored = try stored.step()
            }
            // The ids a sign-up names, by their fingerprints: they are only looked up.
            var signup = Signup(ms: 0, registered: false)
            if hasSignup, signupRow.text(Registration.userID, equals: userID) {
                signup = Signup(ms: signupRow.int(Registration.ms), idfv: signupRow.fingerprint(Registration.idfv),
                                idfa: signupRow.fingerprint(Registration.idfa), appsflyerID: signupRow.fingerprint(Registration.appsflyerID),
                                registered: true)
                hasSignup = try signups.step()
            }
            userPurchases.removeAll(keepingCapacity: true)
            while hasPurchase, purchases.row.text(Purchase.userID, equals: userID) {
                userPurchases.append(Self.purchase(purchases.row, values: &money))
                hasPurchase = try purchases.step()
            }
            if !signup.registered, let first = userPurchases.first { signup.ms = first.ms }

            // The first way that finds an install wins; later ways are not looked at.
            var found: (way: Int, index: Int)?
            let cuid = RowFingerprint(userID)
            if let index = Self.earliestInstall(of: cuid, atOrBefore: signup.ms, byCUID: byCUID, byAppsflyer: byAppsflyer,
                                                linked: linkedAppsflyerIDs, in: installs) {
                found = (0, index)
            } else if let index = byAppsflyer.earliest(of: signup.appsflyerID, atOrBefore: signup.ms, in: installs) {
                found = (1, index)
            } else if let index = byIDFV.earliest(of: signup.idfv, atOrBefore: signup.ms, in: installs) {
                found = (2, index)
            } else if let index = byIDFA.earliest(of: signup.idfa, atOrBefore: signup.ms, in: installs) {
                found = (3, index)
            }
            let key: Int
            let anchor: Int64
            if let (way, index) = found {
                let install = installs[index]
                usersByWay[way] += 1
                key = install.slot
                anchor = install.ms
                if let appsflyerID = install.appsflyerID { userOfAppsflyer[appsflyerID] = cuid }
                let (mediaSource, campaign) = (keys[key].mediaSource, keys[key].campaign)
                let names = cohortFingerprints[key] ?? (RowFingerprint(mediaSource), RowFingerprint(campaign))
                cohortFingerprints[key] = names
                if storedInstall != UserInstall(ms: install.ms, mediaSource: names.mediaSource, campaign: names.campaign,
                                                matchedBy: wayFingerprints[way], file: install.file, line: install.line) {
                    userInstalls.save(user: userID, install: (install.ms, mediaSource, campaign, install.file, install.line),
                                      matchedBy: ways[way])
                }
            } else {
                unattributedUsers += 1
                key = slot(CohortKey(day: day(signup.ms), mediaSource: "unattributed", campaign: ""))
                anchor = signup.ms
                add(key) { $0.anchorMs = max($0.anchorMs, signup.ms) }
                if storedInstall != unattributedInstall {
                    userInstalls.save(user: userID, install: nil, matchedBy: "unattributed")
                }
            }
            cohortOfUser[cuid] = key
            add(key) { cohort in
                if signup.registered { cohort.registrations += 1 }
                if !userPurchases.isEmpty { cohort.payers += 1 }
                for purchase in userPurchases {
                    cohort.revenue += purchase.grossUSD
                    cohort.refunds += purchase.refundUSD
                    // A purchase before the install counts in the total only (CONTRACT.md §3).
                    let age = purchase.ms - anchor
                    guard age >= 0 else { continue }
                    if age < 1 * Self.dayMs { cohort.revenueD0 += purchase.grossUSD }
                    if age < 8 * Self.dayMs { cohort.revenueD7 += purchase.grossUSD }
                    if age < 31 * Self.dayMs { cohort.revenueD30 += purchase.grossUSD }
                }
            }
        }
        for (way, users) in zip(ways, usersByWay) { matchedBy[way] = users }
        matchedBy["unattributed"] = unattributedUsers
        while hasStored {
            userInstalls.remove(user: stored.row.string(Stored.userID))
            hasStored = try stored.step()
        }
        Trace.mark("attribution users matched")
        try userInstalls.finish()
        Trace.mark("attribution waited for the user installs written")

        // What the MMP itself claimed for the cohort (retargeting claims none): a reported user's claims
        // in that user's cohort (a pair's Customer User ID when it is one, else the user its AppsFlyer
        // ID's install was matched to). A claim no reported user takes is the MMP's revenue of a device
        // the app never saw sign up or pay (a purchase event no receipt backs: the gap this column is
        // for); it goes to the cohort of its AppsFlyer ID's install, as the MMP counts it, or, when it
        // names no AppsFlyer ID, of its Customer User ID's. A device whose install the exports do not
        // hold is nobody's: its Customer User ID may be a placeholder every device sends (`guest`).
        for claim in claims {
            let user = claim.claimer.customerUserID.flatMap { cohortOfUser[$0] != nil ? $0 : nil }
                ?? claim.claimer.appsflyerID.flatMap { userOfAppsflyer[$0] }
            let slot: Int
            if let user, let userSlot = cohortOfUser[user] {
                slot = userSlot
            } else if let index = byAppsflyer.earliest(of: claim.claimer.appsflyerID, atOrBefore: .max, in: installs) {
                slot = installs[index].slot
            } else if claim.claimer.appsflyerID == nil, let cuid = claim.claimer.customerUserID, let index = Self.earliestInstall(
                of: cuid, byCUID: byCUID, byAppsflyer: byAppsflyer, linked: linkedAppsflyerIDs, in: installs) {
                slot = installs[index].slot
            } else {
                continue
            }
            // A claim no rate converts leaves the MMP's total unknown (empty), never a smaller sum.
            add(slot) { cohort in
                cohort.mmpRevenue += claim.amount
                if claim.missingRates.count > 0 { cohort.mmpRevenueUnconverted = true }
            }
            missingClaimRates.add(claim.missingRates)
        }
        installs = []

        Trace.mark("attribution mmp purchases")
        // Spend joins on day, media source and campaign; spend with no installs keeps its row.
        typealias Spend = SpendColumn
        try store.forEachSpendRow { row in
            guard let spend = Amount.parse(row.string(Spend.spend)) else { return }
            let day = row.string(Spend.day)
            // Nothing spent needs no rate, and leaves no cohort's spend unknown.
            let code = row.string(Spend.currency), spendLine = SpendLine(path: row.string(Spend.path), line: row.int(Spend.line))
            let converted = missingSpendRates.convert(spend, at: fx.rate(code, on: day), currency: code, day: day, reference: spendLine)
            // Its campaign reads empty as an install's does (`None`, `N/A`, ...), so spend exported
            // with AppsFlyer's spelling of a missing campaign joins the installs that have none.
            let key = CohortKey(day: day, mediaSource: Self.mediaSource(row.optionalString(Spend.mediaSource)),
                                campaign: row.optionalString(Spend.campaign).flatMap(MMPValue.clean) ?? "")
            spendOverlaps.add(key, spendLine)
            let dayStart = Timestamp.startOfDay(day) ?? 0
            add(key) { cohort in
                if let converted { cohort.spend += converted } else { cohort.spendUnconverted = true }
                cohort.hasSpend = true
                // A cohort with spend and no installs matures from its day's start in --tz (the offset of
                // that local midnight, not of the instant UTC reads it as: on a day the clocks change
                // east of UTC, those differ).
                cohort.anchorMs = max(cohort.anchorMs, zone.utc(fromLocal: dayStart))
            }
        }
        cohorts = Dictionary(uniqueKeysWithValues: zip(keys, values))
        (slots, keys, values) = (FirstSeen(), [], [])
    }

    /// The earliest install at or before `ms` that a Customer User ID reaches: one whose row names it,
    /// or one of an AppsFlyer ID any row names it with.
    static func earliestInstall(of cuid: RowFingerprint, atOrBefore ms: Int64 = .max, byCUID: InstallIndex, byAppsflyer: InstallIndex,
                                linked: LinkedAppsflyerIDs, in installs: [Install]) -> Int? {
        var found = byCUID.earliest(of: cuid, atOrBefore: ms, in: installs)
        linked.forEach(of: cuid) { appsflyerID in
            found = byAppsflyer.earliest(of: appsflyerID, atOrBefore: ms, in: installs, than: found)
        }
        return found
    }

    /// Organic is an empty media source or `organic` in any case; `restricted` stays its own bucket.
    static func mediaSource(_ raw: String?) -> String {
        guard let raw = raw.flatMap(MMPValue.clean), raw.lowercased() != "organic" else { return "organic" }
        return raw
    }

    private mutating func slot(_ key: CohortKey) -> Int {
        let (slot, isNew) = slots.number(key)
        if isNew {
            keys.append(key)
            values.append(Cohort())
        }
        return slot
    }

    private mutating func add(_ key: CohortKey, _ change: (inout Cohort) -> Void) {
        change(&values[slot(key)])
    }

    private mutating func add(_ slot: Int, _ change: (inout Cohort) -> Void) {
        change(&values[slot])
    }

    struct Signup {
        var ms: Int64
        var idfv: RowFingerprint?
        var idfa: RowFingerprint?
        var appsflyerID: RowFingerprint?
        var registered: Bool
    }

    /// A `ReportStore.purchasesByUser` row in the reporting currency. An amount fx.csv cannot convert,
    /// or the gross of a purchase with no price at all (no catalog entry, no V2 price), adds nothing:
    /// revenue_daily.csv leaves those cells empty, and attribution.csv's revenue sums to its gross
    /// (CONTRACT.md §3). summary.json counts them (`price_source.none`, `without_fx_rate`).
    static func purchase(_ row: some StoredRow, values: inout AmountReader) -> (ms: Int64, grossUSD: Amount, refundUSD: Amount) {
        typealias Column = PurchaseByUserColumn
        let purchaseMs = row.int(Column.purchaseMs)
        guard let rate = values.rate(currency: values.currency(row, Column.currency), atMs: purchaseMs) else {
            return (purchaseMs, .zero, .zero)
        }
        let gross = values.amount(row, Column.unitPrice).map { $0 * row.int(Column.quantity) } ?? .zero
        let refund = values.amount(row, Column.refundAmount) ?? .zero
        return (purchaseMs, gross * rate, refund * rate)
    }

    /// One line per currency whose spend `fx.csv` cannot convert, naming its first line: the cohorts'
    /// spend and ROAS are shown empty, and a nightly's reader must be told which rate is missing.
    func spendFXWarnings(_ currency: ReportingCurrency) -> [String] {
        missingSpendRates.warnings { code, missing in
            let line = missing.first?.description ?? ""
            let what = missing.count == 1
                ? "1 spend row (\(line)) is left out; its cohort's"
                : "\(missing.count) spend rows (the first \(line)) are left out; their cohorts'"
            return "fx.csv has no rate into \(currency.code) for \(code) on or before \(missing.lastDay): \(what) "
                + "\(currency.column("spend")) and ROAS are empty"
        }
    }

    /// One line per currency the cohorts' MMP purchase claims want a rate for and fx.csv has
    /// none, or per claims naming no currency: the empty `mmp_revenue` cells alone would not say why.
    func claimFXWarnings(_ currency: ReportingCurrency) -> [String] {
        missingClaimRates.warnings { code, missing in
            let claims = missing.count == 1 ? "1 MMP purchase claim" : "\(missing.count) MMP purchase claims"
            let days = missing.firstDay == missing.lastDay ? "on \(missing.firstDay)" : "\(missing.firstDay) to \(missing.lastDay)"
            let cohorts = missing.count == 1 ? "its cohort's" : "their cohorts'"
            let why = code.isEmpty
                ? "\(claims) made \(days) \(missing.count == 1 ? "names" : "name") no currency"
                : "fx.csv has no rate into \(currency.code) for \(code) on or before \(missing.lastDay): \(claims) made \(days) "
                    + (missing.count == 1 ? "is" : "are") + " left out"
            return why + "; \(cohorts) \(currency.column("mmp_revenue")) is empty"
        }
    }

    /// Growth's unit economics (cost per install, per payer, revenue per payer): `amount` shared by
    /// `count` heads, money in the reporting currency rounded to its minor unit like every such
    /// column; empty when there is no amount (no spend, or spend without an fx rate) or nobody to share it.
    static func perHead(_ amount: Amount?, _ count: Int, _ currency: ReportingCurrency) -> String {
        guard let amount, count > 0 else { return "" }
        return Money.format(currency.rounded(Amount(amount.decimal / Decimal(count))))
    }

    /// The header, money columns named for the reporting currency (`revenue_usd`, `spend_jpy`); the
    /// growth columns (`cpi`, ...) are in it too.
    static func header(_ currency: ReportingCurrency) -> [String] {
        ["install_date", "media_source", "campaign", "installs", "registrations", "payers"]
            + ["revenue_d0", "revenue_d7", "revenue_d30", "revenue", "refunds", "spend"].map(currency.column)
            + ["roas_d7", "roas", currency.column("mmp_revenue"), "cpi", "cost_per_payer", "revenue_per_payer"]
    }

    /// Money cells are rounded to the reporting currency's minor unit; ROAS divides the rounded cells.
    func write(_ sink: inout TextSink, currency: ReportingCurrency) throws {
        try sink.csvRecord(Self.header(currency))
        let round = currency.rounded
        for key in cohorts.keys.sorted() {
            guard var cohort = cohorts[key] else { continue }
            cohort.revenueD0 = round(cohort.revenueD0)
            cohort.revenueD7 = round(cohort.revenueD7)
            cohort.revenueD30 = round(cohort.revenueD30)
            cohort.revenue = round(cohort.revenue)
            cohort.refunds = round(cohort.refunds)
            cohort.spend = round(cohort.spend)
            cohort.mmpRevenue = round(cohort.mmpRevenue)
            func mature(_ days: Int64) -> Bool { cohort.anchorMs + days * Self.dayMs <= asOfMs }
            let d0: Amount? = mature(1) ? cohort.revenueD0 : nil
            let d7: Amount? = mature(8) ? cohort.revenueD7 : nil
            let d30: Amount? = mature(31) ? cohort.revenueD30 : nil
            func ratio(_ value: Amount?) -> String {
                let spend = cohort.spend.decimal
                guard cohort.hasSpend, !cohort.spendUnconverted, spend > 0, let value else { return "" }
                return Money.format(value.decimal / spend, scale: 4)
            }
            let spend: Amount? = cohort.hasSpend && !cohort.spendUnconverted ? cohort.spend : nil
            try sink.csvRecord([
                CSV.textCell(key.day), CSV.textCell(key.mediaSource), CSV.textCell(key.campaign),
                String(cohort.installs), String(cohort.registrations), String(cohort.payers),
                d0.map(Money.format) ?? "", d7.map(Money.format) ?? "", d30.map(Money.format) ?? "",
                Money.format(cohort.revenue), Money.format(cohort.refunds),
                spend.map(Money.format) ?? "", ratio(d7), ratio(cohort.revenue),
                cohort.mmpRevenueUnconverted ? "" : Money.format(cohort.mmpRevenue),
                Self.perHead(spend, cohort.installs, currency), Self.perHead(spend, cohort.payers, currency),
                Self.perHead(cohort.revenue, cohort.payers, currency),
            ])
        }
    }
}
