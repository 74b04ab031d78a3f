import COpenSSL
import Foundation
import Synchronization

/// Checks JWS signatures as Apple's App Store Server Library does (CONTRACT.md §1.8).
///
/// A JWS is trusted when its header says `ES256`, its `x5c` chain verifies up to a trusted
/// root, the chain was valid when the payload was signed, and the signature over
/// `header.payload` holds for the leaf's key. An App Store chain (any environment but
/// `Xcode` and `LocalTesting`) must also be three certificates long with Apple's marker
/// extensions on the leaf and the intermediate; a locally signed one (Xcode, LocalTesting)
/// needs a root given with `--trust-root` instead.
///
/// The same few chains sign millions of payloads, and a receipt repeats the JWS of earlier
/// receipts: each distinct header (chain) is verified once, and a JWS whose signature was
/// checked lately is not checked again (`SignatureVerdicts`, keyed by the digest of
/// `header.payload` and the signature, so a signature copied under another payload is another
/// JWS). Both sit behind mutexes, since ingest's parsers share one verifier; each chain keeps
/// ready verify contexts for its key, since setting one up costs libcrypto more than the ECDSA
/// check itself.
public final class JWSVerifier: Sendable {
    /// The leaf's marker: "Mac App Store and iTunes Store Receipt Signing".
    static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// The intermediate's marker: "Apple Worldwide Developer Relations".
    static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    public let check: SignatureCheck
    /// The trusted roots; nil with `--trust-unsigned`, or when they cannot be loaded (then nothing verifies).
    private let store: TrustStore?
    private let chains = Mutex<ChainVerdicts>(ChainVerdicts())
    private let signatures: Mutex<SignatureVerdicts>

    /// No checks at all: for tests of what a payload says, and `--trust-unsigned`.
    public static let unchecked = JWSVerifier(.trustUnsigned)

    /// How many signatures a chain's key checks before it gets a table of its multiples (`SigningKey`).
    private let keyTableAfter: Int

    public convenience init(_ check: SignatureCheck) {
        self.init(check, keyTableAfter: SigningKey.tableAfter)
    }

    /// `rememberedSignatures`: how many signature verdicts it keeps (`SignatureVerdicts`).
    init(_ check: SignatureCheck, keyTableAfter: Int, rememberedSignatures: Int = SignatureVerdicts.capacity) {
        self.check = check
        self.keyTableAfter = keyTableAfter
        signatures = Mutex(SignatureVerdicts(capacity: rememberedSignatures))
        switch check {
        case .trustUnsigned: store = nil
        case .verify(let extraRoots): store = TrustStore(apple: AppleRootCA.g3DER, extra: extraRoots)
        }
    }

    /// Nil when `jws` may be trusted, else why not (a reject reason).
    ///
    /// `environment` is its payload's (`Xcode` and `LocalTesting` are signed locally), and
    /// `signedMs` its `signedDate`, the moment the chain must have been valid.
    public func failure(_ jws: String, signedMs: Int64?, environment: String?) -> String? {
        judge(jws, signedMs: signedMs, environment: environment).failure
    }

    /// `failure`, and the validity of the chain `signedMs` was held to: nil when the verdict does
    /// not depend on the signing time (nothing is checked, or the JWS fails before its time is).
    /// Another signing time inside that validity gets the same verdict, and so does another on
    /// the same side of it.
    func judge(_ jws: String, signedMs: Int64?, environment: String?) -> (failure: String?, validity: ClosedRange<Int64>?) {
        var text = jws
        return text.withUTF8 { judge($0, signedMs: signedMs, environment: environment) }
    }

    /// `judge` of the JWS whose text is `bytes`: ingest reads a JWS where it lies in its line.
    func judge(_ bytes: UnsafeBufferPointer<UInt8>, signedMs: Int64?, environment: String?) -> (failure: String?, validity: ClosedRange<Int64>?) {
        if check == .trustUnsigned { return (nil, nil) }
        guard let store else { return ("untrusted certificate chain (the trusted roots cannot be loaded)", nil) }
        guard let (headerEnd, payloadEnd) = JWS.dots(in: bytes) else { return ("bad signature", nil) }
        let headerBytes = UnsafeBufferPointer(rebasing: bytes[..<headerEnd])
        let chain = chains.withLock { $0.verdict(of: headerBytes) } ?? {
            let verdict = ChainVerdict(header: headerBytes, store: store, keyTableAfter: keyTableAfter)
            chains.withLock { $0.add(verdict, of: headerBytes) }
            return verdict
        }()
        if let failure = chain.failure(local: Self.isLocal(environment)) { return (failure, nil) }
        let validity = signedMs == nil ? nil : chain.validity
        if let signedMs, let validity, !validity.contains(signedMs) {
            let failure = signedMs < validity.lowerBound ? "certificate not yet valid at signing time" : "certificate expired at signing time"
            return (failure, validity)
        }
        guard let raw = Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[(payloadEnd + 1)...])), raw.count == 64 else {
            return ("bad signature", validity)
        }
        let digest = SHA256.hash(UnsafeBufferPointer(rebasing: bytes[..<payloadEnd]))
        let key = SignedDigest(digest: digest, signature: raw)
        if let known = signatures.withLock({ $0.verdict(of: key) }) { return (known ? nil : "bad signature", validity) }
        let valid = chain.key?.verify(digest: digest, signature: raw) ?? false
        signatures.withLock { $0.remember(valid, of: key) }
        return (valid ? nil : "bad signature", validity)
    }

    /// Whether a payload of `environment` is signed locally (Xcode's StoreKit testing), not by the App Store.
    static func isLocal(_ environment: String?) -> Bool {
        environment == "Xcode" || environment == "LocalTesting"
    }

    /// How many chains' keys check through a table of their multiples.
    var tabledKeys: Int {
        chains.withLock { $0.all.count { $0.key?.hasTable == true } }
    }

    /// How many signatures the chains' keys have checked.
    var checkedSignatures: Int {
        chains.withLock { $0.all.reduce(0) { $0 + ($1.key?.checked ?? 0) } }
    }

    /// How many headers' verdicts it keeps now.
    var rememberedChainCount: Int {
        chains.withLock { $0.all.count }
    }

    /// How many bytes of headers it keeps to compare byte for byte.
    var rememberedHeaderBytes: Int {
        chains.withLock { $0.recentBytes }
    }

    /// How many signature verdicts it keeps now.
    var rememberedSignatureCount: Int {
        signatures.withLock { $0.count }
    }
}

/// The verdicts of the headers seen, by the SHA-256 of the header's bytes.
///
/// A header carries its certificate chain, a few kilobytes, and nearly every JWS of a run has one
/// of a few headers: the last few are compared byte for byte first, which costs less than hashing
/// the header whole for every JWS. Headers are told apart by their bytes, never as Swift strings:
/// a string compares by canonical equivalence, so a header with U+212A KELVIN SIGN in place of a
/// "K" would be the genuine header's key, and whichever came first would give its verdict to the
/// other. Keyed by digest, the verdicts kept hold 32 bytes a header, however long a hostile header is.
struct ChainVerdicts {
    private var byHeader: [SIMD4<UInt64>: ChainVerdict] = [:]
    /// The headers last added or found, newest last.
    private var recent: [(header: [UInt8], verdict: ChainVerdict)] = []
    static let recentCount = 4
    /// The longest header kept to compare byte for byte: Apple's, with three certificates, has a few
    /// kilobytes; a longer one is found by its digest.
    static let recentHeaderLimit = 1 << 16
    /// The most headers whose verdicts are kept: a run's JWS have a few, but damaged or hostile
    /// input can bring a new one on every line, and a header holds a chain of a few kilobytes.
    /// Past it, the verdicts start over; a header forgotten is only judged again.
    static let limit = 1024

    var all: Dictionary<SIMD4<UInt64>, ChainVerdict>.Values { byHeader.values }

    /// The bytes of the headers kept to compare byte for byte.
    var recentBytes: Int { recent.reduce(0) { $0 + $1.header.count } }

    /// The verdict of `header`, when it has one.
    mutating func verdict(of header: UnsafeBufferPointer<UInt8>) -> ChainVerdict? {
        for (header: known, verdict: verdict) in recent.reversed() where known.count == header.count {
            let same = known.withUnsafeBufferPointer { known in
                guard let mine = known.baseAddress, let theirs = header.baseAddress else { return true }  // both empty
                return memcmp(mine, theirs, header.count) == 0
            }
            if same { return verdict }
        }
        guard let verdict = byHeader[Self.key(header)] else { return nil }
        remember(header, verdict)
        return verdict
    }

    mutating func add(_ verdict: ChainVerdict, of header: UnsafeBufferPointer<UInt8>) {
        if byHeader.count >= Self.limit { byHeader.removeAll() }
        byHeader[Self.key(header)] = verdict
        remember(header, verdict)
    }

    /// The SHA-256 of `header`'s bytes, as four words.
    private static func key(_ header: UnsafeBufferPointer<UInt8>) -> SIMD4<UInt64> {
        SHA256.hash(header).withUnsafeBytes { digest in
            func word(_ index: Int) -> UInt64 { digest.loadUnaligned(fromByteOffset: 8 * index, as: UInt64.self) }
            return SIMD4(word(0), word(1), word(2), word(3))
        }
    }

    private mutating func remember(_ header: UnsafeBufferPointer<UInt8>, _ verdict: ChainVerdict) {
        // A hostile header may be as long as a line: kept, a few of them would hold that much each for the whole run.
        guard header.count <= Self.recentHeaderLimit else { return }
        if recent.count == Self.recentCount { recent.removeFirst() }
        recent.append((Array(header), verdict))
    }
}

/// What one JWS header (its `alg` and `x5c` chain) is worth, worked out once.
struct ChainVerdict: Sendable {
    /// The most `x5c` certificates read: Apple's chains have three, Xcode's one.
    static let longestChain = 10

    /// Why no payload under this header can be trusted, whatever its environment.
    var failure: String?
    /// Why an App Store payload cannot be trusted under it (length or markers), when only that fails.
    var appStoreFailure: String?
    /// The chain verified to a root given with `--trust-root` (not Apple's).
    var anchoredAtExtraRoot = false
    /// When every certificate of the chain was valid.
    var validity: ClosedRange<Int64>?
    var key: SigningKey?

    func failure(local: Bool) -> String? {
        if let failure { return failure }
        if local { return anchoredAtExtraRoot ? nil : "untrusted certificate chain (locally signed; trust its root with --trust-root)" }
        return appStoreFailure
    }

    init(header: UnsafeBufferPointer<UInt8>, store: TrustStore, keyTableAfter: Int) {
        guard let decoded = Base64URL.decode(header), case .object(let fields)? = try? JSONParser.parse(decoded) else {
            failure = "bad signature (header is not base64url JSON)"
            return
        }
        // A JSON reader that keeps a name's last value would verify another algorithm or chain
        // than this one, which keeps its first: such a header is no one header.
        for name in ["alg", "x5c"] where fields.firstMember(name)?.repeatedOtherwise == true {
            failure = "bad signature (the header gives '\(name)' twice)"
            return
        }
        guard let algorithm = fields["alg"] else {
            failure = "unsupported alg (the header has none)"
            return
        }
        guard algorithm.stringValue == "ES256" else {
            failure = "unsupported alg \(Redaction.quoted(algorithm))"
            return
        }
        guard case .array(let encoded)? = fields["x5c"], !encoded.isEmpty else {
            failure = "untrusted certificate chain (no x5c header)"
            return
        }
        // Each entry costs a certificate's parse and OpenSSL's search of them all for issuers: a hostile
        // header of thousands would cost far more than reading its line, for a chain nobody signs with.
        guard encoded.count <= Self.longestChain else {
            failure = "untrusted certificate chain (\(counted(encoded.count, "certificate")), more than \(Self.longestChain))"
            return
        }
        var certificates: [Certificate] = []
        for element in encoded {
            guard let text = element.stringValue, let der = Base64URL.decode(Array(text.utf8)), let certificate = Certificate(der: der) else {
                failure = "untrusted certificate chain (an x5c entry is not a certificate)"
                return
            }
            certificates.append(certificate)
        }
        let verifiedPath: [Certificate]
        switch store.verify(certificates) {
        case .failure(let why):
            failure = "untrusted certificate chain (\(why.reason))"
            return
        case .success(let path):
            verifiedPath = path
            anchoredAtExtraRoot = path.last.map { $0.der != store.appleRoot.der } ?? false
            var validity: ClosedRange<Int64>? = Int64.min...Int64.max
            for certificate in path {
                guard let range = certificate.validity, let current = validity,
                      range.lowerBound <= current.upperBound, current.lowerBound <= range.upperBound else { validity = nil; break }
                validity = max(range.lowerBound, current.lowerBound)...min(range.upperBound, current.upperBound)
            }
            guard let validity else {
                failure = "certificate expired at signing time"
                return
            }
            self.validity = validity
        }
        key = SigningKey(certificates[0], tableAfter: keyTableAfter)
        if key == nil {
            failure = "bad signature (the leaf's key is not a P-256 key, which ES256 needs)"
            return
        }
        // Apple's library verifies the leaf through x5c[1] alone, up to a trusted root, and reads the
        // markers on that chain: the path OpenSSL found must be x5c[0], x5c[1] and a trusted root.
        if certificates.count != 3 {
            appStoreFailure = "untrusted certificate chain (\(counted(certificates.count, "certificate")), not 3)"
        } else if verifiedPath.count != 3 {
            appStoreFailure = "untrusted certificate chain (\(counted(verifiedPath.count, "certificate")) up to the trusted root, not 3)"
        } else if verifiedPath[1].der != certificates[1].der {
            appStoreFailure = "untrusted certificate chain (the second x5c certificate did not issue the leaf)"
        } else if !certificates[0].hasExtension(JWSVerifier.leafMarkerOID) {
            appStoreFailure = "untrusted certificate chain (the leaf lacks Apple's receipt-signing marker)"
        } else if !certificates[1].hasExtension(JWSVerifier.intermediateMarkerOID) {
            appStoreFailure = "untrusted certificate chain (the intermediate lacks Apple's WWDR marker)"
        }
    }
}

/// The trusted roots in an OpenSSL `X509_STORE`, which verifies chains from several threads.
final class TrustStore: @unchecked Sendable {
    let appleRoot: Certificate
    private let roots: [Certificate]
    private let store: OpaquePointer

    init?(apple: [UInt8], extra: [[UInt8]]) {
        guard let appleRoot = Certificate(der: apple), let store = X509_STORE_new() else { return nil }
        self.appleRoot = appleRoot
        self.roots = [appleRoot] + extra.compactMap(Certificate.init(der:))
        self.store = store
        for root in roots { X509_STORE_add_cert(store, root.handle) }
    }

    deinit { X509_STORE_free(store) }

    /// The verified path, leaf first and trusted root last, or OpenSSL's reason.
    ///
    /// Time is not checked here: a chain is judged at each payload's signing time, from the
    /// path's validity. The `x5c` root itself is never trusted for being there; only roots of
    /// this store anchor a path.
    func verify(_ chain: [Certificate]) -> Result<[Certificate], ChainError> {
        guard let context = X509_STORE_CTX_new(), let untrusted = iaprecon_certificate_stack() else {
            return .failure(ChainError(reason: "out of memory"))
        }
        defer {
            X509_STORE_CTX_free(context)
            iaprecon_certificate_stack_free(untrusted)
        }
        for certificate in chain.dropFirst() { _ = iaprecon_certificate_stack_push(untrusted, certificate.handle) }
        guard X509_STORE_CTX_init(context, store, chain[0].handle, untrusted) == 1 else {
            return .failure(ChainError(reason: "out of memory"))
        }
        X509_STORE_CTX_set_flags(context, UInt(X509_V_FLAG_NO_CHECK_TIME))
        guard X509_verify_cert(context) == 1 else {
            return .failure(ChainError(reason: String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))))))
        }
        // OpenSSL's path holds the very certificates it was given (the untrusted stack's and the store's):
        // each is found by its handle, and a path with one that is not found is no path, rather than a
        // shorter one whose validity would leave that certificate out.
        let byHandle = Dictionary((chain + roots).map { ($0.handle, $0) }, uniquingKeysWith: { first, _ in first })
        guard let verified = X509_STORE_CTX_get0_chain(context) else { return .failure(ChainError(reason: "no chain")) }
        var path: [Certificate] = []
        for index in 0..<iaprecon_certificate_stack_count(verified) {
            guard let handle = iaprecon_certificate_stack_at(verified, index), let known = byHandle[handle] else {
                return .failure(ChainError(reason: "the verified path holds a certificate not given"))
            }
            path.append(known)
        }
        return .success(path)
    }
}

struct ChainError: Error {
    var reason: String
}

/// The leaf's public key, with verify contexts ready for it.
///
/// A key that has checked `tableAfter` signatures gets a table of its multiples
/// (`PrecomputedVerifyKey`), which then checks each of the rest in a fraction of libcrypto's time.
/// Not before: a table costs what it saves on about that many, and a file may carry many chains
/// used once each.
final class SigningKey: @unchecked Sendable {
    /// How many signatures a key checks before it gets its table.
    static let tableAfter = 1_000

    private let certificate: Certificate
    private let tableAfter: Int
    /// Contexts not in use; each is used by one thread at a time.
    private let ready = Mutex<[VerifyContext]>([])
    private let uses = Atomic<Int>(0)
    /// The key with its table, once made; `.failed` when it could not be (then libcrypto's verify goes on).
    private let table = Mutex<Table>(.notMade)

    private enum Table: @unchecked Sendable {
        case notMade, made(PrecomputedVerifyKey), failed
    }

    private struct VerifyContext: @unchecked Sendable {
        let handle: OpaquePointer
    }

    /// The leaf's key, when it is a P-256 key: ES256 is ECDSA on that curve (RFC 7518 §3.4), and a
    /// key on another 256-bit curve (secp256k1) or with explicit curve parameters signs nothing for it.
    init?(_ certificate: Certificate, tableAfter: Int = SigningKey.tableAfter) {
        var group = [CChar](repeating: 0, count: 64)
        var length = 0
        guard let key = X509_get0_pubkey(certificate.handle), EVP_PKEY_get_base_id(key) == EVP_PKEY_EC,
              EVP_PKEY_get_group_name(key, &group, group.count, &length) == 1,
              OBJ_sn2nid(group) == NID_X9_62_prime256v1 || EC_curve_nist2nid(group) == NID_X9_62_prime256v1 else { return nil }
        self.certificate = certificate
        self.tableAfter = tableAfter
    }

    deinit { ready.withLock { $0.forEach { EVP_PKEY_CTX_free($0.handle) } } }

    /// Whether `raw` (ES256's R||S) signs `digest`: through the key's table once it has one.
    func verify(digest: [UInt8], signature raw: [UInt8]) -> Bool {
        if let tabled = tabledKey() { return tabled.verify(digest: digest, signature: raw) }
        return verifyWithoutTable(digest: digest, signature: raw)
    }

    /// The key with its table, made once by the first call past `tableAfter` uses; a call that
    /// finds it being made waits for it.
    private func tabledKey() -> PrecomputedVerifyKey? {
        let count = uses.add(1, ordering: .relaxed).newValue
        guard count >= tableAfter else { return nil }
        return table.withLock { state in
            switch state {
            case .made(let key): return key
            case .failed: return nil
            case .notMade:
                guard let publicKey = X509_get0_pubkey(certificate.handle), let key = PrecomputedVerifyKey(publicKey) else {
                    state = .failed
                    return nil
                }
                state = .made(key)
                return key
            }
        }
    }

    /// How many signatures it has checked.
    var checked: Int { uses.load(ordering: .relaxed) }

    /// Whether the key checks through its table by now.
    var hasTable: Bool {
        table.withLock { if case .made = $0 { true } else { false } }
    }

    /// libcrypto's own verify. ES256: the JWS carries R||S (two 32-byte integers); libcrypto wants them DER-encoded.
    private func verifyWithoutTable(digest: [UInt8], signature raw: [UInt8]) -> Bool {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        let der = [0x30, UInt8(body.count)] + body
        guard let context = ready.withLock({ $0.popLast() }) ?? makeContext() else { return false }
        defer { ready.withLock { $0.append(context) } }
        return EVP_PKEY_verify(context.handle, der, der.count, digest, digest.count) == 1
    }

    private func makeContext() -> VerifyContext? {
        guard let key = X509_get0_pubkey(certificate.handle), let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return VerifyContext(handle: context)
    }
}

/// A signature-cache key: the digest of `header.payload` and the signature over it, held inline.
struct SignedDigest: Equatable, Sendable {
    var digest: SIMD4<UInt64>
    var signature: SIMD8<UInt64>

    /// `digest` is SHA-256's 32 bytes, `signature` ES256's 64.
    init(digest: [UInt8], signature: [UInt8]) {
        func word(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: 8 * index, as: UInt64.self) }
        self.digest = digest.withUnsafeBytes { SIMD4(word($0, 0), word($0, 1), word($0, 2), word($0, 3)) }
        self.signature = signature.withUnsafeBytes { bytes in
            SIMD8(word(bytes, 0), word(bytes, 1), word(bytes, 2), word(bytes, 3), word(bytes, 4), word(bytes, 5), word(bytes, 6), word(bytes, 7))
        }
    }
}

/// The verdicts of the signatures checked last, in a fixed number of slots: a JWS read again (a
/// receipt repeats the JWS of the user's earlier receipts; a notification is sent again) is not
/// checked again, and the memory stays the same however many JWS a run reads. A signature's slot
/// is picked by its digest; a newer signature takes the slot over, and the older one is checked
/// again if it comes back.
struct SignatureVerdicts: Sendable {
    /// Slots of a verifier's memo: a few megabytes.
    static let capacity = 1 << 16

    private var slots: [(key: SignedDigest, valid: Bool)?] = []
    private let slotCount: Int

    /// `capacity` is rounded up to a power of two.
    init(capacity: Int) {
        var slotCount = 1
        while slotCount < capacity { slotCount <<= 1 }
        self.slotCount = slotCount
    }

    /// A SHA-256 digest's bits are uniform: its first word picks the slot.
    private func slot(_ key: SignedDigest) -> Int { Int(truncatingIfNeeded: key.digest[0]) & (slotCount - 1) }

    func verdict(of key: SignedDigest) -> Bool? {
        guard !slots.isEmpty, let kept = slots[slot(key)], kept.key == key else { return nil }
        return kept.valid
    }

    mutating func remember(_ valid: Bool, of key: SignedDigest) {
        // Made at the first signature: a run that checks none holds no slots.
        if slots.isEmpty { slots = Array(repeating: nil, count: slotCount) }
        slots[slot(key)] = (key, valid)
    }

    /// How many verdicts it holds.
    var count: Int { slots.count { $0 != nil } }
}
