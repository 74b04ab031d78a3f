/// The input line a fact was read from: a stored file and a line number in it.
///
/// Ordered as the pipeline reads its input, by file path and then by line number, so line 6 of a
/// file comes before its line 50 (a `path:line` string would sort them the other way). The file
/// is held by its place among the stored files in path order, which a `SourceFiles` of the same
/// store hands out and turns back into `path:line` where a user reads it: two `SourceLine`s compare
/// only when one `SourceFiles` made them.
public struct SourceLine: Sendable, Hashable, Comparable {
    /// The file's place among the stored files, sorted by path.
    public var file: Int32
    /// The line number in the file, from 1.
    public var line: Int64

    public init(file: Int32, line: Int64) {
        self.file = file
        self.line = line
    }

    public static func < (lhs: SourceLine, rhs: SourceLine) -> Bool {
        (lhs.file, lhs.line) < (rhs.file, rhs.line)
    }
}

/// A line of a stored file as the store keeps it: the file's id in the ledger and the line number.
///
/// What the store hands out with each fact; a `SourceFiles` of the same store turns it into a
/// `SourceLine`, which orders by path. Two `StoredLine`s are equal when they are the same line.
struct StoredLine: Equatable {
    var file: Int64
    var line: Int64
}
