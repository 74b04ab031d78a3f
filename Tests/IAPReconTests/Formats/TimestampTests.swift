import Testing
@testable import IAPRecon

/// Every time format of the contract ("Times") to UTC epoch milliseconds, and back to text.
@Suite("Timestamps")
struct TimestampTests {
    /// 2026-11-28T10:15:02Z.
    static let base: Int64 = 1_795_860_902_000
    static let hour: Int64 = 3_600_000
    static let minute: Int64 = 60_000

    static let isoExamples: [(String, Int64)] = [
        ("2026-11-28T10:15:02Z", base),
        ("2026-11-28T10:15:02z", base),
        ("2026-11-28t10:15:02z", base),
        ("2026-11-28t10:15:02.123+09:00", base + 123 - 9 * hour),
        ("2026-11-28T10:15:02+00:00", base),
        ("2026-11-28T10:15:02.123Z", base + 123),
        ("2026-11-28T10:15:02.123+09:00", base + 123 - 9 * hour),
        ("2026-11-28T10:15:02+0900", base - 9 * hour),
        ("2026-11-28T10:15:02-05:30", base + 5 * hour + 30 * minute),
        ("2026-11-28T10:15:02-0530", base + 5 * hour + 30 * minute),
        ("2026-11-28T10:15:02.5Z", base + 500),
        ("2026-11-28T10:15:02.12Z", base + 120),
        ("2026-11-28T10:15:02.123456Z", base + 123),
        ("2026-11-28T10:15:02.999999999Z", base + 999),
        ("2026-11-28T10:15:02.000Z", base),
    ]

    @Test("ISO 8601 with Z, with an offset, and with fractional seconds", arguments: isoExamples)
    func iso8601(text: String, expected: Int64) {
        #expect(Timestamp.parse(text) == expected)
    }

    @Test("yyyy-MM-dd HH:mm:ss without a zone is UTC", arguments: [
        ("2026-11-28 10:15:02", TimestampTests.base),
        ("2026-11-28 10:15:02.123", TimestampTests.base + 123),
        ("2026-11-28T10:15:02", TimestampTests.base),
        ("1970-01-01 00:00:00", 0),
        ("2024-02-29 23:59:59", 1_709_251_199_000),
        ("2000-03-01 00:00:00", 951_868_800_000),
    ])
    func mmpStyle(text: String, expected: Int64) {
        #expect(Timestamp.parse(text) == expected)
    }

    @Test("epoch milliseconds as text, with a sign and a fraction, floor to whole milliseconds", arguments: [
        ("1764324907000", Int64(1_764_324_907_000)),
        ("0", 0),
        ("1697679936049.7297", 1_697_679_936_049),
        ("1697679936049.0", 1_697_679_936_049),
        ("-1", -1),
        ("-1.5", -2),
        ("-1.0", -1),
        ("-0.5", -1),
        ("253402300799999", 253_402_300_799_999),
    ])
    func epochText(text: String, expected: Int64) {
        #expect(Timestamp.parse(text) == expected)
    }

    @Test("JSON numbers and strings both carry epoch milliseconds")
    func jsonValues() {
        #expect(Timestamp.parse(JSONValue.number("1697679936049.7297")) == 1_697_679_936_049)
        #expect(Timestamp.parse(JSONValue.string("1764324907000")) == 1_764_324_907_000)
        #expect(Timestamp.parse(JSONValue.string("2026-11-28T10:15:02Z")) == Self.base)
        #expect(Timestamp.parse(JSONValue.number("1e12")) == nil)
        #expect(Timestamp.parse(JSONValue.bool(true)) == nil)
        #expect(Timestamp.parse(JSONValue.null) == nil)
    }

    @Test("text that is no contract time is rejected", arguments: [
        "yesterday",
        "",
        "2026-02-30T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-11-00T00:00:00Z",
        "2026-11-28T24:00:00Z",
        "2026-11-28T10:60:00Z",
        "2026-11-28T10:15:60Z",
        "2026-11-28T10:15:02X",
        "2026-11-28T10:15:02ZZ",
        "2026-11-28T10:15:02+09",
        "2026-11-28T10:15:02+24:00",
        "2026-11-28T10:15:02+09:60",
        "2026-11-28T10:15:02.Z",
        "2026-11-28X10:15:02Z",
        "2026-11-28T10-15-02Z",
        "2026-11-28",
        "28/11/2026 10:15:02",
        "1e12",
        "+1764324907000",
        "1.2.3",
        ".5",
        "-",
        "253402300800000",
        "-253402300800000",
        "99999999999999999999",
    ])
    func rejects(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test("a leap day parses in a leap year, and 1900 is not one")
    func leapYears() {
        #expect(Timestamp.parse("2000-02-29T00:00:00Z") == 951_782_400_000)
        #expect(Timestamp.parse("1900-02-29T00:00:00Z") == nil)
    }

    @Test("iso8601 writes UTC with milliseconds and parses back to the same instant", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (TimestampTests.base + 123, "2026-11-28T10:15:02.123Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
    ])
    func formatting(ms: Int64, text: String) {
        #expect(Timestamp.iso8601(ms) == text)
        #expect(Timestamp.parse(text) == ms)
    }

    @Test("a year before 0 (year 0 seen west of UTC) or after 9999 (9999 seen east of it) is written sign first, four digits wide")
    func yearsOutsideFourDigits() {
        // 0000-01-01T00:00Z in Los Angeles.
        #expect(Timestamp.day(-62_167_219_200_000, offsetMs: -28_800_000) == "-0001-12-31")
        #expect(Timestamp.iso8601(-62_167_219_200_001) == "-0001-12-31T23:59:59.999Z")
        #expect(Timestamp.day(253_402_300_799_999, offsetMs: 32_400_000) == "10000-01-01")
    }

    @Test("day() is the calendar day after adding an offset; startOfDay inverts it", arguments: [
        (TimestampTests.base, Int64(0), "2026-11-28"),
        (TimestampTests.base, 14 * TimestampTests.hour, "2026-11-29"),
        (TimestampTests.base, -11 * TimestampTests.hour, "2026-11-27"),
        (-1, 0, "1969-12-31"),
        (0, 0, "1970-01-01"),
    ])
    func days(ms: Int64, offset: Int64, day: String) throws {
        #expect(Timestamp.day(ms, offsetMs: offset) == day)
        let start = try #require(Timestamp.startOfDay(day))
        #expect(Timestamp.day(start) == day)
        #expect(Timestamp.iso8601(start) == day + "T00:00:00.000Z")
    }

    @Test("startOfDay accepts only a real yyyy-MM-dd")
    func startOfDay() {
        #expect(Timestamp.startOfDay("2026-11-28") == 1_795_824_000_000)
        #expect(Timestamp.startOfDay("2026-02-29") == nil)
        #expect(Timestamp.startOfDay("2026-11-28T00:00:00Z") == nil)
        #expect(Timestamp.startOfDay("2026-1-28") == nil)
    }

    @Test("civil dates and day numbers round-trip across eras")
    func civilRoundTrip() {
        for days: Int64 in [-719_468, -1, 0, 1, 10_957, 11_016, 20_420, 2_932_896] {
            let (year, month, day) = Timestamp.civilFromDays(days)
            #expect(Timestamp.daysFromCivil(year: year, month: month, day: day) == days)
        }
        #expect(Timestamp.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)
    }

    @Test("a zone-less MMP time is read in the zone handed in")
    func localOffset() throws {
        let tokyo = try #require(Zone("Asia/Tokyo"))
        #expect(Timestamp.parse("2026-11-28 10:15:02", localOffsetMs: tokyo.offsetMs(atLocal:)) == Self.base - 9 * Self.hour)
        // A time with its own offset ignores the zone: near miss.
        #expect(Timestamp.parse("2026-11-28T10:15:02Z", localOffsetMs: tokyo.offsetMs(atLocal:)) == Self.base)
    }
}

/// IANA zones for report days (`--tz`) and MMP local times (`--mmp-tz`).
@Suite("Zones")
struct ZoneTests {
    static let hour: Int64 = 3_600_000

    @Test("Asia/Tokyo days start at 15:00 UTC the day before")
    func tokyoDays() throws {
        let tokyo = try #require(Zone("Asia/Tokyo"))
        // 2026-11-28T15:00:00Z is 2026-11-29 00:00 in Tokyo.
        #expect(tokyo.day(1_795_878_000_000) == "2026-11-29")
        #expect(tokyo.day(1_795_877_999_999) == "2026-11-28")
        #expect(tokyo.offsetMs(atUTC: 1_795_878_000_000) == 9 * Self.hour)
        #expect(Zone.utc.day(1_795_878_000_000) == "2026-11-28")
    }

    /// A wall-clock time in the form `utc(fromLocal:)` takes: the local time read as if UTC.
    private func local(_ text: String) throws -> Int64 { try #require(Timestamp.parse(text + "Z")) }

    @Test("America/New_York local times convert across both DST changes of 2026")
    func newYorkDST() throws {
        let newYork = try #require(Zone("America/New_York"))
        // Before the spring change (EST, -5) and after it (EDT, -4); the change is 2026-03-08 02:00 local.
        #expect(newYork.utc(fromLocal: try local("2026-03-08T01:30:00")) == 1_772_951_400_000)  // 06:30Z
        #expect(newYork.utc(fromLocal: try local("2026-03-08T03:30:00")) == 1_772_955_000_000)  // 07:30Z
        // Autumn: 01:30 happens twice on 2026-11-01; the first (EDT) is taken. 03:00 is EST.
        #expect(newYork.utc(fromLocal: try local("2026-11-01T01:30:00")) == 1_793_511_000_000)  // 05:30Z
        #expect(newYork.utc(fromLocal: try local("2026-11-01T03:00:00")) == 1_793_520_000_000)  // 08:00Z
        #expect(newYork.offsetMs(atUTC: 1_793_511_000_000) == -4 * Self.hour)
        #expect(newYork.offsetMs(atUTC: 1_793_520_000_000) == -5 * Self.hour)
        // The report day flips at local midnight, not UTC midnight.
        #expect(newYork.day(1_793_520_000_000) == "2026-11-01")
        #expect(newYork.day(1_793_505_599_999) == "2026-10-31")  // 2026-11-01T03:59:59.999Z = 23:59:59.999 EDT
    }

    @Test("a local time a zone shows twice is its first pass, east of UTC as west of it", arguments: [
        ("America/New_York", "2026-11-01T01:30:00", "2026-11-01T05:30:00Z"),
        ("America/Los_Angeles", "2026-11-01T01:30:00", "2026-11-01T08:30:00Z"),
        ("Europe/London", "2026-10-25T01:30:00", "2026-10-25T00:30:00Z"),
        ("Australia/Lord_Howe", "2026-04-05T01:45:00", "2026-04-04T14:45:00Z"),  // half an hour shown twice
    ])
    func repeatedLocalTime(zone: String, local wall: String, utc: String) throws {
        let zone = try #require(Zone(zone))
        let expected = try #require(Timestamp.parse(utc))
        #expect(zone.utc(fromLocal: try local(wall)) == expected)
        #expect(zone.offsetMs(atLocal: try local(wall)) == (try local(wall)) - expected)
        // The second pass is the latest instant the time names.
        #expect(zone.latestUTC(fromLocal: try local(wall)) > expected)
    }

    @Test("a local time a zone skips lands as far past the change as it is into the gap", arguments: [
        ("America/Los_Angeles", "2026-03-08T02:30:00", "2026-03-08T10:30:00Z"),    // 03:30 PDT
        ("Europe/London", "2026-03-29T01:30:00", "2026-03-29T01:30:00Z"),          // 02:30 BST
        ("America/Santiago", "2026-09-06T00:30:00", "2026-09-06T04:30:00Z"),       // 01:30 -03, on 6 September
        ("Australia/Lord_Howe", "2026-10-04T02:15:00", "2026-10-03T15:45:00Z"),    // 02:45 +11
    ])
    func skippedLocalTime(zone: String, local wall: String, utc: String) throws {
        let zone = try #require(Zone(zone))
        #expect(zone.utc(fromLocal: try local(wall)) == Timestamp.parse(utc))
        #expect(zone.day(zone.utc(fromLocal: try local(wall))) == String(wall.prefix(10)))
    }

    @Test("every day of 2025 to 2027 starts at its first instant, in zones whose clocks change at midnight too", arguments: [
        "America/Los_Angeles", "Europe/London", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kathmandu", "Asia/Tokyo",
        "America/Santiago", "America/Havana", "Atlantic/Azores", "Asia/Beirut", "Africa/Cairo", "America/St_Johns", "Pacific/Chatham",
    ])
    func dayStarts(zone name: String) throws {
        let zone = try #require(Zone(name))
        let first = try #require(Timestamp.startOfDay("2025-01-01"))
        for number in 0..<(3 * 365) {
            let localMidnight = first + Int64(number) * 86_400_000
            let start = zone.utc(fromLocal: localMidnight)
            #expect(zone.day(start) == Timestamp.day(localMidnight), "\(name) \(Timestamp.day(localMidnight))")
            #expect(zone.day(start - 1) == Timestamp.day(localMidnight - 86_400_000), "\(name) \(Timestamp.day(localMidnight))")
        }
    }

    @Test("IANA names of places, their links and UTC's names are accepted; abbreviations and written offsets, which Foundation reads as zones of its choosing, and the database's fixed-offset names are not")
    func ianaNames() {
        for name in ["UTC", "Etc/UTC", "GMT", "UCT", "Etc/GMT", "US/Pacific", "Asia/Calcutta", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"] {
            #expect(Zone.isPlaceName(name), "\(name)")
        }
        // BST is Dhaka's time to Foundation, IST India's: never surely the zone meant. EST is the database's,
        // but a fixed -05:00 that New York leaves in summer; Etc/GMT+9 is nine hours behind UTC.
        for name in ["BST", "IST", "PST", "JST", "GMT+9", "UTC+9", "Tokyo", "../zoneinfo/UTC", "Asia", "",
                     "EST", "MST", "HST", "CET", "EST5EDT", "Etc/GMT+9", "Etc/GMT-14"] {
            #expect(!Zone.isPlaceName(name), "\(name)")
        }
    }

    @Test("an unknown zone name is nil; UTC has no offset")
    func unknownZone() throws {
        #expect(Zone("Mars/Olympus_Mons") == nil)
        #expect(Zone.utc.identifier == "UTC")
        #expect(Zone.utc.offsetMs(atUTC: 1_795_878_000_000) == 0)
        let utc = try #require(Zone("UTC"))
        #expect(utc.utc(fromLocal: 1_795_878_000_000) == 1_795_878_000_000)
    }
}
