/// `count` and `noun`, the noun plural unless the count is one: `1 field`, `3 fields`, `0 fields`.
/// Reject reasons name counts so, and a reader of `rejects.csv` reads them as sentences.
func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
