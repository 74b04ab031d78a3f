/// The key a store's device ids are pseudonymised with (`DeviceIDPseudonyms`), kept in its own table.
enum StoredDeviceIDKey {
    /// The store's key, made on first use.
    ///
    /// A store written before pseudonyms existed holds full ids: they are replaced here, in the
    /// same transaction that makes the key, and the next normalize rebuilds everything from them.
    static func pseudonyms(_ database: Database) throws -> DeviceIDPseudonyms {
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
            try replaceFullIDs(in: database, with: pseudonyms)
            return pseudonyms
        }
    }

    /// Replaces the full ids an older store keeps with pseudonyms, and has everything rebuilt from them.
    private static func replaceFullIDs(in database: Database, with pseudonyms: DeviceIDPseudonyms) throws {
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
                    return .blob(pseudonyms.pseudonym(text))
                }
                try update.insert(row.key + ids)
            }
            replaced += rows.count
        }
        if replaced > 0 { try ChangedKeys.requestFullRebuild(database, for: .deviceIDKey) }
    }

    /// The key as `device_id_key` keeps it, in hex.
    static func bytes(ofHex hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }
}
