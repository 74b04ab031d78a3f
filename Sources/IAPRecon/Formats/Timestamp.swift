/// Parses every time format of the contract into UTC epoch milliseconds.
///
/// Accepted (CONTRACT.md, "Times"): ISO 8601 with a zone (`2026-11-28T10:15:02Z`,
/// `2026-11-28T10:15:02.123+09:00`), `yyyy-MM-dd HH:mm:ss` in UTC (the MMP
/// export style; an offset for it can be passed), and epoch milliseconds as a
/// number or a numeric string, with a fraction for StoreKit test payloads
/// (truncated toward negative infinity to whole milliseconds).
public enum Timestamp {
    /// Epoch milliseconds from `text`, or nil when it is none of the formats.
    /// - Parameter localOffsetMs: added meaning for zone-less `yyyy-MM-dd HH:mm:ss`
    ///   text: the offset of its zone from UTC (`--mmp-tz`); 0 for UTC.
    public static func parse(_ text: String, localOffsetMs: (Int64) -> Int64 = { _ in 0 }) -> Int64? {
        var text = text
        return text.withUTF8 { parse(bytes: $0, localOffsetMs: localOffsetMs) }
    }

    /// Epoch milliseconds from a JSON value: a number or a string in any contract format.
    public static func parse(_ value: JSONValue) -> Int64? {
        switch value {
        case .number(let text): return epochMilliseconds(text)
        case .string(let text): return parse(text)
        default: return nil
        }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>, localOffsetMs: (Int64) -> Int64) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        if bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") {
            return parseCalendar(bytes, localOffsetMs: localOffsetMs)
        }
        return epochMilliseconds(bytes: bytes)
    }

    /// 9999-12-31T23:59:59.999Z, the latest time epoch milliseconds are read as.
    public static let latestMs: Int64 = 253_402_300_799_999

    /// Epoch milliseconds from digits with an optional sign and fraction.
    public static func epochMilliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { epochMilliseconds(bytes: $0) }
    }

    static func epochMilliseconds(bytes text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var whole: Int64 = 0
        var negative = false
        var sawDigit = false
        var fractionNonZero = false
        var inFraction = false
        for offset in text.indices {
            let byte = text[offset]
            switch byte {
            case UInt8(ascii: "-") where offset == 0:
                negative = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
                if inFraction {
                    if byte != UInt8(ascii: "0") { fractionNonZero = true }
                } else {
                    let (times10, overflow1) = whole.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    if overflow1 || overflow2 { return nil }
                    whole = sum
                }
            case UInt8(ascii: ".") where !inFraction && sawDigit:
                inFraction = true
            default:
                return nil
            }
        }
        guard sawDigit, text.last != UInt8(ascii: ".") else { return nil }
        // Year 0 (Xcode test payloads use it) to year 9999 in milliseconds: anything outside is not a time.
        guard whole <= latestMs, !negative || whole <= 62_167_219_200_000 else { return nil }
        if negative { return fractionNonZero ? -whole - 1 : -whole }
        return whole
    }

    private static func digits(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for index in start..<(start + count) {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func parseCalendar(_ bytes: UnsafeBufferPointer<UInt8>, localOffsetMs: (Int64) -> Int64) -> Int64? {
        guard let year = digits(bytes, 0, 4), let month = digits(bytes, 5, 2), let day = digits(bytes, 8, 2),
              isISOSeparator(bytes[10]) || bytes[10] == UInt8(ascii: " "),
              let hour = digits(bytes, 11, 2), bytes[13] == UInt8(ascii: ":"),
              let minute = digits(bytes, 14, 2), bytes[16] == UInt8(ascii: ":"),
              let second = digits(bytes, 17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var millis = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 100
            var count = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                millis += Int(bytes[index] - UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
                count += 1
            }
            if count == 0 { return nil }
        }
        let local = (daysFromCivil(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000
            + Int64(millis)
        if index == bytes.count {
            // No zone: the contract's `yyyy-MM-dd HH:mm:ss` is UTC unless the caller knows the source's zone.
            return local - localOffsetMs(local)
        }
        let sign = bytes[index]
        if sign == UInt8(ascii: "Z") || sign == UInt8(ascii: "z") {
            return index + 1 == bytes.count ? local : nil
        }
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"), let offsetHours = digits(bytes, index + 1, 2) else { return nil }
        var next = index + 3
        if next < bytes.count, bytes[next] == UInt8(ascii: ":") { next += 1 }
        guard let offsetMinutes = digits(bytes, next, 2), next + 2 == bytes.count, offsetHours < 24, offsetMinutes < 60 else {
            return nil
        }
        let offset = Int64(offsetHours * 3600 + offsetMinutes * 60) * 1000
        return sign == UInt8(ascii: "+") ? local - offset : local + offset
    }

    /// The `T` between an ISO 8601 time's day and time, which RFC 3339 lets be lowercase, as the `Z`.
    /// Where it stands, the text is ISO 8601's, which names its offset (the MMP's zone-less style has a space).
    public static func isISOSeparator(_ byte: UInt8?) -> Bool {
        byte == UInt8(ascii: "T") || byte == UInt8(ascii: "t")
    }

    static func isLeap(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146_097 + doe - 719_468)
    }

    /// The civil date of a day number since 1970-01-01.
    public static func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// ISO 8601 UTC text with milliseconds, e.g. `2026-11-28T10:15:02.123Z`.
    public static func iso8601(_ ms: Int64) -> String {
        // Reports write one or more per row: the digits go straight into the string's storage.
        let text = String(unsafeUninitializedCapacity: iso8601Bytes) { iso8601(ms, into: $0) ?? 0 }
        if !text.isEmpty { return text }
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let rest = ms - days * 86_400_000
        let (year, month, day) = civilFromDays(days)
        let seconds = Int(rest / 1000)
        let millis = Int(rest % 1000)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(millis, 3))Z"
    }

    /// How many bytes `iso8601(_:into:)` writes.
    static let iso8601Bytes = 24

    /// Writes `iso8601(ms)`'s bytes into `text` (at least `iso8601Bytes` long) and returns how many
    /// it wrote; nil, writing nothing, for a year outside 0...9999 (which `iso8601` spells otherwise).
    /// A report writing a time per row puts it into its record without making a `String`.
    static func iso8601(_ ms: Int64, into text: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let rest = ms - days * 86_400_000
        let (year, month, day) = civilFromDays(days)
        guard (0...9999).contains(year), text.count >= iso8601Bytes else { return nil }
        let seconds = Int(rest / 1000)
        let millis = Int(rest % 1000)
        var at = 0
        func put(_ value: Int, _ width: Int) {
            var value = value
            for place in stride(from: width - 1, through: 0, by: -1) {
                text[at + place] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            at += width
        }
        func put(_ character: Unicode.Scalar) {
            text[at] = UInt8(ascii: character)
            at += 1
        }
        put(year, 4); put("-"); put(month, 2); put("-"); put(day, 2); put("T")
        put(seconds / 3600, 2); put(":"); put(seconds / 60 % 60, 2); put(":"); put(seconds % 60, 2); put(".")
        put(millis, 3); put("Z")
        return at
    }

    /// The `yyyy-MM-dd` day of `ms` after adding `offsetMs` (a zone's offset).
    public static func day(_ ms: Int64, offsetMs: Int64 = 0) -> String {
        let local = ms + offsetMs
        let days = local >= 0 ? local / 86_400_000 : (local - 86_399_999) / 86_400_000
        let (year, month, day) = civilFromDays(days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Epoch milliseconds at 00:00 UTC of a `yyyy-MM-dd` day.
    public static func startOfDay(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { bytes -> Int64? in
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                  let year = digits(bytes, 0, 4), let month = digits(bytes, 5, 2), let day = digits(bytes, 8, 2),
                  (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month)
            else { return nil }
            return daysFromCivil(year: year, month: month, day: day) * 86_400_000
        }
    }

    /// `value` zero-padded to `width` digits, its sign first: year -1 is `-0001`, as ISO 8601's
    /// expanded years write it (year 0 seen west of UTC), never `00-1`.
    private static func pad(_ value: Int, _ width: Int) -> String {
        if value < 0 { return "-" + pad(-value, width) }
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
