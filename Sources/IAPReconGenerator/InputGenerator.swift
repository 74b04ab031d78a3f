/// What to generate: how many users over how many days, from which seed.
public struct GeneratorOptions: Sendable {
    /// Number of app users (user slots; a few slots add a second account).
    public var users: Int
    /// Days of history, starting at `startDay`.
    public var days: Int
    /// Seed of the deterministic random streams: the same options give byte-identical files.
    public var seed: UInt64
    /// First day, `yyyy-MM-dd`, UTC.
    public var startDay: String
    /// Whether the first server day file is written gzip-compressed (`.jsonl.gz`).
    public var gzipServer: Bool
    /// Whether each day's files go into a day folder (`2026-09-01/server/server-2026-09-01.jsonl`),
    /// as the app server writes them for `iaprecon nightly`; catalog, fx and spend stay in the root.
    public var partitioned: Bool

    public init(users: Int, days: Int, seed: UInt64, startDay: String = "2026-09-01", gzipServer: Bool = true,
                partitioned: Bool = false) {
        self.users = users
        self.days = days
        self.seed = seed
        self.startDay = startDay
        self.gzipServer = gzipServer
        self.partitioned = partitioned
    }
}

/// What a generation run wrote.
public struct GeneratorReport: Sendable {
    /// Input files, relative to the folder, sorted (truth.json is not one of them).
    public var files: [String]
    /// Data lines of the input files (CSV header rows not counted; blank and bad lines counted).
    public var lines: Int
    /// Uncompressed bytes of the input files.
    public var bytes: Int
    public var plantedFindings: Int
    public var plantedRejects: Int
    /// The default as-of of the folder (its latest event time), ISO 8601 UTC.
    public var asOf: String
}

/// Writes realistic iaprecon input folders with planted findings, near misses and bad
/// lines, and a `truth.json` saying exactly what a correct run must report.
///
/// The folder follows CONTRACT.md §1, one file per source and UTC day
/// (`server/server-2026-09-01.jsonl`, `receipts/receipts-…`, `notifications/notifications-…`,
/// `registrations/registrations-…`, `attribution/appsflyer-….csv`), plus `catalog.csv`,
/// `fx.csv`, `spend/spend.csv`, and Apple's Summary Sales Report for every Pacific day the run
/// covers whole (`apple/S_D_85012345_20260901.txt`, `SalesLedger`). The first server day is gzipped when asked. As-of is
/// fixed: a sign-up at the last second of the last day; nothing else is later.
///
/// Generation streams: users are simulated one at a time; a day file's lines wait in memory
/// (`InputFolder.memoryBudget` for all files together) or in a hidden spool file, and each file is
/// sorted by time at the end, two at a time, so memory stays bounded whatever the number of lines. Same
/// options give byte-identical files.
///
/// Sizing (measured, default tuning): a user brings about 4.7 lines on the day they sign up
/// (sign-up, install and MMP events, a first purchase or none) and about 0.13 lines for every
/// later day of history in short runs, 0.08 in long ones, since most users drift away. Users
/// sign up evenly over the run, so over 60 days a user averages 12.3 lines, about 0.2 lines per
/// user-day, at about 640 bytes a line (39 % MMP rows, 29 % server, 14 % receipts, 8 % registrations,
/// 8 % notifications, the signed JWS forms being the longest lines: each carries its three-certificate
/// `x5c` chain, as Apple's do). For 60 days:
/// - ~100,000 lines: `users: 8_150` (~64 MB)
/// - ~1,000,000 lines: `users: 81_500` (~640 MB)
/// - ~4,000,000 lines: `users: 326_000` (~2.5 GB)
/// `users(forLines:days:)` gives the estimate for any number of days.
public enum InputGenerator {
    /// Writes a whole input folder (CONTRACT.md §1 layout) plus `truth.json` into `directory` (created if needed).
    public static func write(_ options: GeneratorOptions, to directory: String) throws -> GeneratorReport {
        let run = try GeneratorRun(options: options, directory: directory)
        return try run.run()
    }

    /// About how many users give `forLines` input lines over `days` days (within a few percent).
    public static func users(forLines lines: Int, days: Int) -> Int {
        max(1, Int((Double(lines) / linesPerUser(days: days)).rounded()))
    }

    /// Lines one user slot produced on average over `days` days, measured at 20,000 users.
    static let measuredLinesPerUser: [(days: Int, lines: Double)] = [
        (1, 4.70), (2, 5.04), (3, 5.31), (7, 6.16), (14, 7.31), (30, 9.20), (60, 12.28), (90, 15.13),
        (180, 22.98), (365, 38.24),
    ]

    /// `measuredLinesPerUser` interpolated, and extended past a year at the last slope.
    static func linesPerUser(days: Int) -> Double {
        let table = measuredLinesPerUser
        let days = max(days, 1)
        for index in 1..<table.count where days <= table[index].days {
            let (lowDays, low) = table[index - 1]
            let (highDays, high) = table[index]
            return low + (high - low) * Double(days - lowDays) / Double(highDays - lowDays)
        }
        let (lowDays, low) = table[table.count - 2]
        let (highDays, high) = table[table.count - 1]
        return high + (high - low) / Double(highDays - lowDays) * Double(days - highDays)
    }
}
