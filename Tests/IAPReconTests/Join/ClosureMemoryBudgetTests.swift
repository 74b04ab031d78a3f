import Foundation
import Testing
@testable import IAPRecon

/// A night's closure gives up for a full rebuild once the rows it read pass the store's
/// `closureMemoryBudget` (`ClosureMemoryBudget`): a receipt replayed on every launch links every
/// sighting of its transactions, and holding them all is memory without bound. Within the budget
/// the night stays incremental; past it, it rebuilds in full. Either writes what a fresh store does.
@Suite("A closure that reads past its budget rebuilds in full")
struct ClosureMemoryBudgetTests {
    static let asOf = "2026-11-30T00:00:00Z"
    static let items = 12

    @Test("a night whose closure reads one byte past the budget rebuilds in full, one that reads exactly the budget stays incremental, and both write what a fresh store writes")
    func pastBudgetRebuildsInFull() throws {
        let (scenario, database) = try Self.nightIngested()
        func copy(_ name: String) throws -> Database {
            let path = scenario.root + "/" + name + ".sqlite"
            try database.execute("VACUUM INTO '\(path)'")
            return try Store.open(path: path)
        }
        let (atBudget, pastBudget) = (try copy("at"), try copy("past"))

        // What the night's closure reads, exactly.
        let (seeds, settings) = try Self.seeds(database)
        let read = ClosureMemoryBudget(limit: .max)
        let closed = try JoinScope.closure(of: seeds, in: SQLiteJoinStore(database), limit: 1_000_000, budget: read).get()
        #expect(closed.scope.transactions.count == Self.items + 1)
        // Every sighting of the replayed items, each a link row and a fact.
        #expect(read.bytes > 41 * Self.items * 100)

        let incremental = try JoinStage.run(store: SQLiteJoinStore(atBudget, closureMemoryBudget: read.bytes), settings: settings,
                                            workers: WorkerPool(width: 2))
        #expect(incremental.recomputedTransactions == Self.items + 1, "near miss: a closure that reads its budget whole stays incremental")
        let full = try JoinStage.run(store: SQLiteJoinStore(pastBudget, closureMemoryBudget: read.bytes - 1), settings: settings,
                                     workers: WorkerPool(width: 2))
        #expect(full.recomputedTransactions == nil, "one byte past the budget, the night rebuilds in full")
        #expect(full.fullRebuildReason == "the changes link more than \(read.bytes - 1) bytes of lines to hold")
        #expect(incremental.fullRebuildReason == nil)
        #expect(full.findings == incremental.findings)
        try expectFreshResults(["incremental": atBudget, "full rebuild": pastBudget])
    }

    @Test("near miss: a closure that lets its facts go holds only its link rows and keys, and stays incremental while those fit the budget")
    func factsLetGoAreNotHeld() throws {
        let (scenario, database) = try Self.nightIngested()
        let (seeds, settings) = try Self.seeds(database)
        let whole = ClosureMemoryBudget(limit: .max)
        _ = try JoinScope.closure(of: seeds, in: SQLiteJoinStore(database), limit: 1_000_000, budget: whole).get()
        let linksOnly = ClosureMemoryBudget(limit: .max, factsLimit: 0)
        let closed = try JoinScope.closure(of: seeds, in: SQLiteJoinStore(database), limit: 1_000_000, budget: linksOnly).get()
        #expect(!closed.facts.isHeld && closed.facts.rows.isEmpty && closed.facts.currentResolved.isEmpty)
        // Each sighting of the replayed items is a fact row the closure no longer holds.
        #expect(whole.bytes - linksOnly.bytes > 41 * Self.items * 50, "\(whole.bytes) held with the facts, \(linksOnly.bytes) without")

        func copy(_ name: String) throws -> Database {
            let path = scenario.root + "/" + name + ".sqlite"
            try database.execute("VACUUM INTO '\(path)'")
            return try Store.open(path: path)
        }
        let (atBudget, pastBudget) = (try copy("links-at"), try copy("links-past"))
        let incremental = try JoinStage.run(store: SQLiteJoinStore(atBudget, closureFactsBudget: 0, closureMemoryBudget: linksOnly.bytes),
                                            settings: settings, workers: WorkerPool(width: 2))
        #expect(incremental.recomputedTransactions == Self.items + 1, "facts let go are not held: the links alone fit")
        let full = try JoinStage.run(store: SQLiteJoinStore(pastBudget, closureFactsBudget: 0, closureMemoryBudget: linksOnly.bytes - 1),
                                     settings: settings, workers: WorkerPool(width: 2))
        #expect(full.recomputedTransactions == nil, "one byte of links past the budget, the night rebuilds in full")
        try expectFreshResults(["incremental, facts read by key": atBudget, "full rebuild": pastBudget])
    }

    /// The night's seeds, and the settings of its join.
    static func seeds(_ database: Database) throws -> (JoinScope, ReconcileSettings) {
        let settings = ReconcileSettings(asOfMs: Line.ms(Self.asOf))
        let asOfMs = Line.ms(Self.asOf)
        return (try JoinScope.seeds(in: SQLiteJoinStore(database), previousAsOfMs: asOfMs, asOfMs: asOfMs, graceMs: settings.graceMs), settings)
    }

    /// Expects each of `joined` to hold what a fresh store of the same files writes.
    private func expectFreshResults(_ joined: [String: Database]) throws {
        let fresh = try Scenario()
        try Self.writeDays(fresh, replays: 40)
        try Self.writeNight(fresh)
        _ = try fresh.reconcile(asOf: Self.asOf)
        let freshDatabase = try fresh.open()
        let tables = ["int_transactions_resolved", "fct_findings", "fct_finding_chains"]
        let expected = try tables.map { try rows(freshDatabase, $0) }
        #expect(expected[0].count == Self.items + 2)
        #expect(!expected[1].isEmpty, "the replayed receipt's transactions make findings")
        for (name, database) in joined {
            for (index, table) in tables.enumerated() {
                #expect(try rows(database, table) == expected[index], "\(name): \(table)")
            }
        }
    }

    @Test("the default budget keeps a small night incremental")
    func defaultBudgetStaysIncremental() throws {
        let (scenario, database) = try Self.nightIngested()
        defer { withExtendedLifetime(scenario) {} }
        let night = try JoinStage.run(store: SQLiteJoinStore(database), settings: ReconcileSettings(asOfMs: Line.ms(Self.asOf)),
                                      workers: WorkerPool(width: 2))
        #expect(night.recomputedTransactions == Self.items + 1)
    }

    /// A store reconciled over the days, with the night (the receipt sent once more, and another
    /// user's purchase) ingested and normalized, not yet joined.
    static func nightIngested() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        try writeDays(scenario, replays: 40)
        _ = try scenario.reconcile(asOf: asOf)
        try writeNight(scenario)
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: asOf), progress: nil)
        try Pipeline.normalize(database: database)
        return (scenario, database)
    }

    /// u1 orders `items` gems, each delivered, and their app sends one receipt listing them all,
    /// `replays` times (an iOS 7-style receipt verified on every launch); u2 buys once.
    static func writeDays(_ scenario: Scenario, replays: Int) throws {
        try scenario.catalog()
        var server: [String] = []
        var listed: [String] = []
        for item in 0..<items {
            let minute = String(format: "%02d", item)
            server.append(Line.order("2026-11-20T10:\(minute):00Z", "o\(item)", "u1", "gems60"))
            // Every third one is never delivered: the replays keep finding it.
            if item % 3 != 0 {
                server.append(Line.delivered("2026-11-20T10:\(minute):09Z", "u1", "t\(item)", "gems60", orderID: "o\(item)"))
            }
            listed.append(inApp("t\(item)", "gems60", purchase: "2026-11-20T10:\(minute):05Z"))
        }
        server.append(Line.order("2026-11-21T09:00:00Z", "o-u2", "u2", "gems300", price: "4.99"))
        try scenario.write("server/s.jsonl", server)
        try scenario.write("receipts/r0.jsonl", (0..<replays).map { replay in
            inAppReceipt(Timestamp.iso8601(Line.ms("2026-11-22T00:00:00Z") + Int64(replay) * 60_000), "u1", items: listed)
        })
        try scenario.write("receipts/r1.jsonl", [
            Line.v2Receipt("2026-11-21T09:00:05Z", "u2", orderID: "o-u2", transaction: Line.v2("t-u2", "gems300", purchase: "2026-11-21T09:00:03Z")),
        ])
    }

    /// The night's files: the receipt once more, and u3's first purchase.
    static func writeNight(_ scenario: Scenario) throws {
        let items = (0..<items).map { item in
            inApp("t\(item)", "gems60", purchase: "2026-11-20T10:\(String(format: "%02d", item)):05Z")
        }
        try scenario.write("receipts/r2.jsonl", [
            inAppReceipt("2026-11-29T12:00:00Z", "u1", items: items),
            Line.v2Receipt("2026-11-29T12:00:05Z", "u3", transaction: Line.v2("t-u3", "gems60", purchase: "2026-11-29T12:00:03Z")),
        ])
    }

    /// One `in_app` item of a verifyReceipt answer.
    static func inApp(_ transactionID: String, _ productID: String, purchase: String) -> String {
        "{\"quantity\":\"1\",\"product_id\":\"\(productID)\",\"transaction_id\":\"\(transactionID)\",\"original_transaction_id\":\"\(transactionID)\",\"purchase_date_ms\":\"\(Line.ms(purchase))\",\"in_app_ownership_type\":\"PURCHASED\"}"
    }

    /// A receipts line with a Production verifyReceipt answer listing `items`.
    static func inAppReceipt(_ receivedAt: String, _ userID: String, items: [String]) -> String {
        "{\"received_at\":\"\(receivedAt)\",\"user_id\":\"\(userID)\",\"response\":{\"status\":0,\"environment\":\"Production\",\"receipt\":{\"bundle_id\":\"com.example.game\",\"in_app\":[\(items.joined(separator: ","))]}}}"
    }

    /// Every row of `table`, ordered by every column.
    private func rows(_ database: Database, _ table: String) throws -> [[SQLValue]] {
        let columns = Int(try database.scalar("SELECT count(*) FROM pragma_table_info('\(table)')").integerValue)
        let order = (1...columns).map(String.init).joined(separator: ", ")
        var rows: [[SQLValue]] = []
        try database.forEach("SELECT * FROM \(table) ORDER BY \(order)") { row in rows.append((0..<columns).map { row.value($0) }) }
        return rows
    }
}
