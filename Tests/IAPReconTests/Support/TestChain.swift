import IAPRecon
import IAPReconGenerator

extension SignatureCheck {
    /// Apple's root and the test root that signs `sample-data/` and generated inputs
    /// (`sample-data/trust/test-root.pem`, `TestSigningChain`): what the README's command trusts.
    static let testChain = SignatureCheck.verify(extraRoots: [Base64URL.decode(Array(TestSigningChain.x5c[2].utf8)) ?? []])
}

extension LineRules {
    /// Rules that check signatures with `verifier` (and its caches), for tests that look at one verifier.
    init(verifier: JWSVerifier) {
        self.init()
        signatures = verifier
    }
}
