import Foundation

/// One generation run: the folder being written, the truth being collected, and
/// the shared tables (exchange rates, installs per campaign for spend).
final class GeneratorRun {
    let seed: UInt64
    let users: Int
    let days: Int
    let start: Millis
    /// The last event time of the inputs: a sign-up one second before the end of the last day.
    let asOf: Millis
    let directory: String
    let folder: InputFolder
    let fx: ExchangeRates
    var truth = Truth()
    /// Paid installs per `day × campaign count + campaign`.
    private var installs: [Int: Int] = [:]
    /// Attribution files already holding an unbalanced-quote row (it must be a file's last row).
    var unbalancedQuoteFiles: Set<String> = []

    init(options: GeneratorOptions, directory: String) throws {
        guard options.users >= 1 else { throw GeneratorError("users must be at least 1") }
        guard options.days >= 1, options.days <= 3_660 else { throw GeneratorError("days must be 1...3660") }
        guard let start = Clock.parseDay(options.startDay) else {
            throw GeneratorError("startDay must be yyyy-MM-dd, not '\(options.startDay)'")
        }
        seed = options.seed
        users = options.users
        days = options.days
        self.start = start
        asOf = start + Int64(options.days) * Clock.day - Clock.second
        self.directory = directory
        folder = InputFolder(directory: directory, start: start, days: options.days,
                             gzipFirstServerDay: options.gzipServer)
        fx = ExchangeRates(days: options.days, seed: options.seed)
        truth.asOf = asOf
    }

    func countInstall(campaign: Int, at time: Millis) {
        installs[folder.day(of: time) * Campaigns.acquisition.count + campaign, default: 0] += 1
    }

    func run() throws -> GeneratorReport {
        try prepareDirectory()
        for slot in 0..<users {
            var simulation = SlotSimulation(run: self, slot: slot)
            try simulation.simulate()
        }
        var closing = SlotSimulation(run: self, slot: users * 2)
        try closing.closingSignUp()
        let files = try folder.finish()
        try writeWholeFile(directory + "/catalog.csv", Catalog.csv())
        try writeWholeFile(directory + "/fx.csv", fx.csv(startDay: start))
        let spend = spendCSV()
        try writeWholeFile(directory + "/spend/spend.csv", spend)

        var paths = files.map(\.relativePath)
        paths.append(contentsOf: ["catalog.csv", "fx.csv", "spend/spend.csv"])
        paths.sort()
        let lines = files.reduce(0) { $0 + $1.lines } + Catalog.products.filter(\.inCatalog).count
            + fx.rates.count * Catalog.currencies.count + spend.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } - 1
        let bytes = files.reduce(0) { $0 + $1.bytes } + Catalog.csv().count + fx.csv(startDay: start).count + spend.count
        try writeWholeFile(directory + "/truth.json", truth.json(files: paths, lines: lines, bytes: bytes))
        // The root of the chain every JWS here is signed with, for `--trust-root`.
        try makeDirectory(directory + "/trust")
        try writeWholeFile(directory + "/trust/test-root.pem", Array(TestSigningChain.rootPEM.utf8))
        var asOfText = LineBuffer(capacity: 24)
        asOfText.isoTime(asOf, millis: false)
        return GeneratorReport(files: paths, lines: lines, bytes: bytes, plantedFindings: truth.findings.count,
                               plantedRejects: truth.rejects, asOf: String(decoding: asOfText.bytes, as: UTF8.self))
    }

    /// Creates the folders and removes files an earlier run left that this run would not overwrite.
    private func prepareDirectory() throws {
        try makeDirectory(directory)
        let manager = FileManager.default
        for folderName in Source.allCases.map(\.folder) + ["spend"] {
            let path = directory + "/" + folderName
            try makeDirectory(path)
            let prefix = folderName == "attribution" ? "appsflyer-" : folderName + "-"
            for name in (try? manager.contentsOfDirectory(atPath: path)) ?? []
            where (name.hasPrefix(".") && name.hasSuffix(".spool")) || (name.hasPrefix(prefix)
                && (name.hasSuffix(".jsonl") || name.hasSuffix(".jsonl.gz") || name.hasSuffix(".csv"))) {
                try? manager.removeItem(atPath: path + "/" + name)
            }
        }
    }

    /// `spend/spend.csv`: each paid campaign's daily spend, about its installs × CPI,
    /// plus one campaign that spends and never brings an install.
    private func spendCSV() -> [UInt8] {
        var random = SeededRandom(seed: seed, stream: 0x5BE4D)
        var rows: [(date: String, source: String, campaign: String, amount: String, currency: String)] = []
        for day in 0..<days {
            var date = LineBuffer(capacity: 10)
            date.date(start + Int64(day) * Clock.day)
            let dateText = String(decoding: date.bytes, as: UTF8.self)
            for (index, campaign) in Campaigns.acquisition.enumerated() where campaign.isPaid {
                let count = installs[day * Campaigns.acquisition.count + index] ?? 0
                guard count > 0 else { continue }
                let hundredths = Int64(count) * campaign.cpi * Int64(random.int(85, 118)) / 100
                rows.append((dateText, campaign.mediaSource, campaign.name,
                             Self.spendAmount(hundredths, currency: campaign.currency),
                             Catalog.currencies[campaign.currency].code))
            }
            let idle = Campaigns.spendOnly
            rows.append((dateText, idle.mediaSource, idle.campaign,
                         Self.spendAmount(idle.dailySpend * Int64(random.int(90, 110)) / 100, currency: idle.currency),
                         Catalog.currencies[idle.currency].code))
        }
        rows.sort { ($0.date, $0.source, $0.campaign) < ($1.date, $1.source, $1.campaign) }
        var out = LineBuffer()
        out.raw("date,media_source,campaign,spend,currency\n")
        for row in rows {
            out.text(row.date); out.byte(UInt8(ascii: ","))
            out.csvCell(row.source); out.byte(UInt8(ascii: ","))
            out.csvCell(row.campaign); out.byte(UInt8(ascii: ","))
            out.text(row.amount); out.byte(UInt8(ascii: ","))
            out.text(row.currency); out.byte(10)
        }
        return out.bytes
    }

    private static func spendAmount(_ hundredths: Int64, currency: Int) -> String {
        var out = LineBuffer(capacity: 16)
        if Catalog.currencies[currency].decimals == 0 {
            out.int(hundredths / 100)
        } else {
            out.decimal(hundredths, scale: 2, minimumFraction: 2)
        }
        return String(decoding: out.bytes, as: UTF8.self)
    }
}
