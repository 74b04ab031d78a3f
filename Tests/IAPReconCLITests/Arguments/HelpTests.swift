import Foundation
@testable import IAPReconCLI
import Testing

@Suite("Help and version")
struct HelpTests {
    @Test("iaprecon --help lists every subcommand, with examples")
    func rootHelp() {
        let expected = """
            OVERVIEW: Reconcile App Store purchases with what the app server delivered.

            Reads one input folder (the server's purchase log, receipt verifications, App
            Store Server Notifications, sign-ups, MMP exports and ad spend), finds purchases
            that were never delivered, delivered twice, or refunded and not revoked, and
            writes findings and revenue reports.

            Exit codes: 0 done, 1 failed (or findings at --fail-on or --fail-on-new), 2 bad
            usage (or an fx.csv that does not convert into --currency), 3 an input cannot be
            read, 4 another run holds the database.

            USAGE: iaprecon <subcommand>

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.

            SUBCOMMANDS:
              run                     Ingest, normalize, join and report in one go.
              nightly                 Reconcile the day partitions under --root into a dated
                                      output folder.
              backfill                Run the nightly job for every day of a date range,
                                      oldest first.
              ingest                  Read the input folder into the store.
              normalize               Index the ingested lines for the join.
              join                    Match orders to transactions and derive the findings.
              report                  Write findings, summary, revenue and attribution
                                      files.
              validate                Check inputs and print the accounting without writing
                                      a store.
              history                 Show one user's purchases, deliveries, refunds and
                                      findings.
              runs                    List the runs recorded in the store, newest first.
              check                   Check the store for damage with SQLite's integrity
                                      check.
              forget                  Remove input files' rows from the store.
              generate                Write a synthetic input folder for tests and
                                      benchmarks.
              bench                   Time every stage on generated data of several sizes.

            EXAMPLES:
              Reconcile the bundled sample data, signed by a test root, into ./out:
                iaprecon run --bundle-id com.example.game \\
                  --trust-root sample-data/trust/test-root.pem

              Show everything that happened to one user:
                iaprecon history u_1001

              Read the options of one subcommand:
                iaprecon help run

              See 'iaprecon help <subcommand>' for detailed help.
            """
        for argv in [["--help"], ["-h"], ["help"], []] {
            #expect(parse(argv, program: .iaprecon) == .help(expected), "argv: \(argv)")
        }
    }

    static let runHelp = """
        OVERVIEW: Ingest, normalize, join and report in one go.

        Reads every source file under --input into the store at --db, matches orders to
        transactions as of --as-of, and writes the report set into --out, switched in at
        once: findings.csv, findings.json, summary.json, report.html, revenue_daily.csv,
        revenue_monthly.csv, transactions.csv, attribution.csv, rejects.csv,
        consumption_requests.jsonl, and apple_tieout.csv when apple/ holds Sales
        Reports. Findings do not fail the run unless --fail-on or --fail-on-new says so;
        then one alert line goes to stderr, even with --quiet.

        USAGE: iaprecon run [<options>]

        OPTIONS:
          -i, --input <dir>       Input folder with server/, receipts/, notifications/
                                  and the other sources. (default: sample-data)
          --db <file>             SQLite store of the ingested and joined data.
                                  (default: iaprecon.sqlite)
          -o, --out <dir>         Folder the report files are written to. (default: out)
          --as-of <time>          Time to reconcile as of: ISO 8601 with its offset (Z,
                                  -08:00), epoch milliseconds, or yyyy-MM-dd HH:mm:ss in
                                  UTC. (default: latest event time in the inputs)
          --now <time>            The run's clock: a line stamped, or a spend or Sales
                                  Report day starting, more than 24 hours after it is
                                  rejected as 'time in the future'. (default: the system
                                  clock)
          --grace <duration>      How long a delivery may take after the purchase, such
                                  as 24h, 90m or 1h30m. (default: 24h)
          --tz <zone>             IANA time zone of a place (Europe/London, not BST or
                                  EST) whose days the report dates are. (default: UTC)
          --mmp-tz <zone>         IANA time zone of a place, for MMP export times, which
                                  carry no offset. (default: UTC)
          --currency <code>       Reporting currency that fx.csv rates convert into.
                                  (default: USD)
          --bundle-id <id>        The app's bundle id: receipts, transactions and
                                  notifications of another bundle are rejected.
                                  (default: every bundle is read)
          --app-sku <sku>         The app's SKU in App Store Connect: Sales Report rows
                                  of another app's in-app purchases (another Parent
                                  Identifier) are read and ignored; repeatable.
                                  (default: every app's rows are tied out)
          -j, --jobs <n>          Parallel parsing workers; every count writes the same
                                  output. (default: number of cores)
          --trust-root <file>     Also trust JWS chains up to this PEM certificate (test
                                  environments, Xcode); repeatable.
          --fail-on <severity>    Exit 1 when a finding is at or above this severity.
                                  (values: critical, warning, info; default: never)
          --fail-on-new <severity>
                                  Exit 1 when a finding first reported by this run is at
                                  or above this severity. (values: critical, warning,
                                  info; default: never)
          --config <file>         Read option values from a 'key = value' file; the
                                  command line wins over it.
          --trust-unsigned        Do not check JWS signatures (for data a server
                                  verified upstream).
          -q, --quiet             Print nothing but errors, the alert line of --fail-on
                                  or --fail-on-new, and the warnings that revenue
                                  already reported is restated, or that a stored file is
                                  empty now, holds fewer lines or was rewritten.
          -h, --help              Show help information.

        EXAMPLES:
          Reconcile the bundled sample data, signed by a test root, into ./out:
            iaprecon run --bundle-id com.example.game \\
              --trust-root sample-data/trust/test-root.pem

          Nightly job that fails when a critical finding turns up:
            iaprecon run --input exports/2026-11-28 --fail-on critical --quiet

          Judge as of a past moment (later events still count), dates in Tokyo time:
            iaprecon run --as-of 2026-11-29T00:00:00Z --tz Asia/Tokyo
        """

    @Test(
        "help run, run --help and run -h print the same screen",
        arguments: [["help", "run"], ["run", "--help"], ["run", "-h"], ["run", "--inptu", "x", "--help"]])
    func runHelp(argv: [String]) {
        #expect(parse(argv, program: .iaprecon) == .help(Self.runHelp))
    }

    /// The `-q, --quiet` entry of `command`'s help screen, its wrapped lines joined.
    static func quietHelp(_ command: CommandSpec) -> String? {
        optionHelp(command, label: "-q, --quiet")
    }

    /// The entry of `command`'s help screen labelled `label` (as `--now <time>`), its wrapped lines joined.
    static func optionHelp(_ command: CommandSpec, label: String) -> String? {
        let lines = HelpRenderer.help(for: command, program: .iaprecon).split(separator: "\n").map(String.init)
        guard let first = lines.firstIndex(where: { $0.hasPrefix("  \(label) ") }) else { return nil }
        let hanging = String(repeating: " ", count: HelpRenderer.labelColumnWidth)
        let rest = lines[(first + 1)...].prefix { $0.hasPrefix(hanging) }.map { $0.trimmingCharacters(in: .whitespaces) }
        return ([String(lines[first].dropFirst(HelpRenderer.labelColumnWidth))] + rest).joined(separator: " ")
    }

    @Test("--quiet's help names what each command still prints under it: the alert line, a night's warnings, or errors alone")
    func quietHelp() {
        // Restated revenue is said under --quiet by every command that reports (finance books the days it names).
        let alert = "Print nothing but errors, the alert line of --fail-on or --fail-on-new, and the warning that revenue already "
            + "reported is restated."
        let run = "Print nothing but errors, the alert line of --fail-on or --fail-on-new, and the warnings that revenue already "
            + "reported is restated, or that a stored file is empty now, holds fewer lines or was rewritten."
        let night = "Print nothing but errors, alert lines, and the warnings that a partition is missing, that an old report folder "
            + "cannot be removed, that revenue already reported is restated, or that a stored file is empty now, holds fewer lines "
            + "or was rewritten."
        let files = "Print nothing but errors and the warnings that a stored file is empty now, holds fewer lines or was rewritten."
        let errors = "Print nothing but errors."
        var shown: [String: String] = [:]
        for command in ProgramSpec.iaprecon.commands { shown[command.name] = Self.quietHelp(command) }
        #expect(shown == [
            "run": run, "report": alert, "nightly": night, "backfill": night,
            "ingest": files, "normalize": errors, "join": errors, "forget": errors,
        ])
    }

    @Test("--now's help says what each command judges by the clock: the lines ingest rejects, or, for join, how late an input without event times is dated")
    func nowHelp() {
        let lines = "The run's clock: a line stamped, or a spend or Sales Report day starting, more than 24 hours after it is rejected as "
            + "'time in the future'. (default: the system clock)"
        let join = "The clock the lines were ingested by: an input with no event time is judged as of at most 24 hours after it. "
            + "(default: the system clock)"
        var shown: [String: String] = [:]
        for command in ProgramSpec.iaprecon.commands { shown[command.name] = Self.optionHelp(command, label: "--now <time>") }
        #expect(shown == ["run": lines, "nightly": lines, "backfill": lines, "ingest": lines, "validate": lines, "join": join])
    }

    @Test("near miss: what --quiet's help says holds: ingest warns without it and prints nothing with it; run prints the alert line alone")
    func quietHolds() throws {
        let work = try Workspace()
        let ingest = ["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot]
        let told = work.iaprecon(ingest + ["--db", work.path("told.sqlite")])
        #expect(told.err.contains("Warning: not read, matches no source: "))
        let quiet = work.iaprecon(ingest + ["--db", work.path("quiet.sqlite"), "--quiet"])
        #expect(quiet.code == 0)
        #expect(quiet.out.isEmpty && quiet.err.isEmpty)
        let run = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("run.sqlite"),
                                 "--out", work.path("out"), "--fail-on", "critical", "--quiet"])
        #expect(run.code == 1)
        #expect(run.out.isEmpty)
        #expect(run.err.split(separator: "\n").count == 1 && run.err.hasPrefix("iaprecon: exit 1: "))
    }

    @Test("history help shows its argument, its lookups and the allowed formats")
    func historyHelp() {
        let expected = """
            OVERVIEW: Show one user's purchases, deliveries, refunds and findings.

            Prints a header (what the customer spent and got refunded in the reporting
            currency, the subscriptions they can use now, the findings that involve them),
            then orders, transactions, deliveries, refunds and findings in time order (times
            in --tz). Give a user ID, or look up by --order, --app-account-token (that
            user's story), --transaction (that transaction's story) or
            --original-transaction (a subscription chain's story). A key may be pasted with
            the quotes around it. For a long story (a QA or reseller account), --since and
            --limit show the latest events and say how many earlier ones are not shown; the
            header still covers the whole story.

            USAGE: iaprecon history [<options>] [<user-id>]

            ARGUMENTS:
              <user-id>               The user whose history to show.

            OPTIONS:
              --transaction <id>      Show one transaction's story instead of a user's.
              --order <id>            Show the story of the user who created this order.
              --original-transaction <id>
                                      Show every transaction of one subscription chain.
              --app-account-token <uuid>
                                      Show the story of the user whose purchases carry this
                                      token (several users': every purchase carrying it).
              --since <date>          Show only the events from this day on (yyyy-MM-dd,
                                      from its midnight in --tz) or from this time
                                      (yyyy-MM-dd HH:mm:ss in --tz, as the table shows it,
                                      or ISO 8601 with its offset).
              --limit <n>             Show only the latest n events (of those --since
                                      keeps).
              --db <file>             SQLite store of the ingested and joined data.
                                      (default: iaprecon.sqlite)
              --tz <zone>             IANA time zone of a place (Europe/London, not BST or
                                      EST) whose days the report dates are. (default: UTC)
              --currency <code>       Reporting currency that fx.csv rates convert into.
                                      (default: the one the store's fx.csv converts into)
              --format <format>       How to print the history (html: a page in
                                      report.html's style). (values: table, json, csv, html;
                                      default: table)
              -h, --help              Show help information.

            EXAMPLES:
              One user's latest 50 events since November 1, in Berlin time:
                iaprecon history u_1001 --tz Europe/Berlin --since 2026-11-01 --limit 50

              The story of one transaction, as JSON:
                iaprecon history --transaction 2000000629466000 --format json

              Who an order belongs to, as a page to attach to a ticket:
                iaprecon history --order OrderID_1795364381000_gems980 --format html
            """
        #expect(parse(["history", "--help"], program: .iaprecon) == .help(expected))
    }

    @Test("history's examples name a user, a transaction and an order of sample-data, so they run as written after the README's main command")
    func historyExamplesRunOnSampleData() throws {
        let transactions = try String(contentsOfFile: Workspace.sampleData + "/expected/transactions.csv", encoding: .utf8)
        let cells = Set(transactions.components(separatedBy: "\r\n").flatMap { $0.split(separator: ",").map(String.init) })
        let named = CommandSpec.history.examples.map { example in
            // The id each example looks up: the one after its lookup option, else its user argument.
            let words = example.command.split(separator: " ").map(String.init)
            if let option = words.firstIndex(where: { $0 == "--transaction" || $0 == "--order" }), option + 1 < words.count {
                return words[option + 1]
            }
            return words.count > 2 ? words[2] : ""
        }
        #expect(named.count == 3)
        let missing = named.filter { !cells.contains($0) }
        #expect(missing.isEmpty, "history's examples look up \(missing), which sample-data does not hold")
    }

    @Test("a short usage line lists every option, required ones unbracketed")
    func generateUsage() {
        #expect(HelpRenderer.synopsis(of: .runs, programName: "iaprecon") == "iaprecon runs [--db <file>] [--limit <n>]")
        #expect(HelpRenderer.synopsis(of: .forget, programName: "iaprecon") == "iaprecon forget [--db <file>] [--quiet] <path>...")
        #expect(HelpRenderer.synopsis(of: .generate, programName: "iaprecon") == "iaprecon generate [<options>] --out <dir>")
    }

    @Test("a long label puts its text on the next line")
    func longLabel() {
        let command = CommandSpec(
            name: "x", abstract: "X.",
            options: [OptionSpec(name: "a-very-long-option-name", valueName: "value", help: "Help.")])
        let help = HelpRenderer.help(for: command, program: .iaprecon)
        #expect(help.contains("  --a-very-long-option-name <value>\n                          Help.\n"))
    }

    @Test("every help screen fits in 80 columns and ends without a blank line")
    func width() {
        let program = ProgramSpec.iaprecon
        let screens = [HelpRenderer.help(for: program)] + program.commands.map { HelpRenderer.help(for: $0, program: program) }
        for screen in screens {
            for line in screen.split(separator: "\n") {
                #expect(line.count <= 80, "\(line)")
                #expect(line.last != " ", "trailing space: \(line)")
            }
            #expect(!screen.hasSuffix("\n"))
        }
    }

    @Test("--version prints the version passed in")
    func version() {
        #expect(parse(["--version"], program: .iaprecon(version: "1.2.3")) == .version("1.2.3"))
        #expect(parse(["--version"], program: .iaprecon) == .version(ProgramSpec.iapreconDefaultVersion))
        #expect(parse(["--version"], program: .iaprecon).exitCode == .ok)
    }
}
