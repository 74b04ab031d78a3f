/// Apple's environment of a transaction, kept raw with a typed view.
public enum AppleEnvironment {
    /// Stored codes (`AppleCodes`): never change one. `PROD` is V1 notifications' `Production`,
    /// kept as sent.
    public static let codes = AppleCodes(column: "environment", [
        (1, "Production"),
        (2, "Sandbox"),
        (3, "PROD"),
        (4, "Xcode"),
        (5, "LocalTesting"),
    ])

    /// The canonical name: V1 notifications say `PROD` for `Production`.
    public static func canonical(_ raw: String?) -> String? {
        guard let raw else { return nil }
        return raw == "PROD" ? "Production" : raw
    }

    /// Only `Production` transactions are revenue; `Sandbox`, `Xcode` and `LocalTesting` are test purchases.
    public static func isProduction(_ raw: String?) -> Bool { canonical(raw) == "Production" }
}
