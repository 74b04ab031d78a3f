import Foundation
import IAPRecon

/// A plain-text table with aligned columns, for people reading a terminal.
///
/// Widths are the columns a terminal shows: a wide character (CJK, kana, Hangul, emoji) takes two.
/// A cell may hold several lines (`\n`). With `maxWidth`, the table fits that many columns: the
/// `wrapping` column takes what the others leave and wraps at spaces, and a cell wider than
/// `cellLimit` in any other column is cut into lines of that width, unless the table keeps words
/// whole (`keepsWordsWhole`: ids a support agent copies must never be split). Cells are shown with their
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
    /// Whether no cell is cut and a word too long for the wrapping column's line stays whole on a
    /// line of its own: the table is then wider than `maxWidth` only where a word needs it.
    var keepsWordsWhole = false

    init(_ header: [String], numeric: Set<Int> = [], maxWidth: Int? = nil, wrapping: Int? = nil) {
        self.header = header
        self.numeric = numeric
        self.maxWidth = maxWidth
        self.wrapping = wrapping
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    var text: String {
        var lines: [String] = []
        writeLines(of: rows) { lines.append($0) }
        return lines.joined(separator: "\n")
    }

    /// The table's lines with `rows` (in place of `self.rows`), handed to `emit` one at a time, without
    /// line breaks. `rows` is read twice, for the column widths and then for the lines, and must give
    /// the same rows both times (a collection, or `HistoryEvents` mapped lazily); neither it nor the
    /// lines need be held: lazily mapped, many rows cost the memory of one.
    func writeLines(of rows: some Sequence<[String]>, to emit: (String) -> Void) {
        let separator = 2
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], Self.widestLine(cell))
            }
        }
        if let maxWidth {
            for index in widths.indices where index != wrapping && widths[index] > cellLimit && !keepsWordsWhole {
                widths[index] = max(cellLimit, header[index].count)
            }
            if let wrapping {
                let others = widths.enumerated().filter { $0.offset != wrapping }.map(\.element).reduce(0, +) + separator * (widths.count - 1)
                widths[wrapping] = min(widths[wrapping], max(20, maxWidth - others))
            }
        }
        func fitted(_ row: [[String]]) -> [[String]] {
            guard maxWidth != nil else { return row }
            return row.enumerated().map { index, lines in
                lines.flatMap { line -> [String] in
                    if index == wrapping { return Self.wrap(line, widths[index], keepingWords: keepsWordsWhole) }
                    return keepsWordsWhole ? [line] : Self.cut(line, widths[index])
                }
            }
        }
        var line: [UInt8] = []
        func emitLines(_ row: [[String]]) {
            let height = row.map(\.count).max() ?? 1
            for lineIndex in 0..<height {
                line.removeAll(keepingCapacity: true)
                for (index, lines) in row.enumerated() {
                    if index > 0 { line.append(contentsOf: repeatElement(UInt8(ascii: " "), count: separator)) }
                    let cell = lineIndex < lines.count ? lines[lineIndex] : ""
                    let pad = repeatElement(UInt8(ascii: " "), count: max(0, widths[index] - Self.width(cell)))
                    if numeric.contains(index) {
                        line.append(contentsOf: pad)
                        line.append(contentsOf: cell.utf8)
                    } else {
                        line.append(contentsOf: cell.utf8)
                        // The last column is not padded.
                        if index < row.count - 1 { line.append(contentsOf: pad) }
                    }
                }
                // Trimmed by characters where one may be more than a byte: a space can belong to one.
                guard line.allSatisfy({ $0 < 0x80 }) else {
                    emit(Self.trimmingTrailing(String(decoding: line, as: UTF8.self)) { $0 == " " })
                    continue
                }
                while line.last == UInt8(ascii: " ") { line.removeLast() }
                emit(String(decoding: line, as: UTF8.self))
            }
        }
        emitLines(header.map { [$0] })
        emitLines(widths.map { [String(repeating: "-", count: $0)] })
        for row in rows { emitLines(fitted(Self.lines(of: row))) }
    }

    /// A row's cells as their lines, each shown as a terminal prints it.
    private static func lines(of row: [String]) -> [[String]] {
        row.map { cell in
            guard isPlain(cell) else {
                return cell.split(separator: "\n", omittingEmptySubsequences: false).map { Terminal.visible(String($0)) }
            }
            return cell.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// How wide the widest line of `cell` is shown.
    private static func widestLine(_ cell: String) -> Int {
        guard isPlain(cell) else {
            return cell.split(separator: "\n", omittingEmptySubsequences: false).map { Terminal.columns(Terminal.visible(String($0))) }.max() ?? 0
        }
        var widest = 0, current = 0
        for byte in cell.utf8 {
            if byte == UInt8(ascii: "\n") {
                current = 0
            } else {
                current += 1
                widest = max(widest, current)
            }
        }
        return widest
    }

    /// Whether `text` is printable ASCII and line breaks alone: each byte a character of one column, none
    /// escaped. Nearly every cell is, and is measured and split by its bytes, not its characters.
    private static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) || $0 == UInt8(ascii: "\n") }
    }

    /// How many columns `text` (one line) takes: counted by its bytes when it is plain.
    static func width(_ text: String) -> Int {
        isPlain(text) ? text.utf8.count : Terminal.columns(text)
    }

    /// `text` without the characters `drop` matches at its end (the spaces that pad a line's last
    /// cells, a document's last line breaks). Only the end is looked at: no regular expression, no
    /// copy of the whole text, since a history of thousands of events has tens of thousands of lines.
    static func trimmingTrailing(_ text: String, where drop: (Character) -> Bool) -> String {
        var end = text.endIndex
        while end > text.startIndex, drop(text[text.index(before: end)]) { end = text.index(before: end) }
        return String(text[..<end])
    }

    /// `text` in lines of at most `width` columns, broken at spaces where it can be; a longer word is
    /// cut, or with `keepingWords` kept whole on a line of its own, and a time beside its date.
    static func wrap(_ text: String, _ width: Int, keepingWords: Bool = false) -> [String] {
        // What fits is kept as it is; a leading space is not (the first word starts a line).
        if isPlain(text), text.utf8.count <= width, !text.hasPrefix(" ") { return [text] }
        var lines: [String] = []
        var line = ""
        var words = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        if keepingWords { words = datesWithTheirTimes(words) }
        for word in words {
            if line.isEmpty {
                line = word
            } else if Terminal.columns(line) + 1 + Terminal.columns(word) <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
            while !keepingWords, Terminal.columns(line) > width {
                let head = Terminal.prefix(Substring(line), columns: width)
                lines.append(String(head))
                line = String(line.dropFirst(head.count))
            }
        }
        lines.append(line)
        return lines
    }

    /// `words` with each `yyyy-MM-dd` followed by an `HH:mm:ss` made one word: a moment read as one.
    private static func datesWithTheirTimes(_ words: [String]) -> [String] {
        func shaped(_ word: String, _ pattern: String) -> Bool {
            word.utf8.count >= pattern.utf8.count && zip(word.utf8, pattern.utf8).allSatisfy { byte, shape in
                shape == UInt8(ascii: "9") ? (0x30...0x39).contains(byte) : byte == shape
            }
        }
        var joined: [String] = []
        for word in words {
            if let date = joined.last, date.utf8.count == 10, shaped(date, "9999-99-99"), shaped(word, "99:99:99") {
                joined[joined.count - 1] = date + " " + word
            } else {
                joined.append(word)
            }
        }
        return joined
    }

    /// `text` cut into lines of `width` columns.
    static func cut(_ text: String, _ width: Int) -> [String] {
        guard Self.width(text) > width, width > 0 else { return [text] }
        var lines: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            let head = Terminal.prefix(rest, columns: width)
            lines.append(String(head))
            rest = rest.dropFirst(head.count)
        }
        return lines
    }
}

/// Text for a terminal.
enum Terminal {
    /// `text` with control and invisible format characters (escape sequences, bidi overrides)
    /// shown as `\u{1B}`: an id or campaign name from input is printed as what it is, never run.
    static func visible(_ text: String) -> String { HiddenCharacters.visible(text) }

    /// How many columns a terminal gives `character`: two for East Asian wide and fullwidth
    /// characters and emoji (Markus Kuhn's `wcwidth` ranges), one for any other; a combining mark
    /// belongs to the character before it.
    static func columns(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first, first.value >= 0x1100 else { return 1 }
        return isWide(first.value) ? 2 : 1
    }

    /// How many columns `text` (one line) takes.
    static func columns(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns($1) }
    }

    /// The longest start of `text` that fits `columns`, and at least its first character, so that
    /// cutting always moves on.
    static func prefix(_ text: Substring, columns width: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        while end < text.endIndex {
            let next = used + columns(text[end])
            if next > width, end > text.startIndex { break }
            used = next
            end = text.index(after: end)
        }
        return text[..<end]
    }

    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD: true
        default: false
        }
    }

    /// `text` shown as `visible` line by line: a message of several lines keeps its line breaks.
    static func visibleLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: HiddenCharacters.isHidden) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { visible(String($0)) }.joined(separator: "\n")
    }
}
