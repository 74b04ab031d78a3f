import Foundation
import Testing
@testable import IAPRecon

/// `iaprecon history` as a support agent types it and reads it.
@Suite("history command")
struct HistoryCommandTests {
    /// A workspace with the sample run's store.
    static func sampleStore() -> (Workspace, String)? {
        guard let work = try? Workspace() else { return nil }
        let db = work.path("s.sqlite")
        _ = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"])
        return (work, db)
    }

    @Test("--db naming a folder says it is a folder, not a store file")
    func databaseIsAFolder() throws {
        let work = try Workspace()
        let result = work.iaprecon(["history", "u_1", "--db", work.root])
        #expect(result.code == 1)
        #expect(result.err == "Error: cannot use store \(work.root): it is a directory, not a store file; --db names the store's file\n")
    }
}
