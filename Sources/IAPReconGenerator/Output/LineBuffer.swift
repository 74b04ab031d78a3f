/// The bytes of one output line under construction.
///
/// Lines are assembled by hand into a reused byte array rather than through
/// `JSONSerialization`, which keeps generation well above a million lines a second.
/// Every append is exact: integers and decimals are written digit by digit, so
/// money never passes through binary floating point (CONTRACT.md, "Money").
struct LineBuffer {
    var bytes: [UInt8] = []

    init(capacity: Int = 16_384) {
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }
    var isEmpty: Bool { bytes.isEmpty }

    mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// Literal text, usually a JSON key with its punctuation.
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func text(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    @inline(__always)
    mutating func byte(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func append(_ other: LineBuffer) {
        bytes.append(contentsOf: other.bytes)
    }

    mutating func append(_ other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// A decimal integer.
    mutating func int(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(value.magnitude)
        } else {
            unsigned(UInt64(value))
        }
    }

    @inline(__always)
    mutating func int(_ value: Int) {
        int(Int64(value))
    }

    mutating func unsigned(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 48)
            return
        }
        var digits: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                     UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            let buffer = raw.bindMemory(to: UInt8.self)
            while rest > 0 {
                buffer[count] = UInt8(truncatingIfNeeded: rest % 10) &+ 48
                rest /= 10
                count += 1
            }
            var index = count - 1
            while index >= 0 {
                bytes.append(buffer[index])
                index -= 1
            }
        }
    }

    /// `value` zero-padded to `width` digits (`width` ≤ 4 for the hot paths of time formatting).
    @inline(__always)
    mutating func padded(_ value: Int, width: Int) {
        switch width {
        case 2:
            bytes.append(UInt8(truncatingIfNeeded: value / 10) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value % 10) &+ 48)
        case 3:
            bytes.append(UInt8(truncatingIfNeeded: value / 100) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value / 10 % 10) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value % 10) &+ 48)
        case 4:
            bytes.append(UInt8(truncatingIfNeeded: value / 1000 % 10) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value / 100 % 10) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value / 10 % 10) &+ 48)
            bytes.append(UInt8(truncatingIfNeeded: value % 10) &+ 48)
        default:
            var digits: [UInt8] = []
            var rest = value
            for _ in 0..<width {
                digits.append(UInt8(truncatingIfNeeded: rest % 10) &+ 48)
                rest /= 10
            }
            bytes.append(contentsOf: digits.reversed())
        }
    }

    /// An exact decimal `units × 10^-scale`, with trailing fraction zeros dropped below
    /// `minimumFraction` digits: `decimal(990, scale: 3, minimumFraction: 2)` is `0.99`,
    /// `decimal(160000, scale: 3, minimumFraction: 0)` is `160`.
    mutating func decimal(_ units: Int64, scale: Int, minimumFraction: Int) {
        var magnitude = units.magnitude
        if units < 0 { bytes.append(UInt8(ascii: "-")) }
        var divisor: UInt64 = 1
        for _ in 0..<scale { divisor *= 10 }
        unsigned(magnitude / divisor)
        magnitude %= divisor
        var fractionDigits = scale
        while fractionDigits > minimumFraction, magnitude % 10 == 0 {
            magnitude /= 10
            fractionDigits -= 1
        }
        guard fractionDigits > 0 else { return }
        bytes.append(UInt8(ascii: "."))
        var width: UInt64 = 1
        for _ in 1..<fractionDigits { width *= 10 }
        while width > 0 {
            bytes.append(UInt8(truncatingIfNeeded: magnitude / width % 10) &+ 48)
            width /= 10
        }
    }

    /// A JSON string literal, escaped.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var plain = true
        for byte in value.utf8 where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
            plain = false
            break
        }
        if plain {
            bytes.append(contentsOf: value.utf8)
        } else {
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(UInt8(ascii: "\\"))
                    bytes.append(byte)
                case 0..<0x20:
                    bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), 48, 48])
                    bytes.append(Self.hex[Int(byte >> 4)])
                    bytes.append(Self.hex[Int(byte & 15)])
                default:
                    bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string, or `null`.
    mutating func stringOrNull(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    /// A CSV cell (RFC 4180): quoted when it holds a comma, quote or line break.
    mutating func csvCell(_ value: String) {
        var needsQuotes = false
        for byte in value.utf8 where byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 10 || byte == 13 {
            needsQuotes = true
            break
        }
        guard needsQuotes else {
            bytes.append(contentsOf: value.utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") { bytes.append(byte) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A CSV cell holding bytes already built (quoted the same way as `csvCell`).
    mutating func csvCell(_ value: LineBuffer) {
        csvCell(String(decoding: value.bytes, as: UTF8.self))
    }

    static let hex: [UInt8] = Array("0123456789abcdef".utf8)
    static let upperHex: [UInt8] = Array("0123456789ABCDEF".utf8)
}
