import COpenSSL
import Synchronization

/// ES256 verification (ECDSA on P-256) for one public key that checks many signatures.
///
/// A verification computes u1·G + u2·Q, G the curve's generator and Q the key. libcrypto keeps a
/// table of G's multiples, but multiplies Q from scratch on every call, and that is most of a
/// verification's cost. This key gets a table of its own: libcrypto's P-256 code keeps one for a
/// group's generator, so the key is made the generator of a copy of the curve. Making the table
/// costs about as much as a few hundred verifications, hence `SigningKey` makes one only for a key
/// that has checked many signatures.
///
/// The steps are SEC 1's (§4.1.4), on libcrypto's numbers and points. Tests hold them to
/// `EVP_PKEY_verify` on valid, altered and out-of-range signatures.
final class PrecomputedVerifyKey: @unchecked Sendable {
    /// P-256 as libcrypto names it, with its own table of the generator's multiples.
    private let curve: OpaquePointer
    /// P-256 with the key as its generator, and the table of the key's multiples.
    private let keyCurve: OpaquePointer
    /// Inverses modulo the curve's order n, for s⁻¹.
    private let orderInverse: ModularInverse
    /// The field's prime p, and p − n: an x of R in [n, p) is r + n, which happens only when r < p − n.
    private let prime: OpaquePointer
    private let primeMinusOrder: OpaquePointer
    /// Numbers and points for one verification at a time; a thread takes one and puts it back.
    private let ready = Mutex<[Scratch]>([])

    /// `point` is the key's encoded point (`04 || X || Y`); nil when it is not a point of P-256.
    init?(point: [UInt8]) {
        guard let curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let keyCurve = EC_GROUP_dup(curve), let context = BN_CTX_new(), let key = EC_POINT_new(curve) else {
            EC_GROUP_free(curve)
            return nil
        }
        defer {
            EC_POINT_free(key)
            BN_CTX_free(context)
        }
        // `EC_POINT_oct2point` refuses a point off the curve; P-256's cofactor is 1, so any point
        // on it but infinity generates the whole group, of the curve's order.
        guard EC_POINT_oct2point(curve, key, point, point.count, context) == 1, EC_POINT_is_at_infinity(curve, key) == 0,
              EC_GROUP_set_generator(keyCurve, key, EC_GROUP_get0_order(curve), EC_GROUP_get0_cofactor(curve)) == 1,
              iaprecon_group_precompute(keyCurve, context) == 1,
              let order = EC_GROUP_get0_order(curve), let orderInverse = Self.inverses(modulo: order) else {
            EC_GROUP_free(keyCurve)
            EC_GROUP_free(curve)
            return nil
        }
        let prime = BN_new(), primeMinusOrder = BN_new()
        guard let prime, let primeMinusOrder, EC_GROUP_get_curve(curve, prime, nil, nil, context) == 1,
              BN_sub(primeMinusOrder, prime, order) == 1 else {
            BN_free(prime)
            BN_free(primeMinusOrder)
            EC_GROUP_free(keyCurve)
            EC_GROUP_free(curve)
            return nil
        }
        self.curve = curve
        self.keyCurve = keyCurve
        self.orderInverse = orderInverse
        self.prime = prime
        self.primeMinusOrder = primeMinusOrder
    }

    /// Inverses modulo `order`, read from libcrypto's number.
    private static func inverses(modulo order: OpaquePointer) -> ModularInverse? {
        var bytes = [UInt8](repeating: 0, count: 32)
        guard BN_bn2binpad(order, &bytes, 32) == 32 else { return nil }
        return bytes.withUnsafeBytes { ModularInverse.Number(bigEndian: $0).flatMap(ModularInverse.init(modulus:)) }
    }

    /// The key of `publicKey`, when it is a P-256 key.
    convenience init?(_ publicKey: OpaquePointer) {
        var length = 0
        guard EVP_PKEY_get_octet_string_param(publicKey, OSSL_PKEY_PARAM_PUB_KEY, nil, 0, &length) == 1, length > 0 else { return nil }
        var point = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_octet_string_param(publicKey, OSSL_PKEY_PARAM_PUB_KEY, &point, length, &length) == 1 else { return nil }
        self.init(point: Array(point.prefix(length)))
    }

    deinit {
        ready.withLock { $0.forEach { $0.free() } }
        BN_free(prime)
        BN_free(primeMinusOrder)
        EC_GROUP_free(keyCurve)
        EC_GROUP_free(curve)
    }

    /// Whether `signature` (R||S, two 32-byte big-endian integers) signs `digest` (SHA-256, 32 bytes).
    func verify(digest: [UInt8], signature: [UInt8]) -> Bool {
        guard digest.count == 32, signature.count == 64, let order = EC_GROUP_get0_order(curve),
              let scratch = ready.withLock({ $0.popLast() }) ?? Scratch(curve) else { return false }
        defer { ready.withLock { $0.append(scratch) } }
        let context = scratch.context
        signature.withUnsafeBufferPointer { bytes in
            BN_bin2bn(bytes.baseAddress, 32, scratch.r)
            BN_bin2bn(bytes.baseAddress.map { $0 + 32 }, 32, scratch.s)
        }
        // P-256's order and SHA-256 are both 256 bits: the digest is the integer e as it is.
        BN_bin2bn(digest, 32, scratch.e)
        // r and s must lie in [1, n-1].
        guard BN_is_zero(scratch.r) == 0, BN_is_zero(scratch.s) == 0,
              BN_cmp(scratch.r, order) < 0, BN_cmp(scratch.s, order) < 0 else { return false }
        // w = s⁻¹, u1 = e·w, u2 = r·w (mod n); then R = u1·G + u2·Q, each product from its table.
        let inverse = signature.withUnsafeBytes { bytes in
            ModularInverse.Number(bigEndian: UnsafeRawBufferPointer(rebasing: bytes[32..<64])).flatMap(orderInverse.inverse(of:))
        }
        guard let inverse, inverse.withBigEndianBytes({ BN_bin2bn($0.baseAddress, 32, scratch.w) }) != nil,
              BN_mod_mul(scratch.u1, scratch.e, scratch.w, order, context) == 1,
              BN_mod_mul(scratch.u2, scratch.r, scratch.w, order, context) == 1,
              EC_POINT_mul(curve, scratch.sum, scratch.u1, nil, nil, context) == 1,
              EC_POINT_mul(keyCurve, scratch.keyMultiple, scratch.u2, nil, nil, context) == 1,
              EC_POINT_add(curve, scratch.sum, scratch.sum, scratch.keyMultiple, context) == 1,
              EC_POINT_is_at_infinity(curve, scratch.sum) == 0,
              iaprecon_point_jacobian(curve, scratch.sum, scratch.x, scratch.y, scratch.z, context) == 1 else { return false }
        // Valid when R's x, reduced mod n, is r.
        return xMatches(r: scratch.r, jacobianX: scratch.x, z: scratch.z, scratch: scratch)
    }

    /// Whether the affine x of the point with Jacobian X and Z (x = X/Z² mod p) is `r` mod n, found
    /// without inverting Z: x < p < 2n, so x mod n = r means x = r, or x = r + n when that is below
    /// p; and x = c exactly when X = c·Z² (mod p).
    private func xMatches(r: OpaquePointer, jacobianX: OpaquePointer, z: OpaquePointer, scratch: Scratch) -> Bool {
        let context = scratch.context
        guard BN_mod_sqr(scratch.zSquared, z, prime, context) == 1,
              BN_mod_mul(scratch.candidate, r, scratch.zSquared, prime, context) == 1 else { return false }
        if BN_cmp(scratch.candidate, jacobianX) == 0 { return true }
        guard BN_cmp(r, primeMinusOrder) < 0, let order = EC_GROUP_get0_order(curve), BN_add(scratch.candidate, r, order) == 1,
              BN_mod_mul(scratch.candidate, scratch.candidate, scratch.zSquared, prime, context) == 1 else { return false }
        return BN_cmp(scratch.candidate, jacobianX) == 0
    }

    /// `xMatches` for tests, which cannot find a signature whose R has x in [n, p) (about one in
    /// 2¹²⁸): the same comparison on numbers given as 32-byte big-endian.
    func xMatches(r: [UInt8], jacobianX: [UInt8], z: [UInt8]) -> Bool {
        guard let scratch = Scratch(curve) else { return false }
        defer { scratch.free() }
        BN_bin2bn(r, Int32(r.count), scratch.r)
        BN_bin2bn(jacobianX, Int32(jacobianX.count), scratch.x)
        BN_bin2bn(z, Int32(z.count), scratch.z)
        return xMatches(r: scratch.r, jacobianX: scratch.x, z: scratch.z, scratch: scratch)
    }

    /// What one verification works in, made once per thread that verifies at the same time.
    private struct Scratch: @unchecked Sendable {
        let context: OpaquePointer
        let r, s, e, w, u1, u2: OpaquePointer
        /// R's Jacobian coordinates, Z², and the r (or r + n) times Z² compared with X.
        let x, y, z, zSquared, candidate: OpaquePointer
        let sum, keyMultiple: OpaquePointer

        init?(_ curve: OpaquePointer) {
            guard let context = BN_CTX_new() else { return nil }
            var numbers: [OpaquePointer] = []
            for _ in 0..<11 {
                guard let number = BN_new() else { break }
                numbers.append(number)
            }
            let sum = EC_POINT_new(curve), keyMultiple = EC_POINT_new(curve)
            guard numbers.count == 11, let sum, let keyMultiple else {
                numbers.forEach { BN_free($0) }
                EC_POINT_free(sum)
                EC_POINT_free(keyMultiple)
                BN_CTX_free(context)
                return nil
            }
            self.context = context
            (r, s, e, w, u1, u2) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
            (x, y, z, zSquared, candidate) = (numbers[6], numbers[7], numbers[8], numbers[9], numbers[10])
            self.sum = sum
            self.keyMultiple = keyMultiple
        }

        func free() {
            [r, s, e, w, u1, u2, x, y, z, zSquared, candidate].forEach { BN_free($0) }
            EC_POINT_free(sum)
            EC_POINT_free(keyMultiple)
            BN_CTX_free(context)
        }
    }
}
