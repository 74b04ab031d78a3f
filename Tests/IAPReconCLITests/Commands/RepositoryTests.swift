import Foundation
import Testing

/// The repository stands alone: a fresh clone builds and passes its tests with nothing beside it.
@Suite("Repository")
struct RepositoryTests {
    /// Every tracked-looking text file: sources, tests, fixtures, scripts, docs and sample data.
    private func repositoryFiles() -> [String] {
        let root = Workspace.repository
        let skipped: Set<String> = [".build", ".git", ".swiftpm", "out", "reports", "logs"]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            if skipped.contains(relative.split(separator: "/").first.map(String.init) ?? "") {
                walker.skipDescendants()
                continue
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isFolder), !isFolder.boolValue,
               !relative.hasSuffix(".sqlite"), !relative.hasSuffix(".gz") {
                files.append(relative)
            }
        }
        return files.sorted()
    }

    @Test("no file reads or names the workspace's shared folder or an issue number")
    func noOutsideReferences() throws {
        let parent = "../" + "shared"
        let sharedFolders = ["spec", "fixtures", "reference"].map { "shared" + "/" + $0 }
        let issueNumber = try Regex("[Ii]ssue #?[0-9]")
        var offenders: [String] = []
        let files = repositoryFiles()
        #expect(files.contains("Tests/Fixtures/apple/signedTransaction.json"))
        for file in files {
            guard let data = FileManager.default.contents(atPath: Workspace.repository + "/" + file) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            if text.contains(parent) || sharedFolders.contains(where: text.contains) || text.contains(issueNumber) {
                offenders.append(file)
            }
        }
        #expect(offenders == [])
    }

    @Test("Apple's fixtures travel with their licence and provenance")
    func fixturesLicensed() throws {
        let folder = Workspace.repository + "/Tests/Fixtures/apple/"
        let licence = try String(contentsOfFile: folder + "LICENSE.txt", encoding: .utf8)
        #expect(licence.hasPrefix("Copyright 2023 Apple Inc."))
        #expect(licence.contains("Permission is hereby granted, free of charge"))
        let provenance = try String(contentsOfFile: folder + "PROVENANCE.md", encoding: .utf8)
        #expect(provenance.contains("apple/app-store-server-library-swift"))
        #expect(provenance.contains("8468d10f77cf2000f88de8fa722c5f6238ba1265"))
    }
}
