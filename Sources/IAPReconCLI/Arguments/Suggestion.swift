/// "Did you mean" for a mistyped option, subcommand or config key.
enum Suggestion {
    /// The candidate the user most likely meant, if any is close enough.
    ///
    /// A candidate is suggested when it is at most two edits away (one for
    /// words of three letters or fewer, where two edits change the whole
    /// word), counting a swap of neighbouring letters as one edit, or when the
    /// typed word is the start of it (`--lim` for `--limit`). Ties go to the
    /// first candidate in declaration order, so suggestions are stable.
    static func closest(to typed: String, among candidates: [String]) -> String? {
        let typedCharacters = Array(typed)
        let limit = typedCharacters.count <= 3 ? 1 : 2
        var best: (candidate: String, distance: Int)?
        for candidate in candidates where candidate != typed {
            let distance = editDistance(typedCharacters, Array(candidate))
            if distance <= limit, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        if let best { return best.candidate }
        guard typedCharacters.count >= 2 else { return nil }
        return candidates.first { $0.hasPrefix(typed) }
    }

    /// One command's name for a folder and another's name for its counterpart: `run` reads `--input` and writes
    /// `--out`, the nights read `--root` and write `--reports`. Given to the other command, a name means its
    /// counterpart, which spelling alone would miss (`nightly --out` is nearest to `--root`).
    static let sameFolder = ["--out": "--reports", "--reports": "--out", "--input": "--root", "--root": "--input"]

    /// The optimal string alignment distance: Levenshtein plus transpositions
    /// of adjacent characters (`rnu` → `run` is one edit).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var distance = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    distance = min(distance, table[i - 2][j - 2] + 1)
                }
                table[i][j] = distance
            }
        }
        return table[a.count][b.count]
    }
}
