extension UserHistory {
    /// Which customer a lookup names.
    public enum Lookup: Sendable {
        case user(String)
        /// That transaction's story only.
        case transaction(String)
        /// The story of the user who created the order.
        case order(String)
        /// The story of every transaction of one subscription chain.
        case originalTransaction(String)
        /// The story of the user whose purchases carry this `appAccountToken`; of every purchase
        /// that carries it when several users' do.
        case appAccountToken(String)

        /// The key as given.
        var key: String {
            switch self {
            case .user(let key), .transaction(let key), .order(let key), .originalTransaction(let key), .appAccountToken(let key): key
            }
        }

        /// The kind of key, as support says it (`a transaction`).
        var kind: KeyKind {
            switch self {
            case .user: .user
            case .transaction: .transaction
            case .order: .order
            case .originalTransaction: .chain
            case .appAccountToken: .token
            }
        }
    }

    /// What a key can name, and how `iaprecon history` is asked for it.
    enum KeyKind: Equatable {
        case user, transaction, order, chain, token

        var noun: String {
            switch self {
            case .user: "user"
            case .transaction: "transaction"
            case .order: "order"
            case .chain: "subscription chain"
            case .token: "app account token"
            }
        }

        var withArticle: String { (self == .order || self == .token ? "an " : "a ") + noun }

        /// The command that looks `key` up as this kind.
        func command(_ key: String) -> String {
            let word = UserHistory.shellWord(key)
            return switch self {
            case .user: "iaprecon history \(word)"
            case .transaction: "iaprecon history --transaction \(word)"
            case .order: "iaprecon history --order \(word)"
            case .chain: "iaprecon history --original-transaction \(word)"
            case .token: "iaprecon history --app-account-token \(word)"
            }
        }
    }

    /// The key names nothing of the kind asked. Support reads "not found" as "no record of this
    /// customer", so it says what the key is when it names something else, or which rejected input
    /// lines name it.
    public struct NotFound: Error, CustomStringConvertible, Sendable {
        public var what: String
        public var hint: String?
        /// What the key is instead and how to look it up, said in place of "no ... in the store".
        public var otherKind: String?

        /// Where it is missing: `in the store`, or `in the store yet` while a run is making it.
        public var inStore = "in the store"

        public var description: String {
            otherKind ?? "no \(what) \(inStore)" + (hint.map { "; \($0)" } ?? "")
        }
    }

    /// Whose story a lookup tells: a user's whole story, or only some transactions'.
    enum Scope {
        case user(String)
        case transactions([String])
    }

    /// What a lookup resolved to: whose story, the user, the subject, what the header says of the
    /// key first, and the keys whose rejected lines the story lists.
    struct Resolved {
        var scope: Scope
        var userID: String
        var subject: String
        var notes: [String] = []
        var rejectedKeys: [String]
    }

    /// The scope, user and subject a lookup names, or NotFound.
    static func resolve(_ store: some HistoryStore, _ lookup: Lookup) throws -> Resolved {
        switch lookup {
        case .user(let id):
            guard try store.knows(user: id) else { throw try notFound(store, lookup) }
            return Resolved(scope: .user(id), userID: id, subject: "user \(id)", rejectedKeys: [id])
        case .transaction(let id):
            guard let user = try buyer(store, of: id) else { throw try notFound(store, lookup) }
            return Resolved(scope: .transactions([id]), userID: user, subject: "transaction \(id)", rejectedKeys: [id])
        case .order(let id):
            guard let user = try store.creator(of: id) else { throw try notFound(store, lookup) }
            var resolved = Resolved(scope: .user(user), userID: user, subject: "user \(user)", rejectedKeys: [user, id])
            // The join takes an order's first line; another user's line of the same id is not theirs to hide.
            let others = try store.usersLogging(order: id).filter { !$0.utf8.elementsEqual(user.utf8) }
            if !others.isEmpty {
                resolved.notes.append("order \(id) was logged by \(others.count + 1) users; this is the story of \(user), whose line came first; also "
                    + lookups(ofUsers: others))
            }
            return resolved
        case .originalTransaction(let id):
            let ids = try store.transactions(ofChain: id)
            guard let firstID = ids.first else { throw try notFound(store, lookup) }
            let user = try store.resolution(of: firstID).user ?? ""
            return Resolved(scope: .transactions(ids), userID: user, subject: "subscription chain \(id)", rejectedKeys: [id])
        case .appAccountToken(let token):
            let ids = try store.transactions(withToken: token)
            guard !ids.isEmpty else { throw try notFound(store, lookup) }
            var users: [String] = []
            // By the id's bytes, as the store and the order lookup tell users apart (`StoredText`).
            var seen = Set<StoredText>()
            for id in ids {
                if let user = try store.resolution(of: id).user, seen.insert(StoredText(user)).inserted { users.append(user) }
            }
            if users.count == 1, let user = users.first {
                return Resolved(scope: .user(user), userID: user, subject: "user \(user)", rejectedKeys: [token, user])
            }
            // Several users: each purchase the token is on, and whose each is, rather than one user picked.
            var resolved = Resolved(scope: .transactions(ids), userID: "", subject: "app account token \(token)", rejectedKeys: [token])
            if users.count > 1 {
                resolved.notes.append("\(users.count) users' purchases carry this token: " + lookups(ofUsers: users))
            }
            return resolved
        }
    }

    /// How many users a header names, each with the command that looks them up.
    static let usersListed = 10

    /// The first `usersListed` of `users`, each with its lookup, then how many more: a placeholder
    /// order id or a fixed token that thousands of users share would otherwise make a header of
    /// thousands of commands, and the story under it would scroll out of sight.
    private static func lookups(ofUsers users: [String]) -> String {
        let named = users.prefix(usersListed).map { "\($0) (\(KeyKind.user.command($0)))" }.joined(separator: ", ")
        return users.count > usersListed ? named + " and \(users.count - usersListed) more" : named
    }

    /// Who bought the transaction, or whoever the log delivered it to first; nil when the store does not know it.
    private static func buyer(_ store: some HistoryStore, of transactionID: String) throws -> String? {
        let resolution = try store.resolution(of: transactionID)
        let user = try resolution.user ?? store.firstRecipient(of: transactionID)
        return resolution.resolved || user != nil ? user ?? "" : nil
    }

    /// Why the lookup found nothing: what else the key is, through the same indexes; else the
    /// rejected lines that name it.
    private static func notFound(_ store: some HistoryStore, _ lookup: Lookup) throws -> NotFound {
        let key = lookup.key, asked = lookup.kind
        let quoted = "'\(key)'"
        var found = NotFound(what: "\(asked.noun) \(quoted)")
        if asked == .chain, let chain = try store.chain(of: key), chain != key {
            found.otherKind = "\(quoted) is a renewal in subscription chain \(chain), not a chain: \(KeyKind.chain.command(chain)), or "
                + "\(KeyKind.transaction.command(key)) for this renewal alone"
            return found
        }
        var kinds: [KeyKind] = []
        if asked != .user, try store.knows(user: key) { kinds.append(.user) }
        if asked != .transaction, try buyer(store, of: key) != nil { kinds.append(.transaction) }
        if asked != .order, try store.creator(of: key) != nil { kinds.append(.order) }
        if asked != .token, isUUID(key), try !store.transactions(withToken: key).isEmpty { kinds.append(.token) }
        if !kinds.isEmpty {
            found.otherKind = "\(quoted) is " + kinds.map(\.withArticle).joined(separator: " and ") + ", not \(asked.withArticle): "
                + kinds.map { $0.command(key) }.joined(separator: ", or ")
            return found
        }
        // Support often knows a customer only by the IDFV the app shows, or the IDFA or AppsFlyer ID an ad
        // network gave: the sign-up that gave it names the user. Shown masked, as the story shows it.
        let devices = try deviceIDShape(key).map { try store.users(withDeviceID: key, shaped: $0) } ?? []
        if let first = devices.first {
            let idKinds = Set(devices.map(\.kind))
            let shown = (idKinds.count == 1 ? first.kind : "device id") + " " + (mask(.text(key)) ?? key)
            found.otherKind = devices.count == 1
                ? "\(shown) is on the sign-up of user \(first.userID), not \(asked.withArticle): \(KeyKind.user.command(first.userID))"
                : "\(shown) is on the sign-ups of \(devices.count) users, not \(asked.withArticle): " + lookups(ofUsers: devices.map(\.userID))
            return found
        }
        var hints: [String] = []
        // An email-like id is often typed in another case than the app logged it.
        if asked == .user {
            let users = try store.users(differingOnlyInCaseFrom: key)
            if let user = users.first {
                hints.append(users.count == 1 ? "user \(user) differs only in case: \(KeyKind.user.command(user))"
                    : "\(users.count) users differ from it only in case: " + lookups(ofUsers: users))
            }
        }
        let rejected = try store.rejectedLines(naming: asked == .token ? [key, key.lowercased(), key.uppercased()] : [key])
        if !rejected.isEmpty {
            hints.append((rejected.count == 1 ? "1 rejected line names it: " : "\(rejected.count) rejected lines name it: ")
                + listed(rejected.map(RejectedInput.init)))
        }
        if !hints.isEmpty { found.hint = hints.joined(separator: "; ") }
        return found
    }

    /// Which device id `key` can be: a UUID an IDFV or IDFA, digits, a dash and digits an AppsFlyer ID;
    /// nil for any other key, which no sign-up is searched for.
    static func deviceIDShape(_ key: String) -> DeviceIDShape? {
        if isUUID(key) { return .uuid }
        let bytes = Array(key.utf8)
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")), dash > 0, dash < bytes.count - 1,
              bytes[..<dash].allSatisfy(isDigit), bytes[(dash + 1)...].allSatisfy(isDigit) else { return nil }
        return .appsFlyerID
    }

    /// Whether `text` is a UUID (8-4-4-4-12 hex digits, either case), as Apple's `appAccountToken` is.
    public static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            [8, 13, 18, 23].contains(index) ? byte == UInt8(ascii: "-")
                : (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
        }
    }

    /// `key` as a shell word: as it is when it has nothing a shell reads, else in single quotes.
    static func shellWord(_ key: String) -> String {
        let plain = !key.isEmpty && !key.hasPrefix("-") && key.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || Array("_.:@%+=,/-".utf8).contains(byte)
        }
        return plain ? key : "'" + key.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// How many rejected lines a header or message names; the rest are counted (rejects.csv lists them all).
    static let rejectedLinesListed = 10

    /// Rejected lines as `path:line (reason)`, the first `rejectedLinesListed`, then how many more.
    static func listed(_ lines: [RejectedInput]) -> String {
        var text = lines.prefix(rejectedLinesListed).map { "\($0.source) (\($0.reason))" }.joined(separator: "; ")
        if lines.count > rejectedLinesListed { text += "; and \(lines.count - rejectedLinesListed) more (rejects.csv lists them)" }
        return text
    }
}
