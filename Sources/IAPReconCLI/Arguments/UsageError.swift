/// A command line or config file iaprecon cannot act on (exit code 2).
///
/// Rendered in swift-argument-parser's shape, so the wording is what users of
/// Swift tools already know:
///
///     Error: Unknown option '--inptu'. Did you mean '--input'?
///     Usage: iaprecon run [<options>]
///       See 'iaprecon run --help' for more information.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sentence after `Error: `.
    public var reason: String
    /// The synopsis after `Usage: `; nil for config file errors, whose
    /// `file:line` says where to look instead.
    public var usage: String?
    /// The command whose help explains the fix, such as `iaprecon run --help`.
    public var helpCommand: String?

    public init(reason: String, usage: String? = nil, helpCommand: String? = nil) {
        self.reason = reason
        self.usage = usage
        self.helpCommand = helpCommand
    }

    /// The full message for stderr, without a trailing newline.
    public var text: String {
        var lines = ["Error: \(reason)"]
        if let usage { lines.append("Usage: \(usage)") }
        if let helpCommand { lines.append("  See '\(helpCommand)' for more information.") }
        return lines.joined(separator: "\n")
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
