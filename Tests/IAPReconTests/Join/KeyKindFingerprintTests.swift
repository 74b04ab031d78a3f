import Testing
@testable import IAPRecon

/// A key's fingerprint by its kind (`KeyKind.fingerprint(of:)`) starts from the kind's name
/// fingerprinted once: it must be the fingerprint of the name, the separator and the key, which
/// the closure's known keys and the link rows are compared by.
@Suite("Fingerprints of keys by kind")
struct KeyKindFingerprintTests {
    static let kinds: [KeyKind] = [.transaction, .order, .user, .chain, .all, .mmpFile, .registration, .salesDay]

    @Test("each kind's fingerprint of a key is that of its name, the separator and the key")
    func sameAsSpelledOut() {
        for kind in Self.kinds {
            for key in ["", "1", "2000000123456789", "5f1c2e9a-0000-4000-8000-00000000abcd", String(repeating: "x", count: 70)] {
                var utf8 = key
                utf8.withUTF8 { bytes in
                    #expect(kind.fingerprint(of: bytes) == RowFingerprint(kind.rawValue, bytes), "\(kind) \(key)")
                }
            }
        }
    }

    @Test("kinds are told apart in sets and by their keys' fingerprints")
    func kindsApart() {
        #expect(Set(Self.kinds).count == Self.kinds.count)
        var key = "42"
        let fingerprints = key.withUTF8 { bytes in Set(Self.kinds.map { $0.fingerprint(of: bytes) }) }
        #expect(fingerprints.count == Self.kinds.count)
        var counts: [KeyKind: Int] = [:]
        for kind in Self.kinds + [.transaction, .order] { counts[kind, default: 0] += 1 }
        #expect(counts[.transaction] == 2 && counts[.order] == 2 && counts[.salesDay] == 1)
    }
}
