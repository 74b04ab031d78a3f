import Foundation
import IAPRecon

/// Whether a peer gave iaprecon's answers on the same input: a speed ratio compares the same
/// work only when both did it. Read from the files of the last round: iaprecon's run without
/// signature checks (the peers check none) and the peer's.
///
/// Compared where the peers cover the contract (their README): findings by kind and key,
/// attribution's counts and verified revenue per cohort, and verified gross in all. Left out,
/// and said so in the table: `unverified_apple_sales` (the peers read no Sales Reports),
/// attribution's refunds (a `REFUND_PRORATED` refund counts the whole price there) and ROAS
/// (ours divides the rounded row, theirs the exact amounts).
///
/// One reading differs on purpose: Apple's V2 `price` is the whole transaction's, for all its
/// units, and iaprecon counts it once; the peers, written to the contract's first letter,
/// multiply it by the quantity again. Their gross is then ours plus those purchases' gross times
/// their quantity less one, and a cohort's revenue may be more than ours by as much, not less;
/// the comparison expects exactly that, names it, and nothing else apart.
struct PeerAgreement: Equatable, Sendable {
    var peer: Peer
    var findings = Tally()
    /// Cohorts whose installs, registrations, payers and verified revenue columns agree.
    var cohorts = Tally()
    /// Differences found, for the reader to look up: a few of each part.
    var examples: [String] = []
    /// `summary.json`'s verified gross (the sum of rounded rows) and the peer's exact one.
    var ourGross: Decimal?
    var peerGross: Decimal?
    /// How far rounding row by row may move our gross: half a cent per revenue row.
    var grossTolerance: Decimal = 0
    /// Our findings of kinds the peers do not look for.
    var uncoveredFindings = 0
    /// The purchases the peers count again per unit, from our `transactions.csv`.
    var recounted = Recounted()
    /// Cohorts whose counts agree and whose revenue the peer has more of, as the recounted
    /// purchases give it: how many, and by how much `revenue_usd` in all.
    var recountedCohorts = 0
    var recountedCohortRevenue: Decimal = 0

    /// Verified purchases of several units that Apple priced in total (`price_source` `v2_price`).
    struct Recounted: Equatable, Sendable {
        var purchases = 0
        /// What the peers add to the verified gross: each one's `gross_usd` times its quantity less one.
        var extraGross: Decimal = 0
        /// How far our rounded `gross_usd` may move that: half a cent per unit counted again.
        var tolerance: Decimal = 0
    }

    /// Keys in both, only in ours, only in the peer's.
    struct Tally: Equatable, Sendable {
        var equal = 0
        var onlyOurs = 0
        var onlyPeer = 0
        /// In both, but with other values.
        var differing = 0

        var agrees: Bool { onlyOurs == 0 && onlyPeer == 0 && differing == 0 }
    }

    static let examplesPerPart = 3
    /// Kinds the peers do not look for (they read no `apple/` reports).
    static let uncoveredKinds: Set<String> = ["unverified_apple_sales"]
    /// The attribution columns compared: counts exactly, money after rounding the peer's exact
    /// amount half-even to cents as ours is.
    static let countColumns = ["installs", "registrations", "payers"]
    static let moneyColumns = ["revenue_d0_usd", "revenue_d7_usd", "revenue_d30_usd", "revenue_usd"]

    var grossAgrees: Bool? {
        guard let ourGross, let peerGross else { return nil }
        let difference = ourGross + recounted.extraGross - peerGross
        return (difference < 0 ? -difference : difference) <= grossTolerance + recounted.tolerance
    }

    /// The cohorts' extra revenue is at most what the recounted purchases add: some of their buyers
    /// were installed by no cohort.
    var recountedCohortsFit: Bool { recountedCohortRevenue <= recounted.extraGross + recounted.tolerance }

    /// A gross that could not be read on either side is no agreement.
    var agrees: Bool { findings.agrees && cohorts.agrees && grossAgrees == true && recountedCohortsFit }

    /// Compares the files in `ours` (an `iaprecon run --out` folder) with those in `theirs` (the peer's).
    init(peer: Peer, ours: String, theirs: String) throws {
        self.peer = peer
        recounted = try Self.recounted(try CSVTable(path: ours + "/transactions.csv"))
        try compareFindings(try CSVTable(path: ours + "/findings.csv"), try CSVTable(path: theirs + "/findings.csv"))
        try compareCohorts(try CSVTable(path: ours + "/attribution.csv"), try CSVTable(path: theirs + "/attribution.csv"))
        try compareGross(summary: ours + "/summary.json", revenue: try CSVTable(path: ours + "/revenue_daily.csv"),
                         theirs: try CSVTable(path: theirs + "/revenue_daily.csv"))
    }

    /// The key the peers' README gives a finding: its chain for a shared Apple ID, its user for
    /// several Apple IDs, else its transaction.
    static func findingKey(_ row: [String: String]) -> (kind: String, key: String) {
        let kind = row["kind"] ?? ""
        let column = switch kind {
        case "shared_apple_id_subscription": "original_transaction_id"
        case "multi_apple_id_subscription": "user_id"
        default: "transaction_id"
        }
        return (kind, row[column] ?? "")
    }

    private mutating func compareFindings(_ ours: CSVTable, _ theirs: CSVTable) throws {
        func keys(_ table: CSVTable) throws -> [(kind: String, key: String)] {
            try table.records(["kind", "transaction_id", "original_transaction_id", "user_id"]).map(Self.findingKey)
        }
        let covered = try keys(ours).filter { !Self.uncoveredKinds.contains($0.kind) }
        uncoveredFindings = ours.rows.count - covered.count
        let ourKeys = Set(covered.map { $0.kind + " " + $0.key })
        let peerKeys = Set(try keys(theirs).map { $0.kind + " " + $0.key })
        let (onlyOurs, onlyPeer) = (ourKeys.subtracting(peerKeys), peerKeys.subtracting(ourKeys))
        findings.equal = ourKeys.count - onlyOurs.count
        (findings.onlyOurs, findings.onlyPeer) = (onlyOurs.count, onlyPeer.count)
        examples += onlyOurs.sorted().prefix(Self.examplesPerPart).map { "finding only in ours: \($0)" }
        examples += onlyPeer.sorted().prefix(Self.examplesPerPart).map { "finding only in \(peer.rawValue)'s: \($0)" }
    }

    private mutating func compareCohorts(_ ours: CSVTable, _ theirs: CSVTable) throws {
        let columns = ["install_date", "media_source", "campaign"] + Self.countColumns + Self.moneyColumns
        func byCohort(_ table: CSVTable) throws -> [String: [String: String]] {
            var rows: [String: [String: String]] = [:]
            for row in try table.records(columns) {
                rows[[row["install_date"], row["media_source"], row["campaign"]].map { $0 ?? "" }.joined(separator: " / ")] = row
            }
            return rows
        }
        let (ourRows, peerRows) = (try byCohort(ours), try byCohort(theirs))
        var differences: [String] = []
        for (cohort, ourRow) in ourRows.sorted(by: { $0.key < $1.key }) {
            guard let peerRow = peerRows[cohort] else {
                cohorts.onlyOurs += 1
                differences.append("cohort only in ours: \(cohort)")
                continue
            }
            let differing = Self.countColumns.filter { ourRow[$0] != peerRow[$0] }
                + Self.moneyColumns.filter { !Self.sameMoney(ours: ourRow[$0] ?? "", peer: peerRow[$0] ?? "") }
            if differing.isEmpty {
                cohorts.equal += 1
            } else if recounted.purchases > 0, let extra = Self.moreRevenue(ours: ourRow, peer: peerRow, in: differing) {
                recountedCohorts += 1
                recountedCohortRevenue += extra
            } else {
                cohorts.differing += 1
                differences.append("cohort \(cohort): " + differing.map { "\($0) \(ourRow[$0] ?? "") vs \(peerRow[$0] ?? "")" }
                    .joined(separator: ", "))
            }
        }
        for cohort in peerRows.keys.sorted() where ourRows[cohort] == nil {
            cohorts.onlyPeer += 1
            differences.append("cohort only in \(peer.rawValue)'s: \(cohort)")
        }
        examples += differences.prefix(Self.examplesPerPart)
        if !recountedCohortsFit {
            examples.append("cohorts' revenue: \(Money.format(recountedCohortRevenue)) more in \(recountedCohorts) cohorts, more than "
                + "the \(recounted.purchases) purchases counted again per unit add (\(Money.format(recounted.extraGross)))")
        }
    }

    /// The verified purchases of several units Apple priced in total, in our `transactions.csv`.
    static func recounted(_ transactions: CSVTable) throws -> Recounted {
        var recounted = Recounted()
        let halfCent = Decimal(sign: .plus, exponent: -3, significand: 5)
        for row in try transactions.records(["price_source", "quantity", "revenue", "gross_usd"])
        where row["price_source"] == "v2_price" && row["revenue"] == "true" {
            guard let quantity = Int(row["quantity"] ?? ""), quantity > 1 else { continue }
            guard let gross = decimal(row["gross_usd"] ?? "") else {
                throw BenchError("\(transactions.path): a v2_price purchase of \(quantity) units has no gross_usd to compare by")
            }
            recounted.purchases += 1
            recounted.extraGross += gross * Decimal(quantity - 1)
            recounted.tolerance += halfCent * Decimal(quantity - 1)
        }
        return recounted
    }

    /// How much more `revenue_usd` the peer's cohort has, when only money columns differ and the
    /// peer's is more in each: what counting purchases again gives. Nil for any other difference.
    static func moreRevenue(ours: [String: String], peer: [String: String], in differing: [String]) -> Decimal? {
        guard differing.allSatisfy(moneyColumns.contains) else { return nil }
        for column in differing {
            guard let mine = decimal(ours[column] ?? ""), let theirs = decimal(peer[column] ?? ""), theirs > mine else { return nil }
        }
        guard let mine = decimal(ours["revenue_usd"] ?? ""), let theirs = decimal(peer["revenue_usd"] ?? "") else { return nil }
        return theirs - mine
    }

    /// Our rounded amount against the peer's exact one: equal when the peer's, rounded half-even
    /// to cents, is ours; both empty (a window not yet mature) is equal too.
    static func sameMoney(ours: String, peer: String) -> Bool {
        if ours.isEmpty || peer.isEmpty { return ours.isEmpty && peer.isEmpty }
        guard let ours = decimal(ours), let peer = decimal(peer) else { return false }
        var exact = peer
        var rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 2, .bankers)
        return rounded == ours
    }

    private mutating func compareGross(summary: String, revenue: CSVTable, theirs: CSVTable) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: summary))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        ourGross = ((object?["revenue"] as? [String: Any])?["gross_usd"] as? String).flatMap(Self.decimal)
        let rounded = try revenue.records(["gross_usd"]).filter { !($0["gross_usd"] ?? "").isEmpty }.count
        grossTolerance = Decimal(rounded) * Decimal(sign: .plus, exponent: -3, significand: 5)
        peerGross = try theirs.records(["date", "gross_usd"]).first { $0["date"] == "all" }?["gross_usd"].flatMap(Self.decimal)
        if ourGross == nil { examples.append("verified gross: no revenue.gross_usd in \(summary)") }
        if peerGross == nil { examples.append("verified gross: no 'all' row with a gross_usd in \(theirs.path)") }
        if grossAgrees == false, let ourGross, let peerGross {
            let recounting = recounted.purchases == 0 ? ""
                : " and \(recounted.purchases) purchases counted again per unit add (\(Money.format(recounted.extraGross)))"
            examples.append("verified gross: ours \(Money.format(ourGross)) vs \(Money.format(peerGross)), "
                + "more apart than rounding \(rounded) rows allows (\(Money.format(grossTolerance)))" + recounting)
        }
    }

    /// An exact decimal from a cell; the peers' sums may carry more digits than an input amount.
    static func decimal(_ text: String) -> Decimal? {
        Money.parse(text) ?? Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}

/// A CSV file's header and records (RFC 4180: a quoted cell may hold commas, quotes and line breaks).
struct CSVTable {
    var path: String
    var header: [String]
    var rows: [[String]]

    init(path: String) throws {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchError("cannot read \(path) to compare the peers' answers with ours")
        }
        self.path = path
        var records = Self.records(of: text)
        guard !records.isEmpty else { throw BenchError("\(path) is empty: no header to compare by") }
        header = records.removeFirst()
        rows = records
    }

    /// Each record as cells by column name, for the `columns` asked for.
    func records(_ columns: [String]) throws -> [[String: String]] {
        var places: [(String, Int)] = []
        for column in columns {
            guard let place = header.firstIndex(of: column) else { throw BenchError("\(path) has no column \(column)") }
            places.append((column, place))
        }
        return rows.map { cells in
            Dictionary(uniqueKeysWithValues: places.map { ($0.0, $0.1 < cells.count ? cells[$0.1] : "") })
        }
    }

    /// The records of `text` (`CSV.fields` reads each). A quoted cell may hold a line break: a
    /// record goes on over the next line until its quotes balance. Lines end in `\n` or `\r\n`
    /// (Python's csv module writes the latter).
    static func records(of text: String) -> [[String]] {
        var records: [[String]] = []
        var pending: String?
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let record = pending.map { $0 + "\n" + line } ?? String(line)
            guard let cells = CSV.fields(record) else { pending = record; continue }
            pending = nil
            // The empty line after the last line break ends the file, it is no record.
            if !record.isEmpty { records.append(cells) }
        }
        return records
    }
}
