import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// A damaged store never passes for a good one: whatever page is hit, `run` exits 1 with a one-line reason.
@Suite("Damaged store")
struct StoreDamageTests {
    /// Overwrites page `page` (0-based, 4 KB) of the file at `path` with bytes that depend on `page` only.
    static func damage(_ path: String, page: Int) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        var state = UInt64(page) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        let noise = (0..<4096).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        try handle.seek(toOffset: UInt64(page * 4096))
        handle.write(Data(noise))
    }

    @Test("a store with any one of its pages overwritten makes the next run over the same input exit 1 with one line; the undamaged copy exits 0")
    func damagedPages() throws {
        let work = try Workspace()
        let base = work.path("base.sqlite")
        let first = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", base, "--out", work.path("out"), "--quiet"])
        try #require(first.code == 0)
        #expect(!FileManager.default.fileExists(atPath: base + "-wal"), "the store is whole in its main file")
        let pages = try #require(try FileManager.default.attributesOfItem(atPath: base)[.size] as? Int) / 4096
        #expect(pages > 40)

        let intact = work.path("intact.sqlite")
        try FileManager.default.copyItem(atPath: base, toPath: intact)
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", intact, "--out", work.path("out"), "--quiet"]).code == 0)

        // Every third page: raw tables a night does not read, indexes, the tables it does read, the header.
        for page in stride(from: 0, to: pages, by: 3) {
            let copy = work.path("damaged-\(page).sqlite")
            try FileManager.default.copyItem(atPath: base, toPath: copy)
            try Self.damage(copy, page: page)
            let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", copy, "--out", work.path("out-\(page)"), "--quiet"])
            #expect(result.code == 1, "page \(page): exit \(result.code)")
            #expect(result.err.hasPrefix("Error: ") && result.err.split(separator: "\n").count == 1, "page \(page): \(result.err)")
            #expect(!result.err.contains("***"), "page \(page): \(result.err)")
        }
    }
}
