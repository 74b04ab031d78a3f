import Foundation

/// Certificates in PEM files (`--trust-root`).
public enum PEM {
    /// The DER bytes of every `CERTIFICATE` block in `text`, in order.
    public static func certificates(_ text: String) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if trimmed == "-----END CERTIFICATE-----" {
                if let base64 = body, let der = Base64URL.decode(Array(base64.utf8)) { found.append(der) }
                body = nil
            } else if body != nil {
                body? += trimmed
            }
        }
        return found
    }
}
