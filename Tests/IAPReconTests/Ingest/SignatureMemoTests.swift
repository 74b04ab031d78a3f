import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// A verifier remembers the verdicts of the signatures it checked last, so that a JWS read again
/// is not checked again; it remembers a fixed number of them, so that a run's memory does not
/// grow with how many JWS it reads.
@Suite("Remembered signature verdicts")
struct SignatureMemoTests {
    private func jws(_ number: Int) -> String {
        TestSigningChain.signer.jws(payload: Array("{\"n\":\(number)}".utf8), nonceSeed: Array("memo \(number)".utf8))
    }

    /// `jws` with its payload swapped for another's: its signature no longer holds.
    private func altered(_ number: Int) -> String {
        let parts = jws(number).split(separator: ".")
        return parts[0] + "." + jws(number + 1_000).split(separator: ".")[1] + "." + parts[2]
    }

    @Test("more distinct JWS than the verifier remembers: it keeps that many verdicts, and each JWS read again gets its verdict")
    func boundedMemo() throws {
        let verifier = JWSVerifier(.testChain, keyTableAfter: .max, rememberedSignatures: 8)
        for round in 0..<2 {
            for number in 0..<40 {
                #expect(verifier.failure(jws(number), signedMs: nil, environment: "Production") == nil, "JWS \(number), round \(round)")
                #expect(verifier.failure(altered(number), signedMs: nil, environment: "Production") == "bad signature",
                        "JWS \(number) altered, round \(round)")
            }
        }
        #expect(verifier.rememberedSignatureCount > 0)
        #expect(verifier.rememberedSignatureCount <= 8)
        // Most were pushed out before the second round: it checked them again.
        #expect(verifier.checkedSignatures > 80 + 40)
    }

    @Test("a JWS read again right after is answered from the memo, good or bad")
    func repeatRemembered() throws {
        let verifier = JWSVerifier(.testChain, keyTableAfter: .max, rememberedSignatures: 8)
        #expect(verifier.failure(jws(1), signedMs: nil, environment: "Production") == nil)
        #expect(verifier.failure(altered(1), signedMs: nil, environment: "Production") == "bad signature")
        #expect(verifier.checkedSignatures == 2)
        #expect(verifier.failure(jws(1), signedMs: nil, environment: "Production") == nil)
        #expect(verifier.failure(altered(1), signedMs: nil, environment: "Production") == "bad signature")
        #expect(verifier.checkedSignatures == 2, "both verdicts came from the memo")
    }
}
