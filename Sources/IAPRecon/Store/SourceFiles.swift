/// The stored files in path order: what "file order" means everywhere in the pipeline.
///
/// Stored rows keep where they were read as a `file_id` and a line number. A reader turns those
/// into `SourceLine`s, which sort by the file's place in path order and then by line, and back into
/// `path:line` only where a user reads them (findings' `sources`, `history`, attribution): this is
/// the one place that spells that text in Swift (`text`); `StoredLedger.pathAndLineSQL` spells it in SQL.
struct SourceFiles {
    /// By place: the stored files' paths in path order, then any file id no longer stored.
    private var paths: [String] = []
    /// The places by file id, for ids from 0 below `placesByID.count` (-1: no such file): ids are
    /// numbered from 1 as files are stored, and the join finds a place for every row it reads,
    /// without hashing the id.
    private var placesByID: [Int32] = []
    /// The places of any other ids.
    private var otherPlaces: [Int64: Int32] = [:]

    /// The files `paths` names by id, in path order as SQLite sorts text (byte by byte): the ledger
    /// held as values.
    init(paths: [Int64: String]) {
        // Ids held by position up to a few times as many as the files: a ledger of few files with
        // a large id keeps that one in `otherPlaces`.
        let limit = 4 * paths.count + 64
        let highest = paths.keys.max() ?? -1
        placesByID = Array(repeating: -1, count: highest < Int64(limit) ? Int(max(highest + 1, 0)) : limit)
        for (file, path) in paths.sorted(by: { $0.value.utf8.lexicographicallyPrecedes($1.value.utf8) }) {
            note(file, at: Int32(self.paths.count))
            self.paths.append(path)
        }
    }

    private mutating func note(_ file: Int64, at place: Int32) {
        if file >= 0, file < Int64(placesByID.count) {
            placesByID[Int(file)] = place
        } else {
            otherPlaces[file] = place
        }
    }

    /// The source of line `line` of the file stored as `file`. A file id the ledger no longer has
    /// (never expected: its rows go with it) sorts after every stored file and reads `file N`.
    mutating func line(file: Int64, _ line: Int64) -> SourceLine {
        if let place = place(of: file) { return SourceLine(file: place, line: line) }
        let place = Int32(paths.count)
        note(file, at: place)
        paths.append("file \(file)")
        return SourceLine(file: place, line: line)
    }

    /// Where the file stored as `file` is in path order; nil for a file id the ledger does not have.
    func place(of file: Int64) -> Int32? {
        guard file >= 0, file < Int64(placesByID.count) else { return otherPlaces[file] }
        let place = placesByID[Int(file)]
        return place < 0 ? nil : place
    }

    /// The path of the file at `place`.
    func path(_ place: Int32) -> String {
        Int(place) < paths.count ? paths[Int(place)] : "file ?"
    }

    /// `path:line`, as `rejects` names a line.
    func text(_ source: SourceLine) -> String {
        path(source.file) + ":" + String(source.line)
    }

    /// Sources as a finding lists them: each once, in file order, separated by `;`.
    func text(_ sources: [SourceLine]) -> String {
        Set(sources).sorted().map(text).joined(separator: ";")
    }
}
