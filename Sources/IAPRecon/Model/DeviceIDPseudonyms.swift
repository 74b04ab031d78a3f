/// What the store keeps of a device id (IDFA, IDFV, AppsFlyer ID): a keyed hash and the
/// last four characters, never the id itself.
///
/// The pseudonym is a blob: the first 128 bits of HMAC-SHA256 under a random key of this store,
/// then the id's last four characters (none of an id shorter than eight bytes). One id always
/// gives one pseudonym, so registrations and AppsFlyer rows still join on them; without the key
/// nobody can tell which id a pseudonym stands for, nor match it against another store's; and
/// `history` shows the last four characters (`…1A2B`, `shown`) a support agent compares with
/// what the user reads off their phone. The key lives in the store (its own table, `StoredDeviceIDKey`),
/// which only its owner can read.
public struct DeviceIDPseudonyms: Sendable {
    private let hmac: HMACSHA256

    public init(key: [UInt8]) { hmac = HMACSHA256(key: key) }

    /// The bytes of the keyed hash that a pseudonym starts with.
    static let hashBytes = 16

    public func pseudonym(_ id: String) -> [UInt8] {
        withPseudonym(id) { Array($0) }
    }

    /// Calls `body` with the pseudonym of `id`, made in place: ingest packs one for nearly every
    /// MMP row and sign-up, and an array per id (and per part of it) costs more than the hash.
    func withPseudonym<T>(_ id: String, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        var id = id
        return try id.withUTF8 { bytes in
            // The hash, then the tail: four bytes, or as many replacement characters (3 bytes each).
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32 + 4 * 3) { pseudonym in
                hmac.authenticationCode(UnsafeRawBufferPointer(bytes), into: pseudonym)
                var count = Self.hashBytes
                // The last four bytes as text: a character they split is repaired, as it was when
                // pseudonyms were kept as text, so an older store's migrated pseudonyms are the same bytes.
                let tail = Redaction.tail(bytes)
                if tail.allSatisfy({ $0 < 0x80 }) {
                    for byte in tail {
                        pseudonym[count] = byte
                        count += 1
                    }
                } else {
                    for byte in String(decoding: tail, as: UTF8.self).utf8 where count < pseudonym.count {
                        pseudonym[count] = byte
                        count += 1
                    }
                }
                return try body(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: pseudonym[..<count])))
            }
        }
    }

    /// What `history` shows of a stored pseudonym: `…` and the id's last four characters.
    static func shown(_ pseudonym: [UInt8]) -> String {
        "…" + String(decoding: pseudonym.dropFirst(hashBytes), as: UTF8.self)
    }
}
