import COpenSSL
import Foundation

/// One X.509 certificate, parsed by OpenSSL's libcrypto and freed with this object.
///
/// Immutable once parsed, so it may be read from several threads.
final class Certificate: @unchecked Sendable {
    let handle: OpaquePointer
    let der: [UInt8]

    /// Nil unless `der` is one certificate and nothing more: `d2i_X509` stops at the certificate's
    /// end, and the bytes kept here would then not be the certificate OpenSSL verified (a chain's
    /// path is matched to its `x5c` entries, and validity read off them).
    init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let parsed = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard let start = buffer.baseAddress, cursor == start + buffer.count else {
                X509_free(parsed)
                return nil
            }
            return parsed
        }
        guard let parsed else { return nil }
        handle = parsed
        self.der = der
    }

    deinit { X509_free(handle) }

    /// Whether the certificate carries the extension `oid` (dotted), whatever its value.
    func hasExtension(_ oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(handle, object, -1) >= 0
    }

    /// The validity period, UTC epoch ms.
    var validity: ClosedRange<Int64>? {
        guard let start = Self.epochMs(X509_get0_notBefore(handle)), let end = Self.epochMs(X509_get0_notAfter(handle)),
              start <= end else { return nil }
        return start...end
    }

    private static func epochMs(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Int64(timegm(&parts)) * 1000
    }
}
