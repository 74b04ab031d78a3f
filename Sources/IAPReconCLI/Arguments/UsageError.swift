/// A command line or config file iaprecon cannot act on (exit code 2).
///
/// One line, in swift-argument-parser's wording, with the help to read at its end:
///
///     Error: Unknown option '--inptu'. Did you mean '--input'? (see 'iaprecon run --help')
///
/// Not the parser's three lines (`Error:`, `Usage:`, `See …`): a run that exits non-zero
/// prints one line on stderr, which is what cron mails (CONTRACT.md §4); the synopsis is in
/// the help it names.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sentence after `Error: `.
    public var reason: String
    /// The command whose help explains the fix, such as `iaprecon run --help`; nil for config
    /// file errors, whose `file:line` says where to look instead.
    public var helpCommand: String?

    public init(reason: String, helpCommand: String? = nil) {
        self.reason = reason
        self.helpCommand = helpCommand
    }

    /// The message for stderr: one line, without its newline.
    public var text: String {
        "Error: \(reason)" + (helpCommand.map { " (see '\($0)')" } ?? "")
    }

    public var description: String { text }

    public var exitCode: ExitCode { .usage }
}

/// The fixed wording of each parse error, taken from swift-argument-parser's
/// `ErrorMessageTests` where it has one.
enum UsageMessage {
    static func unknownOption(_ typed: String, suggestion: String?) -> String {
        "Unknown option '\(typed)'." + didYouMean(suggestion)
    }

    static func unknownSubcommand(_ typed: String, suggestion: String?) -> String {
        "Unknown subcommand '\(typed)'." + didYouMean(suggestion)
    }

    static func missingValue(_ label: String) -> String {
        "Missing value for '\(label)'"
    }

    static func missingArgument(_ label: String) -> String {
        "Missing expected argument '\(label)'"
    }

    static func invalidValue(_ value: String, for label: String, _ invalid: InvalidValue) -> String {
        "The value '\(value)' is invalid for '\(label)'\(invalid.explanation)"
    }

    static func valueForFlag(_ label: String, value: String) -> String {
        "The option '\(label)' does not take any value, but '\(value)' was specified."
    }

    static func unexpectedArguments(_ arguments: [String]) -> String {
        if arguments.count == 1 { return "Unexpected argument '\(arguments[0])'" }
        return "\(arguments.count) unexpected arguments: " + arguments.map { "'\($0)'" }.joined(separator: ", ")
    }

    static func givenTwice(_ label: String, _ first: String, _ second: String) -> String {
        "'\(label)' is given twice, with two values ('\(first)', then '\(second)'); it takes one"
    }

    static func noneOf(_ labels: [String]) -> String {
        "Please provide one of \(quotedAlternatives(labels))."
    }

    static func severalOf(_ labels: [String]) -> String {
        let quoted = labels.map { "'\($0)'" }
        let given = quoted.dropLast().joined(separator: ", ") + " and " + quoted[quoted.count - 1]
        return "\(given) cannot be used together."
    }

    /// `'a', 'b' or 'c'`, the way swift-argument-parser lists choices.
    static func quotedAlternatives(_ values: [String]) -> String {
        let quoted = values.map { "'\($0)'" }
        guard quoted.count > 1 else { return quoted.first ?? "" }
        return quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
    }

    private static func didYouMean(_ suggestion: String?) -> String {
        suggestion.map { " Did you mean '\($0)'?" } ?? ""
    }
}
