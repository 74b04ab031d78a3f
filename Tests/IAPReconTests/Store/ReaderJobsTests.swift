import Foundation
import Synchronization
import Testing
@testable import IAPRecon

@Suite("Reader jobs: rows read on workers, written by one writer")
struct ReaderJobsTests {
    /// Values that a byte-level hand-over could get wrong.
    static let awkward: [[SQLValue]] = [
        [.text(""), .integer(0), .null],
        [.text("a\u{0}b"), .integer(.min), .text("")],
        [.text("ünïcødé 🧾 ₩1,000"), .integer(.max), .integer(-1)],
        [.null, .null, .text(String(repeating: "x", count: 70_000))],
    ]

    private func store() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("CREATE TABLE source (a, b, c); CREATE TABLE copy (a, b, c); CREATE TABLE other (n)")
        for row in Self.awkward { try database.run("INSERT INTO source VALUES (?, ?, ?)", row) }
        return (scenario, database)
    }

    private func rows(_ database: Database, _ table: String) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try database.forEach("SELECT a, b, c FROM \(table) ORDER BY rowid") { row in
            rows.append([row.value(0), row.value(1), row.value(2)])
        }
        return rows
    }

    private let copyJob = ReaderJob(inserts: ["INSERT INTO copy VALUES (?, ?, ?)"]) { reader, target in
        try reader.forEach("SELECT a, b, c FROM source ORDER BY rowid") { try target.insert(table: 0, $0, columns: 3) }
    }

    @Test("rows copied through workers equal the source exactly: empty text stays text, NULs and non-ASCII survive", arguments: [1, 2])
    func copiesExactly(workers: Int) throws {
        let (scenario, database) = try store()
        try ReaderJobs.run([copyJob], database: database, pool: WorkerPool(width: workers))
        #expect(try rows(database, "copy") == Self.awkward)
        #expect(try database.scalar("SELECT count(*) FROM copy WHERE a = '' AND typeof(a) = 'text'").integerValue == 1)
        withExtendedLifetime(scenario) {}
    }

    @Test("the same job run on the writer itself writes the same rows")
    func runHereWritesTheSame() throws {
        let (scenario, database) = try store()
        try database.transaction { try copyJob.runHere(database) }
        #expect(try rows(database, "copy") == Self.awkward)
        withExtendedLifetime(scenario) {}
    }

    @Test("values given as SQLValue pack like values read from a row, across batches")
    func valuesAcrossBatches() throws {
        let (scenario, database) = try store()
        let count = 30_000  // > RowSink.batchBytes of rows, so several batches
        let job = ReaderJob(inserts: ["INSERT INTO other VALUES (?)"]) { _, target in
            for n in 0..<count { try target.insert(table: 0, [.text("row \(n)")]) }
        }
        try ReaderJobs.run([job], database: database, pool: WorkerPool(width: 2))
        #expect(try database.scalar("SELECT count(*) FROM other").integerValue == Int64(count))
        #expect(try database.scalar("SELECT n FROM other WHERE rowid = 12345") == .text("row 12344"))
        withExtendedLifetime(scenario) {}
    }

    struct Boom: Error, CustomStringConvertible {
        var description: String { "the reader failed" }
    }

    /// Sends ten rows, then fails.
    private let failing = ReaderJob(inserts: ["INSERT INTO other VALUES (?)"]) { _, target in
        for n in 0..<10 { try target.insert(table: 0, [.integer(Int64(n))]) }
        (target as? RowSink)?.flush()
        throw Boom()
    }

    @Test("a job that fails leaves none of its rows and its error reaches the caller; the jobs before it stay written")
    func failureRollsBackThatJob() throws {
        let (scenario, database) = try store()
        #expect(throws: Boom.self) {
            try ReaderJobs.run([copyJob, failing], database: database, pool: WorkerPool(width: 1))
        }
        #expect(try rows(database, "copy") == Self.awkward)
        #expect(try database.scalar("SELECT count(*) FROM other").integerValue == 0)
        // The writer is usable again: no transaction was left open.
        try database.transaction { try database.run("INSERT INTO other VALUES (1)") }
        withExtendedLifetime(scenario) {}
    }
}
