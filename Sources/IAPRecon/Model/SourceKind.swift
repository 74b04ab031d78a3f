/// The input sources of CONTRACT.md §1, by their place in the input folder (`of(relativePath:)`).
public enum SourceKind: String, CaseIterable, Sendable {
    case server, receipts, notifications, registrations, attribution, spend, catalog, fx, apple
}
