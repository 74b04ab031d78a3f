@testable import IAPReconCLI
import Testing

@Suite("Usage errors")
struct UsageErrorTests {
    /// One command line iaprecon refuses, with the exact stderr text.
    struct UsageErrorCase: Sendable, CustomTestStringConvertible {
        var id: String
        var argv: [String]
        var expected: String

        var testDescription: String { id }
    }

    static let cases: [UsageErrorCase] = [
        UsageErrorCase(
            id: "unknown option, with a suggestion",
            argv: ["run", "--inptu", "data"],
            expected: "Error: Unknown option '--inptu'. Did you mean '--input'? (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "unknown option given as --name=value",
            argv: ["report", "--curency=EUR"],
            expected: "Error: Unknown option '--curency'. Did you mean '--currency'? (see 'iaprecon report --help')"),
        UsageErrorCase(
            id: "unknown option, prefix of a real one",
            argv: ["runs", "--lim", "5"],
            expected: "Error: Unknown option '--lim'. Did you mean '--limit'? (see 'iaprecon runs --help')"),
        UsageErrorCase(
            id: "unknown option, nothing close",
            argv: ["normalize", "--verbose"],
            expected: "Error: Unknown option '--verbose'. (see 'iaprecon normalize --help')"),
        UsageErrorCase(
            id: "unknown short option",
            argv: ["run", "-x"],
            expected: "Error: Unknown option '-x'. (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "unknown subcommand, with a suggestion",
            argv: ["rnu"],
            expected: "Error: Unknown subcommand 'rnu'. Did you mean 'run'? (see 'iaprecon --help')"),
        UsageErrorCase(
            id: "unknown subcommand after help",
            argv: ["help", "hisotry"],
            expected: "Error: Unknown subcommand 'hisotry'. Did you mean 'history'? (see 'iaprecon --help')"),
        UsageErrorCase(
            id: "unknown option before the subcommand",
            argv: ["--verison"],
            expected: "Error: Unknown option '--verison'. Did you mean '--version'? (see 'iaprecon --help')"),
        UsageErrorCase(
            id: "missing value at the end",
            argv: ["run", "--db"],
            expected: "Error: Missing value for '--db <file>' (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "missing value before another option",
            argv: ["join", "--grace", "--db", "x.sqlite"],
            expected: "Error: Missing value for '--grace <duration>' (see 'iaprecon join --help')"),
        UsageErrorCase(
            id: "empty value after =",
            argv: ["run", "--out="],
            expected: "Error: Missing value for '--out <dir>' (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "bad integer",
            argv: ["ingest", "--jobs", "four"],
            expected: "Error: The value 'four' is invalid for '--jobs <n>': expected a whole number of at least 1 (see 'iaprecon ingest --help')"),
        UsageErrorCase(
            id: "integer below the minimum, as a short option",
            argv: ["bench", "-j0"],
            expected: "Error: The value '0' is invalid for '--jobs <n>': expected a whole number of at least 1 (see 'iaprecon bench --help')"),
        UsageErrorCase(
            id: "negative number is a value, not an option",
            argv: ["generate", "--out", "x", "--seed", "-1"],
            expected: "Error: The value '-1' is invalid for '--seed <n>': expected a whole number of at least 0 (see 'iaprecon generate --help')"),
        UsageErrorCase(
            id: "a whole number too large to hold says where the range ends",
            argv: ["generate", "--out", "x", "--seed", "9223372036854775808"],
            expected: "Error: The value '9223372036854775808' is invalid for '--seed <n>': expected a whole number from 0 to 9223372036854775807 (see 'iaprecon generate --help')"),
        UsageErrorCase(
            id: "bad duration",
            argv: ["run", "--grace=1day"],
            expected: "Error: The value '1day' is invalid for '--grace <duration>': expected a duration such as 24h, 90m, 30s, 2d or 1h30m (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "bad choice",
            argv: ["run", "--fail-on", "fatal"],
            expected: "Error: The value 'fatal' is invalid for '--fail-on <severity>'. Please provide one of 'critical', 'warning' or 'info'. (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "bad time zone",
            argv: ["report", "--tz", "Tokyo"],
            expected: "Error: The value 'Tokyo' is invalid for '--tz <zone>': expected the IANA time zone of a place, such as UTC, America/New_York or Asia/Tokyo, not an abbreviation or a fixed offset (see 'iaprecon report --help')"),
        UsageErrorCase(
            id: "a time zone abbreviation, which Foundation reads as a zone of its choosing (BST as Dhaka), is no IANA zone",
            argv: ["report", "--tz", "BST"],
            expected: "Error: The value 'BST' is invalid for '--tz <zone>': expected the IANA time zone of a place, such as UTC, America/New_York or Asia/Tokyo, not an abbreviation or a fixed offset (see 'iaprecon report --help')"),
        UsageErrorCase(
            id: "the database's fixed offset EST is no place's time all year (New York leaves it in summer)",
            argv: ["report", "--tz", "EST"],
            expected: "Error: The value 'EST' is invalid for '--tz <zone>': expected the IANA time zone of a place, such as UTC, America/New_York or Asia/Tokyo, not an abbreviation or a fixed offset (see 'iaprecon report --help')"),
        UsageErrorCase(
            id: "an offset written as a zone is no IANA zone",
            argv: ["run", "--mmp-tz", "UTC+9"],
            expected: "Error: The value 'UTC+9' is invalid for '--mmp-tz <zone>': expected the IANA time zone of a place, such as UTC, America/New_York or Asia/Tokyo, not an abbreviation or a fixed offset (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "bad currency",
            argv: ["report", "--currency", "US$"],
            expected: "Error: The value 'US$' is invalid for '--currency <code>': expected an ISO 4217 currency code such as USD (see 'iaprecon report --help')"),
        UsageErrorCase(
            id: "currency that is no ISO 4217 code",
            argv: ["run", "--currency", "XBT"],
            expected: "Error: The value 'XBT' is invalid for '--currency <code>': expected an ISO 4217 currency code such as USD (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "missing required option",
            argv: ["generate", "--users", "10"],
            expected: "Error: Missing expected argument '--out <dir>' (see 'iaprecon generate --help')"),
        UsageErrorCase(
            id: "none of a required group",
            argv: ["history", "--format", "json"],
            expected: "Error: Please provide one of '<user-id>', '--transaction <id>', '--order <id>', '--original-transaction <id>' or '--app-account-token <uuid>'. (see 'iaprecon history --help')"),
        UsageErrorCase(
            id: "two of an exclusive group",
            argv: ["history", "u_1001", "--order", "o1"],
            expected: "Error: '<user-id>' and '--order <id>' cannot be used together. (see 'iaprecon history --help')"),
        UsageErrorCase(
            id: "one unexpected argument",
            argv: ["run", "sample-data"],
            expected: "Error: Unexpected argument 'sample-data' (see 'iaprecon run --help')"),
        UsageErrorCase(
            id: "several unexpected arguments",
            argv: ["history", "u_1", "u_2", "u_3"],
            expected: "Error: 2 unexpected arguments: 'u_2', 'u_3' (see 'iaprecon history --help')"),
        UsageErrorCase(
            id: "value given to a flag",
            argv: ["ingest", "--quiet=yes"],
            expected: "Error: The option '--quiet' does not take any value, but 'yes' was specified. (see 'iaprecon ingest --help')"),
    ]

    @Test("the error text is exact and the exit code is 2", arguments: cases)
    func usageError(_ testCase: UsageErrorCase) {
        let outcome = parse(testCase.argv, program: .iaprecon)
        #expect(outcome == .usageError(message: testCase.expected))
        #expect(outcome.exitCode == .usage)
    }

    @Test("a check made after parsing is one line naming the command's help")
    func commandValidation() throws {
        guard case .command(let command) = parse(["join"], program: .iaprecon) else {
            Issue.record("join did not parse")
            return
        }
        #expect(
            command.usageError("--as-of is before every event in the store").text
                == "Error: --as-of is before every event in the store (see 'iaprecon join --help')")
    }

    @Test("a usage error is one line on stderr, also under --quiet: cron mails only what is printed", arguments: [
        ["nightly", "--bogus", "--quiet"], ["nightly", "--date", "2026-13-45", "--quiet"], ["backfill", "--from", "2026-11-29", "--to", "2026-11-28", "--quiet"],
        ["run", "--quiet", "--jobs", "0"], ["rnu", "--quiet"],
    ])
    func oneLineUnderQuiet(_ arguments: [String]) {
        let console = Console.capturing()
        #expect(IAPReconCLI.run(arguments, console: console) == ExitCode.usage.rawValue)
        #expect(console.stderr.hasPrefix("Error: "))
        #expect(console.stderr.filter { $0 == "\n" }.count == 1)
        #expect(console.stdout.isEmpty)
    }

    @Test("a typed accessor names the missing option")
    func missingForAccessor() throws {
        guard case .command(let command) = parse(["join"], program: .iaprecon) else {
            Issue.record("join did not parse")
            return
        }
        #expect(throws: command.usageError("Missing expected argument '--as-of <time>'")) {
            try command.string("as-of")
        }
    }

    @Test("a narrower choice than the spec's is refused with the accessor's list")
    func narrowerChoice() throws {
        guard case .command(let command) = parse(["run", "--fail-on", "info"], program: .iaprecon) else {
            Issue.record("run did not parse")
            return
        }
        #expect(
            throws: command.usageError(
                "The value 'info' is invalid for '--fail-on <severity>'. Please provide one of 'critical' or 'warning'.")
        ) {
            try command.choice("fail-on", in: ["critical", "warning"])
        }
    }
}

@Suite("An option of another command")
struct OtherCommandOptionTests {
    @Test("the other command's name for a folder suggests this command's, not the nearest spelling", arguments: [
        (["nightly", "--out", "x"], "Error: Unknown option '--out'. Did you mean '--reports'? (see 'iaprecon nightly --help')"),
        (["backfill", "--input", "x"], "Error: Unknown option '--input'. Did you mean '--root'? (see 'iaprecon backfill --help')"),
        (["run", "--root", "x"], "Error: Unknown option '--root'. Did you mean '--input'? (see 'iaprecon run --help')"),
        (["run", "--reports", "x"], "Error: Unknown option '--reports'. Did you mean '--out'? (see 'iaprecon run --help')"),
        (["ingest", "--root=x"], "Error: Unknown option '--root'. Did you mean '--input'? (see 'iaprecon ingest --help')"),
    ])
    func folderNames(argv: [String], expected: String) {
        #expect(parse(argv, program: .iaprecon) == .usageError(message: expected))
    }

    @Test("near misses: a typo still gets the nearest spelling, and an option a command has is taken")
    func nearMisses() {
        #expect(parse(["nightly", "--rot", "x"], program: .iaprecon)
                == .usageError(message: "Error: Unknown option '--rot'. Did you mean '--root'? (see 'iaprecon nightly --help')"))
        #expect(parse(["run", "--ot", "x"], program: .iaprecon)
                == .usageError(message: "Error: Unknown option '--ot'. Did you mean '--out'? (see 'iaprecon run --help')"))
        if case .command = parse(["generate", "--out", "x"], program: .iaprecon) {} else { Issue.record("generate takes --out") }
    }
}
