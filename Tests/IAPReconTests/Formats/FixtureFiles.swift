import Foundation

/// Apple's test payloads, copied into `Tests/Fixtures/apple/` with their licence and provenance.
///
/// Located from this file (`<repo>/Tests/IAPReconTests/Formats/`) so the tests run from any clone;
/// symlinks are resolved so a scratch package that links the tests finds them too. The folder sits
/// outside every test target, so SwiftPM neither compiles nor bundles it.
enum AppleFixtureFile {
    static let folder: String = {
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fixtures/apple").path
    }()

    /// The file's text exactly as stored.
    static func text(_ name: String) throws -> String {
        let path = folder + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FixtureMissing(path: path)
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Every file name in the folder.
    static func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    struct FixtureMissing: Error, CustomStringConvertible {
        var path: String
        var description: String { "fixture not found: \(path)" }
    }
}
