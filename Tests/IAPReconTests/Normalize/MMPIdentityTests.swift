import Foundation
import Testing
@testable import IAPRecon

/// A repeated MMP row is found by the fingerprint of its identity: its identity fields joined by
/// unit separators, fed from the row's bytes.
@Suite("MMP row identities")
struct MMPIdentityTests {
    @Test("a decimal fed digit by digit is the fingerprint of String(value)", arguments: [
        Int64(0), 7, -7, 1_790_000_000_000, -1_790_000_000_123, Int64.max, Int64.min,
    ])
    func decimal(value: Int64) {
        var fingerprint = RowFingerprint()
        fingerprint.add(decimal: value)
        #expect(fingerprint == RowFingerprint(String(value)))
    }

    @Test("fingerprints as dictionary keys: each found again, none mistaken for another, also when one half is shared")
    func fingerprintKeys() {
        // 60,000 ids, and 2,000 fingerprints equal in `first` and different in `second` (and the reverse).
        var keys = (0..<60_000).map { RowFingerprint("u_\($0)") }
        func fingerprint(_ first: UInt64, _ second: UInt64) -> RowFingerprint {
            var fingerprint = RowFingerprint()
            (fingerprint.first, fingerprint.second) = (first, second)
            return fingerprint
        }
        keys += (0..<2_000).map { fingerprint(42, UInt64($0)) }
        keys += (0..<2_000).map { fingerprint(100_000 + UInt64($0), 42) }
        var index: [RowFingerprint: Int] = [:]
        for (position, key) in keys.enumerated() { index[key] = position }
        #expect(index.count == keys.count)
        #expect(keys.enumerated().allSatisfy { index[$1] == $0 })
        #expect(index[RowFingerprint("u_60000")] == nil && index[fingerprint(42, 2_000)] == nil)
        // Equal fingerprints made two ways hash alike.
        var fed = RowFingerprint()
        fed.add(decimal: 1_790_000_000_000)
        #expect(index[fed] == nil)
        index[RowFingerprint("1790000000000")] = -1
        #expect(index[fed] == -1)
        // The keys spread: no bucket of a 2^16 table takes more than a handful.
        let buckets = Dictionary(grouping: keys) { $0._rawHashValue(seed: 12_345) & 0xFFFF }
        #expect((buckets.values.map(\.count).max() ?? 0) < 16)
    }

    /// Rows shaped like `MMPEvents.forEachRow`'s query (`MMPEventColumn`).
    @Test("a row's identity is the fingerprint of AppsFlyer ID (else CUID, IDFV, IDFA, else empty), name, event ms and value")
    func identity() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mmp-identity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try Database(path: folder.appendingPathComponent("t.db").path)
        let rows: [(ms: Int64, name: String, ids: [String?], value: String?, expected: String)] = [
            (1_790_000_000_000, "install", ["cu1", "fv1", "fa1", "af1"], "{}", "af1\u{1F}install\u{1F}1790000000000\u{1F}{}"),
            (-5, "af_purchase", ["cu1", "fv1", "fa1", nil], "", "cu1\u{1F}af_purchase\u{1F}-5\u{1F}"),
            (12, "install", [nil, "fv1", "fa1", nil], nil, "fv1\u{1F}install\u{1F}12\u{1F}"),
            (12, "install", [nil, nil, "fa1", nil], "x", "fa1\u{1F}install\u{1F}12\u{1F}x"),
            (12, "install", [nil, nil, nil, nil], "x", "\u{1F}install\u{1F}12\u{1F}x"),
            (12, "install", ["", "fv1", nil, nil], "x", "\u{1F}install\u{1F}12\u{1F}x"),
        ]
        for row in rows {
            let values: [SQLValue] = [.integer(row.ms), .null, .text(row.name), .null, .null]
                + row.ids.map { SQLValue($0) } + [.null, .null, .null, .null, SQLValue(row.value)]
            var got: RowFingerprint?
            try database.forEach("SELECT " + (1...14).map { "?\($0)" }.joined(separator: ", "), values) { got = MMPEvents.identity($0) }
            #expect(got == RowFingerprint(row.expected), "\(row.expected)")
        }
    }
}
