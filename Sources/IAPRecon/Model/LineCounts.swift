/// Line accounting for one file: read = accepted + rejected + blank + ignored.
public struct LineCounts: Sendable, Equatable, Codable {
    public var read = 0
    public var accepted = 0
    public var rejected = 0
    public var blank = 0
    public var ignored = 0

    public init(read: Int = 0, accepted: Int = 0, rejected: Int = 0, blank: Int = 0, ignored: Int = 0) {
        self.read = read
        self.accepted = accepted
        self.rejected = rejected
        self.blank = blank
        self.ignored = ignored
    }

    public static func + (lhs: LineCounts, rhs: LineCounts) -> LineCounts {
        LineCounts(read: lhs.read + rhs.read, accepted: lhs.accepted + rhs.accepted, rejected: lhs.rejected + rhs.rejected,
                   blank: lhs.blank + rhs.blank, ignored: lhs.ignored + rhs.ignored)
    }
}
