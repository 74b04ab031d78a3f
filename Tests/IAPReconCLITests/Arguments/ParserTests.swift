@testable import IAPReconCLI
import Testing

/// Parses `argv`, recording an issue unless it is a command.
func parseExpectingCommand(
    _ argv: [String], program: ProgramSpec = .iaprecon, sourceLocation: SourceLocation = #_sourceLocation
) throws -> ParsedCommand {
    let outcome = parse(argv, program: program)
    guard case .command(let command) = outcome else {
        Issue.record("expected a command, got \(outcome)", sourceLocation: sourceLocation)
        throw ExpectedCommand()
    }
    return command
}

private struct ExpectedCommand: Error {}

@Suite("Parsing the command line")
struct ParserTests {
    enum Severity: String, CaseIterable {
        case critical, warning, info
    }

    @Test("--opt value, --opt=value, -j 4 and -j4 all set the option", arguments: [
        ["run", "--jobs", "4"], ["run", "--jobs=4"], ["run", "-j", "4"], ["run", "-j4"], ["run", "-j=4"],
    ])
    func optionForms(argv: [String]) throws {
        let command = try parseExpectingCommand(argv)
        #expect(try command.int("jobs") == 4)
        #expect(command.origin("jobs") == .commandLine)
    }

    @Test("options not given hold their spec defaults; computed defaults stay absent")
    func defaults() throws {
        let command = try parseExpectingCommand(["run"])
        #expect(command.name == "run")
        #expect(try command.string("input") == "sample-data")
        #expect(try command.string("db") == "iaprecon.sqlite")
        #expect(try command.string("out") == "out")
        #expect(try command.duration("grace") == 86_400_000)
        #expect(try command.string("tz") == "UTC")
        #expect(try command.string("mmp-tz") == "UTC")
        #expect(try command.string("currency") == "USD")
        #expect(command.origin("db") == .specDefault)
        #expect(try command.optionalInt("jobs") == nil)
        #expect(command.value("as-of") == nil)
        #expect(try command.optionalChoice("fail-on") == nil)
        #expect(command.configPath == nil)
        #expect(command.flag("quiet") == false)
    }

    @Test("an option of one value given twice with two values is a usage error naming both", arguments: [
        (["run", "--bundle-id", "com.example.game", "--bundle-id", "com.other.app"], "--bundle-id <id>",
         "com.example.game", "com.other.app"),
        (["run", "--db", "a.sqlite", "--db=b.sqlite"], "--db <file>", "a.sqlite", "b.sqlite"),
        (["run", "-i", "in", "--input", "elsewhere"], "--input <dir>", "in", "elsewhere"),
        (["nightly", "--tz", "UTC", "--tz", "Asia/Tokyo"], "--tz <zone>", "UTC", "Asia/Tokyo"),
    ])
    func twoValuesRefused(argv: [String], label: String, first: String, second: String) {
        // Taking the last in silence would run with a setting the user did not mean: `--bundle-id`
        // twice, for an app's two bundles, rejects every line of the first as another app's.
        let outcome = parse(argv, program: .iaprecon)
        #expect(outcome == .usageError(message:
            "Error: '\(label)' is given twice, with two values ('\(first)', then '\(second)'); it takes one "
            + "(see 'iaprecon \(argv[0]) --help')"))
        #expect(outcome.exitCode == .usage)
    }

    @Test("the same value given twice, a repeatable option, or a flag given twice is no error")
    func sameValueTwice() throws {
        let command = try parseExpectingCommand(["run", "--db", "a.sqlite", "--db=a.sqlite", "-j4", "--jobs", "4", "-q", "--quiet"])
        #expect(command.allValues("db") == ["a.sqlite"])
        #expect(try command.int("jobs") == 4)
        #expect(command.flag("quiet"))
        let roots = try parseExpectingCommand(["run", "--trust-root", "a.pem", "--trust-root", "b.pem"])
        #expect(roots.allValues("trust-root") == ["a.pem", "b.pem"])
    }

    @Test("a repeatable option keeps every value in order")
    func repeatable() throws {
        let program = ProgramSpec(
            name: "tool", version: "1", abstract: "A tool.",
            commands: [
                CommandSpec(
                    name: "load", abstract: "Load.",
                    options: [OptionSpec(name: "file", valueName: "path", help: "A file.", isRepeatable: true)])
            ])
        let command = try parseExpectingCommand(["load", "--file", "a", "--file=b", "--file", "c"], program: program)
        #expect(command.allValues("file") == ["a", "b", "c"])
        #expect(command.options == ["file": ["a", "b", "c"]])
        #expect(HelpRenderer.synopsis(of: program.commands[0], programName: "tool") == "tool load [--file <path> ...]")
    }

    @Test("flags, clustered short flags and a value at the end of a cluster")
    func flags() throws {
        #expect(try parseExpectingCommand(["run", "--quiet"]).flag("quiet"))
        let clustered = try parseExpectingCommand(["ingest", "-qj", "2"])
        #expect(clustered.flag("quiet"))
        #expect(try clustered.int("jobs") == 2)
    }

    @Test("typed accessors convert")
    func typed() throws {
        let command = try parseExpectingCommand([
            "run", "--grace", "1h30m", "--fail-on", "critical", "--currency", "eur", "--tz", "Asia/Tokyo",
            "--as-of", "2026-11-29T00:00:00Z",
        ])
        #expect(try command.duration("grace") == 5_400_000)
        #expect(try command.choice("fail-on") == "critical")
        #expect(try command.choice("fail-on", as: Severity.self) == .critical)
        #expect(try command.string("currency") == "EUR")
        #expect(try command.string("tz") == "Asia/Tokyo")
        #expect(try command.string("as-of") == "2026-11-29T00:00:00Z")
        #expect(try parseExpectingCommand(["bench"]).sizes("sizes") == [100_000, 1_000_000, 4_000_000])
        #expect(try parseExpectingCommand(["runs"]).int("limit") == 20)
    }

    @Test("positionals, and -- to pass one that starts with a dash")
    func positionals() throws {
        let command = try parseExpectingCommand(["history", "--format", "csv", "u_1001"])
        #expect(command.positional("user-id") == "u_1001")
        #expect(command.positionals == ["u_1001"])
        #expect(try command.choice("format") == "csv")
        #expect(try parseExpectingCommand(["history", "--", "-odd-user"]).positional("user-id") == "-odd-user")
        #expect(try parseExpectingCommand(["history", "--order", "o1"]).positional("user-id") == nil)
    }

    @Test("--help after -- is an argument, not a request for help")
    func helpAfterDoubleDash() throws {
        #expect(try parseExpectingCommand(["history", "--", "--help"]).positional("user-id") == "--help")
    }

    @Test("--help wins over errors anywhere before --")
    func helpWins() {
        guard case .help(let text) = parse(["generate", "--users", "x", "-h"], program: .iaprecon) else {
            Issue.record("expected help")
            return
        }
        #expect(text.hasPrefix("OVERVIEW: Write a synthetic input folder"))
    }

    @Test("outcomes map to exit codes 0 and 2")
    func exitCodes() throws {
        #expect(parse(["run"], program: .iaprecon).exitCode == .ok)
        #expect(parse(["--help"], program: .iaprecon).exitCode == .ok)
        #expect(parse(["nope"], program: .iaprecon).exitCode == .usage)
    }

    @Test("the contract's exit codes")
    func exitCodeValues() {
        #expect(ExitCode.allCases.map(\.rawValue) == [0, 1, 2, 3, 4])
        #expect(ExitCode.usage.rawValue == 2)
        #expect(ExitCode.unreadableInput.rawValue == 3)
        #expect(ExitCode.locked.rawValue == 4)
    }
}

@Suite("Typed accessors on an option of another kind")
struct MismatchedAccessorTests {
    @Test("int on a path option is a usage error, not a crash")
    func intOnPath() throws {
        let command = try parseExpectingCommand(["run", "--db", "store.sqlite"])
        #expect(throws: command.usageError("The value 'store.sqlite' is invalid for '--db <file>': expected a whole number")) {
            try command.int("db")
        }
    }
}

@Suite("A parsed command as one line")
struct ParsedCommandDescriptionTests {
    @Test("every value in effect, in spec order")
    func description() throws {
        // history's --currency is the store's unless given: not a value the command line knows.
        let command = try parseExpectingCommand(["history", "u_1001", "--format=json"])
        #expect(command.description == "iaprecon history --db=iaprecon.sqlite --tz=UTC --format=json u_1001")
        let given = try parseExpectingCommand(["history", "u_1001", "--currency", "EUR"])
        #expect(given.description == "iaprecon history --db=iaprecon.sqlite --tz=UTC --currency=EUR --format=table u_1001")
    }
}
