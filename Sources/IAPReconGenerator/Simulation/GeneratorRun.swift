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
    /// Day files go into `YYYY-MM-DD/` folders.
    let partitioned: Bool
    let folder: InputFolder
    let fx: ExchangeRates
    var truth = Truth()
    /// What Apple's Sales Reports will count (`SalesLedger`).
    var sales = SalesLedger()
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
                             gzipFirstServerDay: options.gzipServer, partitioned: options.partitioned)
        partitioned = options.partitioned
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
        try plantUnverifiedSales()
        let files = try folder.finish()
        try writeWholeFile(directory + "/catalog.csv", Catalog.csv())
        try writeWholeFile(directory + "/fx.csv", fx.csv(startDay: start))
        let spend = spendCSV()
        try writeWholeFile(directory + "/spend/spend.csv", spend)

        let reports = try writeSalesReports()

        var paths = files.map(\.relativePath) + reports.map(\.path)
        paths.append(contentsOf: ["catalog.csv", "fx.csv", "spend/spend.csv"])
        paths.sort()
        let lines = files.reduce(0) { $0 + $1.lines } + Catalog.products.filter(\.inCatalog).count
            + fx.rates.count * Catalog.currencies.count + spend.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } - 1
            + reports.reduce(0) { $0 + $1.lines }
        let bytes = files.reduce(0) { $0 + $1.bytes } + Catalog.csv().count + fx.csv(startDay: start).count + spend.count
            + reports.reduce(0) { $0 + $1.bytes.count }
        try writeWholeFile(directory + "/truth.json", truth.json(files: paths, lines: lines, bytes: bytes))
        // The root of the chain every JWS here is signed with, for `--trust-root`.
        try makeDirectory(directory + "/trust")
        try writeWholeFile(directory + "/trust/test-root.pem", Array(TestSigningChain.rootPEM.utf8))
        var asOfText = LineBuffer(capacity: 24)
        asOfText.isoTime(asOf, millis: false)
        return GeneratorReport(files: paths, lines: lines, bytes: bytes, plantedFindings: truth.findings.count,
                               plantedRejects: truth.rejects, asOf: String(decoding: asOfText.bytes, as: UTF8.self))
    }

    /// Sales Apple reports and no receipt or notification shows (`unverified_apple_sales`): each
    /// is a user's order on the server, paid and never heard of again (the app was killed before
    /// it sent the receipt), in a slot of its own after the others.
    private func plantUnverifiedSales() throws {
        guard let days = SalesLedger.coveredDays(start: start, asOf: asOf) else { return }
        var random = SeededRandom(seed: seed, stream: 0xA991E5)
        sales.plantUnverifiedSales(3 + users / 2_000, days: days, random: &random)
        for (index, sale) in sales.unverified.enumerated() {
            var simulation = SlotSimulation(run: self, slot: users * 2 + 1 + index)
            try simulation.ordersWithoutReceipt(sale)
        }
    }

    /// Apple's Sales Reports for the Pacific days the run covers whole, with the planted unverified
    /// sales in them and the near misses they sit among counted.
    private func writeSalesReports() throws -> [SalesLedger.File] {
        guard let days = SalesLedger.coveredDays(start: start, asOf: asOf) else { return [] }
        let units = sales.units(days: days)
        for extra in sales.unverified {
            let info = Catalog.products[extra.product]
            let country = Catalog.countries[extra.country]
            let counted = units[SalesLedger.Key(day: extra.day, product: extra.product, country: extra.country)] ?? SalesLedger.Units()
            var planted = PlantedFinding(kind: .unverifiedAppleSales)
            var day = LineBuffer(capacity: 10)
            day.date(extra.day * Clock.day)
            planted.day = String(decoding: day.bytes, as: UTF8.self)
            planted.country = country.code
            planted.productId = info.id
            // Apple's units are known exactly; the verified ones of the country depend on which purchases
            // iaprecon sees without a storefront (order storefronts it matches), so the detail stops there.
            planted.detail = "country=\(country.code) apple_units=\(counted.purchases + counted.unverified - counted.refunds) "
            var amount = LineBuffer(capacity: 16)
            amount.plainAmount(info.prices[country.currency] * Int64(extra.units), scale: 3)
            planted.amount = String(decoding: amount.bytes, as: UTF8.self)
            planted.currency = Catalog.currencies[country.currency].code
            planted.scenario = "apple_sale_without_receipt"
            truth.findings.append(planted)
        }
        truth.nearMiss("apple_refund_on_later_pacific_day", sales.refundsOnLaterPacificDay(days: days))
        let reports = sales.reports(days: days) { day, country in Int((day * 31 + Int64(country) * 17) % 40) + 3 }
        let lastDay = Clock.floorDiv(start, Clock.day) + Int64(self.days) - 1
        for report in reports {
            var folder = directory
            if partitioned {
                // App Store Connect publishes a day's report the day after: it lands in the next day's
                // partition (the last day's report in the last one, so the folder holds every report).
                var name = LineBuffer(capacity: 10)
                name.date(min(report.day + 1, lastDay) * Clock.day)
                folder += "/" + String(decoding: name.bytes, as: UTF8.self)
            }
            try makeDirectory(folder + "/apple")
            // Through Foundation: `writeWholeFile` inlined into this loop crashed optimized builds (Swift 6.3,
            // its stack-promoted file sink released as if it had escaped).
            try Data(report.bytes).write(to: URL(fileURLWithPath: folder + "/" + report.path))
        }
        return reports
    }

    /// Creates the folders and removes files an earlier run left that this run would not overwrite.
    private func prepareDirectory() throws {
        try makeDirectory(directory)
        if partitioned {
            for day in 0..<days {
                var name = LineBuffer(capacity: 10)
                name.date(start + Int64(day) * Clock.day)
                for source in Source.allCases {
                    try makeDirectory(directory + "/" + String(decoding: name.bytes, as: UTF8.self) + "/" + source.folder)
                }
            }
        }
        let manager = FileManager.default
        for folderName in (partitioned ? [] : Source.allCases.map(\.folder) + ["apple"]) + ["spend"] {
            let path = directory + "/" + folderName
            try makeDirectory(path)
            let prefix = folderName == "attribution" ? "appsflyer-" : (folderName == "apple" ? "S_D_" : folderName + "-")
            for name in (try? manager.contentsOfDirectory(atPath: path)) ?? []
            where (name.hasPrefix(".") && name.hasSuffix(".spool")) || (name.hasPrefix(prefix)
                && (name.hasSuffix(".jsonl") || name.hasSuffix(".jsonl.gz") || name.hasSuffix(".csv") || name.hasSuffix(".txt"))) {
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
