import COpenSSL
import Foundation

/// One X.509 certificate, parsed by OpenSSL's libcrypto and freed with this object.
///
/// Immutable once parsed, so it may be read from several threads.
final class Certificate: @unchecked Sendable {
    let handle: OpaquePointer
    let der: [UInt8]

    init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
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
