import CZlib
import Foundation

/// Reads a generated folder back: every input file's lines (gunzipping `.gz`), for the tests.
struct InputFolderReader {
    let directory: String

    /// Relative paths of the per-day input files, sorted (the order a reader takes them in).
    func inputFiles(in folder: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/" + folder)
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder + "/" + $0 }
    }

    func bytes(of relativePath: String) throws -> Data {
        let path = directory + "/" + relativePath
        guard relativePath.hasSuffix(".gz") else { return try Data(contentsOf: URL(fileURLWithPath: path)) }
        guard let file = gzopen(path, "rb") else { throw ReaderError("cannot open \(path)") }
        defer { gzclose(file) }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
            if count < 0 { throw ReaderError("gzip error in \(path)") }
            if count == 0 { break }
            result.append(contentsOf: buffer[0..<Int(count)])
        }
        return result
    }

    /// The file's lines without their newlines (the last newline ends the last line).
    func lines(of relativePath: String) throws -> [String] {
        let text = String(decoding: try bytes(of: relativePath), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

struct ReaderError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
