import Testing
@testable import IAPRecon

/// The join groups a transaction's sightings and deliveries, and tells ids apart, by their bytes
/// (`String.hasSameUTF8(as:)`), as the store does: two spellings of one accented id are two ids.
@Suite("Ids compared by their bytes")
struct SameUTF8Tests {
    @Test("equal bytes are the same id; composed and decomposed spellings, another length or a last byte apart are not")
    func bytes() {
        let long = String(repeating: "2000000123456789", count: 3)
        #expect("".hasSameUTF8(as: ""))
        #expect("tx-1".hasSameUTF8(as: "tx-" + "1"))
        #expect(long.hasSameUTF8(as: String(repeating: "2000000123456789", count: 3)))
        #expect(!"caf\u{E9}".hasSameUTF8(as: "cafe\u{301}"))
        #expect(!"cafe\u{301}".hasSameUTF8(as: "caf\u{E9}"))
        #expect(!"tx-1".hasSameUTF8(as: "tx-2"))
        #expect(!"tx-1".hasSameUTF8(as: "tx-10"))
        #expect(!"".hasSameUTF8(as: "0"))
        #expect(!long.hasSameUTF8(as: String(long.dropLast()) + "0"))
        #expect(StoredText("caf\u{E9}") != StoredText("cafe\u{301}"))
        #expect(StoredText(long) == StoredText(String(repeating: "2000000123456789", count: 3)))
    }
}
