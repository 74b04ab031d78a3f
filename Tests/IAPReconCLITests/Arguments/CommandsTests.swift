@testable import IAPReconCLI
import Testing

@Suite("iaprecon's command table")
struct CommandsTests {
    static let program = ProgramSpec.iaprecon

    @Test("the subcommands, in help order")
    func names() {
        #expect(Self.program.commands.map(\.name) == [
            "run", "nightly", "backfill", "ingest", "normalize", "join", "report", "validate", "history", "runs",
            "check", "forget", "generate", "bench",
        ])
    }

    @Test("every subcommand has one to three examples, and each one parses", arguments: ProgramSpec.iaprecon.commands)
    func examples(command: CommandSpec) throws {
        #expect((1...3).contains(command.examples.count))
        for example in command.examples {
            // As a shell reads it: a line ending in `\` goes on on the next.
            let words = example.command.replacingOccurrences(of: "\\\n", with: " ").split(separator: " ").map(String.init)
            #expect(words.first == "iaprecon")
            #expect(words.dropFirst().first == command.name)
            let parsed = try parseExpectingCommand(Array(words.dropFirst()))
            #expect(parsed.name == command.name)
        }
    }

    @Test("every default passes its own check", arguments: ProgramSpec.iaprecon.commands)
    func defaults(command: CommandSpec) {
        for option in command.options {
            if case .value(let text) = option.defaultValue {
                #expect(option.kind.check(text) == .success(text), "\(command.name) --\(option.name)")
            }
        }
    }

    @Test("names and short names are unique within a subcommand", arguments: ProgramSpec.iaprecon.commands)
    func uniqueNames(command: CommandSpec) {
        let names = command.options.map(\.name) + command.flags.map(\.name) + ["help"]
        #expect(Set(names).count == names.count)
        let shorts = command.options.compactMap(\.short) + command.flags.compactMap(\.short) + ["h"]
        #expect(Set(shorts).count == shorts.count)
    }

    @Test("shared options read the same in every subcommand")
    func sharedOptions() {
        var seen: [String: OptionSpec] = [:]
        for command in Self.program.commands where command.name != "generate" {
            // history reads a store that was already reported: its --currency defaults to that store's; its --limit
            // counts events and has no default (the whole story unless asked), where runs' counts runs. join reads no
            // line, so its --now rejects none: it only dates an input without event times.
            let ownHelp: [String: Set<String>] = ["history": ["currency", "limit"], "join": ["now"]]
            for option in command.options where ownHelp[command.name]?.contains(option.name) != true {
                if let earlier = seen[option.name] {
                    #expect(earlier == option, "--\(option.name) differs in \(command.name)")
                }
                seen[option.name] = option
            }
        }
    }

    @Test("run takes the contract's options and defaults")
    func runOptions() {
        let run = CommandSpec.run
        #expect(run.options.map(\.name) == [
            "input", "db", "out", "as-of", "now", "grace", "tz", "mmp-tz", "currency", "bundle-id", "app-sku", "jobs", "trust-root", "fail-on",
            "fail-on-new", "config",
        ])
        #expect(run.flags.map(\.name) == ["trust-unsigned", "quiet"])
        #expect(run.acceptsConfig)
        // The stages read it too: a night resumed by hand must report in the night's zone and currency.
        let stages: [CommandSpec] = [.normalize, .join, .report]
        #expect(stages.filter(\.acceptsConfig).count == 3)
        #expect(CommandSpec.validate.acceptsConfig == false)
        #expect(OptionSpec.grace.defaultValue == .value("24h"))
        #expect(OptionSpec.failOn.allowedValues == ["critical", "warning", "info"])
    }

    @Test("config keys are the options of the subcommands that read --config")
    func configKeys() {
        #expect(Self.program.configKeys == [
            "input", "db", "out", "as-of", "now", "grace", "tz", "mmp-tz", "currency", "bundle-id", "app-sku", "jobs", "trust-root", "fail-on",
            "fail-on-new", "trust-unsigned", "quiet", "root", "reports", "date", "keep-reports", "log-dir", "force", "from", "to",
        ])
    }
}

extension CommandSpec: CustomTestStringConvertible {
    public var testDescription: String { name }
}
