import Foundation
import Testing
@testable import IAPRecon

/// Ingest turns foreign-key checks off for a file that replaces none (`FileWriter`) and relies on
/// the connection saying whether they are on: a replaced file's rows go only by the cascade.
@Suite("Foreign-key checks of a connection")
struct ForeignKeysTests {
    @Test("the setting a connection reports is SQLite's: a change inside a transaction, which SQLite ignores, is not reported")
    func reportedAsSQLiteHolds() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (id INTEGER REFERENCES parent(id) ON DELETE CASCADE)")
        #expect(database.enforcesForeignKeys)
        try database.execute("BEGIN")
        try database.enforceForeignKeys(false)
        #expect(database.enforcesForeignKeys)
        try database.execute("COMMIT")
        try database.enforceForeignKeys(false)
        #expect(!database.enforcesForeignKeys)
        try database.execute("INSERT INTO child VALUES (7)")
        try database.enforceForeignKeys(true)
        #expect(database.enforcesForeignKeys)
        try database.execute("INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1); DELETE FROM parent")
        #expect(try database.scalar("SELECT count(*) FROM child") == .integer(1))
        #expect(throws: SQLiteError.self) { try database.execute("INSERT INTO child VALUES (8)") }
    }
}
