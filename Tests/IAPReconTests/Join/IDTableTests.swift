import Testing
@testable import IAPRecon

/// The join numbers a batch's ids once and compares the numbers: that is only right if equal
/// numbers mean equal texts, byte for byte, as the store's keys compare.
@Suite("Interned ids of a join batch")
struct IDTableTests {
    @Test("an id read twice is one id, and its text comes back exactly as read")
    func sameTextSameID() {
        var table = IDTable()
        let first = table.intern("2000000812345678")
        let other = table.intern("u_1001")
        let again = table.intern("2000000812345678")
        #expect(first == again)
        #expect(first != other)
        #expect(table.count == 2)
        #expect(table.text(first) == "2000000812345678")
        #expect(table.text(other) == "u_1001")
    }

    @Test("ids that differ by one byte, by a trailing space, by case or only in Unicode normalization stay apart")
    func nearMissesStayApart() {
        var table = IDTable()
        // "café" precomposed and decomposed: equal as Swift Strings, two keys in the store.
        let texts = ["t1", "t10", "t1 ", "T1", "", "caf\u{E9}", "cafe\u{301}", "order-7d3f8e2a-5b1c", "order-7d3f8e2a-5b1d"]
        let ids = texts.map { table.intern($0) }
        #expect(Set(ids).count == texts.count)
        #expect(ids.map { Array(table.text($0).utf8) } == texts.map { Array($0.utf8) })
        #expect(table.id(of: "t1") == ids[0])
        #expect(table.id(of: "") == ids[4])
    }

    @Test("a hundred thousand ids keep their numbers and texts while the table grows")
    func growth() {
        var table = IDTable()
        let texts = (0..<100_000).map { "20000008\(12_345_678 + $0 * 7)" }
        let ids = texts.map { table.intern($0) }
        #expect(ids.map(\.number) == (0..<Int32(100_000)).map { $0 })
        #expect(texts.map { table.intern($0) } == ids)
        #expect(ids.map { table.text($0) } == texts)
        #expect(table.count == 100_000)
    }

    @Test("ids sort as their texts sort as Strings: ASCII byte by byte, other text by canonical equivalence")
    func precedesAsStrings() {
        var table = IDTable()
        // ASCII: shorter prefixes, digits, case, a trailing space, a 16-byte id beside a longer one.
        // Then text whose bytes sort otherwise than the Strings: "é" precomposed and decomposed are
        // equal Strings with different bytes, as are Å and the Ångström sign; an ASCII text beside one
        // that is not.
        let texts = ["", "t", "t1", "t10", "t1 ", "T1", "2000000812345678", "20000008123456789", "2000000812345679",
                     "caf\u{E9}", "cafe\u{301}", "cafe", "caff", "\u{C5}", "\u{212B}", "A\u{30A}", "z", "\u{E9}t\u{E9}"]
        let ids = texts.map { table.intern($0) }
        for a in ids {
            for b in ids {
                #expect(table.precedes(a, b) == (table.text(a) < table.text(b)), "\(table.text(a)) before \(table.text(b))")
            }
        }
        // The near miss: the ids stay apart, though neither sorts before the other.
        let (composed, decomposed) = (ids[9], ids[10])
        #expect(composed != decomposed)
        #expect(!table.precedes(composed, decomposed) && !table.precedes(decomposed, composed))
    }

    @Test("looking an id up never numbers it")
    func lookupOnly() {
        var table = IDTable()
        _ = table.intern("o1")
        #expect(table.id(of: "o2") == nil)
        #expect(table.count == 1)
    }
}
