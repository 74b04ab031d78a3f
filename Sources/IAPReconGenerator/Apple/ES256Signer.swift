import COpenSSL

/// Signs JWS compact strings with ES256 (ECDSA P-256, SHA-256), as Apple signs its payloads.
///
/// Deterministic: the nonce is derived from the key, the message digest and a caller's seed
/// (the generator passes bytes of its seeded random stream), so the same options write
/// byte-identical files. OpenSSL's own ECDSA draws a random nonce, hence the arithmetic here,
/// on libcrypto's big numbers and curve points. For test data only.
public final class ES256Signer: @unchecked Sendable {
    private let group: OpaquePointer
    private let privateKey: OpaquePointer
    private let privateBytes: [UInt8]
    /// `{"alg":"ES256","x5c":[…]}` in base64url.
    public let encodedHeader: [UInt8]

    /// `privateKey` is the P-256 scalar (32 bytes, big-endian); `x5c` the chain to put in the header.
    public init?(privateKey: [UInt8], x5c: [String], algorithm: String = "ES256") {
        guard privateKey.count == 32, let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let key = BN_bin2bn(privateKey, 32, nil) else {
            EC_GROUP_free(group)
            return nil
        }
        self.group = group
        self.privateKey = key
        self.privateBytes = privateKey
        let chain = x5c.map { "\"\($0)\"" }.joined(separator: ",")
        var header: [UInt8] = []
        Base64.appendURL(Array("{\"alg\":\"\(algorithm)\",\"x5c\":[\(chain)]}".utf8), to: &header)
        encodedHeader = header
    }

    deinit {
        BN_clear_free(privateKey)
        EC_GROUP_free(group)
    }

    /// `header.payload.signature` for a payload (its JSON bytes).
    public func jws(payload: [UInt8], nonceSeed: [UInt8] = []) -> String {
        var output = encodedHeader
        output.append(UInt8(ascii: "."))
        Base64.appendURL(payload, to: &output)
        let signature = sign(output, nonceSeed: nonceSeed)
        output.append(UInt8(ascii: "."))
        Base64.appendURL(signature, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The JWS signature of `message` (the `header.payload` bytes): R||S, 64 bytes.
    public func sign<Message: Collection>(_ message: Message, nonceSeed: [UInt8]) -> [UInt8] where Message.Element == UInt8 {
        let digest = Self.sha256(Array(message))
        guard let context = BN_CTX_new() else { preconditionFailure("out of memory") }
        defer { BN_CTX_free(context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        guard let order = EC_GROUP_get0_order(group), let point = EC_POINT_new(group),
              let e = BN_CTX_get(context), let k = BN_CTX_get(context), let x = BN_CTX_get(context),
              let r = BN_CTX_get(context), let s = BN_CTX_get(context) else { preconditionFailure("out of memory") }
        defer { EC_POINT_free(point) }
        // P-256's order and SHA-256 are both 256 bits: the digest is the integer as is.
        BN_bin2bn(digest, 32, e)
        var counter: UInt8 = 0
        while true {
            defer { counter &+= 1 }
            BN_bin2bn(Self.sha256(privateBytes + digest + nonceSeed + [counter]), 32, k)
            BN_nnmod(k, k, order, context)
            guard BN_is_zero(k) == 0, EC_POINT_mul(group, point, k, nil, nil, context) == 1,
                  EC_POINT_get_affine_coordinates(group, point, x, nil, context) == 1 else { continue }
            BN_nnmod(r, x, order, context)
            guard BN_is_zero(r) == 0, let inverse = BN_mod_inverse(nil, k, order, context) else { continue }
            defer { BN_free(inverse) }
            // s = k⁻¹ (e + r·d) mod n
            BN_mod_mul(s, r, privateKey, order, context)
            BN_mod_add(s, s, e, order, context)
            BN_mod_mul(s, s, inverse, order, context)
            guard BN_is_zero(s) == 0 else { continue }
            var signature = [UInt8](repeating: 0, count: 64)
            signature.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                BN_bn2binpad(r, base, 32)
                BN_bn2binpad(s, base + 32, 32)
            }
            return signature
        }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = EVP_Digest(bytes, bytes.count, &digest, nil, EVP_sha256(), nil)
        return digest
    }
}
