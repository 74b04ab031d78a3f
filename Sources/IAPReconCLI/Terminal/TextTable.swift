import Foundation

/// A plain-text table with aligned columns, for people reading a terminal.
///
/// A cell may hold several lines (`\n`). With `maxWidth`, the table fits that many columns: the
/// `wrapping` column takes what the others leave and wraps at spaces, and a cell wider than
/// `cellLimit` in any other column is cut into lines of that width. Cells are shown with their
/// control characters escaped (`Terminal.visible`), so input can never move the cursor or recolour
/// the terminal.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []
    /// Columns aligned to the right (numbers).
    var numeric: Set<Int> = []
    var maxWidth: Int?
    var wrapping: Int?
    var cellLimit = 32

    init(_ header: [String], numeric: Set<Int> = [], maxWidth: Int? = nil, wrapping: Int? = nil) {
        self.header = header
        self.numeric = numeric
        self.maxWidth = maxWidth
        self.wrapping = wrapping
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    var text: String {
        let separator = 2
        var cells = rows.map { row in row.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map { Terminal.visible(String($0)) } } }
        var widths = header.map(\.count)
        for row in cells {
            for (index, lines) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], lines.map(\.count).max() ?? 0)
            }
        }
        if let maxWidth {
            for index in widths.indices where index != wrapping && widths[index] > cellLimit { widths[index] = max(cellLimit, header[index].count) }
            if let wrapping {
                let others = widths.enumerated().filter { $0.offset != wrapping }.map(\.element).reduce(0, +) + separator * (widths.count - 1)
                widths[wrapping] = min(widths[wrapping], max(20, maxWidth - others))
            }
            cells = cells.map { row in
                row.enumerated().map { index, lines in
                    lines.flatMap { index == wrapping ? Self.wrap($0, widths[index]) : Self.cut($0, widths[index]) }
                }
            }
        }
        func lines(_ row: [[String]]) -> [String] {
            let height = row.map(\.count).max() ?? 1
            return (0..<height).map { lineIndex in
                row.enumerated().map { index, lines in
                    let cell = lineIndex < lines.count ? lines[lineIndex] : ""
                    let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                    if index == row.count - 1, !numeric.contains(index) { return cell }
                    return numeric.contains(index) ? pad + cell : cell + pad
                }.joined(separator: String(repeating: " ", count: separator))
            }.map { Self.trimmingTrailing($0) { $0 == " " } }
        }
        var output = lines(header.map { [$0] }) + lines(widths.map { [String(repeating: "-", count: $0)] })
        for row in cells { output += lines(row) }
        return output.joined(separator: "\n")
    }

    /// `text` without the characters `drop` matches at its end (the spaces that pad a line's last
    /// cells, a document's last line breaks). Only the end is looked at: no regular expression, no
    /// copy of the whole text, since a history of thousands of events has tens of thousands of lines.
    static func trimmingTrailing(_ text: String, where drop: (Character) -> Bool) -> String {
        var end = text.endIndex
        while end > text.startIndex, drop(text[text.index(before: end)]) { end = text.index(before: end) }
        return String(text[..<end])
    }

    /// `text` in lines of at most `width` characters, broken at spaces where it can be.
    static func wrap(_ text: String, _ width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let word = String(word)
            if line.isEmpty {
                line = word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
            while line.count > width {
                lines.append(String(line.prefix(width)))
                line = String(line.dropFirst(width))
            }
        }
        lines.append(line)
        return lines
    }

    /// `text` cut into lines of `width` characters.
    static func cut(_ text: String, _ width: Int) -> [String] {
        guard text.count > width, width > 0 else { return [text] }
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(width)))
            rest = rest.dropFirst(width)
        }
        return lines
    }
}

/// Text for a terminal.
enum Terminal {
    /// `text` with control and invisible format characters (escape sequences, bidi overrides)
    /// shown as `\u{1B}`: an id or campaign name from input is printed as what it is, never run.
    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHidden) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isHidden(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII's only hidden characters are its controls; the Unicode tables are for the rest,
        // and looking every character of a long history up in them took most of printing it.
        if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
        return switch scalar.properties.generalCategory {
        case .control, .format: true
        default: false
        }
    }
}
