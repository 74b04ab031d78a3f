import Foundation

/// The pieces every iaprecon HTML page is made of: escaping, the one style sheet, inline SVG bars.
///
/// Pages are self-contained (no script, no font, no network), so they can be mailed, attached to a
/// ticket or printed. Every text that came from input goes through `escape`: a user id or campaign
/// name can hold markup, quotes or control characters, and must show as text, never run.
enum HTML {
    /// Text for an element's content or a quoted attribute value: `& < > " '` as entities, and
    /// control characters shown as visible `\u{1B}`-style escapes instead of raw bytes.
    static func escape(_ text: String) -> String {
        // Most texts are printable ASCII with nothing to escape: kept as they are.
        let special: (UInt8) -> Bool = { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
            || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }
        if !text.utf8.contains(where: special) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                if HiddenCharacters.isHidden(scalar) {
                    out += HiddenCharacters.shown(scalar)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// The longest run of characters without a space a cell keeps on one line. Ids are kept whole
    /// (a transaction id broken in two is misread and mis-copied); one longer than any real id
    /// (a UUID is 36) would widen its table past the page and push the amounts beside it out of
    /// sight, on screen and on paper, so it may break anywhere.
    static let longestUnbroken = 56

    /// Whether `text` holds a run of more than `longestUnbroken` characters without whitespace.
    static func isLong(_ text: String) -> Bool {
        guard text.utf8.count > longestUnbroken else { return false }
        var run = 0
        for scalar in text.unicodeScalars {
            run = scalar.properties.isWhitespace ? 0 : run + 1
            if run > longestUnbroken { return true }
        }
        return false
    }

    /// An id from input, escaped, in monospace on one line; `long` when too long for that.
    static func id(_ text: String) -> String {
        "<span class=\"\(isLong(text) ? "id long" : "id")\">\(escape(text))</span>"
    }

    /// Text from input, escaped; in a span that may break anywhere when it is too long to keep whole.
    static func text(_ text: String) -> String {
        isLong(text) ? "<span class=\"long\">\(escape(text))</span>" : escape(text)
    }

    /// A whole page: `title` in the head, the shared style, `body` as given (already escaped).
    static func document(title: String, body: String) -> String {
        documentStart(title: title) + body + documentEnd
    }

    /// What a page has before its body: `document` in pieces, for a body written as it is made.
    static func documentStart(title: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <style>
        \(style)
        </style>
        </head>
        <body>

        """
    }

    /// What a page has after its body.
    static let documentEnd = "\n</body>\n</html>\n"

    /// A table: a header row and rows of cells already rendered (escaped); `numeric` columns align right.
    static func table(_ header: [String], _ rows: [[String]], numeric: Set<Int> = [], caption: String? = nil) -> String {
        var out = tableStart(header, numeric: numeric, caption: caption)
        for row in rows { out += tableRow(row, numeric: numeric) }
        return out + tableEnd
    }

    /// The start of `table`, for rows written as they are made: the caption and the header row.
    static func tableStart(_ header: [String], numeric: Set<Int> = [], caption: String? = nil) -> String {
        var out = "<table>"
        if let caption { out += "<caption>\(escape(caption))</caption>" }
        out += "<thead><tr>"
        for (index, name) in header.enumerated() { out += "<th\(numeric.contains(index) ? " class=\"num\"" : "")>\(escape(name))</th>" }
        return out + "</tr></thead><tbody>"
    }

    /// One row of `table`.
    static func tableRow(_ row: [String], numeric: Set<Int> = []) -> String {
        var out = "<tr>"
        for (index, cell) in row.enumerated() { out += "<td\(numeric.contains(index) ? " class=\"num\"" : "")>\(cell)</td>" }
        return out + "</tr>"
    }

    /// The end of `table`.
    static let tableEnd = "</tbody></table>"

    /// An inline SVG bar `fraction` (0...1) of its width: a table cell's value drawn to scale.
    static func bar(_ fraction: Double, tone: String) -> String {
        let width = (max(0, min(1, fraction.isFinite ? fraction : 0)) * 120).rounded()
        return "<svg class=\"bar\" width=\"120\" height=\"10\" viewBox=\"0 0 120 10\" aria-hidden=\"true\">"
            + "<rect width=\"120\" height=\"10\" class=\"track\"/><rect width=\"\(Int(width))\" height=\"10\" class=\"\(tone)\"/></svg>"
    }

    /// The shared style sheet: readable on a laptop, compact and black on white when printed.
    static let style = """
        :root { --ink: #1d1d1f; --muted: #6e6e73; --line: #d2d2d7; --gross: #2f6fde; --refund: #d1492e; --net: #1d1d1f;
                --spend: #e08a00; --count: #8e8e93; --warn: #b26a00; --ok: #1f883d; }
        * { box-sizing: border-box; }
        body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink); margin: 0 auto;
               max-width: 1100px; padding: 24px 28px 48px; background: #fff; }
        h1 { font-size: 22px; margin: 0 0 4px; }
        h2 { font-size: 16px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
        .meta { color: var(--muted); margin: 0 0 16px; }
        .meta code { color: var(--ink); }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; margin: 12px 0; }
        .card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
        .card .label { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
        .card .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
        table { border-collapse: collapse; width: 100%; font-size: 13px; }
        caption { text-align: left; color: var(--muted); padding: 4px 0; }
        th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-weight: 600; color: var(--muted); font-size: 12px; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        .id { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; white-space: nowrap; }
        .id.long { white-space: normal; overflow-wrap: anywhere; }
        .long { overflow-wrap: anywhere; }
        .time { white-space: nowrap; font-variant-numeric: tabular-nums; }
        .sources { font-family: ui-monospace, Menlo, Consolas, monospace; color: var(--muted); font-size: 11px; overflow-wrap: anywhere; }
        .chart { width: 100%; height: auto; max-height: 280px; }
        .chart text { font-size: 11px; fill: var(--muted); }
        .chart .grid { stroke: var(--line); stroke-width: 1; }
        .gross { fill: var(--gross); } .refund { fill: var(--refund); } .spend { fill: var(--spend); } .count { fill: var(--count); }
        .netline { fill: none; stroke: var(--net); stroke-width: 2; }
        .bar { vertical-align: middle; margin-left: 6px; } .bar .track { fill: #f2f2f7; }
        .legend span { margin-right: 14px; color: var(--muted); font-size: 12px; }
        .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
        .legend i.gross { background: var(--gross); } .legend i.refund { background: var(--refund); } .legend i.net { background: var(--net); height: 3px; vertical-align: 2px; }
        .sev-critical { color: var(--refund); font-weight: 600; } .sev-warning { color: var(--warn); } .sev-info { color: var(--muted); }
        .new { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; }
        .none { color: var(--ok); }
        .muted { color: var(--muted); }
        .warn { color: var(--warn); margin: 0 0 12px; }
        section { break-inside: avoid-page; }
        @media print {
          body { max-width: none; padding: 0; font-size: 11px; }
          h2 { break-after: avoid; }
          tr { break-inside: avoid; }
          .cards { grid-template-columns: repeat(6, 1fr); }
          .card { border-color: #999; }
          .card .value { font-size: 15px; }
          a { color: inherit; text-decoration: none; }
        }
        """
}
