import Foundation
import Testing
@testable import IAPRecon

/// A parsed batch is packed value by value as the rows lie (`LineBatch.append`), the
/// notification's unread columns and the device ids treated on the way: the bytes must be those
/// of the row as the store keeps it, spelled here column by column, packed value by value.
@Suite("Parsed rows packed as the store keeps them")
struct LineBatchPackingTests {
    /// Values of every kind a parser makes, device-id shaped text among them: ASCII, shorter than
    /// eight bytes, empty, and with a last character split by the four-byte tail.
    static let values: [SQLValue] = [
        .text("A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"), .null, .integer(-7), .text(""), .text("é-ü-ß-ø-12"),
        .blob([0, 1, 2]), .text("abc1234"), .integer(1_764_000_000_000), .text("1764000000000-1234567"),
    ]

    /// Rows of every raw table, each column taking the values in turn; notifications both of a
    /// `CONSUMPTION_REQUEST` (kept whole) and of other types (kept in part).
    static func rows() -> [RawRow] {
        var rows: [RawRow] = []
        for table in RawTable.allCases {
            for shift in 0..<4 {
                var values: [SQLValue] = table.columns.indices.map { Self.values[($0 + shift) % Self.values.count] }
                if table == .notifications, let type = table.columns.firstIndex(of: "notification_type") {
                    values[type] = .text(shift % 2 == 0 ? "CONSUMPTION_REQUEST" : "DID_RENEW")
                }
                rows.append(RawRow(table, item: shift, values))
            }
        }
        return rows
    }

    @Test("every table's rows pack to the bytes of the values the store keeps, with and without pseudonyms",
          arguments: [nil, DeviceIDPseudonyms(key: Array(0..<32))])
    func packedAsKept(pseudonyms: DeviceIDPseudonyms?) {
        let lines = Self.rows().enumerated().map { ParsedLine(line: $0.offset + 1, outcome: .accepted([$0.element])) }
        let batch = LineBatch(lines, pseudonyms: pseudonyms)
        var expected = RawTable.allCases.map { PackedRows(table: $0.rawValue) }
        for line in lines {
            guard case .accepted(let rows) = line.outcome else { continue }
            for row in rows {
                let names = row.table.columns
                // Only a CONSUMPTION_REQUEST keeps what its answer names; device ids are kept as pseudonyms.
                let keptWhole = row.table != .notifications || row.values[names.firstIndex(of: "notification_type") ?? 0] == .text("CONSUMPTION_REQUEST")
                let stored = row.values.indices.map { column -> SQLValue in
                    let name = names[column]
                    if !keptWhole, ["notification_uuid", "notification_type", "subtype", "environment", "transaction_id"].contains(name) { return .null }
                    if let pseudonyms, [.registrations, .mmpEvents].contains(row.table), ["idfv", "idfa", "appsflyer_id"].contains(name),
                       case .text(let id) = row.values[column] {
                        return .blob(pseudonyms.pseudonym(id))
                    }
                    return row.values[column]
                }
                expected[row.table.rawValue].append([.integer(Int64(line.line)), .integer(Int64(row.item))] + stored)
            }
        }
        for table in RawTable.allCases {
            #expect(batch.rows[table.rawValue].count == expected[table.rawValue].count, "\(table.name)")
            #expect(batch.rows[table.rawValue].bytes == expected[table.rawValue].bytes, "\(table.name)")
        }
    }

    @Test("a pseudonym made in place is the hash's first 16 bytes and the id's last four, repaired as text")
    func pseudonymInPlace() {
        let pseudonyms = DeviceIDPseudonyms(key: Array(0..<32))
        let hmac = HMACSHA256(key: Array(0..<32))
        for case .text(let id) in Self.values {
            let tail = Array(String(decoding: Redaction.tail(Array(id.utf8)), as: UTF8.self).utf8)
            let code = Array(id.utf8).withUnsafeBytes { hmac.authenticationCode($0) }
            let expected = Array(code.prefix(DeviceIDPseudonyms.hashBytes)) + tail
            #expect(pseudonyms.withPseudonym(id) { Array($0) } == expected, "\(id)")
        }
    }
}
