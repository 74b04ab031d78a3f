import Foundation
import Testing
@testable import IAPRecon

/// Ingest writes a batch's rows sixteen to a statement and the rest one at a time
/// (`PackedRows.insert(with:prefix:groupsOf:)`): every row must land whole, in order, with the
/// prefix and its own line, whatever the count and the values.
@Suite("Grouped inserts of packed rows")
struct PackedRowsInsertTests {
    /// Rows of every kind of value a parser packs: integers, text (empty, with a NUL, non-ASCII),
    /// blobs, NULLs.
    static func rows(_ count: Int) -> [[SQLValue]] {
        (0..<count).map { index -> [SQLValue] in
            let user: SQLValue = index % 4 == 0 ? .null : .text("u_\(index)")
            let note: SQLValue = index % 5 == 0 ? .text("") : .text("café \(index)\u{0}x")
            let bytes: SQLValue = .blob([UInt8(index % 256), 0, 255])
            let number: SQLValue = index % 7 == 0 ? .null : .integer(Int64(-index) * 1_000_000_007)
            return [.integer(Int64(index)), .integer(Int64(index % 3)), user, note, bytes, number]
        }
    }

    /// The rows as stored, in key order: what was written.
    func stored(_ database: Database) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try database.forEach("SELECT file_id, line, item, a, b, c, d FROM t ORDER BY file_id, line, item") { row in
            rows.append((0..<7).map { row.value($0) })
        }
        return rows
    }

    func database() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("""
            CREATE TABLE t (file_id INTEGER NOT NULL, line INTEGER NOT NULL, item INTEGER NOT NULL, a TEXT, b TEXT, c BLOB, d INTEGER,
                            PRIMARY KEY (file_id, line, item)) WITHOUT ROWID
            """)
        return (scenario, database)
    }

    /// `?1` the file, `?2 + ` each row's line, as `RawTable.insertSQL` writes them.
    func insertSQL(rows: Int) -> String {
        "INSERT INTO t VALUES " + (0..<rows).map { row in
            let first = 3 + row * 6
            return "(?1, ?2 + ?\(first), " + ((first + 1)..<(first + 6)).map { "?\($0)" }.joined(separator: ", ") + ")"
        }.joined(separator: ", ")
    }

    @Test("grouped and one by one write the same rows, for counts around the group's size", arguments: [0, 1, 15, 16, 17, 33, 50])
    func groupedEqualsOneByOne(count: Int) throws {
        var packed = PackedRows(table: 0)
        for row in Self.rows(count) { packed.append(row) }
        let prefix: [SQLValue] = [.integer(7), .integer(1_000)]

        let (scenarioA, grouped) = try database()
        try packed.insert(with: try grouped.cached(insertSQL(rows: 1)), prefix: prefix,
                          groupsOf: (try grouped.cached(insertSQL(rows: 16)), 16))
        let (scenarioB, single) = try database()
        try packed.insert(with: try single.cached(insertSQL(rows: 1)), prefix: prefix)
        _ = (scenarioA, scenarioB)

        let written = try stored(grouped)
        #expect(written == (try stored(single)))
        #expect(written.count == count)
        // Each row as packed, after the file and its line moved on by the prefix's offset.
        let expected = Self.rows(count).map { row -> [SQLValue] in
            guard case .integer(let line) = row[0] else { return [] }
            return [.integer(7), .integer(1_000 + line)] + row.dropFirst()
        }
        #expect(written == expected)
    }

    @Test("a row the table refuses after a group went in fails the insert")
    func refusedRowFails() throws {
        var packed = PackedRows(table: 0)
        // Twenty rows, the seventeenth repeating the first's key: the group of the first sixteen
        // goes in, and the seventeenth, written on its own, is refused.
        var rows = Self.rows(20)
        rows[16][0] = rows[0][0]
        rows[16][1] = rows[0][1]
        for row in rows { packed.append(row) }
        let (scenario, database) = try database()
        _ = scenario
        #expect(throws: SQLiteError.self) {
            try packed.insert(with: try database.cached(insertSQL(rows: 1)), prefix: [.integer(1), .integer(0)],
                              groupsOf: (try database.cached(insertSQL(rows: 16)), 16))
        }
    }
}
