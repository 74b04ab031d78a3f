import Foundation

/// A small, slow, independent reading of RULES.md over a generated folder, used to check
/// that `truth.json` says exactly what the data implies. It parses with JSONSerialization
/// and shares no code with the generator.
struct ReferenceReconciler {
    struct Transaction {
        var id: String
        var originalId = ""
        var productId = ""
        var purchase: Int64?
        /// The latest any sighting gives: Apple extends an expiry, never shortens one.
        var expires: Int64?
        /// The earliest any sighting gives: the expiry before Apple extended it (what an extension changes).
        var earliestExpires: Int64?
        var quantity = 1
        var environments: [String] = []
        var familyShared = false
        var appAccountToken: String?
        var priceMilli: Int64?
        var currency: String?
        var refunds: [(time: Int64, type: String, percentage: Int64)] = []
        var reversals: [Int64] = []
        var receiptSenders: [(time: Int64, user: String)] = []

        var isProduction: Bool { environments.contains("Production") }
    }

    struct Delivery {
        var time: Int64
        var user: String
        var transactionId: String
        var productId: String
        var quantity: Int
        var orderId: String?
    }

    struct Order {
        var id: String
        var user: String
        var productId: String
        var time: Int64
        var price: String?
        var currency: String?
    }

    struct Finding: Hashable, CustomStringConvertible {
        var kind: String
        var key: String
        var userId: String
        var detail: String
        var amount: String
        var description: String { "\(kind) \(key) user=\(userId) detail=\(detail) amount=\(amount)" }
    }

    struct Catalog {
        var type: [String: String] = [:]
        var group: [String: String] = [:]
        var usdMilli: [String: Int64] = [:]
    }

    var transactions: [String: Transaction] = [:]
    var deliveryLines: [Delivery] = []
    var orders: [String: Order] = [:]
    var revocations: [(time: Int64, user: String, transactionId: String)] = []
    var receiptPairs: [(orderId: String, transactionId: String)] = []
    var seenNotifications: Set<String> = []
    var catalog = Catalog()
    var asOf: Int64 = .min
    var rejectsByFile: [String: Int] = [:]
    var blankByFile: [String: Int] = [:]
    var notJSON = 0
    var ignoredUnknown = 0
    var linesRead = 0

    // MARK: Reading

    mutating func read(_ reader: InputFolderReader) throws {
        for row in try reader.lines(of: "catalog.csv").dropFirst() {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            catalog.type[cells[0]] = cells[1]
            catalog.group[cells[0]] = cells[2]
            catalog.usdMilli[cells[0]] = Self.milli(cells[3])
        }
        for folder in ["server", "receipts", "notifications", "registrations"] {
            for file in try reader.inputFiles(in: folder) {
                for line in try reader.lines(of: file) {
                    linesRead += 1
                    if line.isEmpty {
                        blankByFile[file, default: 0] += 1
                        continue
                    }
                    guard let data = line.data(using: .utf8),
                          let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                        notJSON += 1
                        rejectsByFile[file, default: 0] += 1
                        continue
                    }
                    let accepted: Bool
                    switch folder {
                    case "server": accepted = server(object)
                    case "receipts": accepted = receipt(object)
                    case "notifications": accepted = notification(object)
                    default: accepted = registration(object)
                    }
                    if !accepted { rejectsByFile[file, default: 0] += 1 }
                }
            }
        }
        for file in try reader.inputFiles(in: "attribution") {
            let lines = try reader.lines(of: file)
            guard let header = lines.first.flatMap(Self.csvFields) else { throw ReaderError("no header in \(file)") }
            func column(_ name: String) -> Int { header.firstIndex(of: name) ?? -1 }
            let eventTime = column("Event Time")
            let ids = ["Customer User ID", "IDFV", "IDFA", "AppsFlyer ID"].map(column)
            for line in lines.dropFirst() {
                linesRead += 1
                guard let cells = Self.csvFields(line), cells.count == header.count,
                      let time = ContractTime.calendar(cells[eventTime]),
                      ids.contains(where: { !Self.emptyId(cells[$0]) }) else {
                    rejectsByFile[file, default: 0] += 1
                    continue
                }
                asOf = max(asOf, time)
            }
        }
    }

    static func emptyId(_ value: String) -> Bool {
        ["", "null", "NULL", "N/A", "00000000-0000-0000-0000-000000000000"].contains(value)
    }

    static func csvFields(_ line: String) -> [String]? {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(line)[...]
        while let char = chars.popFirst() {
            if quoted {
                if char == "\"" {
                    if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false }
                } else {
                    field.append(char)
                }
            } else if char == "," {
                fields.append(field)
                field = ""
            } else if char == "\"" && field.isEmpty {
                quoted = true
            } else {
                field.append(char)
            }
        }
        if quoted { return nil }
        fields.append(field)
        return fields
    }

    /// Decimal text to milliunits (exact for up to three decimals).
    static func milli(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = Int64(parts[0]) else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let digits = String(parts[1])
            guard !digits.isEmpty, digits.count <= 3, let value = Int64(digits) else { return nil }
            fraction = value * [1, 100, 10, 1][digits.count]
        }
        return whole * 1000 + fraction
    }

    mutating func server(_ object: [String: Any]) -> Bool {
        guard let event = object["event"] as? String else { return false }
        guard ["order_created", "delivered", "delivery_revoked"].contains(event) else {
            ignoredUnknown += 1
            return true
        }
        guard let ts = ContractTime.parse(object["ts"]), let user = object["user_id"] as? String else { return false }
        switch event {
        case "order_created":
            guard let id = object["order_id"] as? String, let product = object["product_id"] as? String else { return false }
            let price = object["price"] as? String
            if let price, Self.milli(price) == nil { return false }
            orders[id] = Order(id: id, user: user, productId: product, time: ts, price: price,
                               currency: object["currency"] as? String)
        case "delivered":
            guard let tx = object["transaction_id"] as? String, let product = object["product_id"] as? String else { return false }
            let quantity = (object["quantity"] as? NSNumber)?.intValue ?? 1
            let delivery = Delivery(time: ts, user: user, transactionId: tx, productId: product, quantity: quantity,
                                    orderId: object["order_id"] as? String)
            deliveryLines.append(delivery)
            deliveryIds.append(object["delivery_id"] as? String ?? "")
        default:
            guard let tx = object["transaction_id"] as? String else { return false }
            revocations.append((ts, user, tx))
        }
        asOf = max(asOf, ts)
        return true
    }

    var deliveryIds: [String] = []

    /// Distinct deliveries: one per delivery_id; identical (ts, user, tx, product, quantity) without one.
    func deliveries() -> [Delivery] {
        var seenIds: Set<String> = []
        var seenTuples: Set<String> = []
        var result: [Delivery] = []
        for (delivery, id) in zip(deliveryLines, deliveryIds) {
            if !id.isEmpty {
                if seenIds.insert(id).inserted { result.append(delivery) }
            } else {
                let key = "\(delivery.time)|\(delivery.user)|\(delivery.transactionId)|\(delivery.productId)|\(delivery.quantity)"
                if seenTuples.insert(key).inserted { result.append(delivery) }
            }
        }
        return result
    }

    mutating func receipt(_ object: [String: Any]) -> Bool {
        guard let at = ContractTime.parse(object["received_at"]), let user = object["user_id"] as? String else { return false }
        guard object["response"] != nil || object["transactions"] != nil || object["signed_transactions"] != nil else {
            return false
        }
        asOf = max(asOf, at)
        var seen: [String] = []
        if let response = object["response"] as? [String: Any] {
            if (response["status"] as? NSNumber)?.intValue == 0 {
                let environment = response["environment"] as? String ?? ""
                let receipt = response["receipt"] as? [String: Any]
                for item in (receipt?["in_app"] as? [[String: Any]] ?? []) + (response["latest_receipt_info"] as? [[String: Any]] ?? []) {
                    if let id = legacyItem(item, environment: environment) { seen.append(id) }
                }
            }
        }
        for tx in object["transactions"] as? [[String: Any]] ?? [] {
            if let id = v2Transaction(tx, fallbackEnvironment: "Production") { seen.append(id) }
        }
        for jws in object["signed_transactions"] as? [String] ?? [] {
            if let tx = Self.decodeJWS(jws), let id = v2Transaction(tx, fallbackEnvironment: "Production") { seen.append(id) }
        }
        for id in seen { transactions[id]?.receiptSenders.append((at, user)) }
        if let order = object["order_id"] as? String, let tx = object["transaction_id"] as? String {
            receiptPairs.append((order, tx))
        }
        return true
    }

    static func decodeJWS(_ jws: String) -> [String: Any]? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    @discardableResult
    mutating func legacyItem(_ item: [String: Any], environment: String) -> String? {
        guard let id = item["transaction_id"] as? String else { return nil }
        var tx = transactions[id] ?? Transaction(id: id)
        if tx.originalId.isEmpty { tx.originalId = item["original_transaction_id"] as? String ?? "" }
        if tx.productId.isEmpty { tx.productId = item["product_id"] as? String ?? "" }
        if tx.purchase == nil { tx.purchase = ContractTime.parse(item["purchase_date_ms"]) }
        if let expires = ContractTime.parse(item["expires_date_ms"]) {
            tx.expires = max(tx.expires ?? expires, expires)
            tx.earliestExpires = min(tx.earliestExpires ?? expires, expires)
        }
        if let quantity = item["quantity"] as? String, let value = Int(quantity) { tx.quantity = value }
        if item["in_app_ownership_type"] as? String == "FAMILY_SHARED" { tx.familyShared = true }
        if tx.appAccountToken == nil { tx.appAccountToken = item["app_account_token"] as? String }
        if !environment.isEmpty { tx.environments.append(environment) }
        if let cancelled = ContractTime.parse(item["cancellation_date_ms"]) { tx.refunds.append((cancelled, "", 0)) }
        transactions[id] = tx
        return id
    }

    @discardableResult
    mutating func v2Transaction(_ object: [String: Any], fallbackEnvironment: String) -> String? {
        guard let id = object["transactionId"] as? String else { return nil }
        var tx = transactions[id] ?? Transaction(id: id)
        if tx.originalId.isEmpty { tx.originalId = object["originalTransactionId"] as? String ?? "" }
        if tx.productId.isEmpty { tx.productId = object["productId"] as? String ?? "" }
        if tx.purchase == nil { tx.purchase = ContractTime.parse(object["purchaseDate"]) }
        if let expires = ContractTime.parse(object["expiresDate"]) {
            tx.expires = max(tx.expires ?? expires, expires)
            tx.earliestExpires = min(tx.earliestExpires ?? expires, expires)
        }
        if let quantity = object["quantity"] as? NSNumber { tx.quantity = quantity.intValue }
        if object["inAppOwnershipType"] as? String == "FAMILY_SHARED" { tx.familyShared = true }
        if tx.appAccountToken == nil { tx.appAccountToken = object["appAccountToken"] as? String }
        tx.environments.append(object["environment"] as? String ?? fallbackEnvironment)
        if tx.priceMilli == nil, let price = object["price"] as? NSNumber {
            tx.priceMilli = price.int64Value
            tx.currency = object["currency"] as? String
        }
        if let revoked = ContractTime.parse(object["revocationDate"]) {
            tx.refunds.append((revoked, object["revocationType"] as? String ?? "",
                               (object["revocationPercentage"] as? NSNumber)?.int64Value ?? 0))
        }
        transactions[id] = tx
        return id
    }

    mutating func notification(_ object: [String: Any]) -> Bool {
        var payload = object
        if let signed = object["signedPayload"] as? String {
            guard let decoded = Self.decodeJWS(signed) else { return false }
            payload = decoded
        }
        if let type = payload["notificationType"] as? String {
            let signedDate = ContractTime.parse(payload["signedDate"]) ?? 0
            asOf = max(asOf, signedDate)
            let uuid = payload["notificationUUID"] as? String ?? UUID().uuidString
            guard seenNotifications.insert(uuid).inserted else { return true }
            let data = payload["data"] as? [String: Any] ?? [:]
            var info = data["transactionInfo"] as? [String: Any]
            if let signed = data["signedTransactionInfo"] as? String { info = Self.decodeJWS(signed) }
            guard let info, let id = v2Transaction(info, fallbackEnvironment: data["environment"] as? String ?? "") else {
                return true
            }
            if type == "REFUND_REVERSED" { transactions[id]?.reversals.append(signedDate) }
            return true
        }
        if object["notification_type"] != nil {
            let unified = object["unified_receipt"] as? [String: Any] ?? [:]
            let environment = unified["environment"] as? String ?? ""
            for item in unified["latest_receipt_info"] as? [[String: Any]] ?? [] {
                legacyItem(item, environment: environment)
            }
            return true
        }
        return false
    }

    mutating func registration(_ object: [String: Any]) -> Bool {
        guard let ts = ContractTime.parse(object["ts"]), object["user_id"] is String else { return false }
        asOf = max(asOf, ts)
        return true
    }

    // MARK: Reconciling

    /// The effective refund of a transaction: the latest refund time, unless reversed later.
    func refund(of tx: Transaction) -> (time: Int64, type: String, percentage: Int64)? {
        guard let latest = tx.refunds.max(by: { $0.time < $1.time }) else { return nil }
        if tx.reversals.contains(where: { $0 > latest.time }) { return nil }
        let typed = tx.refunds.filter { $0.time == latest.time }.first { !$0.type.isEmpty } ?? latest
        return typed
    }

    func findings(grace: Int64 = 86_400_000) -> [Finding] {
        let deliveries = deliveries()
        var deliveriesByTx: [String: [Delivery]] = [:]
        for delivery in deliveries { deliveriesByTx[delivery.transactionId, default: []].append(delivery) }

        // Matching, rules 1–4.
        var orderOfTx: [String: String] = [:]
        var txOfOrder: [String: String] = [:]
        func match(_ order: String, _ tx: String) {
            guard orders[order] != nil, transactions[tx] != nil, orderOfTx[tx] == nil, txOfOrder[order] == nil else { return }
            orderOfTx[tx] = order
            txOfOrder[order] = tx
        }
        for delivery in deliveryLines { if let order = delivery.orderId { match(order, delivery.transactionId) } }
        for pair in receiptPairs { match(pair.orderId, pair.transactionId) }
        let byPurchase = transactions.values.sorted { ($0.purchase ?? 0, $0.id) < ($1.purchase ?? 0, $1.id) }
        for tx in byPurchase { if let token = tx.appAccountToken { match(token, tx.id) } }
        for tx in byPurchase where orderOfTx[tx.id] == nil {
            guard let purchase = tx.purchase else { continue }
            let users = Set(tx.receiptSenders.map(\.user) + (deliveriesByTx[tx.id] ?? []).map(\.user))
            let candidates = orders.values.filter {
                txOfOrder[$0.id] == nil && $0.productId == tx.productId && users.contains($0.user)
                    && $0.time >= purchase - 3_600_000 && $0.time <= purchase
            }
            if let latest = candidates.max(by: { ($0.time, $0.id) < ($1.time, $1.id) }) { match(latest.id, tx.id) }
        }

        func userOf(_ tx: Transaction) -> String {
            if let order = orderOfTx[tx.id], let user = orders[order]?.user { return user }
            if let first = deliveriesByTx[tx.id]?.min(by: { $0.time < $1.time }) { return first.user }
            return tx.receiptSenders.min(by: { $0.time < $1.time })?.user ?? ""
        }
        func price(_ tx: Transaction) -> Int64? {
            // Apple's V2 price is the whole quantity's.
            if let price = tx.priceMilli { return price / Int64(max(tx.quantity, 1)) }
            if let order = orderOfTx[tx.id], let text = orders[order]?.price { return Self.milli(text) }
            return catalog.usdMilli[tx.productId]
        }
        func amount(_ units: Int64?, scale: Int) -> String {
            guard let units else { return "" }
            var digits = String(units)
            while digits.count <= scale { digits = "0" + digits }
            var whole = String(digits.dropLast(scale))
            var fraction = String(digits.suffix(scale))
            while fraction.hasSuffix("0") { fraction.removeLast() }
            if whole.isEmpty { whole = "0" }
            return fraction.isEmpty ? whole : whole + "." + fraction
        }

        var result: [Finding] = []
        for (id, list) in deliveriesByTx where transactions[id] == nil {
            let first = list.min { $0.time < $1.time } ?? list[0]
            result.append(Finding(kind: "orphan_delivery", key: id, userId: first.user, detail: "",
                                  amount: amount(catalog.usdMilli[first.productId].map { $0 * Int64(first.quantity) }, scale: 3)))
        }
        for tx in transactions.values {
            let delivered = deliveriesByTx[tx.id] ?? []
            if !tx.isProduction {
                if !delivered.isEmpty {
                    result.append(Finding(kind: "sandbox_delivery", key: tx.id, userId: userOf(tx), detail: "", amount: ""))
                }
                continue
            }
            guard let purchase = tx.purchase else { continue }
            let user = userOf(tx)
            let unit = price(tx)
            let refund = refund(of: tx)
            if delivered.isEmpty, purchase <= asOf - grace, !(refund.map { $0.time < purchase + grace } ?? false) {
                result.append(Finding(kind: "lost_delivery", key: tx.id, userId: user, detail: "",
                                      amount: amount(unit.map { $0 * Int64(tx.quantity) }, scale: 3)))
            }
            let users = Set(delivered.map(\.user))
            if delivered.count >= 2, !(catalog.type[tx.productId] == "auto_renewable" && users.count >= 2) {
                result.append(Finding(kind: "duplicate_delivery", key: tx.id, userId: user,
                                      detail: users.count == 1 ? "same_user" : "cross_user",
                                      amount: amount(unit.map { $0 * Int64(tx.quantity) * Int64(delivered.count - 1) }, scale: 3)))
            }
            if !delivered.isEmpty, let refund,
               !revocations.contains(where: { $0.transactionId == tx.id && $0.time >= refund.time }) {
                let money: String
                switch refund.type {
                case "FAMILY_REVOKE": money = "0"
                case "REFUND_PRORATED": money = amount(unit.map { $0 * refund.percentage }, scale: 8)
                default: money = amount(unit.map { $0 * Int64(tx.quantity) }, scale: 3)
                }
                result.append(Finding(kind: "refunded_not_revoked", key: tx.id, userId: user, detail: "", amount: money))
            }
            let orderProduct = orderOfTx[tx.id].flatMap { orders[$0]?.productId }
            if delivered.contains(where: { $0.productId != tx.productId }) || (orderProduct.map { $0 != tx.productId } ?? false) {
                result.append(Finding(kind: "product_mismatch", key: tx.id, userId: user, detail: "",
                                      amount: amount(unit.map { $0 * Int64(tx.quantity) }, scale: 3)))
            }
            if let order = orderOfTx[tx.id], let orderUser = orders[order]?.user, !delivered.isEmpty,
               !delivered.contains(where: { $0.user == orderUser }) {
                result.append(Finding(kind: "wrong_user_delivery", key: tx.id, userId: user, detail: "",
                                      amount: amount(unit.map { $0 * Int64(tx.quantity) }, scale: 3)))
            }
            if let first = delivered.map(\.time).min(), first > purchase + grace {
                result.append(Finding(kind: "late_delivery", key: tx.id, userId: user, detail: "", amount: ""))
            }
        }

        // Chains: holders, paid periods, groups.
        var chainTransactions: [String: [Transaction]] = [:]
        for tx in transactions.values where catalog.type[tx.productId] == "auto_renewable" {
            chainTransactions[tx.originalId, default: []].append(tx)
        }
        var holders: [String: Set<String>] = [:]
        for (chain, list) in chainTransactions {
            for tx in list { for delivery in deliveriesByTx[tx.id] ?? [] { holders[chain, default: []].insert(delivery.user) } }
        }
        for (chain, users) in holders where users.count >= 2 {
            guard let list = chainTransactions[chain], list.contains(where: \.isProduction) else { continue }
            let first = list.min { ($0.purchase ?? 0) < ($1.purchase ?? 0) } ?? list[0]
            result.append(Finding(kind: "shared_apple_id_subscription", key: chain, userId: userOf(first), detail: "", amount: ""))
        }
        func periods(_ chain: String) -> [(Int64, Int64)] {
            (chainTransactions[chain] ?? []).compactMap { tx in
                guard tx.isProduction, !tx.familyShared, refund(of: tx) == nil, let start = tx.purchase,
                      let end = tx.expires else { return nil }
                return (start, end)
            }
        }
        var chainsOfUser: [String: [String]] = [:]
        for (chain, users) in holders { for user in users { chainsOfUser[user, default: []].append(chain) } }
        for (user, chains) in chainsOfUser {
            var byGroup: [String: [String]] = [:]
            for chain in chains {
                guard let product = chainTransactions[chain]?.first?.productId, let group = catalog.group[product] else { continue }
                byGroup[group, default: []].append(chain)
            }
            for (group, list) in byGroup where list.count >= 2 {
                var overlapping = false
                for a in 0..<list.count {
                    for b in (a + 1)..<list.count {
                        for p in periods(list[a]) {
                            for q in periods(list[b]) where p.0 < q.1 && q.0 < p.1 { overlapping = true }
                        }
                    }
                }
                if overlapping {
                    result.append(Finding(kind: "multi_apple_id_subscription", key: user + "|" + group, userId: user,
                                          detail: "", amount: ""))
                }
            }
        }
        return result
    }
}
