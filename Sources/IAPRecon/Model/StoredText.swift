import Foundation

/// A text equal to another only when their bytes are, as SQLite compares text and as the store
/// tells ids apart. A Swift `String` is equal to another by Unicode's rules, which take two
/// spellings of one accented id (composed, decomposed) for one: sets and dictionaries of ids key
/// by this instead.
struct StoredText: Hashable, Sendable, ExpressibleByStringLiteral {
    var text: String

    init(_ text: String) { self.text = text }
    init(stringLiteral text: String) { self.text = text }

    static func == (lhs: StoredText, rhs: StoredText) -> Bool { lhs.text.hasSameUTF8(as: rhs.text) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { utf8 in
            hasher.combine(utf8.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
        }
    }
}

extension String {
    /// Whether the two texts are the same bytes of UTF-8, as the store compares ids (not by
    /// Unicode's rules, as `==` does): compared in place, not a byte at a time through the views.
    func hasSameUTF8(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var (mine, theirs) = (self, other)
        return mine.withUTF8 { mine in
            theirs.withUTF8 { theirs in
                guard let a = mine.baseAddress, let b = theirs.baseAddress else { return true }
                return memcmp(a, b, mine.count) == 0
            }
        }
    }
}
