import Foundation
import Testing
@testable import IAPRecon

@Suite("Rows read by the names of the columns their SELECT lists")
struct SelectedColumnTests {
    /// Declared out of the table's order, with an expression among the columns.
    private enum Column: Int, SelectedColumn {
        case line, label, doubled, missing
        var sql: String { ["line", "label", "line * 2", "note"][rawValue] }
    }

    @Test("the list names the columns in the cases' order, and each is read back by its case")
    func readByName() throws {
        #expect(Column.selectList == "line, label, line * 2, note")
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("CREATE TABLE t (label TEXT, note TEXT, line INTEGER)")
        try database.run("INSERT INTO t VALUES (?, ?, ?)", [.text("first"), .null, .integer(21)])
        var rows = 0
        try database.forEach("SELECT \(Column.selectList) FROM t") { row in
            #expect(row.int(Column.line) == 21)
            #expect(row.string(Column.label) == "first")
            #expect(row.int(Column.doubled) == 42)
            #expect(row.optionalString(Column.missing) == nil)
            #expect(row.isNull(Column.missing))
            #expect(!row.isNull(Column.label))
            #expect(row.text(Column.label, equals: "first"))
            #expect(row.fingerprint(Column.label) == RowFingerprint("first"))
            rows += 1
        }
        #expect(rows == 1)
        withExtendedLifetime(scenario) {}
    }

    @Test("a sighting's columns are each listed once, each case at its own place in the list")
    func sightingColumns() throws {
        #expect(StoredSightings.Column.allCases.map(\.rawValue) == Array(0..<StoredSightings.Column.allCases.count))
        #expect(StoredSightings.Column.selectList.hasPrefix("a.transaction_id, a.original_transaction_id"))
        #expect(StoredSightings.Column.allCases.count == Set(StoredSightings.Column.allCases.map(\.sql)).count)
    }
}
