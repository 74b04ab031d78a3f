import Foundation

/// The Apple fixtures in `shared/fixtures/apple/`, which sits beside the repository.
///
/// Located from this file (`<repo>/Tests/IAPReconTests/Formats/`) so the tests run from a
/// fresh clone; symlinks are resolved so a scratch package that links the tests finds them too.
enum AppleFixtureFile {
    static let folder: String = {
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().appendingPathComponent("shared/fixtures/apple").path
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
