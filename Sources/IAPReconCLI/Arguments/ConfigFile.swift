import Foundation

/// Option values read from a `--config` file.
///
/// The format is one `key = value` per line, where a key is an option's long
/// name without dashes (`input`, `db`, `grace`, `fail-on`, ...) and a flag
/// takes `true` or `false`. `#` starts a comment, at the start of a line or
/// after a space; blank lines are ignored; a value may be put in single or
/// double quotes, taken literally, to keep a `#` or surrounding spaces:
///
///     # Nightly reconciliation
///     input = /data/iap/exports
///     db    = "/data/iap/iaprecon.sqlite"
///     grace = 36h        # Apple's delivery retries
///     fail-on = critical
///
/// A key may be any option of a subcommand that reads `--config` (`run`,
/// `ingest`), so one file serves them all; each takes the keys it has
/// options for and leaves the rest.
/// Values on the command line win over the file, which wins over defaults.
public struct ConfigFile: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: String
        public var line: Int

        public init(key: String, value: String, line: Int) {
            self.key = key
            self.value = value
            self.line = line
        }
    }

    /// The path as given, which error messages quote.
    public var path: String
    /// The settings in file order.
    public var entries: [Entry]

    public init(path: String, entries: [Entry]) {
        self.path = path
        self.entries = entries
    }

    /// The settings by key (the last one for a repeatable option).
    public var values: [String: String] {
        Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}

/// Reads and checks a config file: its syntax, and that every key is an
/// option of a subcommand that reads `--config`. Errors name the file and line.
public func loadConfig(path: String, program: ProgramSpec = .iaprecon) throws(UsageError) -> ConfigFile {
    let text = try readConfigText(path: path)
    return try parseConfig(text, path: path, program: program)
}

/// The text of a config file; unreadable files are usage errors (exit 2)
/// because the path came from the command line.
private func readConfigText(path: String) throws(UsageError) -> String {
    var isDirectory: ObjCBool = false
    let problem: String
    if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
        problem = "no such file"
    } else if isDirectory.boolValue {
        problem = "it is a folder"
    } else if let data = FileManager.default.contents(atPath: path) {
        if let text = String(data: data, encoding: .utf8) { return text }
        problem = "it is not UTF-8 text"
    } else {
        problem = "permission denied"
    }
    throw UsageError(reason: "Cannot read config file '\(path)': \(problem)")
}

/// Parses config file text; `path` is only used in error messages.
public func parseConfig(_ text: String, path: String, program: ProgramSpec = .iaprecon) throws(UsageError)
    -> ConfigFile
{
    let keys = program.configKeys
    let readers = program.commands.filter(\.acceptsConfig)
    let flagKeys = Set(readers.flatMap { $0.flags.map(\.name) })
    let repeatableKeys = Set(readers.flatMap { $0.options.filter(\.isRepeatable).map(\.name) })
    var entries: [ConfigFile.Entry] = []
    var firstLine: [String: Int] = [:]
    var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = first.dropFirst() }

    for (index, rawLine) in lines.enumerated() {
        let lineNumber = index + 1
        func fail(_ message: String) -> UsageError {
            UsageError(reason: "\(path):\(lineNumber): \(message)")
        }
        let line = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
        if line.isEmpty || line.hasPrefix("#") { continue }
        guard let equals = line.firstIndex(of: "=") else {
            throw fail("Expected 'key = value', found '\(line)'")
        }
        let key = line[..<equals].trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty else { throw fail("Expected 'key = value', found '\(line)'") }
        guard keys.contains(key) else {
            if key == OptionSpec.configOptionName { throw fail("A config file cannot name another config file") }
            let hint = Suggestion.closest(to: key, among: keys).map { " Did you mean '\($0)'?" } ?? ""
            throw fail("Unknown key '\(key)'.\(hint)")
        }
        if let earlier = firstLine[key], !repeatableKeys.contains(key) {
            throw fail("'\(key)' is already set on line \(earlier)")
        }
        var value: String
        switch configValue(line[line.index(after: equals)...]) {
        case .success(let text): value = text
        case .failure(let problem): throw fail(problem.explanation)
        }
        guard !value.isEmpty else { throw fail("Missing value for '\(key)'") }
        if flagKeys.contains(key) {
            guard let isSet = configBoolean(value) else {
                throw fail("The value '\(value)' is invalid for '\(key)'. Please provide 'true' or 'false' (or yes/no, on/off, 1/0).")
            }
            value = isSet ? "true" : "false"
        }
        firstLine[key] = firstLine[key] ?? lineNumber
        entries.append(ConfigFile.Entry(key: key, value: value, line: lineNumber))
    }
    return ConfigFile(path: path, entries: entries)
}

/// The value after `=`: quoted text taken literally, or bare text up to a
/// `#` that follows a space.
private func configValue(_ raw: Substring) -> Result<String, InvalidValue> {
    let raw = raw.trimmingCharacters(in: .whitespaces)[...]
    if let quote = raw.first, quote == "\"" || quote == "'" {
        let body = raw.dropFirst()
        guard let close = body.firstIndex(of: quote) else {
            return .failure(InvalidValue(explanation: "Missing closing quote in '\(raw)'"))
        }
        let after = body[body.index(after: close)...].trimmingCharacters(in: .whitespaces)
        guard after.isEmpty || after.hasPrefix("#") else {
            return .failure(InvalidValue(explanation: "Unexpected text '\(after)' after the closing quote"))
        }
        return .success(String(body[..<close]))
    }
    var previous: Character = " "
    for index in raw.indices {
        if raw[index] == "#", previous == " " || previous == "\t" {
            return .success(raw[..<index].trimmingCharacters(in: .whitespaces))
        }
        previous = raw[index]
    }
    return .success(String(raw))
}

private func configBoolean(_ value: String) -> Bool? {
    switch value.lowercased() {
    case "true", "yes", "on", "1": true
    case "false", "no", "off", "0": false
    default: nil
    }
}

extension ParsedCommand {
    /// This command with `config`'s values under the command line's: a value
    /// given on the command line stays, a config value replaces a spec
    /// default. Keys for options this command does not have are skipped
    /// (they belong to other subcommands). Config values are checked here,
    /// and a bad one is reported at its `file:line`.
    public func applyingDefaults(fromConfig config: ConfigFile) throws(UsageError) -> ParsedCommand {
        var merged = self
        var fromConfig = Set<String>()
        for entry in config.entries {
            let origin = ValueOrigin.config(file: config.path, line: entry.line)
            if Self.excludingSettings[entry.key].map(givenOnCommandLine) == true { continue }
            if let flag = spec.flag(named: entry.key) {
                if entry.value == "true" { merged.flags.insert(flag.name) }
                continue
            }
            guard let option = spec.option(named: entry.key), option.name != OptionSpec.configOptionName else {
                continue
            }
            if values[option.name]?.contains(where: { $0.origin == .commandLine }) == true { continue }
            let value: OptionValue
            switch option.kind.check(entry.value) {
            case .success(let checked):
                value = OptionValue(checked, origin: origin)
            case .failure(let invalid):
                throw invalidValue(OptionValue(entry.value, origin: origin), of: option, invalid)
            }
            if fromConfig.insert(option.name).inserted {
                merged.values[option.name] = [value]
            } else {
                merged.values[option.name, default: []].append(value)
            }
        }
        return merged
    }

    /// Settings a run cannot have both of, each with the one it excludes. The command line's one wins over the
    /// file's other, as the command line wins over the file for one setting: a night's config trusting a test
    /// root, run by hand with `--trust-unsigned`, runs unsigned (a flag the file sets has no `--no-` to undo it).
    static let excludingSettings = ["trust-unsigned": "trust-root", "trust-root": "trust-unsigned"]

    /// Whether the command line itself gave the flag or option `name`.
    private func givenOnCommandLine(_ name: String) -> Bool {
        flags.contains(name) || values[name]?.contains { $0.origin == .commandLine } == true
    }
}
