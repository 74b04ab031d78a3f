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
struct AttributionReport {
    static let dayMs: Int64 = 86_400_000

    struct CohortKey: Hashable, Comparable {
        var day: String
        var mediaSource: String
        var campaign: String
        static func < (a: CohortKey, b: CohortKey) -> Bool { (a.day, a.mediaSource, a.campaign) < (b.day, b.mediaSource, b.campaign) }
    }

    struct Cohort {
        var installs = 0
        var registrations = 0
        var payers = 0
        var anchorMs: Int64 = 0   // the latest install (or sign-up) in the cohort: maturity is measured from it
        var revenueD0: Decimal = 0
        var revenueD7: Decimal = 0
        var revenueD30: Decimal = 0
        var revenue: Decimal = 0
        var refunds: Decimal = 0
        var spend: Decimal = 0
        var hasSpend = false
        /// Some of the spend has no fx rate: the total is unknown, so it is shown empty.
        var spendUnconverted = false
        var mmpRevenue: Decimal = 0
    }

    struct Install {
        var ms: Int64
        var key: CohortKey
        var appsflyerID: String?
        var source: String
    }

    /// Each user's install and how it was joined (nil install: unattributed).
    var userInstalls: [(userID: String, install: Install?, matchedBy: String)] = []

    var cohorts: [CohortKey: Cohort] = [:]
    var matchedBy: [String: Int] = ["customer_user_id": 0, "appsflyer_id": 0, "idfv": 0, "idfa": 0, "unattributed": 0]
    var installRows = 0
    /// Verified purchases with no known user, counted in the unattributed cohort of their day.
    var userlessPurchases = 0
    /// Spend rows in a currency fx.csv cannot convert: their cohort's spend is shown empty.
    var unconvertedSpendRows = 0
    let asOfMs: Int64

    init(database: Database, zone: Zone, fx: FXRates, asOfMs: Int64) throws {
        self.asOfMs = asOfMs
        var mmpZone = Zone.utc
        try database.forEach("SELECT mmp_tz FROM int_run_settings") { mmpZone = Zone($0.string(0)) ?? .utc }

        // Distinct MMP rows (normalize keeps the first of each repeated row, MMPEvents), installs in file order.
        var installs: [Install] = []
        var installsByCUID: [String: [Int]] = [:]
        var installsByAppsflyer: [String: [Int]] = [:]
        var installsByIDFV: [String: [Int]] = [:]
        var installsByIDFA: [String: [Int]] = [:]
        var appsflyerIDsOfCUID: [String: Set<String>] = [:]
        var purchaseEvents: [(cuid: String?, appsflyerID: String?, usd: Decimal?)] = []
        try database.forEach("SELECT customer_user_id, appsflyer_id FROM stg_mmp__links") { row in
            appsflyerIDsOfCUID[row.string(0), default: []].insert(row.string(1))
        }
        try database.forEach("""
            SELECT install_wall_ms, media_source, campaign, customer_user_id, idfv, idfa, appsflyer_id, source
            FROM stg_mmp__installs WHERE retargeting = 0 ORDER BY rowid
            """) { row in
            let ms = mmpZone.utc(fromLocal: row.int(0))
            let index = installs.count
            let appsflyerID = row.optionalString(6)
            installs.append(Install(ms: ms, key: CohortKey(day: zone.day(ms), mediaSource: Self.mediaSource(row.optionalString(1)),
                                                           campaign: row.optionalString(2) ?? ""),
                                    appsflyerID: appsflyerID, source: row.string(7)))
            if let cuid = row.optionalString(3) { installsByCUID[cuid, default: []].append(index) }
            if let appsflyerID { installsByAppsflyer[appsflyerID, default: []].append(index) }
            if let idfv = row.optionalString(4) { installsByIDFV[idfv, default: []].append(index) }
            if let idfa = row.optionalString(5) { installsByIDFA[idfa, default: []].append(index) }
        }
        try database.forEach("""
            SELECT event_wall_ms, customer_user_id, appsflyer_id, revenue, revenue_currency, revenue_usd FROM stg_mmp__purchases
            """) { row in
            let eventDay = zone.day(mmpZone.utc(fromLocal: row.int(0)))
            var usd = row.optionalString(5).flatMap(Money.parse)
            if usd == nil, let amount = row.optionalString(3).flatMap(Money.parse), let currency = row.optionalString(4),
               let rate = fx.rate(currency, on: eventDay) {
                usd = amount * rate
            }
            purchaseEvents.append((row.optionalString(1), row.optionalString(2), usd))
        }
        installRows = installs.count
        for install in installs {
            add(install.key) { cohort in
                cohort.installs += 1
                cohort.anchorMs = max(cohort.anchorMs, install.ms)
            }
        }

        // Users: registrations, plus paying users who never registered (at their first purchase).
        var signups: [String: (ms: Int64, idfv: String?, idfa: String?, appsflyerID: String?, registered: Bool)] = [:]
        try database.forEach("""
            SELECT user_id, ts_ms, idfv, idfa, appsflyer_id FROM raw_registrations__users r JOIN files f USING (file_id)
            ORDER BY ts_ms, f.path, r.line
            """) { row in
            if signups[row.string(0)] == nil {
                signups[row.string(0)] = (row.int(1), row.optionalString(2), row.optionalString(3), row.optionalString(4), true)
            }
        }
        var purchasesByUser: [String: [(purchaseMs: Int64, grossUSD: Decimal, refundUSD: Decimal)]] = [:]
        try database.forEach("""
            SELECT user_id, purchase_ms, unit_price, quantity, currency, refund_amount FROM int_transactions_resolved
            WHERE is_revenue = 1 ORDER BY purchase_ms, transaction_id
            """) { row in
            let purchaseMs = row.int(1)
            let gross = (row.optionalString(2).flatMap(Money.parse) ?? 0) * Decimal(row.int(3))
            let rate = fx.rate(row.optionalString(4) ?? "", on: zone.day(purchaseMs)) ?? 0
            let refund = row.optionalString(5).flatMap(Money.parse) ?? 0
            guard let userID = row.optionalString(0) else {
                // Apple's money whose user nobody knows (no order, delivery or receipt): the
                // unattributed cohort of its purchase day, so every verified dollar lands in a row.
                let key = CohortKey(day: zone.day(purchaseMs), mediaSource: "unattributed", campaign: "")
                add(key) { cohort in
                    cohort.anchorMs = max(cohort.anchorMs, purchaseMs)
                    cohort.revenue += gross * rate
                    cohort.refunds += refund * rate
                    cohort.revenueD0 += gross * rate
                    cohort.revenueD7 += gross * rate
                    cohort.revenueD30 += gross * rate
                }
                userlessPurchases += 1
                return
            }
            purchasesByUser[userID, default: []].append((purchaseMs, gross * rate, refund * rate))
            if signups[userID] == nil { signups[userID] = (purchaseMs, nil, nil, nil, false) }
        }

        var cohortOfUser: [String: CohortKey] = [:]
        var installOfUser: [String: Install] = [:]
        for userID in signups.keys.sorted() {
            guard let signup = signups[userID] else { continue }
            func earliest(_ indexes: [Int]?) -> Install? {
                (indexes ?? []).map { installs[$0] }.filter { $0.ms <= signup.ms }.min { $0.ms < $1.ms }
            }
            var viaCUID = installsByCUID[userID] ?? []
            for appsflyerID in appsflyerIDsOfCUID[userID] ?? [] { viaCUID += installsByAppsflyer[appsflyerID] ?? [] }
            let candidates: [(String, Install?)] = [
                ("customer_user_id", earliest(viaCUID)),
                ("appsflyer_id", signup.appsflyerID.flatMap { earliest(installsByAppsflyer[$0]) }),
                ("idfv", signup.idfv.flatMap { earliest(installsByIDFV[$0]) }),
                ("idfa", signup.idfa.flatMap { earliest(installsByIDFA[$0]) }),
            ]
            let key: CohortKey
            if let (how, install) = candidates.first(where: { $0.1 != nil }), let install {
                matchedBy[how, default: 0] += 1
                key = install.key
                installOfUser[userID] = install
                userInstalls.append((userID, install, how))
            } else {
                matchedBy["unattributed", default: 0] += 1
                userInstalls.append((userID, nil, "unattributed"))
                key = CohortKey(day: zone.day(signup.ms), mediaSource: "unattributed", campaign: "")
                add(key) { $0.anchorMs = max($0.anchorMs, signup.ms) }
            }
            cohortOfUser[userID] = key
            let purchases = purchasesByUser[userID] ?? []
            let anchor = installOfUser[userID]?.ms ?? signup.ms
            add(key) { cohort in
                if signup.registered { cohort.registrations += 1 }
                if !purchases.isEmpty { cohort.payers += 1 }
                for purchase in purchases {
                    cohort.revenue += purchase.grossUSD
                    cohort.refunds += purchase.refundUSD
                    let age = purchase.purchaseMs - anchor
                    if age < 1 * Self.dayMs { cohort.revenueD0 += purchase.grossUSD }
                    if age < 8 * Self.dayMs { cohort.revenueD7 += purchase.grossUSD }
                    if age < 31 * Self.dayMs { cohort.revenueD30 += purchase.grossUSD }
                }
            }
        }

        // What the MMP itself claimed for the same users.
        var userOfAppsflyer: [String: String] = [:]
        for (userID, install) in installOfUser { if let id = install.appsflyerID { userOfAppsflyer[id] = userID } }
        for event in purchaseEvents {
            guard let usd = event.usd else { continue }
            let userID = event.cuid.flatMap { cohortOfUser[$0] != nil ? $0 : nil } ?? event.appsflyerID.flatMap { userOfAppsflyer[$0] }
            if let userID, let key = cohortOfUser[userID] { add(key) { $0.mmpRevenue += usd } }
        }

        // Spend joins on day, media source and campaign; spend with no installs keeps its row.
        try database.forEach("SELECT day, media_source, campaign, spend, currency FROM raw_spend__days") { row in
            guard let spend = Money.parse(row.string(3)) else { return }
            let rate = fx.rate(row.string(4), on: row.string(0))
            if rate == nil { unconvertedSpendRows += 1 }
            let key = CohortKey(day: row.string(0), mediaSource: Self.mediaSource(row.optionalString(1)), campaign: row.optionalString(2) ?? "")
            let dayStart = Timestamp.startOfDay(row.string(0)) ?? 0
            add(key) { cohort in
                if let rate { cohort.spend += spend * rate } else { cohort.spendUnconverted = true }
                cohort.hasSpend = true
                // A cohort with spend and no installs matures from its day.
                cohort.anchorMs = max(cohort.anchorMs, dayStart - zone.offsetMs(atUTC: dayStart))
            }
        }
    }

    /// Organic is an empty media source or `organic` in any case; `restricted` stays its own bucket.
    static func mediaSource(_ raw: String?) -> String {
        guard let raw = raw.flatMap(MMPValue.clean), raw.lowercased() != "organic" else { return "organic" }
        return raw
    }

    private mutating func add(_ key: CohortKey, _ change: (inout Cohort) -> Void) {
        var cohort = cohorts[key] ?? Cohort()
        change(&cohort)
        cohorts[key] = cohort
    }

    /// Keeps each user's install in `fct_user_installs`, for `history`.
    func store(_ database: Database) throws {
        try database.transaction {
            try database.execute("""
                DROP TABLE IF EXISTS fct_user_installs;
                CREATE TABLE fct_user_installs (
                  user_id TEXT PRIMARY KEY, install_ms INTEGER, media_source TEXT, campaign TEXT, matched_by TEXT NOT NULL, source TEXT
                ) WITHOUT ROWID;
                """)
            let insert = try database.cached("INSERT INTO fct_user_installs VALUES (?, ?, ?, ?, ?, ?)")
            for entry in userInstalls {
                try insert.insert([.text(entry.userID), SQLValue(entry.install?.ms), SQLValue(entry.install?.key.mediaSource),
                                   SQLValue(entry.install?.key.campaign), .text(entry.matchedBy), SQLValue(entry.install?.source)])
            }
        }
    }

    static let header = [
        "install_date", "media_source", "campaign", "installs", "registrations", "payers", "revenue_d0_usd", "revenue_d7_usd",
        "revenue_d30_usd", "revenue_usd", "refunds_usd", "spend_usd", "roas_d7", "roas", "mmp_revenue_usd",
    ]

    func write(_ sink: inout TextSink) throws {
        try sink.csvRecord(Self.header)
        for key in cohorts.keys.sorted() {
            guard let cohort = cohorts[key] else { continue }
            func mature(_ days: Int64) -> Bool { cohort.anchorMs + days * Self.dayMs <= asOfMs }
            let d7: Decimal? = mature(8) ? cohort.revenueD7 : nil
            func ratio(_ value: Decimal?) -> String {
                guard cohort.hasSpend, !cohort.spendUnconverted, cohort.spend > 0, let value else { return "" }
                return Money.format(value / cohort.spend, scale: 4)
            }
            try sink.csvRecord([
                CSV.textCell(key.day), CSV.textCell(key.mediaSource), CSV.textCell(key.campaign),
                String(cohort.installs), String(cohort.registrations), String(cohort.payers),
                mature(1) ? Money.format(cohort.revenueD0) : "", d7.map(Money.format) ?? "",
                mature(31) ? Money.format(cohort.revenueD30) : "", Money.format(cohort.revenue), Money.format(cohort.refunds),
                cohort.hasSpend && !cohort.spendUnconverted ? Money.format(cohort.spend) : "", ratio(d7), ratio(cohort.revenue), Money.format(cohort.mmpRevenue),
            ])
        }
    }
}
