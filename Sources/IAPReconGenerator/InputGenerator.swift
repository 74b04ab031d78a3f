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

    public init(users: Int, days: Int, seed: UInt64, startDay: String = "2026-09-01", gzipServer: Bool = true) {
        self.users = users
        self.days = days
        self.seed = seed
        self.startDay = startDay
        self.gzipServer = gzipServer
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
/// `fx.csv` and `spend/spend.csv`. The first server day is gzipped when asked. As-of is
/// fixed: a sign-up at the last second of the last day; nothing else is later.
///
/// Generation streams: users are simulated one at a time, lines are spooled per day file
/// and each file is sorted by time at the end, so memory is bounded by the largest day
/// file, not by the folder.
///
/// Sizing (measured with the default tuning, release build): a user contributes about
/// `9 + 0.21 × days` lines — about 21 lines over 60 days, roughly 1.6 lines per user-day of
/// the days a user is signed up — at about 300 bytes a line, 37 % of them MMP rows. For 60 days:
/// - ~100,000 lines: `users: 4_800`
/// - ~1,000,000 lines: `users: 48_000` (~300 MB)
/// - ~4,000,000 lines: `users: 190_000` (~1.2 GB)
/// `users(forLines:days:)` gives these estimates for any number of days.
public enum InputGenerator {
    /// Writes a whole input folder (CONTRACT.md §1 layout) plus `truth.json` into `directory` (created if needed).
    public static func write(_ options: GeneratorOptions, to directory: String) throws -> GeneratorReport {
        let run = try GeneratorRun(options: options, directory: directory)
        return try run.run()
    }

    /// About how many users give `forLines` input lines over `days` days.
    public static func users(forLines lines: Int, days: Int) -> Int {
        max(1, Int((Double(lines) / linesPerUser(days: days)).rounded()))
    }

    /// The measured average number of lines one user slot produces over `days` days.
    static func linesPerUser(days: Int) -> Double {
        9.0 + 0.21 * Double(max(days, 1))
    }
}
