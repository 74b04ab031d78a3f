import Testing
@testable import IAPRecon

/// The keyed pseudonyms of device ids and the signature cache rest on these: FIPS 180-4 and RFC 4231 test vectors.
@Suite("SHA-256 and HMAC-SHA256")
struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() }

    @Test("SHA-256 gives the standard digests, across the one- and two-block padding boundary", arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func digest(message: String, expected: String) {
        #expect(Self.hex(SHA256.hash(Array(message.utf8))) == expected)
    }

    @Test("HMAC-SHA256 gives RFC 4231's results for a short key and for a key longer than a block")
    func hmac() {
        let short = HMACSHA256(key: [UInt8](repeating: 0x0B, count: 20)).authenticationCode(Array("Hi There".utf8))
        #expect(Self.hex(short) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let long = HMACSHA256(key: [UInt8](repeating: 0xAA, count: 131))
            .authenticationCode(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Self.hex(long) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test("a device id's pseudonym is the first 128 bits of its HMAC under the store's key, as every earlier build stored it")
    func pseudonymUnchanged() {
        // Stores written by earlier builds hold pseudonyms made this way (as hex and `…` before
        // migration 11): a different hash would split a user's registrations from their AppsFlyer rows.
        let pseudonyms = DeviceIDPseudonyms(key: Array(0..<32))
        func spelled(_ id: String) -> String {
            let pseudonym = pseudonyms.pseudonym(id)
            return Self.hex(Array(pseudonym.prefix(16))) + DeviceIDPseudonyms.shown(pseudonym)
        }
        #expect(spelled("A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF") == "57732a431915c6b73b54faba39f72782…EEFF")
        #expect(pseudonyms.pseudonym("A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF").count == 20)
        #expect(pseudonyms.pseudonym("A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFE") != pseudonyms.pseudonym("A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF"))
        // Fewer than 8 bytes keep no tail; a tail that splits a character keeps its repair, as always.
        #expect(spelled("abc1234") == "2443102f4643f6b44e60e06259ac6c79…")
        #expect(pseudonyms.pseudonym("abc1234").count == 16)
        #expect(spelled("abcd1234") == "58343675aff69d96efa0b10fd82ac63e…1234")
        #expect(spelled("é-ü-ß-ø-12") == "1f979c12a85c473d970bb118db1d8aec…\u{FFFD}-12")
    }
}
