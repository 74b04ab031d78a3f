import Foundation

/// A plain-text table with aligned columns, for people reading a terminal.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []
    /// Columns aligned to the right (numbers).
    var numeric: Set<Int> = []

    init(_ header: [String], numeric: Set<Int> = []) {
        self.header = header
        self.numeric = numeric
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    var text: String {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                if index == cells.count - 1, !numeric.contains(index) { return cell }
                return numeric.contains(index) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }
        var lines = [line(header), line(widths.map { String(repeating: "-", count: $0) })]
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }
}
