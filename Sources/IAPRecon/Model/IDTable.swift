import Foundation

/// One id of a join batch (a transaction, order, user, original transaction, product or
/// subscription group id), by its number in that batch's `IDTable`.
///
/// Two ids of one table are equal exactly when their texts are equal byte for byte, as the
/// store's keys are. The number says nothing about order: it is only the order in which the batch
/// happened to read the ids, so whatever the join sorts by id it sorts by `IDTable.text`.
public struct InternedID: Hashable, Sendable {
    /// The id's place in its table, from 0.
    public let number: Int32

    init(number: Int32) { self.number = number }

    /// A number is its own hash: the dictionaries keyed by ids take one multiply and shift of it,
    /// with the process's seed, instead of running SipHash over four bytes.
    public func _rawHashValue(seed: Int) -> Int {
        let mixed = (UInt64(UInt32(bitPattern: number)) ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(number) }
}

/// The ids of one batch of the join, each distinct text numbered once.
///
/// The join compares and looks up ids millions of times and writes each once: as `String`s every
/// lookup hashed and compared the whole text. Here the bytes are hashed once, when a row is read
/// (straight from SQLite's buffer, no `String` made for an id seen before), and every later
/// lookup is of a small integer. Each distinct text is kept once as a `String`, for writing
/// results and for the orderings that compare ids as text.
public struct IDTable: Sendable {
    /// By number: each id's text.
    private var texts: [String] = []
    /// By number: each id's bytes end here in `bytes` (and start where the previous one ends).
    private var ends: [Int32] = []
    private var bytes: [UInt8] = []
    /// By number: whether the id's text is ASCII alone, which sorts byte by byte (`precedes`).
    private var isASCII: [Bool] = []
    /// Open addressing, a power of two of slots at most half full: 0 for an empty slot, else the
    /// high half of the id's hash above its number + 1. The slot is chosen by that half of the
    /// hash too, so a probe reads only the bytes of an id whose hash matches, and growing the
    /// table hashes nothing again.
    private var slots: [UInt64] = Array(repeating: 0, count: 64)
    /// One seed per process, so texts chosen to collide in one run do not collide in the next.
    private let seed = IDTable.processSeed

    private static let processSeed = UInt64.random(in: .min ... .max)

    public init() {}

    /// How many distinct ids the table holds.
    public var count: Int { texts.count }

    /// The text of `id`.
    public func text(_ id: InternedID) -> String { texts[Int(id.number)] }

    /// The id of `text`, numbered now if the table has not seen it.
    public mutating func intern(_ text: String) -> InternedID {
        var utf8 = text
        return utf8.withUTF8 { intern($0, text: text) }
    }

    /// The id of the UTF-8 text `utf8`, numbered now if the table has not seen it.
    mutating func intern(_ utf8: UnsafeBufferPointer<UInt8>) -> InternedID {
        intern(utf8, text: nil)
    }

    /// Whether `a`'s text sorts before `b`'s as `String`'s `<` sorts them (`text(a) < text(b)`).
    ///
    /// The join sorts by id text in every batch: compared as `String`s, each comparison retains and
    /// releases both texts. Texts of ASCII alone sort byte by byte as `String` sorts them, so
    /// their bytes here are compared in place; any other text is compared as a `String`, which
    /// orders Unicode by canonical equivalence, not by bytes (`é` precomposed equals `e` + U+0301).
    public func precedes(_ a: InternedID, _ b: InternedID) -> Bool {
        let (a, b) = (Int(a.number), Int(b.number))
        guard isASCII[a], isASCII[b] else { return texts[a] < texts[b] }
        return bytes.withUnsafeBufferPointer { stored in
            let (start, other) = (a == 0 ? 0 : Int(ends[a - 1]), b == 0 ? 0 : Int(ends[b - 1]))
            return BinaryOrder.compare(UnsafeBufferPointer(rebasing: stored[start..<Int(ends[a])]),
                                       UnsafeBufferPointer(rebasing: stored[other..<Int(ends[b])])) < 0
        }
    }

    /// The id of `text` if the table has it, without numbering it.
    public func id(of text: String) -> InternedID? {
        var text = text
        return text.withUTF8 { utf8 in
            let tag = hash(utf8)
            let entry = slots[find(utf8, tag: tag)]
            return entry == 0 ? nil : InternedID(number: Int32(truncatingIfNeeded: entry) - 1)
        }
    }

    private mutating func intern(_ utf8: UnsafeBufferPointer<UInt8>, text: String?) -> InternedID {
        let tag = hash(utf8)
        let slot = find(utf8, tag: tag)
        if slots[slot] != 0 { return InternedID(number: Int32(truncatingIfNeeded: slots[slot]) - 1) }
        let number = Int32(texts.count)
        texts.append(text ?? String(decoding: utf8, as: UTF8.self))
        bytes.append(contentsOf: utf8)
        ends.append(Int32(bytes.count))
        isASCII.append(ASCIIBytes.only(UnsafeRawBufferPointer(utf8)))
        slots[slot] = tag << 32 | UInt64(number + 1)
        if texts.count * 2 > slots.count { grow() }
        return InternedID(number: number)
    }

    /// The slot that holds `utf8`, or the empty slot where it belongs.
    private func find(_ utf8: UnsafeBufferPointer<UInt8>, tag: UInt64) -> Int {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: tag) & mask
        while true {
            let entry = slots[slot]
            if entry == 0 || (entry >> 32 == tag && equals(Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1, utf8)) { return slot }
            slot = (slot + 1) & mask
        }
    }

    private func equals(_ number: Int, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = number == 0 ? 0 : Int(ends[number - 1])
        let end = Int(ends[number])
        guard end - start == utf8.count else { return false }
        return bytes.withUnsafeBufferPointer { stored in
            guard let mine = stored.baseAddress, let theirs = utf8.baseAddress, utf8.count > 0 else { return true }
            return memcmp(mine + start, theirs, utf8.count) == 0
        }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        let mask = slots.count - 1
        for entry in old where entry != 0 {
            var slot = Int(truncatingIfNeeded: entry >> 32) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = entry
        }
    }

    /// The high half of a 64-bit hash (eight bytes at a time, each word mixed in by a multiply;
    /// the length and the seed go in first).
    private func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = seed ^ (UInt64(utf8.count) &* 0x9E37_79B9_7F4A_7C15)
        let raw = UnsafeRawBufferPointer(utf8)
        var offset = 0
        while offset + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        var tail: UInt64 = 0
        while offset < raw.count {
            tail = tail << 8 | UInt64(raw[offset])
            offset += 1
        }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        return (hash ^ (hash >> 29)) >> 32
    }
}
