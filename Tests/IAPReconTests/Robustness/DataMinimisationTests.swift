import Foundation
import Testing
@testable import IAPRecon

/// Outputs and the store keep what reconciliation needs and the provenance, nothing more:
/// no receipt blobs, no JWS strings, no full IDFAs in anything a person reads.
@Suite("Data minimisation")
struct DataMinimisationTests {
    /// True when `text` holds a JWS (`eyJ…`) or a base64-like run of 64 characters or more.
    static func holdsBlob(_ text: String) -> Bool {
        if text.contains("eyJ") { return true }
        var run = 0
        for scalar in text.unicodeScalars {
            let token = CharacterSet.alphanumerics.contains(scalar) || "+/=_-".unicodeScalars.contains(scalar)
            run = token ? run + 1 : 0
            if run >= 64 { return true }
        }
        return false
    }

    @Test("no output of the sample run, and no stored text, holds a JWS, a receipt blob or a full IDFA")
    func outputs() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out,
                                        jobs: 2, signatures: .testChain, reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let database = try scenario.open()
        var idfas: [String] = []
        try database.forEach("SELECT idfa FROM raw_registrations__users WHERE idfa IS NOT NULL") { idfas.append($0.string(0)) }
        #expect(!idfas.isEmpty)
        for name in SampleDataTests.outputs {
            let text = try scenario.output(name)
            #expect(!Self.holdsBlob(text), "\(name) holds a blob")
            for idfa in idfas { #expect(!text.contains(idfa), "\(name) holds an IDFA") }
        }
        // The store keeps no payloads: the only free text is the redacted reject lines.
        var rejectTexts: [String] = []
        try database.forEach("SELECT text FROM rejects") { rejectTexts.append($0.string(0)) }
        #expect(rejectTexts.allSatisfy { !Self.holdsBlob($0) })
        var history: [String] = []
        try database.forEach("SELECT user_id FROM raw_registrations__users") { history.append($0.string(0)) }
        for user in history {
            let story = try UserHistory.load(database, .user(user))
            for event in story.events {
                let text = [event.id, event.detail, event.product, event.source].joined(separator: " ")
                #expect(!Self.holdsBlob(text))
                for idfa in idfas { #expect(!text.contains(idfa)) }
            }
        }
    }
}
