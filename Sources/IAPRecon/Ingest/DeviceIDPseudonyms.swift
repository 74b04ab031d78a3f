/// What the store keeps of a device id (IDFA, IDFV, AppsFlyer ID): a keyed hash and the
/// last four characters, never the id itself.
///
/// The pseudonym is a blob: the first 128 bits of HMAC-SHA256 under a random key of this store,
/// then the id's last four characters (none of an id shorter than eight bytes). One id always
/// gives one pseudonym, so registrations and AppsFlyer rows still join on them; without the key
/// nobody can tell which id a pseudonym stands for, nor match it against another store's; and
/// `history` shows the last four characters (`…1A2B`, `shown`) a support agent compares with
/// what the user reads off their phone. The key lives in the store (its own table), which only
/// its owner can read.
public struct DeviceIDPseudonyms: Sendable {
    private let hmac: HMACSHA256

    public init(key: [UInt8]) { hmac = HMACSHA256(key: key) }

    /// The bytes of the keyed hash that a pseudonym starts with.
    static let hashBytes = 16

    public func pseudonym(_ id: String) -> [UInt8] {
        var id = id
        return id.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { code in
                hmac.authenticationCode(UnsafeRawBufferPointer(bytes), into: code)
                // The last four bytes as text: a character they split is repaired, as it was when
                // pseudonyms were kept as text, so an older store's migrated pseudonyms are the same bytes.
                let tail = Array(String(decoding: Redaction.tail(bytes), as: UTF8.self).utf8)
                return Array(code.prefix(Self.hashBytes)) + tail
            }
        }
    }

    /// What `history` shows of a stored pseudonym: `…` and the id's last four characters.
    static func shown(_ pseudonym: [UInt8]) -> String {
        "…" + String(decoding: pseudonym.dropFirst(hashBytes), as: UTF8.self)
    }

    /// `values` of a row of `table` with its device ids replaced by their pseudonyms.
    func pseudonymising(_ values: [SQLValue], of table: RawTable) -> [SQLValue] {
        guard !table.deviceIDColumns.isEmpty else { return values }
        var values = values
        for column in table.deviceIDColumns {
            if case .text(let id) = values[column] { values[column] = .blob(pseudonym(id)) }
        }
        return values
    }

    /// The store's key, made on first use.
    ///
    /// A store written before pseudonyms existed holds full ids: they are replaced here, in the
    /// same transaction that makes the key, and the next normalize rebuilds everything from them.
    public static func load(_ database: Database) throws -> DeviceIDPseudonyms {
        try database.transaction {
            try database.execute(Tables.deviceIDKey)
            if case .text(let hex)? = try database.scalar("SELECT key FROM device_id_key"), let key = bytes(ofHex: hex) {
                return DeviceIDPseudonyms(key: key)
            }
            var generator = SystemRandomNumberGenerator()
            let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try database.run("DELETE FROM device_id_key")
            try database.run("INSERT INTO device_id_key (key) VALUES (?)", [.text(key.map { byte in
                (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }.joined())])
            let pseudonyms = DeviceIDPseudonyms(key: key)
            try pseudonyms.replaceFullIDs(in: database)
            return pseudonyms
        }
    }

    /// Replaces the full ids an older store keeps with pseudonyms, and has everything rebuilt from them.
    private func replaceFullIDs(in database: Database) throws {
        var replaced = 0
        for table in RawTable.allCases where !table.deviceIDColumns.isEmpty {
            let names = table.deviceIDColumns.map { table.columns[$0] }
            var rows: [(key: [SQLValue], ids: [SQLValue])] = []
            try database.forEach("SELECT file_id, line, item, \(names.joined(separator: ", ")) FROM \(table.name)") { row in
                let ids = names.indices.map { SQLValue(row.optionalString(3 + $0)) }
                rows.append(([.integer(row.int(0)), .integer(row.int(1)), .integer(row.int(2))], ids))
            }
            let update = try database.cached("""
                UPDATE \(table.name) SET \(names.enumerated().map { "\($1) = ?\($0 + 4)" }.joined(separator: ", "))
                WHERE file_id = ?1 AND line = ?2 AND item = ?3
                """)
            for row in rows {
                let ids = row.ids.map { id in
                    guard case .text(let text) = id else { return id }
                    return .blob(pseudonym(text))
                }
                try update.insert(row.key + ids)
            }
            replaced += rows.count
        }
        if replaced > 0 { try ChangedKeys.requestFullRebuild(database) }
    }

    private static func bytes(ofHex hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }
}
