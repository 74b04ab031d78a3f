import Foundation
import Testing
@testable import IAPRecon

/// A segment gives back every column of the rows packed into it as the store's row had it, and
/// refuses bytes it did not write.
@Suite("MMP segments")
struct MMPSegmentTests {
    typealias Column = MMPEventColumn

    /// Rows in `MMPEventColumn`'s columns, file id last (a segment's own), as SQLite hands them over.
    static let rows: [[SQLValue]] = [
        // An install: names repeat through the table, times and lines move both ways.
        [.integer(1_790_000_000_000), .integer(1_789_999_000_000), .text("install"), .text("Facebook Ads"), .text("spring"),
         .text("u_1"), .blob([1, 2, 3, 0, 255]), .null, .blob([9, 8, 7, 6, 5, 4, 3, 2]), .null, .null, .null, .integer(0), .null,
         .integer(2), .integer(7)],
        [.integer(1_789_000_000_000), .integer(1_790_500_000_000), .text("install"), .text("Facebook Ads"), .text("spring"),
         .null, .blob([1]), .blob([2]), .blob([0]), .null, .null, .null, .integer(1), .blob([0xAB, 0xCD]), .integer(1), .integer(7)],
        // A purchase with every revenue column, and an empty text.
        [.integer(-5), .null, .text("af_purchase"), .null, .null, .text(""), .null, .null, .blob([4, 4]), .text("-1.99"),
         .text("EUR"), .text("2.10"), .integer(0), .blob([1, 2, 3, 4, 5, 6, 7, 8]), .integer(9_000_000), .integer(7)],
        // A name no row before used, and no ids at all.
        [.integer(0), .null, .text("install"), .text("organic"), .null, .null, .null, .null, .null, .null, .null, .null, .null, .null,
         .integer(9_000_001), .integer(7)],
        // Rows of other events: one named (as an older store kept them), one with no name, no time and no line.
        [.integer(12), .null, .text("af_login"), .null, .null, .text("u_2"), .null, .null, .blob([5]), .null, .null, .null, .integer(1),
         .blob([3]), .integer(9_000_002), .integer(7)],
        [.null, .null, .null, .null, .null, .text("u_3"), .null, .null, .null, .null, .null, .null, .null, .null, .null, .integer(7)],
    ]

    func selecting(_ rows: [[SQLValue]], _ body: (Row) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mmp-segment-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try Database(path: folder.appendingPathComponent("t.db").path)
        for values in rows {
            try database.forEach("SELECT " + (1...values.count).map { "?\($0)" }.joined(separator: ", "), values, body)
        }
    }

    @Test("rows packed and read back: every column's value, text, nullness and integer as the store's row had them")
    func roundTrip() throws {
        var encoder = MMPSegment.Encoder()
        try selecting(Self.rows) { encoder.append($0) }
        try selecting([[.integer(5), .null, .null, .null, .null, .text("u_9"), .null, .null, .blob([7, 7]), .null, .null, .null,
                        .integer(0), .blob([1]), .integer(40), .integer(7)]]) { encoder.appendLink($0) }
        let segment = MMPSegment(fileID: 7, chain: RowFingerprint("chain"), data: encoder.finish())
        var read: [[SQLValue]] = []
        var texts: [[[UInt8]]] = []
        try segment.forEachRow { row in
            read.append(Column.allCases.map { row.value($0.rawValue) })
            texts.append(Column.allCases.map { column in row.withText(column) { Array($0) } })
            #expect(Column.allCases.allSatisfy { row.isNull($0) == (row.value($0.rawValue) == .null) })
        }
        let link: [SQLValue] = [.null, .null, .null, .null, .null, .text("u_9"), .null, .null, .blob([7, 7]), .null, .null, .null,
                                .null, .null, .null, .integer(7)]
        #expect(read == Self.rows + [link])
        // Text as SQLite gives it: an integer's decimal digits, a NULL's nothing.
        #expect(texts[0][Column.eventWallMs.rawValue] == Array("1790000000000".utf8))
        #expect(texts[0][Column.idfa.rawValue] == [] && texts[2][Column.customerUserID.rawValue] == [])
        #expect(texts[2][Column.revenue.rawValue] == Array("-1.99".utf8))
    }

    @Test("a packed row's identity and fingerprints are the stored row's")
    func sameIdentity() throws {
        var identities: [RowFingerprint] = []
        var ids: [RowFingerprint?] = []
        var encoder = MMPSegment.Encoder()
        try selecting(Self.rows) { row in
            identities.append(MMPEvents.identity(row))
            ids.append(row.fingerprint(Column.appsflyerID))
            encoder.append(row)
        }
        var packed: [RowFingerprint] = []
        var packedIDs: [RowFingerprint?] = []
        try MMPSegment(fileID: 7, chain: RowFingerprint(), data: encoder.finish()).forEachRow { row in
            packed.append(MMPEvents.identity(row))
            packedIDs.append(row.fingerprint(Column.appsflyerID))
        }
        #expect(packed == identities && Set(identities).count == Self.rows.count)
        #expect(packedIDs == ids)
    }

    @Test("bytes a segment did not write are refused with the file they belong to, never read past their end")
    func malformed() throws {
        var encoder = MMPSegment.Encoder()
        try selecting(Self.rows) { encoder.append($0) }
        let data = encoder.finish()
        let damaged = [
            Array(data.prefix(data.count - 1)),          // cut short
            data + [0],                                  // something after the last row
            [MMPSegment.format &+ 1] + data.dropFirst(),  // another format
            [],
            [MMPSegment.format, 0x80, 0x80, 0x80],      // a count that never ends
        ]
        for bytes in damaged {
            #expect(throws: MMPSegment.Malformed.self) { try MMPSegment(fileID: 12, chain: RowFingerprint(), data: bytes).forEachRow { _ in } }
        }
        let error = MMPSegment.Malformed(fileID: 12)
        #expect(error.description.contains("segment of file 12"))
    }

    @Test("a chain names the schema, the device-id key and every file up to its own, in order")
    func chains() {
        let seed = MMPSegment.chainSeed(schema: 18, deviceIDKey: "ab")
        let ab = MMPSegment.chain(MMPSegment.chain(seed, then: 1), then: 2)
        #expect(ab == MMPSegment.chain(MMPSegment.chain(MMPSegment.chainSeed(schema: 18, deviceIDKey: "ab"), then: 1), then: 2))
        #expect(ab != MMPSegment.chain(MMPSegment.chain(seed, then: 2), then: 1))
        #expect(ab != MMPSegment.chain(MMPSegment.chain(MMPSegment.chainSeed(schema: 19, deviceIDKey: "ab"), then: 1), then: 2))
        #expect(ab != MMPSegment.chain(MMPSegment.chain(MMPSegment.chainSeed(schema: 18, deviceIDKey: "ac"), then: 1), then: 2))
        #expect(MMPSegment.chain(seed, then: 12) != MMPSegment.chain(MMPSegment.chain(seed, then: 1), then: 2))
        var stored = ab.storedBytes
        #expect(stored.count == 16 && stored.withUnsafeBufferPointer { RowFingerprint(stored: $0) } == ab)
        stored.removeLast()
        #expect(stored.withUnsafeBufferPointer { RowFingerprint(stored: $0) } != ab)
    }
}
