/// Epoch milliseconds, UTC: the one time type of the generator.
typealias Millis = Int64

enum Clock {
    static let second: Millis = 1000
    static let minute: Millis = 60_000
    static let hour: Millis = 3_600_000
    static let day: Millis = 86_400_000

    /// Days since 1970-01-01 of a civil date (proleptic Gregorian).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number.
    static func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    /// Epoch milliseconds of a `yyyy-MM-dd` day at 00:00 UTC, or nil.
    static func parseDay(_ text: String) -> Millis? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let days = Self.days(year: year, month: month, day: day)
        guard civil(days: days) == (year, month, day) else { return nil }
        return days * Clock.day
    }

    static func floorDiv(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// How a timestamp is spelled; the contract accepts all of these in the server and receipts logs.
enum TimeStyle: CaseIterable {
    case isoMillisZ        // 2026-11-28T10:15:02.123Z
    case isoSecondsZ       // 2026-11-28T10:15:02Z
    case isoMillisTokyo    // 2026-11-28T19:15:02.123+09:00
    case isoSecondsTokyo   // 2026-11-28T19:15:02+09:00
    case spaced            // 2026-11-28 10:15:02 (UTC, the MMP export style)
    case epochNumber       // 1764324902123
    case epochString       // "1764324902123"

    var keepsMilliseconds: Bool {
        switch self {
        case .isoMillisZ, .isoMillisTokyo, .epochNumber, .epochString: true
        case .isoSecondsZ, .isoSecondsTokyo, .spaced: false
        }
    }

    /// The instant a reader gets back from this spelling of `time`.
    func effective(_ time: Millis) -> Millis {
        keepsMilliseconds ? time : Clock.floorDiv(time, Clock.second) * Clock.second
    }
}

extension LineBuffer {
    /// `yyyy-MM-dd` of the UTC day holding `time`, shifted by `offset`.
    mutating func date(_ time: Millis, offset: Millis = 0) {
        let (year, month, day) = Clock.civil(days: Clock.floorDiv(time + offset, Clock.day))
        padded(year, width: 4)
        byte(UInt8(ascii: "-"))
        padded(month, width: 2)
        byte(UInt8(ascii: "-"))
        padded(day, width: 2)
    }

    /// `HH:mm:ss` of `time` shifted by `offset`.
    mutating func clockTime(_ time: Millis, offset: Millis = 0) {
        let msOfDay = Int(time + offset - Clock.floorDiv(time + offset, Clock.day) * Clock.day)
        let seconds = msOfDay / 1000
        padded(seconds / 3600, width: 2)
        byte(UInt8(ascii: ":"))
        padded(seconds / 60 % 60, width: 2)
        byte(UInt8(ascii: ":"))
        padded(seconds % 60, width: 2)
    }

    /// `.SSS` of `time`.
    mutating func fraction(_ time: Millis) {
        byte(UInt8(ascii: "."))
        padded(Int(time - Clock.floorDiv(time, Clock.second) * Clock.second), width: 3)
    }

    /// `yyyy-MM-dd HH:mm:ss` in UTC, unquoted (MMP CSV style).
    mutating func spacedTime(_ time: Millis) {
        date(time)
        byte(UInt8(ascii: " "))
        clockTime(time)
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` or with milliseconds, unquoted.
    mutating func isoTime(_ time: Millis, millis: Bool) {
        date(time)
        byte(UInt8(ascii: "T"))
        clockTime(time)
        if millis { fraction(time) }
        byte(UInt8(ascii: "Z"))
    }

    /// A JSON value for `time` in `style` (quoted unless an epoch number).
    mutating func jsonTime(_ time: Millis, _ style: TimeStyle) {
        let tokyo: Millis = 9 * Clock.hour
        switch style {
        case .isoMillisZ:
            byte(UInt8(ascii: "\"")); isoTime(time, millis: true); byte(UInt8(ascii: "\""))
        case .isoSecondsZ:
            byte(UInt8(ascii: "\"")); isoTime(time, millis: false); byte(UInt8(ascii: "\""))
        case .isoMillisTokyo, .isoSecondsTokyo:
            byte(UInt8(ascii: "\""))
            date(time, offset: tokyo)
            byte(UInt8(ascii: "T"))
            clockTime(time, offset: tokyo)
            if style == .isoMillisTokyo { fraction(time) }
            raw("+09:00\"")
        case .spaced:
            byte(UInt8(ascii: "\"")); spacedTime(time); byte(UInt8(ascii: "\""))
        case .epochNumber:
            int(time)
        case .epochString:
            byte(UInt8(ascii: "\"")); int(time); byte(UInt8(ascii: "\""))
        }
    }

    /// Apple's legacy millisecond string, `"1764324902123"`.
    mutating func msString(_ time: Millis) {
        byte(UInt8(ascii: "\""))
        int(time)
        byte(UInt8(ascii: "\""))
    }
}
