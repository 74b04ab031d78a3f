/// Where an option's value came from; error messages point there.
public enum ValueOrigin: Sendable, Equatable {
    case commandLine
    case config(file: String, line: Int)
    case specDefault
}

/// One value of an option, as text, with where it came from.
public struct OptionValue: Sendable, Equatable {
    public var text: String
    public var origin: ValueOrigin

    public init(_ text: String, origin: ValueOrigin) {
        self.text = text
        self.origin = origin
    }
}

/// A subcommand with its options, flags and arguments, checked against its
/// `CommandSpec`: every value present has passed its `ValueKind`.
///
/// Options the user did not give hold their spec default (`.value` defaults
/// only); `applyingDefaults(fromConfig:)` puts config file values in between.
/// The typed accessors throw `UsageError` with the exact message to print.
public struct ParsedCommand: Sendable, Equatable {
    public let programName: String
    public let spec: CommandSpec
    /// Option values by long name, in the order given; one value unless the
    /// option is repeatable.
    public internal(set) var values: [String: [OptionValue]]
    /// Names of the flags that are set.
    public internal(set) var flags: Set<String>
    /// Positional arguments in order; `positional(_:)` reads them by name.
    public internal(set) var positionals: [String]

    public init(
        programName: String,
        spec: CommandSpec,
        values: [String: [OptionValue]] = [:],
        flags: Set<String> = [],
        positionals: [String] = []
    ) {
        self.programName = programName
        self.spec = spec
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }

    /// The subcommand's name, such as `run`.
    public var name: String { spec.name }

    /// Option values as plain text by long name.
    public var options: [String: [String]] { values.mapValues { $0.map(\.text) } }

    /// A usage error for a check the command makes after parsing (like
    /// swift-argument-parser's `ValidationError`), naming the command's help.
    public func usageError(_ reason: String) -> UsageError {
        UsageError(reason: reason, helpCommand: "\(programName) \(spec.name) --help")
    }
}

// MARK: - Reading values

extension ParsedCommand {
    /// The last value of an option, or nil when it has none.
    public func value(_ name: String) -> String? {
        optionValue(name)?.text
    }

    /// Every value of a repeatable option, in the order given.
    public func allValues(_ name: String) -> [String] {
        _ = optionSpec(name)
        return values[name, default: []].map(\.text)
    }

    /// Where the option's value came from, or nil when it has none.
    public func origin(_ name: String) -> ValueOrigin? {
        optionValue(name)?.origin
    }

    public func flag(_ name: String) -> Bool {
        precondition(spec.flag(named: name) != nil, "'\(name)' is not a flag of '\(spec.name)'")
        return flags.contains(name)
    }

    /// The positional argument declared as `name`, or nil when not given.
    public func positional(_ name: String) -> String? {
        guard let index = spec.arguments.firstIndex(where: { $0.name == name }) else {
            preconditionFailure("'\(name)' is not an argument of '\(spec.name)'")
        }
        return index < positionals.count ? positionals[index] : nil
    }

    /// The path given with `--config`, if any.
    public var configPath: String? {
        spec.acceptsConfig ? value(OptionSpec.configOptionName) : nil
    }

    public func string(_ name: String) throws(UsageError) -> String {
        try required(name).text
    }

    public func int(_ name: String) throws(UsageError) -> Int {
        try convert(required(name), of: name, expecting: .wholeNumber) { Int($0) }
    }

    public func optionalInt(_ name: String) throws(UsageError) -> Int? {
        guard let value = optionValue(name) else { return nil }
        return try convert(value, of: name, expecting: .wholeNumber) { Int($0) }
    }

    /// A duration such as `24h` or `1h30m`, in milliseconds.
    public func duration(_ name: String) throws(UsageError) -> Int64 {
        try convert(required(name), of: name, expecting: .duration, DurationText.milliseconds)
    }

    public func optionalDuration(_ name: String) throws(UsageError) -> Int64? {
        guard let value = optionValue(name) else { return nil }
        return try convert(value, of: name, expecting: .duration, DurationText.milliseconds)
    }

    /// The option's value, which must be one of `allowed` (by default the
    /// choices its spec declares).
    public func choice(_ name: String, in allowed: [String]? = nil) throws(UsageError) -> String {
        try checkedChoice(required(name), of: name, in: allowed)
    }

    public func optionalChoice(_ name: String, in allowed: [String]? = nil) throws(UsageError) -> String? {
        guard let value = optionValue(name) else { return nil }
        return try checkedChoice(value, of: name, in: allowed)
    }

    /// The option's value as a `String`-backed enum, such as a severity.
    public func choice<Choice: RawRepresentable & CaseIterable>(
        _ name: String, as type: Choice.Type
    ) throws(UsageError) -> Choice where Choice.RawValue == String {
        let allowed = Choice.allCases.map(\.rawValue)
        return Choice(rawValue: try choice(name, in: allowed))!
    }

    public func optionalChoice<Choice: RawRepresentable & CaseIterable>(
        _ name: String, as type: Choice.Type
    ) throws(UsageError) -> Choice? where Choice.RawValue == String {
        let allowed = Choice.allCases.map(\.rawValue)
        return try optionalChoice(name, in: allowed).flatMap(Choice.init(rawValue:))
    }

    /// Counts such as `100k,1m,4m`, in order.
    public func sizes(_ name: String) throws(UsageError) -> [Int] {
        try convert(required(name), of: name, expecting: .sizeList, SizeListText.counts)
    }

    // MARK: Helpers

    private func optionSpec(_ name: String) -> OptionSpec {
        guard let option = spec.option(named: name) else {
            preconditionFailure("'\(name)' is not an option of '\(spec.name)'")
        }
        return option
    }

    private func optionValue(_ name: String) -> OptionValue? {
        _ = optionSpec(name)
        return values[name]?.last
    }

    private func required(_ name: String) throws(UsageError) -> OptionValue {
        guard let value = optionValue(name) else {
            throw usageError(UsageMessage.missingArgument(optionSpec(name).label))
        }
        return value
    }

    /// Converts a value that passed its kind's check; this only fails when
    /// an accessor is used on an option of another kind (`int` on a path).
    private func convert<Value>(
        _ value: OptionValue, of name: String, expecting: InvalidValue, _ conversion: (String) -> Value?
    ) throws(UsageError) -> Value {
        guard let converted = conversion(value.text) else {
            throw invalidValue(value, of: optionSpec(name), expecting)
        }
        return converted
    }

    private func checkedChoice(_ value: OptionValue, of name: String, in allowed: [String]?) throws(UsageError)
        -> String
    {
        let option = optionSpec(name)
        let allowed = allowed ?? option.allowedValues
        if let allowed, case .failure(let invalid) = ValueKind.choice(allowed).check(value.text) {
            throw invalidValue(value, of: option, invalid)
        }
        return value.text
    }

    /// The error for a refused value, worded for where the value came from:
    /// the option on the command line, or the key at `file:line`.
    func invalidValue(_ value: OptionValue, of option: OptionSpec, _ invalid: InvalidValue) -> UsageError {
        switch value.origin {
        case .commandLine, .specDefault:
            usageError(UsageMessage.invalidValue(value.text, for: option.label, invalid))
        case .config(let file, let line):
            UsageError(reason: "\(file):\(line): " + UsageMessage.invalidValue(value.text, for: option.name, invalid))
        }
    }
}

extension ParsedCommand: CustomStringConvertible {
    /// The command as one line with every value in effect, in spec order:
    /// `iaprecon run --input=sample-data ... --quiet`; for logs and test failures.
    public var description: String {
        let options = spec.options.flatMap { option in
            values[option.name, default: []].map { "--\(option.name)=\($0.text)" }
        }
        let setFlags = spec.flags.filter { flags.contains($0.name) }.map(\.label)
        return ([programName, spec.name] + options + setFlags + positionals).joined(separator: " ")
    }
}
