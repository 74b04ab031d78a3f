import Testing
@testable import IAPRecon

/// A file's place in path order is found by its id (`SourceFiles`): held by position for the ids
/// a ledger numbers from 1, in a table for any other. Both must give the same places.
@Suite("Files' places in path order by id")
struct SourceFilesTests {
    /// Ids near and far from the others, out of path order, and one far beyond them.
    static let paths: [Int64: String] = [3: "b/2.csv", 1: "a.csv", 2: "b/10.csv", 9: "c.csv", 40: "a/z.csv", 1_000_000_000_000: "d.csv",
                                         0: "_.csv"]

    @Test("every stored file is at its path's place; an id the ledger does not have is at none")
    func places() {
        let files = SourceFiles(paths: Self.paths)
        let inPathOrder = Self.paths.sorted { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }.map(\.key)
        for (place, file) in inPathOrder.enumerated() {
            #expect(files.place(of: file) == Int32(place), "file \(file)")
            #expect(files.path(Int32(place)) == Self.paths[file])
        }
        for missing: Int64 in [-1, 4, 8, 10, 39, 41, 999, 1_000_000_000_001, .max, .min] {
            #expect(files.place(of: missing) == nil, "file \(missing)")
        }
    }

    @Test("a line of a file the ledger does not have puts that file after the stored ones, found by id after")
    func unknownFiles() {
        var files = SourceFiles(paths: Self.paths)
        let stored = Int32(Self.paths.count)
        #expect(files.line(file: 4, 7) == SourceLine(file: stored, line: 7))
        #expect(files.line(file: 5_000_000, 1) == SourceLine(file: stored + 1, line: 1))
        #expect(files.line(file: 4, 9) == SourceLine(file: stored, line: 9))
        #expect(files.place(of: 4) == stored)
        #expect(files.place(of: 5_000_000) == stored + 1)
        #expect(files.text(SourceLine(file: stored, line: 7)) == "file 4:7")
        #expect(files.line(file: 9, 2) == SourceLine(file: files.place(of: 9) ?? -1, line: 2))
    }

    @Test("a ledger of one far id, or of none, finds it and nothing else")
    func sparse() {
        let far = SourceFiles(paths: [.max: "x.csv"])
        #expect(far.place(of: .max) == 0)
        #expect(far.place(of: 0) == nil && far.place(of: 1) == nil)
        let none = SourceFiles(paths: [:])
        #expect(none.place(of: 0) == nil && none.place(of: 1) == nil)
    }
}
