import Foundation
import Testing
@testable import IAPRecon

@Suite("Background inserts: one table written on a second connection while the caller reads")
struct BackgroundInsertsTests {
    private func store() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("CREATE TABLE source (n INTEGER)")
        try database.transaction { for n in 0..<50_000 { try database.run("INSERT INTO source VALUES (?)", [.integer(Int64(n))]) } }
        return (scenario, database)
    }

    private static let setup = "DROP TABLE IF EXISTS target; CREATE TABLE target (n INTEGER, label TEXT)"
    private static let insert = ["INSERT INTO target VALUES (?, ?)"]

    @Test("rows computed from a read in progress all land, in order, once finish() returns")
    func rowsLand() throws {
        let (scenario, database) = try store()
        try database.readTransaction {
            let inserts = BackgroundInserts(path: database.path, setup: Self.setup, inserts: Self.insert)
            try database.forEach("SELECT n FROM source ORDER BY n") { row in
                inserts.insert(table: 0, [.integer(row.int(0) * 2), .text("n\(row.int(0))")])
            }
            try inserts.finish()
        }
        #expect(try database.scalar("SELECT count(*) FROM target").integerValue == 50_000)
        #expect(try database.scalar("SELECT sum(n) FROM target").integerValue == 2 * (49_999 * 50_000 / 2))
        #expect(try database.scalar("SELECT label FROM target WHERE rowid = 50000") == .text("n49999"))
        withExtendedLifetime(scenario) {}
    }

    @Test("given up half-way (the caller threw), nothing is written and the old table stays")
    func cancelledWritesNothing() throws {
        let (scenario, database) = try store()
        try database.execute("CREATE TABLE target (n INTEGER, label TEXT); INSERT INTO target VALUES (7, 'old')")
        do {
            let inserts = BackgroundInserts(path: database.path, setup: Self.setup, inserts: Self.insert)
            for n in 0..<40_000 { inserts.insert(table: 0, [.integer(Int64(n)), .null]) }
            // Dropped without finish(): its deinit cancels.
        }
        #expect(try database.scalar("SELECT count(*) FROM target").integerValue == 1)
        #expect(try database.scalar("SELECT label FROM target") == .text("old"))
        withExtendedLifetime(scenario) {}
    }

    @Test("an insert that fails reaches finish() as its error, and the caller is never blocked")
    func failureReachesFinish() throws {
        let (scenario, database) = try store()
        let inserts = BackgroundInserts(path: database.path, setup: "CREATE TABLE strict (n INTEGER NOT NULL)",
                                        inserts: ["INSERT INTO strict VALUES (?)"])
        for n in 0..<100_000 { inserts.insert(table: 0, [n == 10 ? .null : .integer(Int64(n))]) }
        let error = try #require(throws: SQLiteError.self) { try inserts.finish() }
        #expect(error.message.contains("NOT NULL"))
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'strict'").integerValue == 0)
        withExtendedLifetime(scenario) {}
    }
}
