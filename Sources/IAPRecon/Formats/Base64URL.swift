import Foundation

/// Base64url decoding and JWS payload extraction.
///
/// A JWS compact string is `header.payload.signature`, each part base64url
/// without padding (RFC 7515). Here the payload is decoded; `JWSVerifier`
/// decides whether it may be trusted (CONTRACT.md §1.8).
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

    /// `table` once for each place in a block of four sextets, each value shifted to its place in
    /// the block's 24 bits, and 0xFF00_0000 for a byte of neither alphabet: a block is the OR of
    /// its four entries, and any bit above the 24 says one of them was invalid.
    private static let placedTable: [UInt32] = {
        var placed = [UInt32](repeating: 0xFF00_0000, count: 4 * 256)
        for byte in 0..<256 where table[byte] != 0xFF {
            for place in 0..<4 { placed[place * 256 + byte] = UInt32(table[byte]) << (18 - 6 * place) }
        }
        return placed
    }()

    /// The bytes of base64url (or standard base64) text, padding optional; nil when malformed.
    ///
    /// Malformed: a byte of neither alphabet, `=` anywhere but at the end or more than two of them,
    /// or a lone trailing sextet (which cannot encode a byte). Four sextets at a time into an
    /// output sized once: JWS payloads are most of the bytes ingest reads.
    public static func decode<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        if let decoded = text.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(text).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    private static func decode(buffer text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let end = end(of: text) else { return nil }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: decodedCount(end)) { output, initialized in
            valid = decode(text, end: end, into: output)
            // Nothing read from here on when invalid; the array is dropped.
            if !valid { output.initialize(repeating: 0) }
            initialized = output.count
        }
        return valid ? output : nil
    }

    /// Decodes `text` as `decode` does into `output`, in place of what it held, reusing its storage:
    /// false when `text` is malformed (then `output` holds nothing of use).
    static func decode(_ text: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) -> Bool {
        guard let end = end(of: text) else { return false }
        let count = decodedCount(end)
        if output.count > count {
            output.removeLast(output.count - count)
        } else {
            output.append(contentsOf: repeatElement(0, count: count - output.count))
        }
        return output.withUnsafeMutableBufferPointer { decode(text, end: end, into: $0) }
    }

    /// Where `text`'s sextets end, before its padding; nil when its padding or length is malformed.
    private static func end(of text: UnsafeBufferPointer<UInt8>) -> Int? {
        var end = text.count
        while end > 0, text[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard text.count - end <= 2, end % 4 != 1 else { return nil }
        return end
    }

    /// How many bytes `end` sextets encode.
    private static func decodedCount(_ end: Int) -> Int { end / 4 * 3 + max(0, end % 4 - 1) }

    /// Decodes the first `end` bytes of `text` into `output`, which has room for exactly their
    /// bytes: false when a byte is outside both alphabets.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>, end: Int, into output: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        guard let outputBase = UnsafeMutableRawPointer(output.baseAddress) else { return end == 0 }
        return table.withUnsafeBufferPointer { table -> Bool in
            var input = 0
            var written = 0
            // A `=` before the end is outside both alphabets: invalid, like any other stray byte.
            if end >= 4 {
                let valid = placedTable.withUnsafeBufferPointer { placed -> Bool in
                    // While another block follows, a block's three bytes are stored as four (the
                    // fourth is overwritten by the next block): one store rather than three.
                    while input + 8 <= end {
                        let group = placed[Int(text[input])] | placed[256 + Int(text[input + 1])]
                            | placed[512 + Int(text[input + 2])] | placed[768 + Int(text[input + 3])]
                        if group > 0xFF_FFFF { return false }
                        outputBase.storeBytes(of: (group << 8).bigEndian, toByteOffset: written, as: UInt32.self)
                        written += 3
                        input += 4
                    }
                    let group = placed[Int(text[input])] | placed[256 + Int(text[input + 1])]
                        | placed[512 + Int(text[input + 2])] | placed[768 + Int(text[input + 3])]
                    if group > 0xFF_FFFF { return false }
                    output[written] = UInt8(truncatingIfNeeded: group >> 16)
                    output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    output[written + 2] = UInt8(truncatingIfNeeded: group)
                    written += 3
                    input += 4
                    return true
                }
                if !valid { return false }
            }
            if input < end {
                // Two or three sextets left: one or two bytes.
                var group: UInt32 = 0
                for index in input..<end {
                    let value = table[Int(text[index])]
                    if value & 0x80 != 0 { return false }
                    group = group << 6 | UInt32(value)
                }
                group <<= UInt32(6 * (4 - (end - input)))
                output[written] = UInt8(truncatingIfNeeded: group >> 16)
                if end - input == 3 {
                    output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                }
            }
            return true
        }
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
        let tape = JSONTape()
        let read = jws.withUTF8 { text -> Result<Void, JWSError> in
            do throws(JWSError) { return .success(try tape.readJWSPayload(text)) } catch { return .failure(error) }
        }
        try read.get()
        guard case .object(let object) = tape.withPayloadRoot({ $0.value }) else { throw .payloadNotObject }
        return object
    }

    /// The offsets of the two dots of a compact JWS, or nil when it has not exactly two.
    static func dots(in text: UnsafeBufferPointer<UInt8>) -> (Int, Int)? {
        guard let first = dot(in: text, from: 0), let second = dot(in: text, from: first + 1),
              dot(in: text, from: second + 1) == nil else { return nil }
        return (first, second)
    }

    /// The offset of the first `.` in `text` at or after `start`, found by `memchr`: the header
    /// (with its certificate chain) is most of a JWS, and it is searched whole for a stray dot.
    private static func dot(in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = text.baseAddress, start < text.count,
              let found = memchr(base + start, Int32(UInt8(ascii: ".")), text.count - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}
