import Foundation
import Testing
@testable import IAPRecon

/// Streaming lines out of plain and gzip input files (CONTRACT.md §1: "A file ending in `.gz` is read through gzip").
@Suite("Line reader")
final class LineReaderTests {
    private let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.path + "/iaprecon-linereader-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    /// Every line as (number, text, tooLong).
    private func lines(_ path: String) throws -> [(number: Int, text: String, tooLong: Bool)] {
        var lines: [(number: Int, text: String, tooLong: Bool)] = []
        try LineReader.forEachLine(path: path) { line in
            lines.append((line.number, String(decoding: line.bytes, as: UTF8.self), line.tooLong))
        }
        return lines
    }

    private func texts(_ path: String) throws -> [String] { try lines(path).map(\.text) }

    /// Compresses `path` to `path.gz` with the system gzip, keeping the original.
    private func gzip(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-k", "-f", path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return path + ".gz"
    }

    @Test("blocks hold whole lines with their newlines, a line longer than a block whole, and the unterminated last line last")
    func blocksOfWholeLines() throws {
        let text = "a,1\r\nbb,22\r\n" + String(repeating: "x", count: 40) + "\r\nccc\r\n\r\nlast"
        let path = try write("blocks.csv", text)
        var blocks: [[UInt8]] = []
        try LineReader.forEachBlock(path: path, blockSize: 16) { blocks.append(Array($0)) }
        #expect(blocks.flatMap { $0 } == Array(text.utf8))
        #expect(blocks.dropLast().allSatisfy { $0.last == 0x0A })
        #expect(blocks.contains { String(decoding: $0, as: UTF8.self).contains(String(repeating: "x", count: 40) + "\r\n") })
        #expect(blocks.last.map { String(decoding: $0, as: UTF8.self) } == "last")
        var none: [[UInt8]] = []
        try LineReader.forEachBlock(path: try write("empty.csv", "")) { none.append(Array($0)) }
        #expect(none.isEmpty)
    }

    @Test("lines are numbered from 1; LF and CRLF endings are dropped; blank lines stay lines")
    func endings() throws {
        let path = try write("a.jsonl", "one\r\ntwo\n\nthree\r\n")
        let read = try lines(path)
        #expect(read.map(\.number) == [1, 2, 3, 4])
        #expect(read.map(\.text) == ["one", "two", "", "three"])
        #expect(read.allSatisfy { !$0.tooLong })
    }

    @Test("a last line without a newline is still a line; a lone CR inside a line is kept")
    func lastLineWithoutNewline() throws {
        #expect(try texts(try write("b.jsonl", "one\ntwo")) == ["one", "two"])
        #expect(try texts(try write("c.jsonl", "a\rb\r\n")) == ["a\rb"])
        #expect(try texts(try write("d.jsonl", "\n")) == [""])
    }

    @Test("an empty file has no lines")
    func emptyFile() throws {
        #expect(try lines(try write("empty.jsonl", [])).isEmpty)
    }

    @Test("a UTF-8 byte order mark is dropped from line 1 only")
    func byteOrderMark() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let path = try write("bom.csv", bom + Array("a,b\n".utf8) + bom + Array("c\n".utf8))
        #expect(try texts(path) == ["a,b", "\u{FEFF}c"])
    }

    @Test("a line longer than the 1 MiB block is read whole, and the lines around it too")
    func longLine() throws {
        let long = String(repeating: "0123456789abcdef", count: 3 << 16)  // 3 MiB
        let path = try write("long.jsonl", "before\n" + long + "\nafter")
        let read = try lines(path)
        #expect(read.count == 3)
        #expect(read.map(\.number) == [1, 2, 3])
        #expect(read[0].text == "before")
        #expect(read[1].text.utf8.count == 3 << 20)
        #expect(read[1].text == long)
        #expect(read[1].tooLong == false)
        #expect(read[2].text == "after")
    }

    @Test("a line ending exactly at the block boundary is not split")
    func blockBoundary() throws {
        let first = String(repeating: "x", count: LineReader.blockSize - 1)
        let read = try texts(try write("edge.jsonl", first + "\nnext\n"))
        #expect(read.count == 2)
        #expect(read[0].utf8.count == LineReader.blockSize - 1)
        #expect(read[1] == "next")
    }

    @Test("a .gz file gives the same lines as the plain file")
    func gzipFile() throws {
        let text = "{\"a\":1}\r\n\nsecond line\n" + String(repeating: "z", count: 1_500_000) + "\nlast"
        let plain = try write("data.jsonl", text)
        let compressed = try gzip(plain)
        let plainLines = try lines(plain)
        let gzipLines = try lines(compressed)
        #expect(gzipLines.count == 5)
        #expect(gzipLines.map(\.number) == plainLines.map(\.number))
        #expect(gzipLines.map(\.text) == plainLines.map(\.text))
        // The compressed bytes really differ from the text: the reader decompressed them.
        #expect(try Data(contentsOf: URL(fileURLWithPath: compressed)).prefix(2) == Data([0x1F, 0x8B]))
    }

    @Test("a corrupt gzip throws InputError 'not valid gzip' naming the file")
    func corruptGzip() throws {
        let corrupt = try write("corrupt.jsonl.gz", [0x1F, 0x8B, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        let error = try #require(throws: InputError.self) { try self.lines(corrupt) }
        #expect(error.path == corrupt)
        #expect(error.reason.hasPrefix("not valid gzip: "))
        #expect(error.description.hasPrefix("cannot read \(corrupt): not valid gzip: "))
    }

    @Test("a file that is not gzip at all but ends in .gz throws 'not valid gzip: no gzip header'")
    func plainTextNamedGz() throws {
        let path = try write("plain.jsonl.gz", "{\"a\":1}\n{\"b\":2}\n")
        let error = try #require(throws: InputError.self) { try self.lines(path) }
        #expect(error.reason == "not valid gzip: no gzip header")
    }

    @Test("a gzip cut off mid-stream throws 'not valid gzip' instead of yielding a partial last line")
    func truncatedGzip() throws {
        let plain = try write("whole.jsonl", String(repeating: "a line of text\n", count: 2000))
        let compressed = try Data(contentsOf: URL(fileURLWithPath: try gzip(plain)))
        let truncated = try write("truncated.jsonl.gz", Array(compressed.prefix(compressed.count / 2)))
        let error = try #require(throws: InputError.self) { try self.lines(truncated) }
        #expect(error.reason.hasPrefix("not valid gzip"))
    }

    @Test("a line appended after the compressed stream fails the file as 'not valid gzip' instead of vanishing")
    func dataAfterGzipStream() throws {
        let compressed = try Data(contentsOf: URL(fileURLWithPath: try gzip(try write("first.jsonl", "{\"a\":1}\n"))))
        let appended = try write("appended.jsonl.gz", Array(compressed) + Array("{\"b\":2}\n".utf8))
        let error = try #require(throws: InputError.self) { try self.lines(appended) }
        #expect(error.path == appended)
        #expect(error.reason == "not valid gzip: data after the compressed stream")
    }

    @Test("zero bytes padding a gzip file are read past, as gzip -d and Python read them; data after them is not")
    func zeroPaddedGzip() throws {
        let compressed = try Data(contentsOf: URL(fileURLWithPath: try gzip(try write("padded.jsonl", "{\"a\":1}\n"))))
        let padded = try write("padded.jsonl.gz", Array(compressed) + [UInt8](repeating: 0, count: 512))
        #expect(try lines(padded).map(\.text) == ["{\"a\":1}"])
        let after = try write("after.jsonl.gz", Array(compressed) + [0, 0, 0] + Array("{\"b\":2}\n".utf8))
        let error = try #require(throws: InputError.self) { try self.lines(after) }
        #expect(error.reason == "not valid gzip: data after the compressed stream")
    }

    @Test("concatenated gzip members read as one file, as gzip -d reads them")
    func multiMemberGzip() throws {
        let first = try Data(contentsOf: URL(fileURLWithPath: try gzip(try write("one.jsonl", "{\"a\":1}\n"))))
        let second = try Data(contentsOf: URL(fileURLWithPath: try gzip(try write("two.jsonl", String(repeating: "z", count: 300_000) + "\n{\"c\":3}"))))
        let members = try write("members.jsonl.gz", Array(first) + Array(second))
        let read = try lines(members)
        #expect(read.map(\.number) == [1, 2, 3])
        #expect(read[0].text == "{\"a\":1}")
        #expect(read[1].text.utf8.count == 300_000)
        #expect(read[2].text == "{\"c\":3}")
        #expect(try lines(try write("empty.jsonl.gz", [])).isEmpty)
    }

    @Test("byte ranges split a plain file into chunks: each line belongs to the chunk it starts in")
    func chunkRanges() throws {
        // Offsets: "aa" 0-1, "\n" 2, "bbbb" 3-6, "\n" 7, "cc" 8-9, "\n" 10.
        let path = try write("chunks.jsonl", "aa\nbbbb\ncc\n")
        func chunk(_ range: Range<Int>) throws -> [String] {
            var texts: [String] = []
            let count = try LineReader.forEachLine(path: path, range: range) { texts.append(String(decoding: $0.bytes, as: UTF8.self)) }
            #expect(count == texts.count)
            return texts
        }
        #expect(try chunk(0..<3) == ["aa"])
        #expect(try chunk(3..<11) == ["bbbb", "cc"])
        #expect(try chunk(0..<4) == ["aa", "bbbb"])
        #expect(try chunk(4..<11) == ["cc"])
        #expect(try chunk(4..<8) == [])
        #expect(try chunk(0..<11) == ["aa", "bbbb", "cc"])
    }

    @Test("a chunk's first line keeps a byte order mark: only the file's own first line drops one")
    func byteOrderMarkAtChunkStart() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        // Offsets: BOM 0-2, "aa" 3-4, "\n" 5, BOM 6-8, "bb" 9-10, "\n" 11.
        let path = try write("bom-chunks.jsonl", bom + Array("aa\n".utf8) + bom + Array("bb\n".utf8))
        func chunk(_ range: Range<Int>) throws -> [String] {
            var texts: [String] = []
            try LineReader.forEachLine(path: path, range: range) { texts.append(String(decoding: $0.bytes, as: UTF8.self)) }
            return texts
        }
        #expect(try chunk(6..<12) == ["\u{FEFF}bb"])
        #expect(try chunk(0..<6) == ["aa"])
        #expect(try texts(path) == ["aa", "\u{FEFF}bb"])
    }

    @Test("a missing file or a folder throws InputError with the path")
    func unreadable() throws {
        let missing = folder + "/missing.jsonl"
        let error = try #require(throws: InputError.self) { try self.lines(missing) }
        #expect(error.path == missing)
        #expect(error.reason == "No such file or directory")
        let folderError = try #require(throws: InputError.self) { try self.lines(self.folder) }
        #expect(folderError.reason == "not a regular file")
    }
}
