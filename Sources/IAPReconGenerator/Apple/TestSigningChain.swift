/// The certificate chain generated inputs are signed with: a test root, an intermediate
/// carrying Apple's WWDR marker (1.2.840.113635.100.6.2.1) and a leaf carrying the
/// receipt-signing marker (1.2.840.113635.100.6.11.1), shaped like Apple's chain so the
/// run checks them exactly as it checks Apple's. Valid 2015-01-01 to 2045-12-31.
///
/// Made once for iaprecon's test data (P-256, ECDSA with SHA-256). Only the leaf's private
/// key is kept, here, since the generator must sign with it; the root's and intermediate's
/// were thrown away. A run trusts this chain only when given `rootPEM` (which
/// `iaprecon generate` writes beside its output, and `sample-data/trust/test-root.pem` holds)
/// with `--trust-root`; it is not Apple's and proves nothing outside tests.
public enum TestSigningChain {
    /// The `x5c` header values: leaf, intermediate, root (base64 DER).
    public static let x5c = [
        "MIICFDCCAbugAwIBAgIBAzAKBggqhkjOPQQDAjBeMSYwJAYDVQQDDB1pYXByZWNvbiBUZXN0IEludGVybWVkaWF0ZSBDQTEnMCUGA1UECgweaWFwcmVjb24gdGVzdCBkYXRhIChub3QgQXBwbGUpMQswCQYDVQQGEwJVUzAeFw0xNTAxMDEwMDAwMDBaFw00NTEyMzEwMDAwMDBaMFYxHjAcBgNVBAMMFWlhcHJlY29uIFRlc3QgU2lnbmluZzEnMCUGA1UECgweaWFwcmVjb24gdGVzdCBkYXRhIChub3QgQXBwbGUpMQswCQYDVQQGEwJVUzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABKJUHbHbBguL4w/0IFhg4mCZRmXr487y5BGB/Vua1TNoDuORTbAia27OnCsqDbwvmy4TX3lQexYYaMzBuGILF5GjcjBwMAwGA1UdEwEB/wQCMAAwDgYDVR0PAQH/BAQDAgeAMB0GA1UdDgQWBBTGAPWgMAbRFNTUvHTXp0B4xo4wazAfBgNVHSMEGDAWgBSm82OOr9xOmZPhfmTbRkimzp7z/jAQBgoqhkiG92NkBgsBBAIFADAKBggqhkjOPQQDAgNHADBEAiB9sGbDHN7KGxKH2zZbcYji3aA5ZhmCFyHQz+9yS9psggIgY14JUnmrKZxs6kwEroPhB63/RqkzHaTzYAw2W0Pn2bA=",
        "MIICGjCCAcGgAwIBAgIBAjAKBggqhkjOPQQDAjBWMR4wHAYDVQQDDBVpYXByZWNvbiBUZXN0IFJvb3QgQ0ExJzAlBgNVBAoMHmlhcHJlY29uIHRlc3QgZGF0YSAobm90IEFwcGxlKTELMAkGA1UEBhMCVVMwHhcNMTUwMTAxMDAwMDAwWhcNNDUxMjMxMDAwMDAwWjBeMSYwJAYDVQQDDB1pYXByZWNvbiBUZXN0IEludGVybWVkaWF0ZSBDQTEnMCUGA1UECgweaWFwcmVjb24gdGVzdCBkYXRhIChub3QgQXBwbGUpMQswCQYDVQQGEwJVUzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHMh8J/ifPNzPSwuM4QXNLWxIoe7feN+WFQqmesiAohaZ5KzxKiyu7MgsRUGLtCYztzigokH5CqVh0cCJib5BgWjeDB2MBIGA1UdEwEB/wQIMAYBAf8CAQAwDgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQWBBSm82OOr9xOmZPhfmTbRkimzp7z/jAfBgNVHSMEGDAWgBQPEnG2cpVC0Om79vF754Y018r/NjAQBgoqhkiG92NkBgIBBAIFADAKBggqhkjOPQQDAgNHADBEAiB/i9q5aDac/pMWdBivAjTU6J1pDaKaqsh9JZd8Ot028QIgDcqc63RhIkPhT6rJxvdyqdm1t/WNc2X8VYa+Bvzxs7g=",
        "MIIB3DCCAYOgAwIBAgIBATAKBggqhkjOPQQDAjBWMR4wHAYDVQQDDBVpYXByZWNvbiBUZXN0IFJvb3QgQ0ExJzAlBgNVBAoMHmlhcHJlY29uIHRlc3QgZGF0YSAobm90IEFwcGxlKTELMAkGA1UEBhMCVVMwHhcNMTUwMTAxMDAwMDAwWhcNNDUxMjMxMDAwMDAwWjBWMR4wHAYDVQQDDBVpYXByZWNvbiBUZXN0IFJvb3QgQ0ExJzAlBgNVBAoMHmlhcHJlY29uIHRlc3QgZGF0YSAobm90IEFwcGxlKTELMAkGA1UEBhMCVVMwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQsX3vQN5X+nQbhsbPzyO/YsQm/94ZPX2qlbNffwyCWaSRCf5MNxiDJTJb/iAXWXnhcCudxPzA12Z9VAyPNg3uRo0IwQDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQUDxJxtnKVQtDpu/bxe+eGNNfK/zYwCgYIKoZIzj0EAwIDRwAwRAIgdALHn4yVLKLaGPkyMNOuqKvb8Yk+vc1R4rFR1ChK7k4CIHwxP03CQA3cMylWrjkz+WnudCwzXsKzDrgrDp7EUf3l",
    ]

    /// The root as a PEM file.
    public static var rootPEM: String { pem(x5c[2]) }

    /// The leaf's private key (the P-256 scalar, big-endian).
    static let leafPrivateKey = hex("b63448700da633917d19cb63aa4b0fe82bb1b109b21b0a09fd1116020da3dc8e")

    /// Signs the generator's JWS.
    static let signer: ES256Signer = {
        guard let signer = ES256Signer(privateKey: leafPrivateKey, x5c: x5c) else {
            preconditionFailure("the embedded test signing key is not a P-256 scalar")
        }
        return signer
    }()

    /// A certificate's base64 DER as a PEM block, 64 characters a line.
    public static func pem(_ base64: String) -> String {
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Bytes from hexadecimal text.
    public static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            let nibble: UInt8 = character <= 0x39 ? character - 0x30 : (character | 0x20) - 0x61 + 10
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }
}
