/// `notifications/*.jsonl`: App Store Server Notifications as received (CONTRACT.md §1.3).
///
/// Three shapes: V2 as received (`signedPayload`), V2 already decoded
/// (`notificationType` with `data.signedTransactionInfo` or
/// `data.transactionInfo`), and V1 (`notification_type` with
/// `unified_receipt.latest_receipt_info[]`). One line yields a notification
/// row (item 0) and one row per transaction it carries.
enum NotificationParser {
    static func parse(_ object: JSONObject) throws(LineReject) -> LineOutcome {
        let fields = Fields(object)
        if let signed = try fields.string("signedPayload") {
            let payload = try decodeJWS(signed, path: "signedPayload")
            return try parseV2(Fields(payload, path: "signedPayload."))
        }
        if fields.value("notificationType") != nil { return try parseV2(fields) }
        if fields.value("notification_type") != nil { return try parseV1(fields) }
        throw LineReject("missing required field 'signedPayload', 'notificationType' or 'notification_type'")
    }

    /// The notification-level fields of a decoded V2 payload.
    struct V2Header: Equatable {
        var type: String
        var subtype: String?
        var uuid: String?
        var signedMs: Int64?
        var environment: String?
    }

    static func header(_ fields: Fields) throws(LineReject) -> V2Header {
        var header = V2Header(
            type: try fields.requiredString("notificationType"),
            subtype: try fields.string("subtype"),
            uuid: try fields.string("notificationUUID"),
            signedMs: try fields.time("signedDate"))
        for key in ["data", "summary", "appData"] {
            if let nested = try fields.object(key) {
                header.environment = try fields.nested(key, nested).appleString("environment")
                break
            }
        }
        return header
    }

    static func parseV2(_ fields: Fields) throws(LineReject) -> LineOutcome {
        let header = try header(fields)
        var transaction: AppleTransaction?
        if let data = try fields.object("data") {
            let dataFields = fields.nested("data", data)
            if let jws = try dataFields.string("signedTransactionInfo") {
                let path = dataFields.path + "signedTransactionInfo"
                let payload = try decodeJWS(jws, path: path)
                transaction = try AppleTransaction(v2: Fields(payload, path: path + "."), origin: .notification)
            } else if let info = try dataFields.object("transactionInfo") {
                transaction = try AppleTransaction(v2: dataFields.nested("transactionInfo", info), origin: .notification)
            }
        }
        if var found = transaction {
            found.eventMs = header.signedMs
            found.notificationUUID = header.uuid
            found.notificationType = header.type
            if found.environment == nil { found.environment = header.environment }
            transaction = found
        }
        var rows = [RawRow(.notifications, [
            SQLValue(header.uuid), .text(header.type), SQLValue(header.subtype), SQLValue(header.signedMs),
            SQLValue(transaction?.environment ?? header.environment), .text("2"), SQLValue(transaction?.transactionID),
        ])]
        if let transaction { rows.append(transaction.rawRow(item: 1)) }
        return .accepted(rows)
    }

    static func parseV1(_ fields: Fields) throws(LineReject) -> LineOutcome {
        let type = try fields.requiredString("notification_type")
        var environment = try fields.appleString("environment")
        var transactions: [AppleTransaction] = []
        if let unified = try fields.object("unified_receipt") {
            let unifiedFields = fields.nested("unified_receipt", unified)
            environment = try unifiedFields.appleString("environment") ?? environment
            for (index, element) in (try unifiedFields.array("latest_receipt_info") ?? []).enumerated() {
                let path = "unified_receipt.latest_receipt_info[\(index)]"
                guard case .object(let item) = element else { throw .wrongType(path, expected: "an object", got: element) }
                var transaction = try AppleTransaction(receiptItem: Fields(item, path: path + "."), origin: .notification, environment: environment)
                transaction.notificationType = type
                transactions.append(transaction)
            }
        }
        var rows = [RawRow(.notifications, [
            .null, .text(type), .null, .null, SQLValue(environment), .text("1"), SQLValue(transactions.first?.transactionID),
        ])]
        for (index, transaction) in transactions.enumerated() { rows.append(transaction.rawRow(item: index + 1)) }
        return .accepted(rows)
    }
}
