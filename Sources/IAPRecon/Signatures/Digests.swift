import COpenSSL

/// SHA-256 and HMAC-SHA256 through libcrypto, which uses the processor's SHA instructions: the
/// signature cache hashes every JWS, and ingest pseudonymises every device id it stores.
///
/// The digest is fetched once: an implicit fetch per call takes a global lock.
enum SHA256 {
    fileprivate final class Algorithm: @unchecked Sendable {
        let handle = EVP_MD_fetch(nil, "SHA2-256", nil)
    }

    fileprivate static let algorithm = Algorithm()

    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = EVP_Digest(bytes.baseAddress, bytes.count, &digest, nil, algorithm.handle, nil)
        return digest
    }

    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { hash($0) }
    }
}

/// HMAC-SHA256 (RFC 2104) under one key, for many short messages.
///
/// The key's inner and outer padded blocks are hashed once, here; each code then copies those two
/// states and hashes only the message and the inner digest. The states are only ever copied, never
/// updated, so workers share them.
public struct HMACSHA256: Sendable {
    private final class KeyedStates: @unchecked Sendable {
        let inner: OpaquePointer?
        let outer: OpaquePointer?

        init(key: [UInt8]) {
            var block = key.count > 64 ? SHA256.hash(key) : key
            block += [UInt8](repeating: 0, count: 64 - block.count)
            func state(padding: UInt8) -> OpaquePointer? {
                let context = EVP_MD_CTX_new()
                let padded = block.map { $0 ^ padding }
                _ = EVP_DigestInit_ex(context, SHA256.algorithm.handle, nil)
                _ = EVP_DigestUpdate(context, padded, padded.count)
                return context
            }
            inner = state(padding: 0x36)
            outer = state(padding: 0x5C)
        }

        deinit {
            EVP_MD_CTX_free(inner)
            EVP_MD_CTX_free(outer)
        }
    }

    private let states: KeyedStates

    public init(key: [UInt8]) { states = KeyedStates(key: key) }

    public func authenticationCode(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { code, count in
            authenticationCode(message, into: code)
            count = 32
        }
    }

    /// Writes the 32-byte code of `message` into `code`, which holds at least 32 bytes: no array
    /// per call, for the device ids of every MMP row and sign-up.
    func authenticationCode(_ message: UnsafeRawBufferPointer, into code: UnsafeMutableBufferPointer<UInt8>) {
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { innerDigest in
            _ = EVP_MD_CTX_copy_ex(context, states.inner)
            _ = EVP_DigestUpdate(context, message.baseAddress, message.count)
            _ = EVP_DigestFinal_ex(context, innerDigest.baseAddress, nil)
            _ = EVP_MD_CTX_copy_ex(context, states.outer)
            _ = EVP_DigestUpdate(context, innerDigest.baseAddress, 32)
            _ = EVP_DigestFinal_ex(context, code.baseAddress, nil)
        }
    }

    public func authenticationCode(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { authenticationCode($0) }
    }
}
