/// Keeps receipt blobs, JWS strings, device ids and network and email addresses out of `rejects`
/// (data minimisation).
///
/// A rejected line is shown so a data engineer can see what was wrong with it, but
/// `rejects.csv` travels further than the store: into tickets, chats and spreadsheets.
/// So its text keeps the line's shape and provenance and drops what identifies a device
/// or a person or grants access: every long base64-like run (a receipt, a JWS, however its `/` is
/// escaped), every IDFA, IDFV or AppsFlyer ID, of which only the last four
/// characters stay (`…1A2B`, what `history` shows), and every IP address and email address, which
/// iaprecon never reads but a line carries beside what it reads (a server's `client_ip`, AppsFlyer's
/// `IP` column, an `email`).
enum Redaction {
    static let maximumBytes = 300
    /// How far past `maximumBytes` the scan shows a line before it is cut: an address that straddles
    /// the cut is seen whole, so it is replaced, not shown in part.
    static let scannedBytes = maximumBytes + 64
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
        while index < end, output.count <= scannedBytes {
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
        // Cut by what is shown: a replaced address is longer or shorter than the address was.
        let shown = maskingAddresses(output)
        var cut = shown.count > maximumBytes || index < end || bytes.count > scanBytes
        var text = String(decoding: shown.prefix(maximumBytes), as: UTF8.self)
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

    /// A bad value as a reason may quote it: nil when it is long or holds a device id or an address,
    /// so the reason describes it instead.
    static func quotable(_ value: String) -> String? {
        let bytes = Array(value.utf8)
        guard bytes.count <= maximumQuotedBytes, maskingDeviceIDs(bytes) == bytes, maskingAddresses(bytes) == bytes else { return nil }
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

    /// `text` with every IPv4 or IPv6 address and every email address replaced by what it was
    /// (`[IP address redacted]`, `[email address redacted]`). The value of a `user_id` key stays,
    /// even shaped like an email address: it is the key the reports and `history` name a user by.
    static func maskingAddresses(_ text: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while index < text.count {
            if let length = ipv4Length(text, at: index) ?? ipv6Length(text, at: index) {
                output += ipAddressMask
                index += length
            } else if let length = emailLength(text, at: index), !isValue(ofKey: userIDKey, in: text, at: index) {
                output += emailAddressMask
                index += length
            } else {
                output.append(text[index])
                index += 1
            }
        }
        return output
    }

    private static let ipAddressMask = Array("[IP address redacted]".utf8)
    private static let emailAddressMask = Array("[email address redacted]".utf8)
    private static let userIDKey = Array("\"user_id\"".utf8)

    /// The length of the IPv4 address (four numbers of 0 to 255 joined by dots) that starts at
    /// `start`, if one does. Not a part of a longer dotted number or word: a four-part version
    /// after a `v` is no address, nor is `1.2.3.256`.
    private static func ipv4Length(_ text: [UInt8], at start: Int) -> Int? {
        if start > 0, isLetterOrDigit(text[start - 1]) || text[start - 1] == dot { return nil }
        var position = start
        for part in 0..<4 {
            if part > 0 {
                guard position < text.count, text[position] == dot else { return nil }
                position += 1
            }
            var value = 0
            let first = position
            while position < text.count, isDigit(text[position]), position - first < 3 {
                value = value * 10 + Int(text[position] - UInt8(ascii: "0"))
                position += 1
            }
            guard position > first, value <= 255 else { return nil }
        }
        if position < text.count {
            let next = text[position]
            if isLetterOrDigit(next) { return nil }
            if next == dot, position + 1 < text.count, isLetterOrDigit(text[position + 1]) { return nil }
        }
        return position - start
    }

    /// The length of the IPv6 address that starts at `start`, if one does: eight groups of up to four
    /// hex digits joined by colons, or fewer around one `::`, the last two maybe an IPv4 address, with
    /// four hex digits or more in all (a clock's `10:38:00` has two colons and no `::`; `::1` is no one's).
    private static func ipv6Length(_ text: [UInt8], at start: Int) -> Int? {
        if start > 0, isLetterOrDigit(text[start - 1]) || text[start - 1] == colon || text[start - 1] == dot { return nil }
        var end = start
        while end < text.count, isHex(text[end]) || text[end] == colon || text[end] == dot { end += 1 }
        if end < text.count, isLetterOrDigit(text[end]) { return nil }
        // A sentence's full stop after the address is not its own.
        while end > start, text[end - 1] == dot { end -= 1 }
        let span = text[start..<end]
        guard span.filter({ $0 == colon }).count >= 2 else { return nil }
        var groups = 0
        var hexDigits = 0
        var body = span
        if span.contains(dot) {
            guard let lastColon = span.lastIndex(of: colon), ipv4Length(Array(span[(lastColon + 1)...]), at: 0) == end - lastColon - 1 else { return nil }
            (groups, hexDigits) = (2, 4)
            // The colon before it ends the groups, or is the second of a `::`.
            body = span[start..<(span[lastColon - 1] == colon ? lastColon + 1 : lastColon)]
        }
        /// The groups of a part between `::`s, each one to four hex digits; nil when one is not.
        func count(_ part: ArraySlice<UInt8>) -> Int? {
            if part.isEmpty { return 0 }
            let parts = part.split(separator: colon, omittingEmptySubsequences: false)
            guard parts.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(isHex) }) else { return nil }
            hexDigits += parts.reduce(0) { $0 + $1.count }
            return parts.count
        }
        let doubles = body.indices.filter { $0 + 1 < body.endIndex && body[$0] == colon && body[$0 + 1] == colon }
        if doubles.count > 1 { return nil }
        if let double = doubles.first {
            guard let left = count(body[..<double]), let right = count(body[(double + 2)...]), groups + left + right < 8 else { return nil }
        } else {
            guard let all = count(body), groups + all == 8 else { return nil }
        }
        return hexDigits >= 4 ? end - start : nil
    }

    /// The length of the email address that starts at `start`, if one does: a local part of letters,
    /// digits and `. _ % + -`, an `@`, and a domain of two labels or more ending in letters.
    private static func emailLength(_ text: [UInt8], at start: Int) -> Int? {
        func isLocal(_ byte: UInt8) -> Bool { isLetterOrDigit(byte) || [dot, 0x5F, 0x25, 0x2B, 0x2D].contains(byte) }
        func isDomain(_ byte: UInt8) -> Bool { isLetterOrDigit(byte) || byte == 0x2D || byte == dot }
        if start > 0, isLocal(text[start - 1]) { return nil }
        var position = start
        while position < text.count, isLocal(text[position]) { position += 1 }
        guard position > start, position < text.count, text[position] == UInt8(ascii: "@") else { return nil }
        position += 1
        let domainStart = position
        while position < text.count, isDomain(text[position]) { position += 1 }
        // A sentence's full stop after the address is not its domain's.
        while position > domainStart, text[position - 1] == dot { position -= 1 }
        let labels = text[domainStart..<position].split(separator: dot, omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), let top = labels.last, top.count >= 2,
              top.allSatisfy(isLetter) else { return nil }
        return position - start
    }

    /// Whether the text at `start` is the string value of JSON key `key` (its quotes included):
    /// `"user_id": "` just before it.
    private static func isValue(ofKey key: [UInt8], in text: [UInt8], at start: Int) -> Bool {
        var position = start
        func skipBlanks() { while position > 0, text[position - 1] == 0x20 || text[position - 1] == 0x09 { position -= 1 } }
        guard position > 0, text[position - 1] == UInt8(ascii: "\"") else { return false }
        position -= 1
        skipBlanks()
        guard position > 0, text[position - 1] == colon else { return false }
        position -= 1
        skipBlanks()
        guard position >= key.count else { return false }
        return text[(position - key.count)..<position].elementsEqual(key)
    }

    private static let dot = UInt8(ascii: ".")
    private static let colon = UInt8(ascii: ":")

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }
}
