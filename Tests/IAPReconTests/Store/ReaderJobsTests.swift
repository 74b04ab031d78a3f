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

    @Test("jobs run unordered each fill their own table exactly, in the order each produced its rows", arguments: [1, 2])
    func unorderedJobsWriteTheSame(workers: Int) throws {
        let (scenario, database) = try store()
        let count = 30_000
        let numbers = ReaderJob(inserts: ["INSERT INTO other VALUES (?)"]) { _, target in
            for n in 0..<count { try target.insert(table: 0, [.text("row \(n)")]) }
        }
        try ReaderJobs.runUnordered([numbers, copyJob], database: database, pool: WorkerPool(width: workers))
        #expect(try rows(database, "copy") == Self.awkward)
        #expect(try database.scalar("SELECT count(*) FROM other").integerValue == Int64(count))
        #expect(try database.scalar("SELECT n FROM other WHERE rowid = 12345") == .text("row 12344"))
        withExtendedLifetime(scenario) {}
    }

    @Test("an unordered job that fails: its error reaches the caller and the writer has no transaction left open")
    func unorderedFailure() throws {
        let (scenario, database) = try store()
        #expect(throws: Boom.self) {
            try ReaderJobs.runUnordered([copyJob, failing], database: database, pool: WorkerPool(width: 2))
        }
        try database.transaction { try database.run("INSERT INTO other VALUES (1)") }
        withExtendedLifetime(scenario) {}
    }
}

@Suite("Worker pool")
struct WorkerPoolTests {
    @Test("unordered: every message arrives once, each job's in its order, and each job's end after its messages")
    func unorderedDelivery() throws {
        var seen: [[Int]] = Array(repeating: [], count: 5)
        var ended: [Int] = []
        try WorkerPool(width: 2).runUnordered(count: 5, bound: 2, produce: { index, send in
            for n in 0..<50 { send(index * 1000 + n) }
        }, consume: { index, message in
            #expect(!ended.contains(index))
            seen[index].append(message)
        }, finished: { ended.append($0) })
        #expect(seen == (0..<5).map { index in (0..<50).map { index * 1000 + $0 } })
        #expect(ended.sorted() == [0, 1, 2, 3, 4])
    }

    @Test("unordered: a job still running does not hold back a later job's messages (ordered delivery would wait forever here)")
    func noHeadOfLineBlocking() throws {
        // Job 0 sends one message, then waits until the consumer has seen job 1 end.
        let laterJobEnded = DispatchSemaphore(value: 0)
        let waited = Mutex<DispatchTimeoutResult?>(nil)
        var order: [String] = []
        try WorkerPool(width: 2).runUnordered(count: 2, bound: 1, produce: { index, send in
            send(index)
            if index == 0 {
                let result = laterJobEnded.wait(timeout: .now() + 30)
                waited.withLock { $0 = result }
            }
        }, consume: { index, _ in
            order.append("job \(index) message")
        }, finished: { index in
            order.append("job \(index) ended")
            if index == 1 { laterJobEnded.signal() }
        })
        #expect(waited.withLock { $0 } == .success)
        #expect(order.sorted() == ["job 0 ended", "job 0 message", "job 1 ended", "job 1 message"])
        #expect(order.last == "job 0 ended")
    }

    @Test("unordered: idle work runs while no message waits, all of it, and every message still arrives in its job's order")
    func idleWork() throws {
        // The job waits until the consumer has done two pieces of idle work, then sends.
        let idleDone = DispatchSemaphore(value: 0)
        let waited = Mutex<DispatchTimeoutResult?>(nil)
        var pieces = 5
        var log: [String] = []
        try WorkerPool(width: 1).runUnordered(count: 1, bound: 1, produce: { _, send in
            let result = idleDone.wait(timeout: .now() + 30)
            waited.withLock { $0 = result }
            for n in 0..<3 { send(n) }
        }, consume: { _, message in
            log.append("message \(message)")
        }, finished: { _ in
            log.append("ended")
        }, idle: {
            guard pieces > 0 else { return false }
            pieces -= 1
            log.append("idle")
            if pieces == 3 { idleDone.signal() }
            return true
        })
        #expect(waited.withLock { $0 } == .success, "idle work ran before the first message")
        #expect(log.prefix(2) == ["idle", "idle"])
        #expect(log.filter { $0.hasPrefix("message") } == ["message 0", "message 1", "message 2"])
        #expect(log.filter { $0 == "idle" }.count == 5 - pieces, "each piece of idle work ran once")
        #expect(log.firstIndex(of: "ended") ?? -1 > log.firstIndex(of: "message 2") ?? .max)
    }
}
