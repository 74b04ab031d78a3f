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
        let whole = input.count - input.count % 3
        let rest = input.count - whole
        let length = whole / 3 * 4 + (rest == 0 ? 0 : (pad ? 4 : rest + 1))
        let offset = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        input.withUnsafeBufferPointer { source in
            alphabet.withUnsafeBufferPointer { table in
                output.withUnsafeMutableBufferPointer { target in
                    var read = 0
                    var write = offset
                    while read < whole {
                        let value = UInt32(source[read]) << 16 | UInt32(source[read + 1]) << 8 | UInt32(source[read + 2])
                        target[write] = table[Int(value >> 18 & 63)]
                        target[write + 1] = table[Int(value >> 12 & 63)]
                        target[write + 2] = table[Int(value >> 6 & 63)]
                        target[write + 3] = table[Int(value & 63)]
                        read += 3
                        write += 4
                    }
                    if rest > 0 {
                        let value = UInt32(source[read]) << 16 | (rest == 2 ? UInt32(source[read + 1]) << 8 : 0)
                        target[write] = table[Int(value >> 18 & 63)]
                        target[write + 1] = table[Int(value >> 12 & 63)]
                        if rest == 2 {
                            target[write + 2] = table[Int(value >> 6 & 63)]
                        } else if pad {
                            target[write + 2] = UInt8(ascii: "=")
                        }
                        if pad { target[write + 3] = UInt8(ascii: "=") }
                    }
                }
            }
        }
    }
}
