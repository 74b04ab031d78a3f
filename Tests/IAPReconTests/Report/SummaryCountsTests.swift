import Testing
@testable import IAPRecon

/// What `summary.json` counts of the receipts and of the catalog, read in as few passes as the
/// store allows (`StoredSummaryCounts`).
@Suite("Summary counts of receipts and products")
struct SummaryCountsTests {
    @Test("bundle ids once each in byte order, none for a receipt without one; a failed verification is any status but 0 and 21006")
    func receiptCounts() throws {
        let scenario = try Scenario()
        let database = try scenario.open()
        try database.execute("""
            INSERT INTO files (file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored, ingested_ms)
            VALUES (1, 'receipts/r.jsonl', 'receipts', '', 0, 8, 8, 0, 0, 0, 0);
            INSERT INTO raw_receipts__verifications (file_id, line, item, status_n, bundle_id) VALUES
              (1, 1, 0, 0, 'com.example.game'), (1, 2, 0, 0, 'com.example.game'), (1, 3, 0, 21006, 'com.example.game'),
              (1, 4, 0, 21007, 'Com.Example.Game'), (1, 5, 0, 21003, NULL), (1, 6, 0, NULL, 'com.example.game'),
              (1, 7, 0, 0, 'com.example.app'), (1, 8, 0, 21010, 'com.example.game');
            """)
        let counts = try StoredSummaryCounts.receiptCounts(database)
        // Uppercase sorts before lowercase, as SQLite orders the bytes.
        #expect(counts.bundleIDs == ["Com.Example.Game", "com.example.app", "com.example.game"])
        // 21007 (a sandbox receipt sent to production), 21003 and 21010 failed; 0, 21006 and no status did not.
        #expect(counts.failedVerifications == 3)
    }

    @Test("a product is missing from the catalog once, whether a transaction, a delivery or both name it; a catalogued one never")
    func productsMissingFromCatalog() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-28T10:00:09Z", "u1", "t1", "gems.unknown"),
            Line.delivered("2026-11-28T10:00:09Z", "u2", "t2", "gems60"),
            Line.delivered("2026-11-28T10:00:09Z", "u3", "t3", "only.delivered"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u1", transaction: Line.v2("t1", "gems.unknown", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-28T10:00:03Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u4", transaction: Line.v2("t4", "only.sold", purchase: "2026-11-28T10:00:03Z")),
        ])
        _ = try scenario.reconcile(asOf: "2026-11-30T00:00:00Z")
        let counts = try StoredSummaryCounts.counts(database: scenario.open(), asOfMs: Line.ms("2026-11-30T00:00:00Z"), graceMs: 0)
        // gems.unknown (sold and delivered), only.sold, only.delivered; gems60 is in the catalog.
        #expect(counts.missingFromCatalog == 3)
    }
}
