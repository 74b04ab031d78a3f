import Foundation
import IAPRecon

/// What an option's value must look like; checked when the value is read
/// from the command line or a config file, so a bad value fails before any
/// work starts.
public enum ValueKind: Sendable, Equatable {
    /// Any non-empty text: a time, an ID.
    case text
    /// A file or folder, taken as written. One starting with `~` is refused: only a shell expands it, and cron's
    /// config files and quoted arguments pass it as is, which made a literal `~` folder in the current one (a night's
    /// reports where no one looks) or failed a run at its very end (`--out`, whose staging Foundation's URL put in
    /// `$HOME`).
    case path
    /// A whole number of at least `minimum`.
    case integer(minimum: Int)
    /// `24h`, `90m`, `30s`, `2d`, `1h30m`, `500ms`, or plain seconds.
    case duration
    /// One of a fixed set of words.
    case choice([String])
    /// An IANA time zone such as `UTC` or `Asia/Tokyo`.
    case timeZone
    /// An instant (`ValueKind.instantMs`): ISO 8601 with its offset, epoch milliseconds, or
    /// `yyyy-MM-dd HH:mm:ss` in UTC.
    case time
    /// An active ISO 4217 code with a minor unit (`CurrencyMinorUnits`), in any case; stored upper-cased.
    case currency
    /// Comma-separated counts with an optional `k` or `m` suffix: `100k,1m,4m`.
    case sizeList
}

/// Why a value was refused: the end of the sentence that starts
/// "The value 'x' is invalid for '--name <value>'".
struct InvalidValue: Error, Equatable {
    var explanation: String

    static func expected(_ what: String) -> InvalidValue {
        InvalidValue(explanation: ": expected \(what)")
    }

    static let wholeNumber = expected("a whole number")
    static let duration = expected("a duration such as 24h, 90m, 30s, 2d or 1h30m")
    static let sizeList = expected("comma-separated sizes such as 100k,1m,4m")
}

extension ValueKind {
    /// The value to store for `text`, or why it is refused.
    func check(_ text: String) -> Result<String, InvalidValue> {
        switch self {
        case .text:
            return .success(text)
        case .path:
            guard !text.hasPrefix("~") else {
                return .failure(InvalidValue(explanation: ": '~' is not expanded here (cron and config files pass it as written); give the full path"))
            }
            return .success(text)
        case .integer(let minimum):
            guard let number = Int(text), number >= minimum else {
                // Digits past what an Int holds are a whole number too: say where the range ends.
                let tooLarge = Int(text) == nil && !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                return .failure(.expected(tooLarge ? "a whole number from \(minimum) to \(Int.max)" : "a whole number of at least \(minimum)"))
            }
            return .success(text)
        case .duration:
            guard DurationText.milliseconds(text) != nil else {
                if DurationText.isUnitless(text) {
                    return .failure(.expected("a duration with its unit, such as 24h, 90m, 30s, 2d or 1h30m: '\(text)' names none"))
                }
                return .failure(.duration)
            }
            return .success(text)
        case .choice(let allowed):
            guard allowed.contains(text) else {
                return .failure(
                    InvalidValue(explanation: ". Please provide one of \(UsageMessage.quotedAlternatives(allowed)).")
                )
            }
            return .success(text)
        case .timeZone:
            // An abbreviation names a zone Foundation picks (`BST` is Dhaka's), never surely the one
            // meant; a fixed offset (`EST`) is no place's time all year (`Zone.isPlaceName`).
            guard Zone.isPlaceName(text) else {
                return .failure(.expected("the IANA time zone of a place, such as UTC, America/New_York or Asia/Tokyo, not an abbreviation or a fixed offset"))
            }
            return .success(text)
        case .time:
            return Self.clockMs(text).map { _ in text }
        case .currency:
            // Only a code with a minor unit can be reported in: amounts are rounded to it (CONTRACT.md §3).
            guard text.utf8.count == 3, text.utf8.allSatisfy(isASCIILetter), CurrencyMinorUnits.places(text.uppercased()) != nil else {
                return .failure(.expected("an ISO 4217 currency code such as USD"))
            }
            return .success(text.uppercased())
        case .sizeList:
            guard SizeListText.counts(text) != nil else {
                return .failure(.sizeList)
            }
            return .success(text)
        }
    }
}

extension ValueKind {
    /// The instant `text` names in the forms `.time` takes, or why it is refused. An ISO 8601 time
    /// without an offset (`2026-11-01T01:30:00`) names no zone: read as UTC, it would move by the
    /// offset of the zone it was meant in (`--tz`, a finance team's own) unseen, so it is refused, as
    /// in the inputs. The zone-less `yyyy-MM-dd HH:mm:ss` stays UTC, as the options' help says.
    static func instantMs(_ text: String) -> Result<Int64, InvalidValue> {
        var noOffset = false
        guard let ms = Timestamp.parse(text, localOffsetMs: { _ in
            noOffset = true
            return 0
        }) else {
            return .failure(.expected("ISO 8601 with its offset (2026-11-29T00:00:00Z or 2026-11-28T16:00:00-08:00), epoch milliseconds, "
                + "or yyyy-MM-dd HH:mm:ss in UTC"))
        }
        if noOffset, Timestamp.isISOSeparator(text.utf8.dropFirst(10).first) {
            return .failure(.expected("its offset, such as Z, +09:00 or -08:00: an ISO 8601 time without one names no zone, and is not read in --tz"))
        }
        return .success(ms)
    }

    /// `instantMs`, for the instants a run judges by (`--as-of`, `--now`): one before the App Store
    /// opened is refused, as the inputs reject such an event time. It is most often epoch seconds
    /// (`date +%s`) where milliseconds are due: read so, 1970-01-21 would be the as-of, at which no
    /// purchase is due and none is lost, or the clock, by which every line is in the future.
    static func clockMs(_ text: String) -> Result<Int64, InvalidValue> {
        instantMs(text).flatMap { ms in
            guard ms < LineRules.appStoreOpenedMs else { return .success(ms) }
            var reason = "a time after the App Store opened (\(Timestamp.iso8601(LineRules.appStoreOpenedMs))), not \(Timestamp.iso8601(ms))"
            let asSeconds = ms.multipliedReportingOverflow(by: 1000)
            if !asSeconds.overflow, asSeconds.partialValue >= LineRules.appStoreOpenedMs, asSeconds.partialValue <= Timestamp.latestMs {
                reason += "; as epoch seconds it is \(Timestamp.iso8601(asSeconds.partialValue)): give milliseconds"
            }
            return .failure(.expected(reason))
        }
    }
}

private func isASCIILetter(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
}

/// Durations as written on the command line: `24h`, `90m`, `30s`, `2d`,
/// `500ms`, combinations such as `1h30m`, or `0`.
enum DurationText {
    /// The duration in milliseconds, or nil when `text` is not a duration.
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        // A number alone names no unit: `grace = 24` means a day to whoever wrote it, and read as
        // seconds it would make every purchase not delivered within them lost or late. Zero is zero in any.
        if bytes.allSatisfy(isDigit) {
            return bytes.allSatisfy { $0 == UInt8(ascii: "0") } ? 0 : nil
        }
        var total: Int64 = 0
        var index = 0
        while index < bytes.count {
            let digitsStart = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index > digitsStart, let amount = number(bytes[digitsStart..<index]) else { return nil }
            let unitStart = index
            while index < bytes.count, !isDigit(bytes[index]) { index += 1 }
            guard let unit = unitMilliseconds(String(decoding: bytes[unitStart..<index], as: UTF8.self)),
                let part = multiply(amount, unit)
            else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(part)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }

    /// Whether `text` is a number without a unit (other than zero), which `milliseconds` refuses.
    static func isUnitless(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isDigit) && milliseconds(text) == nil
    }

    private static func unitMilliseconds(_ unit: String) -> Int64? {
        switch unit {
        case "ms": 1
        case "s": 1000
        case "m": 60_000
        case "h": 3_600_000
        case "d": 86_400_000
        default: nil
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        Int64(String(decoding: digits, as: UTF8.self))
    }

    private static func multiply(_ a: Int64, _ b: Int64) -> Int64? {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? nil : product
    }
}

/// Data set sizes as written for `bench --sizes`: `100k,1m,4m`, `2500`.
enum SizeListText {
    /// The counts in order, or nil when any item is not a positive count.
    static func counts(_ text: String) -> [Int]? {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        var counts: [Int] = []
        for item in items {
            var digits = Substring(item)
            var scale = 1
            switch digits.last {
            case "k", "K": scale = 1_000; digits = digits.dropLast()
            case "m", "M": scale = 1_000_000; digits = digits.dropLast()
            default: break
            }
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit), let number = Int(digits), number > 0
            else { return nil }
            let (count, overflow) = number.multipliedReportingOverflow(by: scale)
            guard !overflow else { return nil }
            counts.append(count)
        }
        return counts
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
