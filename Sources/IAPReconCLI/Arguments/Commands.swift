/// iaprecon's subcommands, options, help and examples.
///
/// Options shared by several subcommands are declared once below and listed
/// by name, so `--db` reads the same in every help screen. Defaults and
/// meanings follow the data contract (as-of, grace, `--tz`,
/// `--mmp-tz`, the reporting currency, exit codes).
extension ProgramSpec {
    /// The version `--version` prints unless `iaprecon(version:)` says otherwise.
    public static let iapreconDefaultVersion = "0.1.0"

    public static let iaprecon = iaprecon(version: iapreconDefaultVersion)

    public static func iaprecon(version: String) -> ProgramSpec {
        ProgramSpec(
            name: "iaprecon",
            version: version,
            abstract: "Reconcile App Store purchases with what the app server delivered.",
            discussion: """
                Reads one input folder (the server's purchase log, receipt \
                verifications, App Store Server Notifications, sign-ups, MMP exports \
                and ad spend), finds purchases that were never delivered, delivered \
                twice, or refunded and not revoked, and writes findings and revenue \
                reports.

                Exit codes: 0 done, 1 failed (or findings at --fail-on or --fail-on-new), \
                2 bad usage (or an fx.csv that does not convert into --currency), 3 an \
                input cannot be read, 4 another run holds the database.
                """,
            commands: [.run, .nightly, .backfill, .ingest, .normalize, .join, .report, .validate, .history, .runs, .check, .forget, .generate, .bench],
            examples: [
                ExampleSpec(
                    "Reconcile the bundled sample data, signed by a test root, into ./out:",
                    "iaprecon run --bundle-id com.example.game \\\n  --trust-root sample-data/trust/test-root.pem"),
                ExampleSpec("Show everything that happened to one user:", "iaprecon history u_1001"),
                ExampleSpec("Read the options of one subcommand:", "iaprecon help run"),
            ]
        )
    }
}

// MARK: - Subcommands

extension CommandSpec {
    public static let run = CommandSpec(
        name: "run",
        abstract: "Ingest, normalize, join and report in one go.",
        discussion: """
            Reads every source file under --input into the store at --db, matches \
            orders to transactions as of --as-of, and writes the report set into \
            --out, switched in at once: findings.csv, findings.json, summary.json, \
            report.html, revenue_daily.csv, revenue_monthly.csv, transactions.csv, \
            attribution.csv, rejects.csv, consumption_requests.jsonl, and \
            apple_tieout.csv when apple/ holds Sales Reports. Findings do not fail the \
            run unless --fail-on or --fail-on-new says so; then one alert line goes to \
            stderr, even with --quiet.
            """,
        options: [.input, .db, .out, .asOf, .now, .grace, .tz, .mmpTZ, .currency, .bundleID, .appSKU, .jobs, .trustRoot, .failOn, .failOnNew, .config],
        flags: [.trustUnsigned, .quietButAlertAndFileWarnings],
        examples: [
            ExampleSpec(
                "Reconcile the bundled sample data, signed by a test root, into ./out:",
                "iaprecon run --bundle-id com.example.game \\\n  --trust-root sample-data/trust/test-root.pem"),
            ExampleSpec(
                "Nightly job that fails when a critical finding turns up:",
                "iaprecon run --input exports/2026-11-28 --fail-on critical --quiet"),
            ExampleSpec(
                "Judge as of a past moment (later events still count), dates in Tokyo time:",
                "iaprecon run --as-of 2026-11-29T00:00:00Z --tz Asia/Tokyo"),
        ]
    )

    public static let nightly = CommandSpec(
        name: "nightly",
        abstract: "Reconcile the day partitions under --root into a dated output folder.",
        discussion: """
            Reads the partitions <root>/YYYY-MM-DD/<source>/... up to --date (the \
            newest by default; a day folder that holds no source file yet has not \
            landed); files already in the store are skipped, so a night costs its new day. Writes the reports to <reports>/YYYY-MM-DD/, then \
            points <reports>/latest at that complete set, and appends a log with stage timings \
            to --log-dir.

            A night reports what a fresh store fed the partitions up to --date would, \
            as of the end of that day in --tz at the latest: when the store already \
            holds later days, the night is replayed in a scratch store beside it and \
            the store is left as it was. latest only moves forward unless --force.

            With --keep-reports n, the day folders iaprecon wrote beyond the newest n \
            are removed after the night; never the one latest points to, nor any \
            newer than the night written, so a replayed night removes no later one.
            """,
        options: [.root, .db, .reports, .date, .keepReports, .logDir, .now, .grace, .tz, .mmpTZ, .currency, .bundleID, .appSKU, .jobs, .trustRoot, .failOn, .failOnNew, .config],
        flags: [.trustUnsigned, .quietButNightWarnings, .force],
        examples: [
            ExampleSpec("The nightly cron job:", "iaprecon nightly --config jobs/iaprecon.conf --quiet"),
            ExampleSpec("Re-run one night:", "iaprecon nightly --root /data/iap --date 2026-11-28"),
        ]
    )

    public static let backfill = CommandSpec(
        name: "backfill",
        abstract: "Run the nightly job for every day of a date range, oldest first.",
        discussion: """
            Each day is reconciled with the partitions up to that day, as the night \
            itself would have seen them, into <reports>/YYYY-MM-DD/; <reports>/latest \
            moves forward to the last day (never back, unless --force). When the store \
            already holds later days, the range is replayed in one scratch store fed a \
            day at a time, and the store is left as it was. With --fail-on or \
            --fail-on-new, each night that trips it prints its alert line, and the \
            backfill exits 1 after the last day.
            """,
        options: [.root, .db, .reports, .from, .to, .keepReports, .logDir, .now, .grace, .tz, .mmpTZ, .currency, .bundleID, .appSKU, .jobs, .trustRoot, .failOn, .failOnNew, .config],
        flags: [.trustUnsigned, .quietButNightWarnings, .force],
        examples: [
            ExampleSpec(
                "Backfill a quarter:",
                "iaprecon backfill --from 2026-07-01 --to 2026-09-30")
        ]
    )

    public static let ingest = CommandSpec(
        name: "ingest",
        abstract: "Read the input folder into the store.",
        discussion: """
            Each line becomes a raw row that remembers its file and line; lines \
            that cannot be read go to the rejects with a reason. Files are parsed \
            in parallel and written in input order.
            """,
        options: [.input, .db, .now, .mmpTZ, .bundleID, .appSKU, .jobs, .trustRoot, .config],
        flags: [.trustUnsigned, .quietButFileWarnings],
        examples: [
            ExampleSpec(
                "Load this week's exports into a new store:",
                "iaprecon ingest --input exports --db week.sqlite"),
            ExampleSpec("Use one worker, to rule out ordering effects:", "iaprecon ingest --jobs 1"),
        ]
    )

    public static let normalize = CommandSpec(
        name: "normalize",
        abstract: "Index the ingested lines for the join.",
        discussion: """
            Builds the indexes of the stored lines that a large ingest dropped (one sort \
            each is faster than updating them line by line). The join and the report \
            normalize the lines as they read them: repeated lines collapsed, a \
            transaction's sightings merged. The join refuses a store not indexed yet.
            """,
        options: [.db, .config],
        flags: [.quiet],
        examples: [
            ExampleSpec("Index what the last ingest loaded:", "iaprecon normalize --db week.sqlite")
        ]
    )

    public static let join = CommandSpec(
        name: "join",
        abstract: "Match orders to transactions and derive the findings.",
        discussion: """
            Matches each order to at most one transaction, nets refunds of \
            reversals, links subscription renewals, and records findings such as \
            lost and duplicate deliveries as of --as-of. A full rebuild decides \
            batches of linked transactions on --jobs workers while one writer inserts. \
            An input with no event time is judged as of the end of the latest day its \
            Sales Reports (Pacific days) or spend (days in --tz, as the report reads \
            them) cover, at most 24 hours after --now.
            """,
        options: [.db, .asOf, .joinNow, .grace, .mmpTZ, .tz, .jobs, .config],
        flags: [.quiet],
        examples: [
            ExampleSpec("Allow deliveries up to 36 hours:", "iaprecon join --grace 36h"),
            ExampleSpec(
                "Judge the data as it stood at the end of November:",
                "iaprecon join --as-of 2026-12-01T00:00:00Z"),
        ]
    )

    public static let report = CommandSpec(
        name: "report",
        abstract: "Write findings, summary, revenue and attribution files.",
        discussion: """
            Writes the report set run writes (findings.csv, summary.json, \
            report.html, the revenue, transactions and attribution files, \
            rejects.csv, consumption_requests.jsonl, apple_tieout.csv) from the \
            store into --out. The files are written beside the current ones and \
            switched in at once: a reader sees the previous set or the new one, \
            never a mix.
            """,
        options: [.db, .out, .tz, .currency, .failOn, .failOnNew, .config],
        flags: [.quietButAlert],
        examples: [
            ExampleSpec("Report in Tokyo days and yen (fx.csv giving rates into JPY):", "iaprecon report --tz Asia/Tokyo --currency JPY"),
            ExampleSpec("Fail a CI job on warnings or worse:", "iaprecon report --fail-on warning"),
        ]
    )

    public static let validate = CommandSpec(
        name: "validate",
        abstract: "Check inputs and print the accounting without writing a store.",
        discussion: """
            Parses every input file and prints, per file, the lines read, accepted, \
            rejected and ignored, with the first rejects. Nothing is written. An \
            fx.csv that does not convert into --currency, which a run refuses, \
            exits 2 after the accounting.
            """,
        options: [.input, .now, .mmpTZ, .bundleID, .appSKU, .jobs, .trustRoot, .currency],
        flags: [.trustUnsigned],
        examples: [
            ExampleSpec("Check a new export before loading it:", "iaprecon validate --input exports/2026-11-28")
        ]
    )

    public static let history = CommandSpec(
        name: "history",
        abstract: "Show one user's purchases, deliveries, refunds and findings.",
        discussion: """
            Prints a header (what the customer spent and got refunded in the reporting \
            currency, the subscriptions they can use now, the findings that involve them), \
            then orders, transactions, deliveries, refunds and findings in time order \
            (times in --tz). \
            Give a user ID, or look up by --order, --app-account-token (that user's \
            story), --transaction (that transaction's story) or --original-transaction \
            (a subscription chain's story). A key may be pasted with the quotes around \
            it. For a long story (a QA or reseller account), --since and --limit show \
            the latest events and say how many earlier ones are not shown; the header \
            still covers the whole story.
            """,
        arguments: [ArgumentSpec(name: "user-id", help: "The user whose history to show.", isRequired: false)],
        options: [
            OptionSpec(name: "transaction", valueName: "id", help: "Show one transaction's story instead of a user's."),
            OptionSpec(name: "order", valueName: "id", help: "Show the story of the user who created this order."),
            OptionSpec(name: "original-transaction", valueName: "id", help: "Show every transaction of one subscription chain."),
            OptionSpec(name: "app-account-token", valueName: "uuid",
                       help: "Show the story of the user whose purchases carry this token (several users': every purchase carrying it)."),
            OptionSpec(name: "since", valueName: "date",
                       help: "Show only the events from this day on (yyyy-MM-dd, from its midnight in --tz) or from this time (yyyy-MM-dd HH:mm:ss in --tz, as the table shows it, or ISO 8601 with its offset)."),
            OptionSpec(name: "limit", valueName: "n", help: "Show only the latest n events (of those --since keeps).", kind: .integer(minimum: 1)),
            .db,
            .tz,
            .historyCurrency,
            OptionSpec(
                name: "format", valueName: "format", help: "How to print the history (html: a page in report.html's style).",
                defaultValue: .value("table"), kind: .choice(["table", "json", "csv", "html"])),
        ],
        examples: [
            ExampleSpec("One user's latest 50 events since November 1, in Berlin time:",
                        "iaprecon history u_1001 --tz Europe/Berlin --since 2026-11-01 --limit 50"),
            ExampleSpec(
                "The story of one transaction, as JSON:",
                "iaprecon history --transaction 2000000629466000 --format json"),
            ExampleSpec(
                "Who an order belongs to, as a page to attach to a ticket:",
                "iaprecon history --order OrderID_1795364381000_gems980 --format html"),
        ],
        exactlyOneOf: [["user-id", "transaction", "order", "original-transaction", "app-account-token"]]
    )

    public static let runs = CommandSpec(
        name: "runs",
        abstract: "List the runs recorded in the store, newest first.",
        options: [
            .db,
            OptionSpec(
                name: "limit", valueName: "n", help: "Show at most this many runs.",
                defaultValue: .value("20"), kind: .integer(minimum: 1)),
        ],
        examples: [
            ExampleSpec("The last five runs:", "iaprecon runs --limit 5")
        ]
    )

    public static let check = CommandSpec(
        name: "check",
        abstract: "Check the store for damage with SQLite's integrity check.",
        discussion: """
            Reads every page, index and constraint of the store; exits 1 naming the \
            first problems if it is damaged. Each night runs the quicker form of this \
            check on a seventh of the store, the tables checked longest ago, and \
            refuses a damaged store; run this one weekly and after a disk or host \
            failure.
            """,
        options: [.db],
        examples: [
            ExampleSpec("Check the nightly store:", "iaprecon check --db /var/lib/iaprecon/iaprecon.sqlite")
        ]
    )

    public static let forget = CommandSpec(
        name: "forget",
        abstract: "Remove input files' rows from the store.",
        discussion: """
            A file read once keeps its rows after it leaves the input folder (archived \
            partitions do). Forget removes them, named by the path summary.json lists \
            (relative to the input folder); the next run reconciles without them, \
            recomputing what they touched. A forgotten file still in the input folder \
            is read again by the next run. Every user's rows in a file go with it: to \
            erase one user, replace their ids in the input files instead, as \
            docs/personal-data.md says.
            """,
        arguments: [ArgumentSpec(name: "path", help: "A stored file, as summary.json names it.", isVariadic: true)],
        options: [.db],
        flags: [.quiet],
        examples: [
            ExampleSpec("Drop a day that was loaded by mistake:", "iaprecon forget 2026-11-28/server/orders.jsonl")
        ]
    )

    public static let generate = CommandSpec(
        name: "generate",
        abstract: "Write a synthetic input folder for tests and benchmarks.",
        discussion: "The same seed and sizes write byte-identical files.",
        options: [
            OptionSpec(
                name: "out", short: "o", valueName: "dir", help: "Folder to write the input folder into.",
                kind: .path, isRequired: true),
            OptionSpec(
                name: "users", valueName: "n", help: "Number of users to simulate.",
                defaultValue: .value("1000"), kind: .integer(minimum: 1)),
            OptionSpec(
                name: "days", valueName: "n", help: "Number of days of activity.",
                defaultValue: .value("30"), kind: .integer(minimum: 1)),
            OptionSpec(
                name: "seed", valueName: "n", help: "Seed of the random generator.",
                defaultValue: .value("1"), kind: .integer(minimum: 0)),
        ],
        flags: [
            FlagSpec(name: "partitioned", help: "Write each day's files into a YYYY-MM-DD folder, as nightly reads them."),
            FlagSpec(name: "force", help: "Write into a non-empty --out, replacing the files of an earlier run."),
        ],
        examples: [
            ExampleSpec("A small data set to try things on:", "iaprecon generate --out /tmp/iap-small --users 100"),
            ExampleSpec("A week of day folders for nightly:", "iaprecon generate --out /tmp/iap-days --days 7 --partitioned"),
            ExampleSpec(
                "A year of data for a large app:",
                "iaprecon generate --out /tmp/iap-year --users 200000 --days 365"),
        ]
    )

    public static let bench = CommandSpec(
        name: "bench",
        abstract: "Time every stage on generated data of several sizes.",
        discussion: """
            Generates an input folder per size with 'iaprecon generate' under --work \
            (reused while its parameters match). Then, --runs rounds with the sizes and \
            tools taking turns: ingest, normalize, join and report as child processes on \
            a fresh store, the whole night as one 'iaprecon run' process, and with \
            --peers the Python and DuckDB peers on the same input (sizes up to 1m). \
            Prints per stage the median wall time with its range, lines/s, MB/s and peak \
            memory; the store's size; iaprecon beside the peers; the growth between \
            sizes; an incremental night that adds one day to a store of --days days at \
            1m and 4m, in rounds taking turns, each night followed by a full rebuild it is \
            compared with; history \
            lookups on the largest store; and which targets are met. Run it from a \
            release build (jobs/bench). Exits 0 unless a stage or a peer fails.
            """,
        options: [
            OptionSpec(
                name: "sizes", valueName: "sizes",
                help: "Data set sizes to generate and time, comma-separated (k = thousand, m = million).",
                defaultValue: .value("100k,1m,4m"), kind: .sizeList),
            OptionSpec(
                name: "runs", valueName: "n", help: "Timed runs per size.",
                defaultValue: .value("3"), kind: .integer(minimum: 1)),
            OptionSpec(
                name: "work", valueName: "dir", help: "Scratch folder for the generated data and stores.",
                defaultValue: .value("/tmp/iaprecon-bench"), kind: .path),
            .jobs,
            OptionSpec(
                name: "days", valueName: "n",
                help: "Days the store holds before the incremental night; the inputs span one day more.",
                defaultValue: .value("60"), kind: .integer(minimum: 1)),
            OptionSpec(
                name: "peers", valueName: "dir",
                help: "A folder with peer_python.py and peer_duckdb.py, timed beside iaprecon (python3 from the PATH).", kind: .path),
        ],
        flags: [FlagSpec(name: "no-incremental", help: "Skip the incremental-night measurement.")],
        examples: [
            ExampleSpec("A quick check on small sizes:", "iaprecon bench --sizes 10k,100k --runs 1"),
            ExampleSpec("Time the 1m size only, without the incremental night:", "iaprecon bench --sizes 1m --no-incremental"),
            ExampleSpec("Beside the peer implementations:", "iaprecon bench --sizes 1m,4m --peers /srv/peers"),
        ]
    )
}

// MARK: - Shared options

extension OptionSpec {
    public static let input = OptionSpec(
        name: "input", short: "i", valueName: "dir",
        help: "Input folder with server/, receipts/, notifications/ and the other sources.",
        defaultValue: .value("sample-data"), kind: .path)

    public static let db = OptionSpec(
        name: "db", valueName: "file", help: "SQLite store of the ingested and joined data.",
        defaultValue: .value("iaprecon.sqlite"), kind: .path)

    public static let out = OptionSpec(
        name: "out", short: "o", valueName: "dir", help: "Folder the report files are written to.",
        defaultValue: .value("out"), kind: .path)

    public static let asOf = OptionSpec(
        name: "as-of", valueName: "time",
        help: "Time to reconcile as of: ISO 8601 with its offset (Z, -08:00), epoch milliseconds, or yyyy-MM-dd HH:mm:ss in UTC.",
        defaultValue: .computed("latest event time in the inputs"), kind: .time)

    public static let now = OptionSpec(
        name: "now", valueName: "time",
        help: "The run's clock: a line stamped, or a spend or Sales Report day starting, more than 24 hours after it is rejected as 'time in the future'.",
        defaultValue: .computed("the system clock"), kind: .time)

    /// The join reads no line, so its clock rejects none: it only bounds the as-of of an input that
    /// no event time dates (`ReconcileSettings.nowMs`), which is right when it is the clock ingest had.
    public static let joinNow = OptionSpec(
        name: "now", valueName: "time",
        help: "The clock the lines were ingested by: an input with no event time is judged as of at most 24 hours after it.",
        defaultValue: .computed("the system clock"), kind: .time)

    public static let bundleID = OptionSpec(
        name: "bundle-id", valueName: "id",
        help: "The app's bundle id: receipts, transactions and notifications of another bundle are rejected.",
        defaultValue: .computed("every bundle is read"))

    public static let appSKU = OptionSpec(
        name: "app-sku", valueName: "sku",
        help: "The app's SKU in App Store Connect: Sales Report rows of another app's in-app purchases "
            + "(another Parent Identifier) are read and ignored; repeatable.",
        defaultValue: .computed("every app's rows are tied out"), isRepeatable: true)

    public static let grace = OptionSpec(
        name: "grace", valueName: "duration",
        help: "How long a delivery may take after the purchase, such as 24h, 90m or 1h30m.",
        defaultValue: .value("24h"), kind: .duration)

    public static let tz = OptionSpec(
        name: "tz", valueName: "zone", help: "IANA time zone of a place (Europe/London, not BST or EST) whose days the report dates are.",
        defaultValue: .value("UTC"), kind: .timeZone)

    public static let mmpTZ = OptionSpec(
        name: "mmp-tz", valueName: "zone", help: "IANA time zone of a place, for MMP export times, which carry no offset.",
        defaultValue: .value("UTC"), kind: .timeZone)

    public static let currency = OptionSpec(
        name: "currency", valueName: "code", help: "Reporting currency that fx.csv rates convert into.",
        defaultValue: .value("USD"), kind: .currency)

    /// A lookup shows a store that was already reported: without `--currency` it takes the one
    /// that store's fx.csv converts into, rather than a USD that store may refuse.
    public static let historyCurrency = OptionSpec(
        name: "currency", valueName: "code", help: "Reporting currency that fx.csv rates convert into.",
        defaultValue: .computed("the one the store's fx.csv converts into"), kind: .currency)

    public static let jobs = OptionSpec(
        name: "jobs", short: "j", valueName: "n",
        help: "Parallel parsing workers; every count writes the same output.",
        defaultValue: .computed("number of cores"), kind: .integer(minimum: 1))

    public static let failOn = OptionSpec(
        name: "fail-on", valueName: "severity", help: "Exit 1 when a finding is at or above this severity.",
        defaultValue: .computed("never"), kind: .choice(["critical", "warning", "info"]))

    public static let failOnNew = OptionSpec(
        name: "fail-on-new", valueName: "severity",
        help: "Exit 1 when a finding first reported by this run is at or above this severity.",
        defaultValue: .computed("never"), kind: .choice(["critical", "warning", "info"]))

    public static let root = OptionSpec(
        name: "root", valueName: "dir", help: "Folder of day partitions YYYY-MM-DD/<source>/...",
        defaultValue: .value("data"), kind: .path)

    public static let reports = OptionSpec(
        name: "reports", valueName: "dir", help: "Folder that holds one report folder per day and 'latest'.",
        defaultValue: .value("reports"), kind: .path)

    /// Without it every day folder stays, as before the option existed.
    public static let keepReports = OptionSpec(
        name: "keep-reports", valueName: "n",
        help: "After each night, remove the day folders iaprecon wrote in <reports> beyond the newest n (never latest's, nor one newer than the night).",
        defaultValue: .computed("keep every day"), kind: .integer(minimum: 1))

    public static let date = OptionSpec(
        name: "date", valueName: "yyyy-mm-dd", help: "The day to reconcile through.",
        defaultValue: .computed("the newest partition"))

    public static let from = OptionSpec(
        name: "from", valueName: "yyyy-mm-dd", help: "First day of the range.", isRequired: true)

    public static let to = OptionSpec(
        name: "to", valueName: "yyyy-mm-dd", help: "Last day of the range.", isRequired: true)

    public static let logDir = OptionSpec(
        name: "log-dir", valueName: "dir", help: "Folder for one log file per run.", defaultValue: .value("logs"), kind: .path)

    public static let trustRoot = OptionSpec(
        name: "trust-root", valueName: "file",
        help: "Also trust JWS chains up to this PEM certificate (test environments, Xcode); repeatable.",
        kind: .path, isRepeatable: true)

    public static let config = OptionSpec(
        name: configOptionName, valueName: "file",
        help: "Read option values from a 'key = value' file; the command line wins over it.", kind: .path)
}

extension FlagSpec {
    /// The stage commands that print no alert line and no warning a person must see.
    public static let quiet = FlagSpec(name: "quiet", short: "q", help: "Print nothing but errors.")

    /// `ingest`: a stored file empty now (its lines kept) or holding fewer lines (its lines replaced) is still said.
    public static let quietButFileWarnings = FlagSpec(
        name: "quiet", short: "q", help: "Print nothing but errors and the warnings that a stored file is empty now, holds fewer lines or was rewritten.")

    /// `report`: with --fail-on or --fail-on-new, exit 1 still prints its alert line; and restated revenue, which
    /// finance books, is said whatever the flag.
    public static let quietButAlert = FlagSpec(
        name: "quiet", short: "q",
        help: "Print nothing but errors, the alert line of --fail-on or --fail-on-new, and the warning that revenue already reported "
            + "is restated.")

    /// `run`: the alert line, restated revenue, and the stored files ingest found empty now or holding fewer lines.
    public static let quietButAlertAndFileWarnings = FlagSpec(
        name: "quiet", short: "q",
        help: "Print nothing but errors, the alert line of --fail-on or --fail-on-new, and the warnings that revenue already reported "
            + "is restated, or that a stored file is empty now, holds fewer lines or was rewritten.")

    /// `nightly` and `backfill`: cron mails what is printed, so a missing partition, a report
    /// folder --keep-reports cannot remove, restated revenue and a stored file empty now or holding fewer
    /// lines are said as well as a night's alert line.
    public static let quietButNightWarnings = FlagSpec(
        name: "quiet", short: "q",
        help: "Print nothing but errors, alert lines, and the warnings that a partition is missing, that an old report folder cannot be "
            + "removed, that revenue already reported is restated, or that a stored file is empty now, holds fewer lines or was rewritten.")

    public static let force = FlagSpec(name: "force", help: "Point <reports>/latest at this night even if it is older.")

    public static let trustUnsigned = FlagSpec(
        name: "trust-unsigned", help: "Do not check JWS signatures (for data a server verified upstream).")
}
