/// What a command line asks for.
public enum ParseOutcome: Sendable, Equatable {
    /// Run this subcommand.
    case command(ParsedCommand)
    /// Print this help text to stdout and exit 0.
    case help(String)
    /// Print this version to stdout and exit 0.
    case version(String)
    /// Print this message to stderr and exit 2.
    case usageError(message: String)

    public var exitCode: ExitCode {
        if case .usageError = self { .usage } else { .ok }
    }
}

/// Parses the arguments after the program name (`CommandLine.arguments.dropFirst()`).
///
/// Accepts `--opt value`, `--opt=value`, `-j 4`, `-j4`, clustered short flags,
/// and `--` to end options. `--help`/`-h` anywhere before `--` wins over any
/// error, as in swift-argument-parser; `help <sub>` and no arguments at all
/// print help. Options not given hold their spec default; a `--config` file
/// is not read here (see `parseWithConfig`).
public func parse(_ arguments: [String], program: ProgramSpec) -> ParseOutcome {
    do throws(UsageError) {
        return try CommandLineParser(program: program).parse(arguments[...])
    } catch {
        return .usageError(message: error.text)
    }
}

/// `parse`, then the `--config` file if one is given, applied under the
/// command line and over the spec defaults.
public func parseWithConfig(_ arguments: [String], program: ProgramSpec) -> ParseOutcome {
    let outcome = parse(arguments, program: program)
    guard case .command(let command) = outcome, let path = command.configPath else { return outcome }
    do throws(UsageError) {
        let config = try loadConfig(path: path, program: program)
        return .command(try command.applyingDefaults(fromConfig: config))
    } catch {
        return .usageError(message: error.text)
    }
}

private struct CommandLineParser {
    let program: ProgramSpec

    private func rootUsageError(_ reason: String) -> UsageError {
        UsageError(reason: reason, helpCommand: "\(program.name) --help")
    }

    func parse(_ arguments: ArraySlice<String>) throws(UsageError) -> ParseOutcome {
        guard let first = arguments.first else { return .help(HelpRenderer.help(for: program)) }
        switch first {
        case "--help", "-h":
            return .help(HelpRenderer.help(for: program))
        case "--version":
            return .version(program.version)
        case "help":
            return try helpSubcommand(arguments.dropFirst())
        case _ where isOptionLike(first):
            let typed = optionName(first)
            let suggested = typed.hasPrefix("--") ? Suggestion.closest(to: typed, among: ["--help", "--version"]) : nil
            throw rootUsageError(UsageMessage.unknownOption(typed, suggestion: suggested))
        default:
            let spec = try command(named: first)
            return try parseCommand(spec, arguments.dropFirst())
        }
    }

    private func command(named name: String) throws(UsageError) -> CommandSpec {
        guard let spec = program.command(named: name) else {
            let names = program.commands.map(\.name) + ["help"]
            throw rootUsageError(
                UsageMessage.unknownSubcommand(name, suggestion: Suggestion.closest(to: name, among: names)))
        }
        return spec
    }

    /// `help`, `help <sub>`.
    private func helpSubcommand(_ arguments: ArraySlice<String>) throws(UsageError) -> ParseOutcome {
        guard let name = arguments.first, name != "--help", name != "-h" else {
            return .help(HelpRenderer.help(for: program))
        }
        let spec = try command(named: name)
        let extra = Array(arguments.dropFirst())
        guard extra.isEmpty else {
            throw UsageError(reason: UsageMessage.unexpectedArguments(extra), helpCommand: "\(program.name) --help")
        }
        return .help(HelpRenderer.help(for: spec, program: program))
    }

    private func parseCommand(_ spec: CommandSpec, _ arguments: ArraySlice<String>) throws(UsageError)
        -> ParseOutcome
    {
        if arguments.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            return .help(HelpRenderer.help(for: spec, program: program))
        }
        var command = ParsedCommand(programName: program.name, spec: spec)
        var rest = arguments
        var extraArguments: [String] = []
        var optionsEnded = false
        while let argument = rest.popFirst() {
            if optionsEnded || !isOptionLike(argument) {
                if command.positionals.count < spec.arguments.count || spec.arguments.last?.isVariadic == true {
                    command.positionals.append(argument)
                } else {
                    extraArguments.append(argument)
                }
            } else if argument == "--" {
                optionsEnded = true
            } else if argument.hasPrefix("--") {
                try parseLongOption(argument, rest: &rest, into: &command)
            } else {
                try parseShortOptions(argument, rest: &rest, into: &command)
            }
        }
        if !extraArguments.isEmpty {
            throw command.usageError(UsageMessage.unexpectedArguments(extraArguments))
        }
        try checkRequired(command)
        for option in spec.options where command.values[option.name] == nil {
            if case .value(let text) = option.defaultValue {
                command.values[option.name] = [OptionValue(text, origin: .specDefault)]
            }
        }
        return .command(command)
    }

    /// `--name`, `--name value`, `--name=value`.
    private func parseLongOption(
        _ argument: String, rest: inout ArraySlice<String>, into command: inout ParsedCommand
    ) throws(UsageError) {
        let spec = command.spec
        let body = argument.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
        if let option = spec.option(named: name) {
            if let inlineValue {
                try store(inlineValue, for: option, into: &command)
            } else {
                try store(nextValue(for: option, rest: &rest, command: command), for: option, into: &command)
            }
        } else if let flag = spec.flag(named: name) {
            if let inlineValue {
                throw command.usageError(UsageMessage.valueForFlag(flag.label, value: inlineValue))
            }
            command.flags.insert(flag.name)
        } else {
            let names = spec.options.map { "--\($0.name)" } + spec.flags.map(\.label) + ["--help"]
            let typed = "--\(name)"
            let sameThing = Suggestion.sameFolder[typed].flatMap { names.contains($0) ? $0 : nil }
            throw command.usageError(
                UsageMessage.unknownOption(typed, suggestion: sameThing ?? Suggestion.closest(to: typed, among: names)))
        }
    }

    /// `-q`, `-qj 4`, `-j4`: flags may be clustered; an option takes the rest
    /// of the cluster, or the next argument, as its value.
    private func parseShortOptions(
        _ argument: String, rest: inout ArraySlice<String>, into command: inout ParsedCommand
    ) throws(UsageError) {
        var letters = argument.dropFirst()
        while let letter = letters.popFirst() {
            if let flag = command.spec.flag(short: letter) {
                command.flags.insert(flag.name)
            } else if let option = command.spec.option(short: letter) {
                let attached = letters.first == "=" ? String(letters.dropFirst()) : String(letters)
                let text = try attached.isEmpty ? nextValue(for: option, rest: &rest, command: command) : attached
                try store(text, for: option, into: &command)
                return
            } else {
                throw command.usageError(UsageMessage.unknownOption("-\(letter)", suggestion: nil))
            }
        }
    }

    /// The argument after an option, unless it is itself an option.
    private func nextValue(
        for option: OptionSpec, rest: inout ArraySlice<String>, command: ParsedCommand
    ) throws(UsageError) -> String {
        guard let next = rest.first, !isOptionLike(next) || looksNegative(next) else {
            throw command.usageError(UsageMessage.missingValue(option.label))
        }
        rest.removeFirst()
        return next
    }

    private func store(_ text: String, for option: OptionSpec, into command: inout ParsedCommand) throws(UsageError) {
        guard !text.isEmpty else { throw command.usageError(UsageMessage.missingValue(option.label)) }
        let value: OptionValue
        switch option.kind.check(text) {
        case .success(let checked):
            value = OptionValue(checked, origin: .commandLine)
        case .failure(let invalid):
            throw command.invalidValue(OptionValue(text, origin: .commandLine), of: option, invalid)
        }
        if option.isRepeatable {
            command.values[option.name, default: []].append(value)
        } else if let earlier = command.values[option.name]?.last, earlier.text != value.text {
            // Taking the last in silence would run with a setting the user did not mean (an app's two
            // bundles given as two `--bundle-id`s reject every line of the first); a config file refuses
            // a key set twice the same way. The same value twice means one thing, and is taken.
            throw command.usageError(UsageMessage.givenTwice(option.label, earlier.text, value.text))
        } else {
            command.values[option.name] = [value]
        }
    }

    private func checkRequired(_ command: ParsedCommand) throws(UsageError) {
        let spec = command.spec
        for option in spec.options where option.isRequired && command.values[option.name] == nil {
            throw command.usageError(UsageMessage.missingArgument(option.label))
        }
        for (index, argument) in spec.arguments.enumerated()
        where argument.isRequired && index >= command.positionals.count {
            throw command.usageError(UsageMessage.missingArgument(argument.label))
        }
        for group in spec.exactlyOneOf {
            let labels = group.map { name in
                spec.argument(named: name)?.label ?? spec.option(named: name)?.label ?? "--\(name)"
            }
            let given = zip(group, labels).filter { name, _ in
                if spec.argument(named: name) != nil { return command.positional(name) != nil }
                return command.values[name] != nil
            }
            if given.isEmpty { throw command.usageError(UsageMessage.noneOf(labels)) }
            if given.count > 1 { throw command.usageError(UsageMessage.severalOf(given.map(\.1))) }
        }
    }
}

/// `-x`, `--x`, `--`; not `-` alone, which names stdin.
private func isOptionLike(_ argument: String) -> Bool {
    argument.hasPrefix("-") && argument.count > 1
}

/// `-5`: a value for an option (to be refused by its kind), not an option.
private func looksNegative(_ argument: String) -> Bool {
    argument.dropFirst().first?.isNumber == true
}

/// `--name` of `--name=value`.
private func optionName(_ argument: String) -> String {
    String(argument.prefix { $0 != "=" })
}
