import Foundation
import Testing
@testable import IAPRecon

/// A night's report patches the `transactions.csv` it wrote before: the rows the joins since then
/// changed are written anew, the others copied, and the file is the one a full rebuild writes.
@Suite("transactions.csv patched")
struct TransactionsPatchTests {
    /// A store of every day but the last, reported into `nights.out`, and the folder of all days.
    static func history(seed: UInt64) throws -> (generated: Scenario, nights: Scenario, lastDay: String) {
        let (generated, nights, lastDay) = try Scenario.generatedNights(users: 400, days: 12, seed: seed)
        let before = try run(nights, input: nights.input)
        #expect(before.report.transactionsPatched == nil, "a first report has nothing to patch")
        return (generated, nights, lastDay)
    }

    /// What a full rebuild of every day writes.
    static func fullRebuild(_ generated: Scenario, zone: String = "UTC") throws -> String {
        let full = try Scenario()
        _ = try run(full, input: generated.input, zone: zone)
        return try full.output("transactions.csv")
    }

    static func rows(_ csv: String) -> Int {
        csv.split(separator: "\r\n").count - 1
    }

    /// Transactions of a product the catalog has no row for: their type is Apple's, from
    /// sightings a night may add to, so every patch writes them anew.
    static func typedByApple(_ scenario: Scenario) throws -> Int64 {
        try scenario.open().scalar("""
            SELECT count(*) FROM int_transactions_resolved
            WHERE product_id NOT IN (SELECT product_id FROM raw_catalog__products WHERE product_id IS NOT NULL)
            """).integerValue
    }

    @Test("a night writes anew only the rows its join changed and copies the rest, to the bytes of a full rebuild; a rerun copies every row Apple did not type")
    func nightPatches() throws {
        let (generated, nights, _) = try Self.history(seed: 21)
        let night = try Self.run(nights, input: generated.input)
        let expected = try Self.fullRebuild(generated)
        let patched = try #require(night.report.transactionsPatched)
        #expect(patched > 0)
        #expect(patched < Self.rows(expected) / 2, "\(patched) of \(Self.rows(expected)) rows written anew")
        #expect(try nights.output("transactions.csv") == expected)

        let again = try Self.run(nights, input: generated.input)
        let typedByApple = try Self.typedByApple(nights)
        #expect(typedByApple > 0, "the generated catalog lacks a product some transactions are of")
        #expect(again.report.transactionsPatched.map(Int64.init) == typedByApple)
        #expect(try nights.output("transactions.csv") == expected)
    }

    @Test("a night reported into a folder of its own (the nightly job's dated folders) patches the file the last one wrote elsewhere")
    func nightInAnotherFolder() throws {
        let (generated, nights, _) = try Self.history(seed: 22)
        let folder = nights.root + "/2026-09-12"
        let night = try Self.run(nights, input: generated.input, out: folder)
        #expect(try #require(night.report.transactionsPatched) > 0)
        #expect(try String(contentsOfFile: folder + "/transactions.csv", encoding: .utf8) == Self.fullRebuild(generated))
    }

    @Test("the file written before, touched, gone or written in another zone, is not patched: the file is written whole, as a full rebuild writes it")
    func notPatchedFromWhatItNoLongerIs() throws {
        // Touched: its modification time is not the one recorded.
        let (generated, touched, _) = try Self.history(seed: 23)
        let expected = try Self.fullRebuild(generated)
        guard case .text(let path)? = try touched.open().scalar("SELECT path FROM fct_transactions_file") else {
            Issue.record("the first report recorded no file")
            return
        }
        #expect(FileManager.default.fileExists(atPath: path))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: path)
        let afterTouch = try Self.run(touched, input: generated.input)
        #expect(afterTouch.report.transactionsPatched == nil)
        #expect(try touched.output("transactions.csv") == expected)

        // Gone: the folder it was in was removed.
        let (_, gone, _) = try Self.history(seed: 23)
        try FileManager.default.removeItem(atPath: gone.out)
        let afterRemoval = try Self.run(gone, input: generated.input)
        #expect(afterRemoval.report.transactionsPatched == nil)
        #expect(try gone.output("transactions.csv") == expected)

        // Another zone: the days its fx rates are looked up by are others.
        let (_, zoned, _) = try Self.history(seed: 23)
        let inZone = try Self.run(zoned, input: generated.input, zone: "Asia/Tokyo")
        #expect(inZone.report.transactionsPatched == nil)
        #expect(try zoned.output("transactions.csv") == Self.fullRebuild(generated, zone: "Asia/Tokyo"))
    }

    @Test("a file that still looks as recorded but whose rows are out of order is found out half-way: the file is started again and written whole")
    func outOfOrderFileWrittenWhole() throws {
        let (generated, nights, _) = try Self.history(seed: 25)
        guard case .text(let path)? = try nights.open().scalar("SELECT path FROM fct_transactions_file") else {
            Issue.record("the first report recorded no file")
            return
        }
        // Two rows near the end change places: same bytes, same size, and the modification time put back.
        var status = stat()
        #expect(stat(path, &status) == 0)
        var rows = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\r\n")
        #expect(rows.count > 10)
        rows.swapAt(rows.count - 3, rows.count - 2)
        try rows.joined(separator: "\r\n").write(toFile: path, atomically: false, encoding: .utf8)
        var times = [status.st_atim, status.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(FileIdentity(path: path) == FileIdentity(device: Int64(status.st_dev), inode: Int64(status.st_ino),
                                                         bytes: Int64(status.st_size),
                                                         modifiedNs: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)))

        let night = try Self.run(nights, input: generated.input)
        #expect(night.report.transactionsPatched == nil)
        #expect(try nights.output("transactions.csv") == Self.fullRebuild(generated))
    }

    @Test("an id whose `;` is followed by a formula sign is written guarded, `1;'-2`, so it is not read back as itself: the night's file is a full rebuild's, each transaction once")
    func guardedIDAfterSemicolon() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func receipt(_ transactionID: String, _ day: String) -> String {
            Line.v2Receipt("2026-11-\(day)T10:00:05Z", "u1",
                           transaction: RevenueReportTests.Fixture.v2(transactionID, "gems60", purchase: "2026-11-\(day)T10:00:00Z", price: 990))
        }
        func delivered(_ transactionID: String) -> String {
            "{\"ts\":\"2026-11-12T10:00:00Z\",\"event\":\"delivered\",\"user_id\":\"u2\","
                + "\"transaction_id\":\"\(transactionID)\",\"product_id\":\"gems60\",\"quantity\":1}"
        }
        // Beside it a plain id: each is listed once, as a full rebuild lists it.
        try scenario.write("receipts/r.jsonl", [receipt("1000000000000001", "10"), receipt("1000000000000002;-7", "11")])
        _ = try Self.run(scenario, input: scenario.input)
        #expect(try scenario.output("transactions.csv").contains("\r\n1000000000000002;'-7,"))
        // The night after, both transactions are delivered: their rows change.
        try scenario.write("server/s.jsonl", [delivered("1000000000000001"), delivered("1000000000000002;-7")])
        _ = try Self.run(scenario, input: scenario.input)
        let night = try scenario.output("transactions.csv")
        #expect(night == (try Self.fullRebuild(scenario)))
        #expect(Self.rows(night) == 2)
    }

    @Test("a store of an older iaprecon, whose join listed no changes, has its file written whole, then patched the night after")
    func olderStoreWritesWhole() throws {
        let (generated, nights, _) = try Self.history(seed: 24)
        let database = try nights.open()
        // What a store had before the table was: no record of the file.
        try database.execute("DELETE FROM fct_transactions_file")
        let night = try Self.run(nights, input: generated.input)
        #expect(night.report.transactionsPatched == nil)
        let again = try Self.run(nights, input: generated.input)
        #expect(again.report.transactionsPatched.map(Int64.init) == (try Self.typedByApple(nights)))
        #expect(try nights.output("transactions.csv") == Self.fullRebuild(generated))
    }

    @Test("joins are numbered as they list changes; a full rebuild lists all, and joins older than the kept ones become all")
    func changesAreNumberedAndKept() throws {
        let scenario = try Scenario()
        let database = try scenario.open()
        func changes(after number: Int64) throws -> (latest: Int64, changes: TransactionChanges?) {
            try StoredTransactionsFile.changes(after: number, in: database)
        }
        #expect(try changes(after: 0) == (0, TransactionChanges()))
        try StoredTransactionChanges.recordAll(in: database)
        #expect(try changes(after: 0) == (1, nil))
        #expect(try changes(after: 1) == (1, TransactionChanges()))
        try StoredTransactionChanges.record(TransactionChanges(transactions: ["a"]), in: database)
        try StoredTransactionChanges.record(TransactionChanges(transactions: ["b"], chains: ["c"]), in: database)
        // A join that changed nothing takes no number.
        try StoredTransactionChanges.record(TransactionChanges(), in: database)
        #expect(try changes(after: 1) == (3, TransactionChanges(transactions: ["a", "b"], chains: ["c"])))
        #expect(try changes(after: 2) == (3, TransactionChanges(transactions: ["b"], chains: ["c"])))
        // Joins 4 to 11: the last 8 stay listed, 1 to 3 become all at 3.
        for number in 4...11 { try StoredTransactionChanges.record(TransactionChanges(transactions: ["t\(number)"]), in: database) }
        #expect(try changes(after: 2) == (11, nil))
        #expect(try changes(after: 3) == (11, TransactionChanges(transactions: Set((4...11).map { "t\($0)" }))))
        #expect(try changes(after: 10) == (11, TransactionChanges(transactions: ["t11"])))
        // A full rebuild: nothing before it matters.
        try StoredTransactionChanges.recordAll(in: database)
        #expect(try changes(after: 11) == (12, nil))
        #expect(try database.scalar("SELECT count(*) FROM int_transaction_changes") == .integer(1))
    }

    static func run(_ scenario: Scenario, input: String, out: String? = nil, zone: String = "UTC") throws -> RunResult {
        let out = out ?? scenario.out
        return try Pipeline.run(RunOptions(input: input, databasePath: scenario.databasePath, outFolder: out, jobs: 2,
                                           lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(),
                                           report: ReportSettings(outFolder: out, zone: Zone(zone) ?? .utc)), progress: nil)
    }
}
