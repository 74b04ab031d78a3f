import Foundation
import Testing
@testable import IAPRecon

/// A stepped row is packed column by column as the store holds it (`PackedRows.append(_:columns:)`,
/// which reads every column before it packs the row): what the scans of a full join, the reader
/// jobs and an incremental join's current rows hand on must be the row's values, each as
/// `PackedRows.append(_ values:)` packs it.
@Suite("Packed rows read from a statement")
struct PackedRowsReadTests {
    /// Values of every storage class, empty and long ones, NULLs between them.
    static let values: [SQLValue] = [
        .integer(0), .null, .integer(-9_223_372_036_854_775_807), .text(""), .text("café \u{0}x"), .blob([]), .blob([0, 255, 7]),
        .text(String(repeating: "long text ", count: 300)), .integer(Int64.max), .null, .text("u_1"),
    ]

    func database() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        let columns = Self.values.indices.map { "c\($0)" }
        try database.execute("CREATE TABLE t (\(columns.joined(separator: ", ")), f REAL)")
        try database.run("INSERT INTO t VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")), 2.5)", Self.values)
        try database.run("INSERT INTO t VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")), NULL)", Self.values.reversed())
        return (scenario, database)
    }

    @Test("each column is packed as its value is, whatever its kind and size")
    func packedAsValues() throws {
        let (scenario, database) = try database()
        _ = scenario
        let columns = Self.values.count + 1
        var read = PackedRows(table: 0)
        var expected = PackedRows(table: 0)
        // Read twice: a blob read as text reads as text after (SQLite converts the column).
        try database.forEach("SELECT * FROM t ORDER BY rowid") { read.append($0, columns: columns) }
        try database.forEach("SELECT * FROM t ORDER BY rowid") { row in expected.append((0..<columns).map { row.value($0) }) }
        #expect(read.count == 2)
        #expect(read.bytes == expected.bytes)
    }

    @Test("a row of values packed in one piece is packed as its values are one by one")
    func rowPackedAsItsValues() {
        // Every kind of value, and rows of one value each: a row's size is counted before it is packed.
        let rows = [Self.values, Array(Self.values.reversed())] + Self.values.map { [$0] }
        var whole = PackedRows(table: 0)
        var oneByOne = PackedRows(table: 0)
        for row in rows {
            whole.append(row)
            for value in row { oneByOne.appendValue(value) }
            oneByOne.endRow()
        }
        #expect(whole.count == rows.count)
        #expect(whole.bytes == oneByOne.bytes)
    }

    @Test("a packed row reads back as the row's values")
    func readsBack() throws {
        let (scenario, database) = try database()
        _ = scenario
        var read = PackedRows(table: 0)
        try database.forEach("SELECT 258, NULL, 'ab', x'00ff', -1, ''") { read.append($0, columns: 6) }
        var values: [String] = []
        read.forEachRow(columns: 6) { row in
            for index in 0..<6 {
                switch row.value(index) {
                case .null: values.append("null")
                case .integer(let value): values.append("integer \(value)")
                case .bytes(let bytes): values.append("bytes \(Array(bytes))")
                }
            }
        }
        #expect(values == ["integer 258", "null", "bytes [97, 98]", "bytes [0, 255]", "integer -1", "bytes []"])
    }

    @Test("only the columns asked for are packed")
    func packsThePrefix() throws {
        let (scenario, database) = try database()
        _ = scenario
        var read = PackedRows(table: 0)
        var expected = PackedRows(table: 0)
        try database.forEach("SELECT * FROM t ORDER BY rowid") { read.append($0, columns: 3) }
        try database.forEach("SELECT * FROM t ORDER BY rowid") { row in expected.append((0..<3).map { row.value($0) }) }
        #expect(read.bytes == expected.bytes)
    }
}
