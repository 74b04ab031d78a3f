import Foundation
import Testing
@testable import IAPRecon

/// The report reads every revenue transaction twice (revenue, attribution), and a full tie-out
/// every sale. A partial index on purchase time that held those rows would have SQLite walk it and
/// look each row up in the table out of order, several times the cost of reading the table
/// through. The reads say `NOT INDEXED`; these plans keep them saying so.
@Suite("Whole-table reads")
struct WholeTableReadsTests {
    @Test("the report's reads of every revenue transaction and every registration go through the tables, not an index")
    func revenueReadsScanTheTable() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-28T10:00:03Z")),
        ])
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-28T09:00:00Z","user_id":"u1","method":"apple","idfv":"6D2A9F0C-1B3E-4C5D-8E7F-0A1B2C3D4E5F"}"#,
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        for sql in [StoredReportRows.revenueRows, StoredUserInstalls.purchasesByUser] {
            var plan: [String] = []
            try database.forEach("EXPLAIN QUERY PLAN " + sql) { plan.append($0.string(3)) }
            #expect(plan.contains("SCAN int_transactions_resolved"), "\(sql): \(plan)")
            #expect(!plan.contains { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") }, "\(sql): \(plan)")
        }
        // Every user's first registration: the registrations read file by file, not through the user index.
        var registrations: [String] = []
        try database.forEach("EXPLAIN QUERY PLAN " + FirstRegistrations.inUserOrder) { registrations.append($0.string(3)) }
        #expect(registrations.contains { $0.hasPrefix("SEARCH r USING PRIMARY KEY") }, "\(registrations)")
        #expect(!registrations.contains { $0.contains("raw_registrations_by_user") }, "\(registrations)")
        var walked: [String] = []
        try database.forEach("""
            EXPLAIN QUERY PLAN SELECT r.user_id, r.ts_ms FROM raw_registrations__users r JOIN files f USING (file_id)
            ORDER BY r.user_id, r.ts_ms, f.path, r.line
            """) { walked.append($0.string(3)) }
        #expect(walked.contains { $0.contains("raw_registrations_by_user") }, "without CROSS JOIN SQLite walks the index: \(walked)")

        // The near miss the reads must not take: without the hint, SQLite walks the index (that of
        // Apple's sales, which the tie-out's full read spells NOT INDEXED).
        var unhinted: [String] = []
        try database.forEach("EXPLAIN QUERY PLAN SELECT purchase_ms, product_id FROM int_transactions_resolved WHERE is_apple_sale = 1") {
            unhinted.append($0.string(3))
        }
        #expect(unhinted.contains { $0.contains("int_transactions_by_purchase") }, "\(unhinted)")
    }
}
