import Testing
@testable import IAPRecon

@Suite("PathParent")
struct PathParentTests {
    @Test("one-character names, which Foundation's deletingLastPathComponent traps on in Linux, have no folder part")
    func oneCharacter() {
        for name in ["d", "r", "l", "o", "."] { #expect(PathParent.of(name) == "", "\(name)") }
        #expect(PathParent.of("r/2026-11-28") == "r")
        #expect(PathParent.of("x/d") == "x")
    }

    @Test("the folder part as NSString gives it: bare names, the root, trailing and doubled slashes")
    func nearMisses() {
        let cases: [(String, String)] = [
            ("", ""), ("/", "/"), ("/d", "/"), ("/tmp", "/"), ("iaprecon.sqlite", ""), ("reports/", ""),
            ("data/iap.sqlite", "data"), ("/var/lib/iaprecon/iaprecon.sqlite", "/var/lib/iaprecon"),
            ("reports/2026-11-28/", "reports"), ("a//b", "a"), ("./s.sqlite", "."), ("../r", ".."),
        ]
        for (path, parent) in cases { #expect(PathParent.of(path) == parent, "\(path)") }
    }
}
