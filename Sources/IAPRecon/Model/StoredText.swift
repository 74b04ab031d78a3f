/// A text equal to another only when their bytes are, as SQLite compares text and as the store
/// tells ids apart. A Swift `String` is equal to another by Unicode's rules, which take two
/// spellings of one accented id (composed, decomposed) for one: sets and dictionaries of ids key
/// by this instead.
struct StoredText: Hashable, Sendable, ExpressibleByStringLiteral {
    var text: String

    init(_ text: String) { self.text = text }
    init(stringLiteral text: String) { self.text = text }

    static func == (lhs: StoredText, rhs: StoredText) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { utf8 in
            hasher.combine(utf8.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(utf8))
        }
    }
}
