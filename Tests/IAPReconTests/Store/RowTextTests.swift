import Foundation
import Testing
@testable import IAPRecon

@Suite("Row text read as bytes: fingerprints, equality and order without making strings")
struct RowTextTests {
    /// Texts that differ only late, by length, in case, beyond ASCII, or not at all; and NULL.
    private static let texts: [String?] = [
        "u_1001", "u_1001", "u_10010", "u_100", "U_1001", "", "é", "e\u{301}", "u_1001\u{0}x", "organic", "Organic", nil,
    ]

    private func store() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("CREATE TABLE t (n INTEGER, text TEXT)")
        for (n, text) in Self.texts.enumerated() {
            try database.run("INSERT INTO t VALUES (?, ?)", [.integer(Int64(n)), text.map(SQLValue.text) ?? .null])
        }
        return (scenario, database)
    }

    @Test("a column's fingerprint is its string's; NULL has none")
    func fingerprints() throws {
        let (scenario, database) = try store()
        var seen = 0
        try database.forEach("SELECT text FROM t ORDER BY n") { row in
            let expected = Self.texts[seen]
            #expect(row.fingerprint(0) == expected.map { RowFingerprint($0) })
            seen += 1
        }
        #expect(seen == Self.texts.count)
        withExtendedLifetime(scenario) {}
    }

    @Test("equality is byte for byte: a prefix, a longer text, another case or normalization is not equal")
    func equality() throws {
        let (scenario, database) = try store()
        try database.forEach("SELECT text FROM t WHERE n = 0") { row in
            #expect(row.text(0, equals: "u_1001"))
            #expect(!row.text(0, equals: "u_100"))
            #expect(!row.text(0, equals: "u_10010"))
            #expect(!row.text(0, equals: "U_1001"))
            #expect(!row.text(0, equals: ""))
        }
        try database.forEach("SELECT text FROM t WHERE n = 5") { row in
            #expect(row.text(0, equals: ""))
            #expect(!row.text(0, equals: "u"))
        }
        try database.forEach("SELECT text FROM t WHERE n = 6") { row in
            #expect(row.text(0, equals: "é"))
            #expect(!row.text(0, equals: "e\u{301}"))  // the same character to Swift, other bytes to SQLite
        }
        withExtendedLifetime(scenario) {}
    }

    @Test("comparing two rows' texts orders them as SQLite's ORDER BY does")
    func order() throws {
        let (scenario, database) = try store()
        let sorted = try database.cached("SELECT text FROM t WHERE text IS NOT NULL ORDER BY text")
        var sqliteOrder: [String] = []
        while try sorted.step() { sqliteOrder.append(sorted.row.string(0)) }
        sorted.reset()
        #expect(sqliteOrder.count == Self.texts.count - 1)
        // Every pair, compared through two statements stepped side by side.
        let left = try database.cached("SELECT text FROM t WHERE text IS NOT NULL ORDER BY text")
        defer { left.reset() }
        var i = 0
        while try left.step() {
            let right = try Statement(database: database, sql: "SELECT text FROM t WHERE text IS NOT NULL ORDER BY text", persistent: false)
            var j = 0
            while try right.step() {
                let order = left.row.compareText(0, with: right.row, 0)
                if sqliteOrder[i] == sqliteOrder[j], sqliteOrder[i].utf8.elementsEqual(sqliteOrder[j].utf8) {
                    #expect(order == 0, "\(sqliteOrder[i]) vs \(sqliteOrder[j])")
                } else {
                    #expect((order < 0) == (i < j), "\(sqliteOrder[i]) vs \(sqliteOrder[j])")
                    #expect(order != 0, "\(sqliteOrder[i]) vs \(sqliteOrder[j])")
                }
                j += 1
            }
            i += 1
        }
        #expect(i == sqliteOrder.count)
        withExtendedLifetime(scenario) {}
    }
}
