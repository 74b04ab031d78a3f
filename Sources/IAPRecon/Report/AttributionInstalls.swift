/// The MMP's installs as attribution matches users to them: every install read once from the
/// store, found again by each id that reaches it (CONTRACT.md §1.5, §3).
extension AttributionReport {
    /// The install each id (a CUID, AppsFlyer ID, IDFV or IDFA) reaches first: its earliest, the
    /// first in file order among installs at one time. The earliest of an id's installs at or before
    /// a sign-up is that one or none, since every other is no earlier: one lookup per user and id,
    /// however many installs share the id (a device farm's fixed IDFA).
    /// Ids are held as 128-bit fingerprints, not strings: memory stays small for millions of rows.
    struct InstallIndex {
        private var first: [RowFingerprint: (install: Int32, ms: Int64)] = [:]

        /// Adds install number `install` (numbered in file order, from 0) at `ms`, reached by `id`;
        /// installs are added in file order, so a later one at the same time is not the first.
        mutating func add(_ id: RowFingerprint?, install: Int, ms: Int64) {
            guard let id else { return }
            if let known = first[id], known.ms <= ms { return }
            first[id] = (Int32(install), ms)
        }

        /// The earliest of `id`'s installs at or before `ms` (the first in file order among
        /// installs at one time), or `best` when no such install is earlier.
        func earliest(of id: RowFingerprint?, atOrBefore ms: Int64, in installs: [Install], than best: Int? = nil) -> Int? {
            guard let id, let known = first[id] else { return best }
            let (index, install) = (Int(known.install), known.ms)
            guard install <= ms else { return best }
            if let best, (installs[best].ms, best) <= (install, index) { return best }
            return index
        }
    }

    /// Every non-retargeting install in file order (distinct rows: the first of a repeated row,
    /// `MMPEvents`), the ids that reach them, and the AppsFlyer IDs seen with each Customer User ID
    /// (on any event; their installs are the CUID's too). Each install's `slot` is, until the
    /// matching numbers the cohorts, its cohort's place in `cohorts`, so the matching thread looks
    /// up a few hundred cohorts, not one per install.
    /// The MMP's purchase claims come from the same pass over the rows: one read of them per report.
    struct InstallTable: Sendable {
        var installs: [Install] = []
        /// The distinct cohorts of the installs, in the order they first appear.
        var cohorts: [CohortKey] = []
        var byCUID = InstallIndex(), byAppsflyer = InstallIndex(), byIDFV = InstallIndex(), byIDFA = InstallIndex()
        var linkedAppsflyerIDs = LinkedAppsflyerIDs()
        /// What the MMP claimed, by the ids its claims name, in the order each pair first claims.
        var claims: [ClaimedRevenue] = []

        init(store: some ReportStore, zone: Zone, mmpZone: Zone, fx: FXRates) throws {
            var day = DayNames(zone)
            var money = AmountReader(fx: fx, zone: zone)
            let usdCurrency = money.currency("USD")
            var claimers = FirstSeen<Claimer>()
            // Installs repeat a few hundred (media source, campaign) pairs and a few dozen days: each
            // row is looked up by the fingerprints of its bytes and its day's number, and only a
            // pair seen for the first time is made into strings (and cleaned).
            var campaignNumbers = FirstSeen<CampaignBytes>()
            var campaigns: [(mediaSource: String, campaign: String)] = []
            var cohortNumbers = FirstSeen<InstallCohort>()
            try store.forEachCountedMMPEvent { row in
                // Retargeting is not acquisition: its rows link no ids and are no installs.
                guard row.int(Column.retargeting) == 0 else { return }
                // Each id's fingerprint is made once per row: the link, the claim and the install share them.
                let user = row.fingerprint(Column.customerUserID), appsflyerID = row.fingerprint(Column.appsflyerID)
                if let user, let appsflyerID {
                    linkedAppsflyerIDs.link(user, appsflyerID)
                }
                if row.text(Column.eventName, equals: "af_purchase") {
                    // A purchase event that names no revenue claims nothing.
                    guard let claim = Self.claim(row, mmpZone: mmpZone, usdCurrency: usdCurrency, money: &money) else { return }
                    let claimer = Claimer(customerUserID: user, appsflyerID: appsflyerID)
                    let (number, isNew) = claimers.number(claimer)
                    if isNew { claims.append(ClaimedRevenue(claimer: claimer)) }
                    switch claim {
                    case .converted(let amount): claims[number].amount += amount
                    case .unconverted(let currency, let day):
                        claims[number].missingRates.add(currency: currency, .init(count: 1, firstDay: day, lastDay: day))
                    }
                    return
                }
                guard row.text(Column.eventName, equals: "install") else { return }
                let ms = mmpZone.utc(fromLocal: row.optionalInt(Column.installWallMs) ?? row.int(Column.eventWallMs))
                let index = installs.count
                let (campaign, newCampaign) = campaignNumbers.number(
                    CampaignBytes(mediaSource: row.fingerprint(Column.mediaSource), campaign: row.fingerprint(Column.campaign)))
                if newCampaign {
                    campaigns.append((AttributionReport.mediaSource(row.optionalString(Column.mediaSource)), row.optionalString(Column.campaign) ?? ""))
                }
                let (cohort, newCohort) = cohortNumbers.number(InstallCohort(day: day.number(ms), campaign: Int32(campaign)))
                if newCohort {
                    let (mediaSource, campaignName) = campaigns[campaign]
                    cohorts.append(CohortKey(day: day(ms), mediaSource: mediaSource, campaign: campaignName))
                }
                installs.append(Install(ms: ms, slot: cohort, appsflyerID: appsflyerID, file: row.int(Column.fileID), line: row.int(Column.line)))
                byCUID.add(user, install: index, ms: ms)
                byAppsflyer.add(appsflyerID, install: index, ms: ms)
                byIDFV.add(row.fingerprint(Column.idfv), install: index, ms: ms)
                byIDFA.add(row.fingerprint(Column.idfa), install: index, ms: ms)
            }
        }

        /// The ids an `af_purchase` row names. Every claim of one pair goes to the same user, whoever
        /// the matching finds that to be, so a pair's claims are summed as they are read: a report
        /// holds a sum per paying pair, not a row per purchase.
        struct Claimer: Hashable, Sendable {
            var customerUserID: RowFingerprint?
            var appsflyerID: RowFingerprint?

            /// Looked up once per claim: fingerprints are hashes already (`RowFingerprint`).
            func _rawHashValue(seed: Int) -> Int {
                let (first, second) = RowFingerprint.words(customerUserID, appsflyerID)
                return RowFingerprint.hashValue(first, second, seed: seed)
            }
        }

        /// The sum of one pair's claims in the reporting currency, converted at each event's day.
        struct ClaimedRevenue: Sendable {
            var claimer: Claimer
            var amount = Amount.zero
            /// The pair's claims with no fx rate, by the currency wanted and event day: its cohort's MMP total is unknown.
            var missingRates = MissingRates<Never>()
        }

        /// What one claim adds to its pair's sum.
        enum Claim {
            case converted(Amount)
            /// No fx rate converts it: the total it is part of is unknown. `currency` is the one a rate
            /// is wanted for (empty when the claim names none), `day` the event's.
            case unconverted(currency: String, day: String)
        }

        /// What a distinct, non-retargeting `af_purchase` row claims in the reporting currency: the
        /// MMP's own dollar figure when it gave one (a dollar is not a yen), else its local amount,
        /// each at its event day's rate; nil when it names no revenue at all.
        private static func claim(_ row: some StoredRow, mmpZone: Zone, usdCurrency: Int32, money: inout AmountReader) -> Claim? {
            let usd = money.amount(row, Column.revenueUSD), local = money.amount(row, Column.revenue)
            guard usd != nil || local != nil else { return nil }
            let eventMs = mmpZone.utc(fromLocal: row.int(Column.eventWallMs))
            if let usd, let converted = usd.converted(at: money.rate(currency: usdCurrency, atMs: eventMs)) { return .converted(converted) }
            // A claim of nothing is nothing in every currency, or in none.
            let currency = row.optionalString(Column.revenueCurrency)
            if let local, let converted = local.converted(at: currency.flatMap { money.rate(currency: money.currency($0), atMs: eventMs) }) {
                return .converted(converted)
            }
            // A dollar figure is converted first: a dollar rate is the one wanted.
            return .unconverted(currency: usd != nil ? "USD" : currency ?? "", day: money.day(eventMs))
        }

        private typealias Column = MMPEventColumn

        /// An install's media source and campaign as stored (nil for NULL), before they are cleaned.
        private struct CampaignBytes: Hashable {
            var mediaSource: RowFingerprint?
            var campaign: RowFingerprint?

            /// Looked up once per install: fingerprints are hashes already (`RowFingerprint`).
            func _rawHashValue(seed: Int) -> Int {
                let (first, second) = RowFingerprint.words(mediaSource, campaign)
                return RowFingerprint.hashValue(first, second, seed: seed)
            }
        }

        /// An install's cohort while the table is read: its day's number and its campaign's place.
        private struct InstallCohort: Hashable {
            var day: Int64
            var campaign: Int32
        }
    }

    /// The zone the MMP's wall-clock times are in, as the join recorded it.
    static func mmpZone(_ store: some ReportStore) throws -> Zone {
        guard case .current(let settings) = try store.reconciliation() else { return .utc }
        return Zone(settings.mmpZone) ?? .utc
    }

    /// Starts reading the installs and their ids on a worker's own connection (`InstallTable`).
    /// The report starts it before its other background work: the matching waits for it.
    static func readInstalls(store: some ReportStore, zone: Zone, fx: FXRates) throws -> Background<InstallTable> {
        let mmpZone = try mmpZone(store)
        return Background { [open = store.opener] in
            try InstallTable(store: open(), zone: zone, mmpZone: mmpZone, fx: fx)
        }
    }

    /// The AppsFlyer IDs seen with each Customer User ID, by fingerprint. Nearly every user has
    /// one, held in the table itself; only a user's further ones get a list of their own, so a
    /// report does not allocate a list per user.
    struct LinkedAppsflyerIDs {
        private var first: [RowFingerprint: RowFingerprint] = [:]
        private var further: [RowFingerprint: [RowFingerprint]] = [:]
        /// Every further link, to find one known already in one lookup: a Customer User ID that an
        /// app sets to a placeholder (`0`, `guest`) before login is on every device's rows, and a
        /// search of its list for each row would take time growing with the square of the devices.
        private var furtherLinks = Set<Link>()

        private struct Link: Hashable {
            var user: RowFingerprint
            var appsflyerID: RowFingerprint

            /// Fingerprints are hashes already (`RowFingerprint`).
            func _rawHashValue(seed: Int) -> Int {
                let (first, second) = RowFingerprint.words(user, appsflyerID)
                return RowFingerprint.hashValue(first, second, seed: seed)
            }
        }

        /// Links `appsflyerID` to `user`. Most rows repeat a link already known: one lookup.
        mutating func link(_ user: RowFingerprint, _ appsflyerID: RowFingerprint) {
            guard let known = first[user] else {
                first[user] = appsflyerID
                return
            }
            guard known != appsflyerID, furtherLinks.insert(Link(user: user, appsflyerID: appsflyerID)).inserted else { return }
            further[user, default: []].append(appsflyerID)
        }

        /// Calls `body` with each AppsFlyer ID linked to `user`.
        func forEach(of user: RowFingerprint, _ body: (RowFingerprint) -> Void) {
            guard let known = first[user] else { return }
            body(known)
            for appsflyerID in further[user] ?? [] { body(appsflyerID) }
        }
    }
}
