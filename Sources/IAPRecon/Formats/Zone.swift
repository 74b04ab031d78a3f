import Foundation

/// An IANA time zone, for the days of reports (`--tz`) and the MMP's local times (`--mmp-tz`).
public struct Zone: Sendable, Equatable {
    public let identifier: String
    private let zone: TimeZone

    /// Nil when `identifier` is not a known IANA zone.
    public init?(_ identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
    }

    public static let utc = Zone(utcIdentifier: ())

    private init(utcIdentifier: Void) {
        identifier = "UTC"
        zone = TimeZone(secondsFromGMT: 0) ?? TimeZone.current
    }

    /// The zone's offset from UTC at the instant `utcMs`.
    public func offsetMs(atUTC utcMs: Int64) -> Int64 {
        if identifier == "UTC" { return 0 }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(utcMs / 1000)))) * 1000
    }

    /// The offset to subtract from a local wall-clock time read as if UTC.
    public func offsetMs(atLocal localMs: Int64) -> Int64 {
        let guess = offsetMs(atUTC: localMs)
        return offsetMs(atUTC: localMs - guess)
    }

    /// The `yyyy-MM-dd` day in this zone of an instant.
    public func day(_ utcMs: Int64) -> String {
        Timestamp.day(utcMs, offsetMs: offsetMs(atUTC: utcMs))
    }

    /// A local wall-clock time (read as if UTC) as a UTC instant.
    public func utc(fromLocal localMs: Int64) -> Int64 {
        localMs - offsetMs(atLocal: localMs)
    }

    /// The latest UTC instant a local wall-clock time (read as if UTC) can name: in the hour a zone
    /// repeats when its clocks go back, the second pass, which `utc(fromLocal:)` does not pick.
    public func latestUTC(fromLocal localMs: Int64) -> Int64 {
        let day: Int64 = 86_400_000
        // The offsets in force a day either side cover both passes; an instant counts when its offset is the one it used.
        let named = [offsetMs(atUTC: localMs - day), offsetMs(atUTC: localMs + day)].map { localMs - $0 }
            .filter { localMs - $0 == offsetMs(atUTC: $0) }
        return named.max() ?? utc(fromLocal: localMs)
    }
}

/// `zone.day(ms)` for many instants: one string made per day, not one per call.
struct DayNames {
    let zone: Zone
    private var names: [Int64: String] = [:]

    init(_ zone: Zone) { self.zone = zone }

    mutating func callAsFunction(_ utcMs: Int64) -> String {
        let (number, offset) = numberAndOffset(utcMs)
        if let name = names[number] { return name }
        let name = Timestamp.day(utcMs, offsetMs: offset)
        names[number] = name
        return name
    }

    /// The day of `utcMs` in the zone as days since 1970-01-01 there: the same number for the same name.
    func number(_ utcMs: Int64) -> Int64 { numberAndOffset(utcMs).number }

    private func numberAndOffset(_ utcMs: Int64) -> (number: Int64, offset: Int64) {
        let offset = zone.offsetMs(atUTC: utcMs)
        let local = utcMs + offset
        return (local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000, offset)
    }
}
