import IAPRecon
import IAPReconGenerator

extension SignatureCheck {
    /// Apple's root and the test root that signs `sample-data/` and generated inputs
    /// (`sample-data/trust/test-root.pem`, `TestSigningChain`): what the README's command trusts.
    static let testChain = SignatureCheck.verify(extraRoots: [Base64URL.decode(Array(TestSigningChain.x5c[2].utf8)) ?? []])
}
