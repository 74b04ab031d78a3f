import Foundation
import Synchronization
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// A full rebuild reads each fact table once and routes its rows to their batches (`RoutedFacts`)
/// instead of reading each batch's rows by key: every batch must receive exactly the facts, in
/// exactly the order, that reading by key hands it, and spilling them changes nothing.
@Suite("A full rebuild's facts, read once")
struct RoutedFactsTests {
    @Test("every batch receives the facts reading by key gives it, in the same order, also where file ids and paths disagree")
    func routedEqualsKeyed() throws {
        let (scenario, database, copyID) = try Self.ingestedWithALaterCopy()
        let store = SQLiteJoinStore(database)
        let batches = try JoinComponents.batches(in: store, transactions: 40).keys(of: store.factKeyKinds)
        #expect(batches.count > 5)
        let routed = try RoutedFacts.read(path: database.path, batches: batches, pool: WorkerPool(width: 2), budget: 1 << 30)
        #expect(routed.spilledBytes == 0)
        let files = try StoredLedger.sourceFiles(database)
        try Self.expectEachBatchAsKeyed(batches, database: database, copyID: copyID, handedBy: "routed") { batch, facts in
            let rows = routed.take(batch: batch)
            for table in StoredScopeFacts.FactTable.allCases {
                try table.hand(routed: rows[table.rawValue], files: files, to: &facts)
            }
        }
        withExtendedLifetime(scenario) {}
    }

    @Test("a batch too large to sort in memory, sorted in runs on disk and merged, hands the same facts in the same order")
    func sortedInRunsEqualsSortedInMemory() throws {
        let (scenario, database, _) = try Self.ingestedWithALaterCopy()
        let store = SQLiteJoinStore(database)
        let batches = try JoinComponents.batches(in: store, transactions: 100).keys(of: store.factKeyKinds)
        #expect(batches.count > 1)
        // Routed twice, one copy to hand each way, the second spilled: runs are read from both.
        let inMemory = try RoutedFacts.read(path: database.path, batches: batches, pool: WorkerPool(width: 2), budget: 1 << 30)
        let inRuns = try RoutedFacts.read(path: database.path, batches: batches, pool: WorkerPool(width: 2), budget: 64 << 10)
        #expect(inRuns.spilledBytes > 0)
        let files = try StoredLedger.sourceFiles(database)
        let sortBytes = 2 << 10
        var (sightings, runsOfSightings) = (0, 0)
        for batch in 0..<batches.count {
            var sorted = ScopeFacts()
            var merged = ScopeFacts()
            for (table, (one, other)) in zip(StoredScopeFacts.FactTable.allCases, zip(inMemory.take(batch: batch), inRuns.take(batch: batch))) {
                #expect(one.bytes == other.bytes)
                try table.hand(routed: one, files: files, to: &sorted)
                try table.hand(routed: other, files: files, to: &merged, sortBytes: sortBytes)
                if table == .sightings { runsOfSightings = max(runsOfSightings, other.bytes / sortBytes) }
            }
            let same = String(describing: merged) == String(describing: sorted)
            #expect(same, "batch \(batch): \(merged.sightings.count) sightings merged from runs, \(sorted.sightings.count) sorted")
            sightings += sorted.sightings.count
        }
        #expect(sightings > 400)
        #expect(runsOfSightings > 20, "a batch's sightings made many runs")
        let leftOver = try FileManager.default.contentsOfDirectory(atPath: PathParent.of(database.path)).filter { $0.contains("iaprecon-join") }
        #expect(leftOver.isEmpty, "the runs' file leaves nothing behind")
        withExtendedLifetime(scenario) {}
    }

    @Test("rows handed over in small chunks, as with many batches, reach each batch as whole chunks do")
    func smallChunksEqualWholeOnes() throws {
        let (scenario, database, _) = try Self.ingestedWithALaterCopy()
        let store = SQLiteJoinStore(database)
        let batches = try JoinComponents.batches(in: store, transactions: 40).keys(of: store.factKeyKinds)
        #expect(RoutedFacts.handOverBytes(batches: batches.count) == RoutedFacts.chunkBytes, "a few batches: whole chunks")
        #expect(RoutedFacts.handOverBytes(batches: 1_000) < RoutedFacts.chunkBytes, "many batches: smaller ones")
        let whole = try RoutedFacts.read(path: database.path, batches: batches, pool: WorkerPool(width: 2), budget: 1 << 30)
        let small = try RoutedFacts.read(path: database.path, batches: batches, pool: WorkerPool(width: 2), budget: 1 << 30, handOver: 256)
        let files = try StoredLedger.sourceFiles(database)
        var (sightings, mostPieces) = (0, 0)
        for batch in 0..<batches.count {
            var fromWhole = ScopeFacts()
            var fromSmall = ScopeFacts()
            for (table, (one, other)) in zip(StoredScopeFacts.FactTable.allCases, zip(whole.take(batch: batch), small.take(batch: batch))) {
                #expect(one.bytes == other.bytes)
                mostPieces = max(mostPieces, other.pieceCount)
                try table.hand(routed: one, files: files, to: &fromWhole)
                try table.hand(routed: other, files: files, to: &fromSmall)
            }
            let same = String(describing: fromSmall) == String(describing: fromWhole)
            #expect(same, "batch \(batch): \(fromSmall.sightings.count) sightings from small chunks, \(fromWhole.sightings.count) from whole ones")
            sightings += fromWhole.sightings.count
        }
        #expect(sightings > 400)
        #expect(mostPieces > 10, "a batch's rows came in many small chunks")
        withExtendedLifetime(scenario) {}
    }

    @Test("keys sorted by their first 16 bytes and length are sorted as their bytes are, or left to the whole keys")
    func keyPrefixesOrderAsBytes() {
        let long = "2000000000000005"
        let keys = ["", "a", "a\u{0}", "a\u{0}b", "b", long, long + "0", long + "\u{0}", long + "1", "200000000000000", "2000000000000006",
                    "0000acc5-5a53-4700-bb07-cbe3e861841f", "0000acc5-5a53-4700-bb07-cbe3e861841e", "0000acc5-5a53-47", "é", "z\u{FF}", "zz"]
        for a in keys {
            for b in keys {
                let (x, y) = (Array(a.utf8), Array(b.utf8))
                let bytes = x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
                let prefixes = x.withUnsafeBufferPointer { x in y.withUnsafeBufferPointer { y in KeyPrefix(x).compare(with: KeyPrefix(y)) } }
                if let prefixes {
                    #expect(prefixes.signum() == bytes, "\(a.debugDescription) against \(b.debugDescription)")
                } else {
                    #expect(max(x.count, y.count) > 16 && x.prefix(16) == y.prefix(16), "\(a.debugDescription) against \(b.debugDescription)")
                }
            }
        }
    }

    /// A store of a generated input ingested twice, the second time with a later file whose path
    /// sorts before every other server log: its lines (the last day's, less one, so that it is a
    /// file of its own) repeat orders and deliveries, and only the path order, not the file ids,
    /// says which copy comes first. Returns the copy's file id.
    /// Reads each batch's facts by key and checks that `hand` (batch, facts) gives it the same, in
    /// the same order, the catalog aside: what every source of handed facts owes its batches.
    /// `copyID` is the later copy's file (`ingestedWithALaterCopy`), whose lines must be among them.
    static func expectEachBatchAsKeyed(_ batches: some RebuildBatches, database: Database, copyID: Int64, handedBy source: String,
                                       hand: (Int, inout ScopeFacts) throws -> Void) throws {
        var (keyedLines, copies) = (0, 0)
        for batch in 0..<batches.count {
            try StoredScopeFacts.fill(batches.scope(batch), prefix: "join", in: database)
            var keyed = ScopeFacts()
            try StoredScopeFacts.read(database, scope: "join", into: &keyed)
            var handed = ScopeFacts()
            try hand(batch, &handed)
            try StoredScopeFacts.readCatalog(database, into: &handed)
            // Compared as text, told as a yes or no: a batch's facts printed would bury the failure.
            let same = String(describing: handed) == String(describing: keyed)
            #expect(same, "batch \(batch): \(handed.orders.count) orders, \(handed.sightings.count) sightings \(source)")
            keyedLines += keyed.orders.count + keyed.deliveries.count + keyed.sightings.count + keyed.receiptClaims.count
            copies += keyed.orders.count { $0.source.file == copyID } + keyed.deliveries.count { $0.source.file == copyID }
        }
        #expect(keyedLines > 1_000)
        #expect(copies > 10, "the copy's lines were read, and ordered against their originals")
    }

    static func ingestedWithALaterCopy() throws -> (Scenario, Database, copyID: Int64) {
        let scenario = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 300, days: 10, seed: 5), to: scenario.input)
        let database = try scenario.open()
        let rules = LineRules(signatures: .testChain)
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 2, rules: rules, progress: nil)
        let server = URL(fileURLWithPath: scenario.input + "/server")
        let last = try #require(try FileManager.default.contentsOfDirectory(atPath: server.path).filter { $0.hasSuffix(".jsonl") }.sorted().last)
        let lines = try String(contentsOf: server.appendingPathComponent(last), encoding: .utf8).split(separator: "\n")
        #expect(lines.count > 20)
        try (lines.dropFirst().joined(separator: "\n") + "\n").write(to: server.appendingPathComponent("a-copy.jsonl"), atomically: true,
                                                                      encoding: .utf8)
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 2, rules: rules, progress: nil)
        _ = try Pipeline.normalize(database: database)
        let copyID = try database.scalar("SELECT file_id FROM files WHERE path LIKE '%a-copy.jsonl'").integerValue
        #expect(copyID == (try database.scalar("SELECT max(file_id) FROM files").integerValue), "the copy came last")
        return (scenario, database, copyID)
    }

    @Test("a full rebuild that spills its facts to a file writes what one that holds them writes")
    func spilledEqualsHeld() throws {
        let scenario = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 300, days: 10, seed: 9), to: scenario.input)
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
        _ = try Pipeline.normalize(database: database)

        func rebuild(budget: Int) throws -> (spilled: Int, resolved: [[SQLValue]], findings: [[SQLValue]]) {
            try ChangedKeys.requestFullRebuild(database, for: .storeChange)
            let spilled = Mutex(0)
            let store = SQLiteJoinStore(database, routedFactsBudget: budget, spilledBytes: { bytes in spilled.withLock { $0 += bytes } })
            let summary = try JoinStage.run(store: store, settings: ReconcileSettings(), workers: WorkerPool(width: 2), batchTransactions: 40)
            #expect(summary.recomputedTransactions == nil, "a full rebuild")
            return (spilled.withLock { $0 }, try rows(database, "SELECT * FROM int_transactions_resolved ORDER BY transaction_id", columns: 22),
                    try rows(database, "SELECT * FROM fct_findings ORDER BY finding_id", columns: 13))
        }
        let held = try rebuild(budget: SQLiteJoinStore.routedFactsBudget)
        let spilled = try rebuild(budget: 16 << 10)
        #expect(held.spilled == 0, "a small store's facts fit in memory")
        #expect(spilled.spilled > 100_000, "past the budget, the facts went to the spill file")
        #expect(held.resolved.count > 200)
        #expect(held.findings.count > 10)
        #expect(spilled.resolved == held.resolved)
        #expect(spilled.findings == held.findings)
        let leftOver = try FileManager.default.contentsOfDirectory(atPath: (database.path as NSString).deletingLastPathComponent)
            .filter { $0.contains("iaprecon-join") }
        #expect(leftOver.isEmpty, "the spill file leaves nothing behind")
        withExtendedLifetime(scenario) {}
    }

    @Test("the facts held give way to what the heap already holds, so a larger store spills sooner instead of holding more")
    func budgetGivesWayToTheHeap() {
        let most = SQLiteJoinStore.routedFactsBudget
        let ceiling = RoutedFacts.heapCeiling
        #expect(RoutedFacts.budget(most: most, heapInUse: 64 << 20) == most, "a small store's routes leave the whole budget")
        #expect(RoutedFacts.budget(most: most, heapInUse: ceiling - (100 << 20)) == 100 << 20, "held facts and routes together stay under the ceiling")
        #expect(RoutedFacts.budget(most: most, heapInUse: ceiling + (1 << 30)) == RoutedFacts.leastBudget,
                "past the ceiling, the facts still get their least budget")
        #expect(RoutedFacts.budget(most: 16 << 10, heapInUse: 0) == 16 << 10, "a budget set below the least stays as set")
    }

    @Test("the spill file is made inside the store's folder, never beside it, where the store's user may not write")
    func spillsInsideTheStoresFolder() throws {
        let scenario = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 100, days: 5, seed: 3), to: scenario.input)
        // A folder name at the file system's limit: a name made from it beside the folder cannot exist.
        let folder = scenario.root + "/" + String(repeating: "s", count: 250)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let database = try Store.open(path: folder + "/store.sqlite")
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 2, rules: LineRules(signatures: .testChain), progress: nil)
        _ = try Pipeline.normalize(database: database)
        let spilled = Mutex(0)
        let store = SQLiteJoinStore(database, routedFactsBudget: 4 << 10, spilledBytes: { bytes in spilled.withLock { $0 += bytes } })
        let summary = try JoinStage.run(store: store, settings: ReconcileSettings(), workers: WorkerPool(width: 2), batchTransactions: 40)
        #expect(summary.recomputedTransactions == nil, "a full rebuild")
        #expect(spilled.withLock { $0 } > 10_000, "past the budget, the facts went to the spill file")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { !$0.contains("iaprecon-join") })
        withExtendedLifetime(scenario) {}
    }

    private func rows(_ database: Database, _ sql: String, columns: Int) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try database.forEach(sql) { row in rows.append((0..<columns).map { row.value($0) }) }
        return rows
    }
}
