/// Base64url decoding and JWS payload extraction.
///
/// A JWS compact string is `header.payload.signature`, each part base64url
/// without padding (RFC 7515). iaprecon decodes the payload and does not
/// check the signature (CONTRACT.md §1.2): the server already verified it.
public enum Base64URL {
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8).enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// The bytes of base64url (or standard base64) text, padding optional; nil when malformed.
    public static func decode<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: "=") { padding += 1; continue }
            guard padding == 0 else { return nil }
            let value = table[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // A single leftover sextet cannot encode a byte.
        guard bits < 6, padding <= 2 else { return nil }
        return output
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var index = 0
        while index + 2 < bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)], alphabet[Int(chunk >> 6 & 63)], alphabet[Int(chunk & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let chunk = UInt32(bytes[index]) << 16
            output += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)]]
        } else if rest == 2 {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            output += [alphabet[Int(chunk >> 18 & 63)], alphabet[Int(chunk >> 12 & 63)], alphabet[Int(chunk >> 6 & 63)]]
        }
        return String(decoding: output, as: UTF8.self)
    }
}

/// Why a JWS string could not be decoded.
public enum JWSError: Error, Equatable, Sendable {
    case notThreeParts
    case badBase64
    case payload(JSONSyntaxError)
    case payloadNotObject
}

public enum JWS {
    /// The decoded JSON payload of a JWS compact string.
    public static func payload(_ jws: String) throws(JWSError) -> JSONObject {
        var jws = jws
        // The middle of exactly three dot-separated parts, read from the string's contiguous bytes.
        let decoded = jws.withUTF8 { text -> [UInt8]?? in
            let dots = text.indices.filter { text[$0] == UInt8(ascii: ".") }
            guard dots.count == 2, dots[1] > dots[0] + 1 else { return .none }
            return .some(Base64URL.decode(UnsafeBufferPointer(rebasing: text[(dots[0] + 1)..<dots[1]])))
        }
        guard let payload = decoded else { throw .notThreeParts }
        guard let bytes = payload else { throw .badBase64 }
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw .payload(error) }
        guard let object = value.objectValue else { throw .payloadNotObject }
        return object
    }
}
