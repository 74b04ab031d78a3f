import Foundation

/// An IANA time zone, for the days of reports (`--tz`) and the MMP's local times (`--mmp-tz`).
public struct Zone: Sendable, Equatable {
    /// The name the zone was given by, as outputs state it.
    public let identifier: String
    /// One name for every name of the same zone (`Zone.canonicalIdentifier(of:zone:)`), as a store records it.
    public let canonicalIdentifier: String
    private let zone: TimeZone

    /// Nil when `identifier` is not a known IANA zone.
    public init?(_ identifier: String) {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        self.identifier = identifier
        self.zone = zone
        canonicalIdentifier = Self.canonicalIdentifier(of: identifier, zone: zone)
    }

    /// Whether `identifier` names one place's time in the IANA time zone database, as `--tz` and
    /// `--mmp-tz` must. Foundation also takes abbreviations and offsets (`BST`, `IST`, `GMT+9`), each
    /// read as one zone of its choosing: `BST` is Dhaka's time, not London's summer, and `IST`
    /// India's, not Ireland's or Israel's. The database's own abbreviation-like names are refused too:
    /// `EST` and `MST` are fixed offsets that New York and Denver leave in summer, and `Etc/GMT+9` is
    /// nine hours *behind* UTC. UTC's own names (`UTC`, `UCT`, `GMT`, `Etc/UTC`) pass. A name is the
    /// database's when the system's copy of it has the file; without that copy, every other name
    /// Foundation takes is.
    public static func isPlaceName(_ identifier: String) -> Bool {
        guard TimeZone(identifier: identifier) != nil else { return false }
        if !["UTC", "UCT", "GMT"].contains(identifier), identifier.allSatisfy({ $0.isUppercase || $0.isNumber }) { return false }
        if identifier.hasPrefix("Etc/GMT"), identifier.count > "Etc/GMT".count { return false }
        let files = FileManager.default
        var isFolder: ObjCBool = false
        guard files.fileExists(atPath: zoneinfoFolder, isDirectory: &isFolder), isFolder.boolValue else { return true }
        guard !identifier.hasPrefix("/"), !identifier.split(separator: "/").contains("..") else { return false }
        return files.fileExists(atPath: zoneinfoFolder + "/" + identifier, isDirectory: &isFolder) && !isFolder.boolValue
    }

    public static let utc = Zone(utcIdentifier: ())

    private init(utcIdentifier: Void) {
        identifier = "UTC"
        canonicalIdentifier = "UTC"
        zone = TimeZone(secondsFromGMT: 0) ?? TimeZone.current
    }

    /// Where the system's time zone database links another name of a zone (`Asia/Calcutta`) to it (`Asia/Kolkata`).
    static let zoneinfoFolder = "/usr/share/zoneinfo"

    /// The name a store records for the zone `identifier` names: `UTC` for a zone whose offset is
    /// always 0 (`Etc/UTC`, `GMT`, `Zulu`…); for another name the system's time zone database
    /// links to a zone (`Asia/Calcutta`, `US/Pacific`), that zone's name, when Foundation gives
    /// both the same offsets at every change; else `identifier` itself. A run naming the zone
    /// otherwise than the one before then judges nothing otherwise: the same zone named anew must
    /// not read months of files again. A canonical name (`UTC`, `Asia/Tokyo`) is kept as it is,
    /// so what a store already records for it stays the same.
    static func canonicalIdentifier(of identifier: String, zone: TimeZone) -> String {
        let offsets = offsetChanges(zone)
        if offsets.count == 1, offsets[0].seconds == 0 { return "UTC" }
        let folder = URL(fileURLWithPath: zoneinfoFolder).resolvingSymlinksInPath().path + "/"
        let linked = URL(fileURLWithPath: zoneinfoFolder + "/" + identifier).resolvingSymlinksInPath().path
        guard linked.hasPrefix(folder) else { return identifier }
        let target = String(linked.dropFirst(folder.count))
        guard target != identifier, let targetZone = TimeZone(identifier: target), offsetChanges(targetZone) == offsets else { return identifier }
        return target
    }

    /// The zone's offset from far in the past, and each change of it up to 2200: equal for two zones
    /// exactly when Foundation reads every time of those years alike in both.
    private static func offsetChanges(_ zone: TimeZone) -> [OffsetChange] {
        var date = Date(timeIntervalSince1970: -5_000_000_000)
        let end = Date(timeIntervalSince1970: 7_258_118_400)
        var changes = [OffsetChange(at: date.timeIntervalSince1970, seconds: zone.secondsFromGMT(for: date))]
        while let next = zone.nextDaylightSavingTimeTransition(after: date), next > date, next < end {
            changes.append(OffsetChange(at: next.timeIntervalSince1970, seconds: zone.secondsFromGMT(for: next)))
            date = next
        }
        return changes
    }

    private struct OffsetChange: Equatable {
        var at: Double
        var seconds: Int
    }

    /// The zone's offset from UTC at the instant `utcMs`.
    public func offsetMs(atUTC utcMs: Int64) -> Int64 {
        if identifier == "UTC" { return 0 }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(utcMs / 1000)))) * 1000
    }

    /// The offset to subtract from a local wall-clock time read as if UTC: the one `utc(fromLocal:)` takes.
    public func offsetMs(atLocal localMs: Int64) -> Int64 {
        localMs - utc(fromLocal: localMs)
    }

    /// The `yyyy-MM-dd` day in this zone of an instant.
    public func day(_ utcMs: Int64) -> String {
        Timestamp.day(utcMs, offsetMs: offsetMs(atUTC: utcMs))
    }

    /// A local wall-clock time (read as if UTC) as a UTC instant, by one rule in every zone, east or
    /// west of UTC: a time the zone shows twice (the hour its clocks go back) is its first pass; a time
    /// it never shows (the hour its clocks skip) is read with the offset in force before the change,
    /// so it lands as far past the change as it is into the gap. The start of a day whose midnight is
    /// skipped (`America/Santiago`, `America/Havana`, `Atlantic/Azores` in spring) is then that day's
    /// first instant, never the previous day's last hour.
    public func utc(fromLocal localMs: Int64) -> Int64 {
        if identifier == "UTC" { return localMs }
        let day: Int64 = 86_400_000
        // The offsets in force a day either side: no zone changes its clocks twice within two days.
        let before = offsetMs(atUTC: localMs - day), after = offsetMs(atUTC: localMs + day)
        if before == after { return localMs - before }
        // An instant counts when its offset is the one it used.
        let named = [before, after].map { localMs - $0 }.filter { localMs - $0 == offsetMs(atUTC: $0) }
        return named.min() ?? localMs - before
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
