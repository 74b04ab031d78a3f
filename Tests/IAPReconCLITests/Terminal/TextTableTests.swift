import Testing
@testable import IAPReconCLI

@Suite("Text tables")
struct TextTableTests {
    @Test("a table pads by characters, right-aligns numbers, leaves the last column unpadded, wraps and cuts to fit")
    func layout() {
        var table = TextTable(["id", "amount", "detail"], numeric: [1], maxWidth: 40, wrapping: 2)
        table.cellLimit = 8
        table.add(["u_1", "4.99", "short"])
        table.add(["Café\nx", "1,234.50", "a detail long enough to wrap at its spaces"])
        table.add(["0123456789ab", "", "\u{1B}[2J"])
        #expect(table.text == """
            id          amount  detail
            --------  --------  --------------------
            u_1           4.99  short
            Café      1,234.50  a detail long enough
            x                   to wrap at its
                                spaces
            01234567            \\u{1B}[2J
            89ab
            """)
    }

    @Test("a wide character (CJK, kana, Hangul, emoji) takes two columns: cells are padded, wrapped and cut to the columns a terminal shows")
    func wideCharacters() {
        var table = TextTable(["id", "amount", "detail"], numeric: [1], maxWidth: 40, wrapping: 2)
        table.cellLimit = 8
        table.add(["円建て", "800", "お正月キャンペーン日本のお正月キャンペーン, joined"])
        table.add(["한국어사용자", "1", "café 👍🏽 ok"])
        #expect(table.text == """
            id        amount  detail
            --------  ------  ----------------------
            円建て       800  お正月キャンペーン日本
                              のお正月キャンペーン,
                              joined
            한국어사       1  café 👍🏽 ok
            용자
            """)
        #expect(TextTable.wrap("日本のお正月キャンペーン", 10) == ["日本のお正", "月キャンペ", "ーン"])
        #expect(TextTable.cut("日本のお正月", 5) == ["日本", "のお", "正月"])
        // Near miss: one-column letters, accents and combining marks count one column each, as before.
        #expect(TextTable.wrap("Café e\u{301}té", 4) == ["Café", "e\u{301}té"])
        #expect(TextTable.width("Ünïcödé") == 7)
    }

    @Test("lines written one at a time are the table's text, and keep the layout by columns for any cells")
    func streamedLinesKeepTheLayout() {
        // Cells with what the byte-counting paths must not get wrong: non-ASCII letters, combining
        // marks after a space, wide and joined emoji, a prepended mark before a space, control characters,
        // CR LF, leading and repeated spaces, and line breaks inside a cell.
        let pieces = ["a", "b", "Z", "0", "9", " ", " ", "  ", "-", ".", "\n", "é", "e\u{301}", " \u{301}", "円", "👍🏽", "👨‍👩‍👧",
                      "\u{0D4E}", "\t", "\r\n", "\u{1B}", "\u{7F}", "\u{200B}", "x"]
        var random = LinearCongruential(seed: 20261205)
        for round in 0..<600 {
            let columns = 1 + Int(random.next() % 4)
            let wraps = round % 3 != 0
            var table = TextTable((0..<columns).map { "h\($0)" }, numeric: round % 2 == 0 ? [0] : [], maxWidth: wraps ? 24 + Int(random.next() % 20) : nil,
                                  wrapping: wraps ? columns - 1 : nil)
            table.cellLimit = 3 + Int(random.next() % 8)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                table.add((0..<columns).map { _ in
                    (0..<Int(random.next() % 14)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
                })
            }
            var streamed: [String] = []
            table.writeLines(of: table.rows) { streamed.append($0) }
            let expected = CharacterTable(table).text
            #expect(table.text == expected, "round \(round): \(table.rows)")
            #expect(streamed.joined(separator: "\n") == expected, "round \(round)")
        }
    }
}

/// The table as it is specified: every width and cut counted in the columns a terminal shows (a wide
/// character two, any other character one), every string built whole.
private struct CharacterTable {
    let table: TextTable

    init(_ table: TextTable) { self.table = table }

    var text: String {
        let separator = 2
        var cells = table.rows.map { row in row.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map { Terminal.visible(String($0)) } } }
        var widths = table.header.map(\.count)
        for row in cells {
            for (index, lines) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], lines.map { Terminal.columns($0) }.max() ?? 0)
            }
        }
        if let maxWidth = table.maxWidth {
            for index in widths.indices where index != table.wrapping && widths[index] > table.cellLimit {
                widths[index] = max(table.cellLimit, table.header[index].count)
            }
            if let wrapping = table.wrapping {
                let others = widths.enumerated().filter { $0.offset != wrapping }.map(\.element).reduce(0, +) + separator * (widths.count - 1)
                widths[wrapping] = min(widths[wrapping], max(20, maxWidth - others))
            }
            cells = cells.map { row in
                row.enumerated().map { index, lines in
                    lines.flatMap { index == table.wrapping ? Self.wrap($0, widths[index]) : Self.cut($0, widths[index]) }
                }
            }
        }
        func lines(_ row: [[String]]) -> [String] {
            let height = row.map(\.count).max() ?? 1
            return (0..<height).map { lineIndex in
                var line = row.enumerated().map { index, lines in
                    let cell = lineIndex < lines.count ? lines[lineIndex] : ""
                    let pad = String(repeating: " ", count: max(0, widths[index] - Terminal.columns(cell)))
                    if index == row.count - 1, !table.numeric.contains(index) { return cell }
                    return table.numeric.contains(index) ? pad + cell : cell + pad
                }.joined(separator: String(repeating: " ", count: separator))
                while line.last == " " { line.removeLast() }
                return line
            }
        }
        var output = lines(table.header.map { [$0] }) + lines(widths.map { [String(repeating: "-", count: $0)] })
        for row in cells { output += lines(row) }
        return output.joined(separator: "\n")
    }

    static func wrap(_ text: String, _ width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let word = String(word)
            if line.isEmpty {
                line = word
            } else if Terminal.columns(line) + 1 + Terminal.columns(word) <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
            while Terminal.columns(line) > width {
                let head = Terminal.prefix(Substring(line), columns: width)
                lines.append(String(head))
                line = String(line.dropFirst(head.count))
            }
        }
        lines.append(line)
        return lines
    }

    static func cut(_ text: String, _ width: Int) -> [String] {
        guard Terminal.columns(text) > width, width > 0 else { return [text] }
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

/// Knuth's MMIX constants: the same cells on every run.
private struct LinearCongruential {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 33
    }
}
