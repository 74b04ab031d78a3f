/// The declarative description of iaprecon's command line.
///
/// Parsing, help, usage lines and error messages are all rendered from these
/// tables, so they cannot drift apart (the swift-argument-parser convention,
/// written by hand).

/// The whole program: its name, version and subcommands.
public struct ProgramSpec: Sendable, Equatable {
    public var name: String
    public var version: String
    public var abstract: String
    public var discussion: String
    public var commands: [CommandSpec]
    public var examples: [ExampleSpec]

    public init(
        name: String,
        version: String,
        abstract: String,
        discussion: String = "",
        commands: [CommandSpec],
        examples: [ExampleSpec] = []
    ) {
        self.name = name
        self.version = version
        self.abstract = abstract
        self.discussion = discussion
        self.commands = commands
        self.examples = examples
    }

    public func command(named name: String) -> CommandSpec? {
        commands.first { $0.name == name }
    }

    /// The keys a config file may set: the options and flags of the
    /// subcommands that read `--config`, in declaration order.
    public var configKeys: [String] {
        var seen = Set<String>()
        var keys: [String] = []
        for command in commands where command.acceptsConfig {
            for name in command.options.map(\.name) + command.flags.map(\.name)
            where name != OptionSpec.configOptionName && seen.insert(name).inserted {
                keys.append(name)
            }
        }
        return keys
    }
}

/// One subcommand, such as `run` or `history`.
public struct CommandSpec: Sendable, Equatable {
    public var name: String
    public var abstract: String
    public var discussion: String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var flags: [FlagSpec]
    public var examples: [ExampleSpec]
    /// Groups of option or argument names of which exactly one must be given,
    /// such as `history`'s user ID, `--transaction` or `--order`.
    public var exactlyOneOf: [[String]]

    public init(
        name: String,
        abstract: String,
        discussion: String = "",
        arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [],
        flags: [FlagSpec] = [],
        examples: [ExampleSpec] = [],
        exactlyOneOf: [[String]] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.flags = flags
        self.examples = examples
        self.exactlyOneOf = exactlyOneOf
    }

    public func option(named name: String) -> OptionSpec? {
        options.first { $0.name == name }
    }

    public func option(short: Character) -> OptionSpec? {
        options.first { $0.short == short }
    }

    public func flag(named name: String) -> FlagSpec? {
        flags.first { $0.name == name }
    }

    public func flag(short: Character) -> FlagSpec? {
        flags.first { $0.short == short }
    }

    public func argument(named name: String) -> ArgumentSpec? {
        arguments.first { $0.name == name }
    }

    /// Whether the command reads `--config FILE`.
    public var acceptsConfig: Bool {
        option(named: OptionSpec.configOptionName) != nil
    }
}

/// A positional argument, shown as `<name>`.
public struct ArgumentSpec: Sendable, Equatable {
    public var name: String
    public var help: String
    public var isRequired: Bool
    /// The last argument may take every remaining word (`forget PATH...`).
    public var isVariadic: Bool

    public init(name: String, help: String, isRequired: Bool = true, isVariadic: Bool = false) {
        self.name = name
        self.help = help
        self.isRequired = isRequired
        self.isVariadic = isVariadic
    }

    /// `<user-id>` (`<path>...` when variadic), as in help and error messages.
    public var label: String { "<\(name)>" + (isVariadic ? "..." : "") }
}

/// An option that takes a value: `--name <value>` or `--name=<value>`.
public struct OptionSpec: Sendable, Equatable {
    public var name: String
    public var short: Character?
    public var valueName: String
    public var help: String
    public var defaultValue: OptionDefault
    public var kind: ValueKind
    public var isRequired: Bool
    public var isRepeatable: Bool

    public init(
        name: String,
        short: Character? = nil,
        valueName: String,
        help: String,
        defaultValue: OptionDefault = .none,
        kind: ValueKind = .text,
        isRequired: Bool = false,
        isRepeatable: Bool = false
    ) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.kind = kind
        self.isRequired = isRequired
        self.isRepeatable = isRepeatable
    }

    /// The name of the option that points at a config file.
    public static let configOptionName = "config"

    /// `--jobs <n>`, as in usage lines and error messages.
    public var label: String { "--\(name) <\(valueName)>" }

    /// The values an enumerated option accepts, in the order help lists them.
    public var allowedValues: [String]? {
        if case .choice(let values) = kind { values } else { nil }
    }
}

/// What an option holds when neither the command line nor a config file sets it.
public enum OptionDefault: Sendable, Equatable {
    /// No default: the option is absent unless given.
    case none
    /// This value is used, and help shows `(default: value)`.
    case value(String)
    /// The command works the default out at run time (the latest event time,
    /// the number of cores); help shows `(default: description)`.
    case computed(String)

    /// The text after `default: ` in help, if any.
    var helpText: String? {
        switch self {
        case .none: nil
        case .value(let value): value
        case .computed(let description): description
        }
    }
}

/// A switch that takes no value, such as `--quiet`.
public struct FlagSpec: Sendable, Equatable {
    public var name: String
    public var short: Character?
    public var help: String

    public init(name: String, short: Character? = nil, help: String) {
        self.name = name
        self.short = short
        self.help = help
    }

    /// `--quiet`, as in usage lines and error messages.
    public var label: String { "--\(name)" }
}

/// One example in help: what it does, then the command line to copy.
public struct ExampleSpec: Sendable, Equatable {
    public var summary: String
    public var command: String

    public init(_ summary: String, _ command: String) {
        self.summary = summary
        self.command = command
    }
}
