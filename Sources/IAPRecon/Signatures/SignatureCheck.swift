import Foundation

/// Which JWS a run accepts (CONTRACT.md §1.8).
public enum SignatureCheck: Sendable, Equatable {
    /// Every JWS must chain to Apple Root CA - G3 or one of `extraRoots` (DER certificates,
    /// from `--trust-root`), and its ES256 signature must hold.
    case verify(extraRoots: [[UInt8]])
    /// `--trust-unsigned`: payloads are decoded without a check, for data a server verified upstream.
    case trustUnsigned

    /// Apple's root only: what a run does unless told otherwise.
    public static let appleOnly = SignatureCheck.verify(extraRoots: [])

    /// The mode as `summary.json` states it: `verified` (with how many roots besides Apple's, counted
    /// as `trusted` counts them) or `trust_unsigned`.
    var summary: JSONValue {
        switch self {
        case .verify(let roots): .object([("mode", .string("verified")), ("extra_trusted_roots", .int(Self.distinct(roots).count))])
        case .trustUnsigned: .object([("mode", .string("trust_unsigned"))])
        }
    }

    /// Names what the mode trusts, the same for the same set of roots (in any order, any given twice,
    /// Apple's own among them or not):
    /// `unchecked`, `apple`, or `apple+N:` and a digest of the N other roots. A stored file records
    /// the mode its JWS were judged by, and a run naming another is read again: the same roots
    /// named otherwise must not read months of files again.
    var trusted: String {
        switch self {
        case .trustUnsigned: return "unchecked"
        case .verify(let given):
            let roots = Self.distinct(given)
            if roots.isEmpty { return "apple" }
            let digest = SHA256.hash(roots.flatMap { SHA256.hash($0) })
            return "apple+\(roots.count):" + digest.prefix(8).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The roots `given` adds to Apple's, each once, in byte order: Apple Root CA - G3 named with
    /// `--trust-root` adds nothing, as every run trusts it.
    private static func distinct(_ given: [[UInt8]]) -> [[UInt8]] {
        Set(given).subtracting([AppleRootCA.g3DER]).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The summary of the mode `trusted` names (`SignatureCheck.trusted`), or nil for another text.
    static func summary(ofTrusted trusted: String) -> JSONValue? {
        switch trusted {
        case "unchecked": return SignatureCheck.trustUnsigned.summary
        case "apple": return SignatureCheck.appleOnly.summary
        default:
            guard trusted.hasPrefix("apple+"), let colon = trusted.firstIndex(of: ":"),
                  let count = Int(trusted[trusted.index(trusted.startIndex, offsetBy: 6)..<colon]) else { return nil }
            return .object([("mode", .string("verified")), ("extra_trusted_roots", .int(count))])
        }
    }

    /// Apple's root plus the certificates of `pemFiles`.
    /// - Throws: `InputError` naming a file that cannot be read or holds no certificate.
    public static func trusting(pemFiles: [String]) throws(InputError) -> SignatureCheck {
        var roots: [[UInt8]] = []
        for path in pemFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw InputError(path: path, reason: "cannot read the trusted root")
            }
            let certificates = PEM.certificates(String(decoding: data, as: UTF8.self))
            guard !certificates.isEmpty, certificates.allSatisfy({ Certificate(der: $0) != nil }) else {
                throw InputError(path: path, reason: "not a PEM certificate")
            }
            roots += certificates
        }
        return .verify(extraRoots: roots)
    }
}
