/// Help screens and usage lines, rendered from the specs.
///
/// The layout is swift-argument-parser's: OVERVIEW, USAGE, ARGUMENTS,
/// OPTIONS, SUBCOMMANDS, with labels in a 26-column left column. iaprecon adds
/// EXAMPLES. Text wraps at a fixed 80 columns, not the terminal's width, so
/// the output is the same everywhere and can be compared byte for byte.
enum HelpRenderer {
    static let width = 80
    static let labelColumnWidth = 26
    static let indent = 2

    // MARK: Screens

    /// `iaprecon --help`, `iaprecon help`.
    static func help(for program: ProgramSpec) -> String {
        let options = [
            Row(label: "--version", text: "Show the version."),
            Row(label: "-h, --help", text: "Show help information."),
        ]
        let subcommands = program.commands.map { Row(label: $0.name, text: $0.abstract) }
        let blocks = [
            overview(program.abstract, program.discussion),
            "USAGE: \(rootSynopsis(program))",
            section("OPTIONS", options),
            section("SUBCOMMANDS", subcommands),
            examples(program.examples),
            "  See '\(program.name) help <subcommand>' for detailed help.",
        ]
        return blocks.filter { !$0.isEmpty }.joined(separator: "\n\n")
    }

    /// `iaprecon help run`, `iaprecon run --help`.
    static func help(for command: CommandSpec, program: ProgramSpec) -> String {
        let arguments = command.arguments.map { Row(label: $0.label, text: $0.help) }
        let options =
            command.options.map(optionRow) + command.flags.map(flagRow)
            + [Row(label: "-h, --help", text: "Show help information.")]
        let blocks = [
            overview(command.abstract, command.discussion),
            "USAGE: \(synopsis(of: command, programName: program.name))",
            section("ARGUMENTS", arguments),
            section("OPTIONS", options),
            examples(command.examples),
        ]
        return blocks.filter { !$0.isEmpty }.joined(separator: "\n\n")
    }

    // MARK: Usage lines

    static func rootSynopsis(_ program: ProgramSpec) -> String {
        "\(program.name) <subcommand>"
    }

    /// Every option when the line fits in 80 columns after `Usage: `;
    /// otherwise `[<options>]` stands for the optional ones, which the
    /// OPTIONS section lists anyway.
    static func synopsis(of command: CommandSpec, programName: String) -> String {
        let head = "\(programName) \(command.name)"
        let arguments = command.arguments.map { $0.isRequired ? $0.label : "[\($0.label)]" }
        let required = command.options.filter(\.isRequired).map(optionSynopsis)
        let optional =
            command.options.filter { !$0.isRequired }.map { "[\(optionSynopsis($0))]" }
            + command.flags.map { "[\($0.label)]" }
        let full = ([head] + required + optional + arguments).joined(separator: " ")
        if "Usage: ".count + full.count <= width || optional.isEmpty {
            return full
        }
        return ([head, "[<options>]"] + required + arguments).joined(separator: " ")
    }

    private static func optionSynopsis(_ option: OptionSpec) -> String {
        option.isRepeatable ? "\(option.label) ..." : option.label
    }

    // MARK: Pieces

    private struct Row {
        var label: String
        var text: String
    }

    private static func optionRow(_ option: OptionSpec) -> Row {
        let names = option.short.map { "-\($0), \(option.label)" } ?? option.label
        var notes: [String] = []
        if let allowed = option.allowedValues {
            notes.append("values: " + allowed.joined(separator: ", "))
        }
        if let defaultText = option.defaultValue.helpText {
            notes.append("default: " + defaultText)
        }
        let text = notes.isEmpty ? option.help : "\(option.help) (\(notes.joined(separator: "; ")))"
        return Row(label: names, text: text)
    }

    private static func flagRow(_ flag: FlagSpec) -> Row {
        Row(label: flag.short.map { "-\($0), \(flag.label)" } ?? flag.label, text: flag.help)
    }

    private static func overview(_ abstract: String, _ discussion: String) -> String {
        let paragraphs = ["OVERVIEW: \(abstract)"] + paragraphs(of: discussion)
        return paragraphs.map { wrap($0, indent: 0) }.joined(separator: "\n\n")
    }

    private static func section(_ title: String, _ rows: [Row]) -> String {
        guard !rows.isEmpty else { return "" }
        return "\(title):\n" + rows.map(render).joined(separator: "\n")
    }

    /// A label in the left column and its text wrapped in the right one; a
    /// label too wide for the column puts the text on the next line.
    private static func render(_ row: Row) -> String {
        let label = String(repeating: " ", count: indent) + row.label
        let text = wrap(row.text, indent: labelColumnWidth)
        guard !row.text.isEmpty else { return label }
        if label.count < labelColumnWidth {
            return label + text.dropFirst(label.count)
        }
        return label + "\n" + text
    }

    private static func examples(_ examples: [ExampleSpec]) -> String {
        guard !examples.isEmpty else { return "" }
        // A command too long for one line is given in lines joined by a shell's `\`; each is indented.
        let rendered = examples.map { example in
            wrap(example.summary, indent: indent) + "\n"
                + example.command.split(separator: "\n").map { String(repeating: " ", count: indent * 2) + $0 }.joined(separator: "\n")
        }
        return "EXAMPLES:\n" + rendered.joined(separator: "\n\n")
    }

    private static func paragraphs(of text: String) -> [String] {
        text.split(separator: "\n\n").map(String.init).filter { !$0.isEmpty }
    }

    /// Greedy word wrap to `width` columns, every line starting with
    /// `indent` spaces; a word longer than a line gets a line of its own.
    static func wrap(_ text: String, indent: Int) -> String {
        let margin = String(repeating: " ", count: indent)
        let available = width - indent
        var lines: [String] = []
        for hardLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in hardLine.split(separator: " ") {
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count <= available {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = String(word)
                }
            }
            lines.append(line)
        }
        return lines.map { $0.isEmpty ? $0 : margin + $0 }.joined(separator: "\n")
    }
}
