import Foundation
import Testing
@testable import IAPRecon

/// A night's closure round runs its link queries on two connections at once, each taking the
/// next query when it is free (`StoredLinks.reach`): what the round reaches must not depend on
/// which connection read which query.
@Suite("Closure rounds on two connections")
struct ClosureRoundTests {
    /// u1 bought t1 on order o1 and was delivered it; u2 has an order a day before an undelivered
    /// purchase (too early for the heuristic); u3 has two orders, a delivery, and a renewal t11 of t10.
    /// The scenario keeps its files for as long as the caller holds it.
    private func store() throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"),
            Line.order("2026-11-27T10:00:00Z", "o2", "u2", "gems60"),
            Line.order("2026-11-28T11:00:00Z", "o3", "u3", "gems60"),
            Line.order("2026-11-28T12:00:00Z", "o4", "u3", "gems300"),
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems60", orderID: "o1"),
            Line.delivered("2026-11-28T11:00:09Z", "u3", "t3", "gems60", orderID: "o3"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", orderID: "o1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T11:00:05Z", "u3", transaction: Line.v2("t3", "gems60", purchase: "2026-11-28T11:00:03Z")),
            Line.v2Receipt("2026-11-28T12:00:05Z", "u3", transaction: Line.v2(
                "t10", "pro.monthly", purchase: "2026-10-28T12:00:03Z", expires: "2026-11-28T12:00:03Z")),
            Line.v2Receipt("2026-11-28T12:00:05Z", "u3", transaction: Line.v2(
                "t11", "pro.monthly", purchase: "2026-11-28T12:00:03Z", original: "t10", expires: "2026-12-28T12:00:03Z")),
        ])
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        return scenario
    }

    private let frontier = JoinScope(transactions: ["t1"], orders: ["o2"], users: ["u3"], chains: ["t10"])

    /// The frontier's own keys, as the closure knows them.
    private var known: Set<RowFingerprint> {
        var known = Set<RowFingerprint>()
        frontier.forEachKey { key, kind in
            var key = key
            known.insert(key.withUTF8 { RowFingerprint(kind.rawValue, $0) })
        }
        return known
    }

    /// Each part's keys and link rows, spelled out to compare.
    private func spelled(_ parts: [ReachedKeys]) -> [[String]] {
        parts.map { part in
            part.keys.map { "\($0.kind.rawValue):\($0.key)" }
                + ["links \(part.links.kinds.map(\.rawValue)) \(part.links.bytes) \(part.links.keyEnds) \(part.links.rowEnds)"]
        }
    }

    @Test("a round reaches each linked key of every kind, and the same parts in the same order whichever connection read them")
    func sameWhoeverReads() throws {
        let scenario = try store()
        let database = try scenario.open()
        let path = database.path
        let shared = try StoredLinks.reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: .max), in: database, alongside: { try Database(path: path, readOnly: true) })
        // The second connection opens late: the first takes over the other's queries (and fills their tables).
        let alone = try StoredLinks.reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: .max), in: database, alongside: {
            usleep(300_000)
            return try Database(path: path, readOnly: true)
        })
        #expect(spelled(shared) == spelled(alone))

        var reached = Set<String>()
        for part in shared { for key in part.keys { reached.insert("\(key.kind.rawValue):\(key.key)") } }
        #expect(reached == [
            "user:u1", "order:o1", "chain:t1",            // t1's delivery, receipt and sighting
            "user:u2",                                   // o2's line; its user's purchase t2 is matched to nothing
            "order:o3", "order:o4", "transaction:t3",    // u3's orders and delivery
            "transaction:t10", "transaction:t11",        // u3's sightings; the chain t10's renewal and first purchase
        ])
        // The frontier's own keys are known: never reached again.
        #expect(!reached.contains("transaction:t1") && !reached.contains("order:o2") && !reached.contains("user:u3"))
    }

    @Test("a second connection that cannot open fails the round with its error instead of leaving it waiting")
    func helperFailure() throws {
        struct CannotOpen: Error {}
        let scenario = try store()
        let database = try scenario.open()
        #expect(throws: CannotOpen.self) {
            try StoredLinks.reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: .max), in: database, alongside: { throw CannotOpen() })
        }
        // The connection is still good for the next round.
        let parts = try StoredLinks.reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: .max), in: database, alongside: { [path = database.path] in
            try Database(path: path, readOnly: true)
        })
        #expect(parts.contains { !$0.keys.isEmpty })
    }

    @Test("a round stops once what the closure read passes its budget, counting every part it read, and the connection is still good")
    func pastBudget() throws {
        let scenario = try store()
        let database = try scenario.open()
        let open: @Sendable () throws -> Database = { [path = database.path] in try Database(path: path, readOnly: true) }
        let whole = ClosureMemoryBudget(limit: .max)
        let parts = try StoredLinks.reach(from: frontier, known: known, budget: whole, in: database, alongside: open)
        let bytes = parts.reduce(0) { total, part in
            total + part.links.footprint + (part.facts?.bytes.count ?? 0) + (part.currentResolved?.bytes.count ?? 0)
                + part.keys.count * MemoryLayout<(fingerprint: RowFingerprint, key: String, kind: KeyKind)>.stride
        }
        #expect(bytes > 0 && whole.bytes == bytes)
        // What a closure read in earlier rounds counts too.
        let earlier = ClosureMemoryBudget(limit: bytes)
        #expect(earlier.spend(links: 1, facts: 0))
        #expect(throws: ClosureMemoryBudget.Exceeded.self) {
            try StoredLinks.reach(from: frontier, known: known, budget: earlier, in: database, alongside: open)
        }
        let exact = try StoredLinks.reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: bytes), in: database, alongside: open)
        #expect(spelled(exact) == spelled(parts))
        #expect(try SQLiteJoinStore(database).reach(from: frontier, known: known, budget: ClosureMemoryBudget(limit: bytes - 1)) == nil)
    }
}
