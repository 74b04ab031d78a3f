/// Base64 encoders for the JWS compact form (base64url, no padding) and for
/// certificate-looking strings (standard alphabet).
enum Base64 {
    static let urlAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let standardAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends base64url of `input` (no padding) to `output`.
    static func appendURL(_ input: [UInt8], to output: inout [UInt8]) {
        append(input, alphabet: urlAlphabet, pad: false, to: &output)
    }

    static func standard(_ input: [UInt8]) -> String {
        var output: [UInt8] = []
        append(input, alphabet: standardAlphabet, pad: true, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func url(_ input: [UInt8]) -> String {
        var output: [UInt8] = []
        appendURL(input, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private static func append(_ input: [UInt8], alphabet: [UInt8], pad: Bool, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count + 2) / 3 * 4)
        input.withUnsafeBufferPointer { source in
            alphabet.withUnsafeBufferPointer { table in
                var index = 0
                let whole = source.count - source.count % 3
                while index < whole {
                    let value = UInt32(source[index]) << 16 | UInt32(source[index + 1]) << 8 | UInt32(source[index + 2])
                    output.append(table[Int(value >> 18 & 63)])
                    output.append(table[Int(value >> 12 & 63)])
                    output.append(table[Int(value >> 6 & 63)])
                    output.append(table[Int(value & 63)])
                    index += 3
                }
                let rest = source.count - whole
                if rest == 1 {
                    let value = UInt32(source[index]) << 16
                    output.append(table[Int(value >> 18 & 63)])
                    output.append(table[Int(value >> 12 & 63)])
                    if pad { output.append(UInt8(ascii: "=")); output.append(UInt8(ascii: "=")) }
                } else if rest == 2 {
                    let value = UInt32(source[index]) << 16 | UInt32(source[index + 1]) << 8
                    output.append(table[Int(value >> 18 & 63)])
                    output.append(table[Int(value >> 12 & 63)])
                    output.append(table[Int(value >> 6 & 63)])
                    if pad { output.append(UInt8(ascii: "=")) }
                }
            }
        }
    }
}
