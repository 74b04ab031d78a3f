/// The folder part of a file path given on the command line.
public enum PathParent {
    /// What `NSString.deletingLastPathComponent` gives: "" for a bare name (`--db d`), "/" for
    /// an entry of the root, trailing slashes ignored. Written out because Foundation on Linux
    /// traps on a one-character path, which a user may well type (`--reports r`).
    public static func of(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var parent = trimmed[..<slash]
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }
}
