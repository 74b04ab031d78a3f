/// Keeps receipt blobs, JWS strings and device ids out of `rejects` (data minimisation).
///
/// A rejected line is shown so a data engineer can see what was wrong with it, but
/// `rejects.csv` travels further than the store: into tickets, chats and spreadsheets.
/// So its text keeps the line's shape and provenance and drops what identifies a device
/// or grants access: every long base64-like run (a receipt, a JWS, however its `/` is
/// escaped), and every IDFA, IDFV or AppsFlyer ID, of which only the last four
/// characters stay (`…1A2B`, what `history` shows).
enum Redaction {
    static let maximumBytes = 300
    static let longTokenBytes = 64
    /// Only the start of a huge line is looked at.
    static let scanBytes = 64 * 1024
    /// A reason quotes a bad value only up to this length: longer ones are described.
    static let maximumQuotedBytes = 32
    /// The JSON keys whose string value is a device or MMP id, whatever its shape (lower case).
    static let deviceIDKeys: Set<[UInt8]> = Set(["idfa", "idfv", "appsflyer_id", "advertising_id", "android_id"].map { Array($0.utf8) })

    /// The line as text, with every long base64-like run replaced, every device id masked,
    /// and the whole cut to 300 bytes.
    static func rejectText(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var output: [UInt8] = []
        var run: [UInt8] = []
        var runLength = 0
        /// The last run was a device-id key (`"idfa"`); the next run, after `"` and `:`, is its value.
        var deviceValueNext = false
        func flush() {
            guard runLength > 0 else { return }
            deviceValueNext = appendRun(run, length: runLength, isDeviceValue: deviceValueNext, to: &output)
            run.removeAll(keepingCapacity: true)
            runLength = 0
        }
        let end = min(bytes.count, scanBytes)
        var index = 0
        while index < end, output.count <= maximumBytes {
            let byte = bytes[index]
            if isTokenByte(byte) {
                // A whole run at once: a receipt or a JWS is most of a rejected line, and only its
                // first `longTokenBytes` are kept, to be shown or masked; the rest is counted.
                var runEnd = index + 1
                while runEnd < end, isTokenByte(bytes[runEnd]) { runEnd += 1 }
                run.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<min(runEnd, index + longTokenBytes)]))
                runLength = runEnd - index
                index = runEnd
            } else {
                flush()
                // Between a key and its value only quotes, a colon and blanks.
                if deviceValueNext, ![UInt8(ascii: "\""), UInt8(ascii: ":"), 0x20, 0x09].contains(byte) { deviceValueNext = false }
                output.append(byte)
                index += 1
            }
        }
        // A run still open at the cut is not all there: it is shown only when it is short.
        flush()
        var cut = output.count > maximumBytes || bytes.count > scanBytes
        var text = String(decoding: output.prefix(maximumBytes), as: UTF8.self)
        // Invalid bytes decode as U+FFFD (3 bytes each): cut again to the limit.
        while text.utf8.count > maximumBytes {
            text.removeLast()
            cut = true
        }
        return cut ? text + "…" : text
    }

    /// Appends a run of token bytes as a reject's text shows it: `[n bytes redacted]` when it is
    /// long, masked when it is a device id's value (`isDeviceValue`) or shaped like a device id, else
    /// as it is. `kept` is the run's first `longTokenBytes`, `length` its whole length. Returns
    /// whether the run is a device-id key (`"idfa"`), whose value comes next.
    static func appendRun(_ kept: [UInt8], length: Int, isDeviceValue: Bool, to output: inout [UInt8]) -> Bool {
        if length >= longTokenBytes {
            output += Array("[\(length) bytes redacted]".utf8)
            return false
        }
        if isDeviceValue {
            output += masked(kept)
            return false
        }
        output += maskingDeviceIDs(kept)
        return deviceIDKeys.contains(kept.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 })
    }

    /// A bad value for the reason text: quoted when short, else described, so a reason
    /// never carries a device id, a token or a receipt (`quotable`).
    static func quoted(_ value: JSONValue) -> String {
        switch value {
        case .string(let string): quotable(string).map { "\"" + HiddenCharacters.visible($0) + "\"" } ?? "a string of \(string.utf8.count) bytes"
        case .number(let number): quotable(number) ?? "a number of \(number.utf8.count) characters"
        case .bool(let bool): String(bool)
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A bad value as a reason may quote it: nil when it is long or holds a device id,
    /// so the reason describes it instead.
    static func quotable(_ value: String) -> String? {
        let bytes = Array(value.utf8)
        guard bytes.count <= maximumQuotedBytes, maskingDeviceIDs(bytes) == bytes else { return nil }
        return value
    }

    /// Base64 and base64url letters, and what escapes them in JSON (`\/`, `\u002F`) or a URL (`%2F`):
    /// `0-9 A-Z a-z + / = _ - . \ %`, as one bit per ASCII byte, since every byte of a long token is
    /// looked up.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        if byte < 64 { return (tokenBytesBelow64 >> UInt64(byte)) & 1 == 1 }
        if byte < 128 { return (tokenBytesFrom64 >> UInt64(byte - 64)) & 1 == 1 }
        return false
    }

    /// Bit `n` set when byte `n` is a token byte: `%` `+` `-` `.` `/`, the digits and `=`.
    private static let tokenBytesBelow64: UInt64 = 0x23FF_E820_0000_0000
    /// Bit `n` set when byte `64 + n` is a token byte: the letters, `\` and `_`.
    private static let tokenBytesFrom64: UInt64 = 0x07FF_FFFE_97FF_FFFE

    /// `…` and the last four characters of an id (none of a short one).
    static func masked<ID: BidirectionalCollection<UInt8>>(_ id: ID) -> [UInt8] {
        ellipsis + tail(id)
    }

    /// The last four characters of an id that may be shown (none of a short one): what a mask and a
    /// pseudonym keep of it, lent where they lie.
    static func tail<ID: BidirectionalCollection<UInt8>>(_ id: ID) -> ID.SubSequence {
        id.suffix(id.count >= 8 ? 4 : 0)
    }

    private static let ellipsis = Array("…".utf8)

    /// `run` with every part shaped like a device id masked: a UUID (IDFA, IDFV, Google's
    /// advertising id), 32 or more hex digits in a row (a UUID without its dashes), and
    /// an AppsFlyer ID (install time in ms, `-`, a random number).
    static func maskingDeviceIDs(_ run: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < run.count {
            if let length = deviceIDLength(run, at: index) {
                output += masked(Array(run[index..<(index + length)]))
                index += length
            } else {
                output.append(run[index])
                index += 1
            }
        }
        return output
    }

    /// The length of the device id that starts at `start`, if one does.
    private static func deviceIDLength(_ run: [UInt8], at start: Int) -> Int? {
        // Only at the start of a word: a hex run's tail is no id of its own.
        if start > 0, isHex(run[start - 1]) || isDigit(run[start - 1]) { return nil }
        func count(_ predicate: (UInt8) -> Bool, from position: Int) -> Int {
            var end = position
            while end < run.count, predicate(run[end]) { end += 1 }
            return end - position
        }
        // UUID: 8-4-4-4-12 hex digits.
        var position = start
        var isUUID = true
        for (group, length) in [8, 4, 4, 4, 12].enumerated() {
            if group > 0 {
                guard position < run.count, run[position] == UInt8(ascii: "-") else { isUUID = false; break }
                position += 1
            }
            guard count(isHex, from: position) >= length else { isUUID = false; break }
            position += length
        }
        if isUUID, position == run.count || !isHex(run[position]) { return position - start }
        let hex = count(isHex, from: start)
        if hex >= 32 { return hex }
        // AppsFlyer ID: 10 to 13 digits of install time, `-`, 4 or more digits.
        let digits = count(isDigit, from: start)
        if (10...13).contains(digits), start + digits < run.count, run[start + digits] == UInt8(ascii: "-") {
            let random = count(isDigit, from: start + digits + 1)
            if random >= 4 { return digits + 1 + random }
        }
        return nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
}
