/// `receipts/*.jsonl`: each verification the server made, with Apple's answer (CONTRACT.md §1.2).
///
/// One line yields a verification row (item 0) and one row per transaction it
/// carries (items 1...n). An iOS 7 receipt lists every transaction of the
/// app, so the same transaction recurs in many lines; normalize merges them.
/// Only `status` 0 verifies: another status is stored as a failed
/// verification with no transactions.
enum ReceiptParser {
    static func parse(_ object: JSONObject, signatures: JWSVerifier) throws(LineReject) -> LineOutcome {
        let fields = Fields(object)
        let receivedMs = try fields.requiredTime("received_at")
        let userID = try fields.requiredString("user_id")
        let orderID = try fields.string("order_id")
        let claimedTransactionID = try fields.appleString("transaction_id")
        let response = try fields.object("response")
        let decoded = try fields.array("transactions")
        let signed = try fields.array("signed_transactions")
        guard response != nil || decoded != nil || signed != nil else {
            throw LineReject("missing required field 'response', 'transactions' or 'signed_transactions'")
        }
        var transactions: [AppleTransaction] = []
        var status: Int64 = 0
        var environment: String?
        var bundleID: String?
        var shapes: [String] = []
        if let response {
            shapes.append("response")
            let responseFields = fields.nested("response", response)
            guard let code = try responseFields.integer("status") else { throw .missing("response.status") }
            status = code
            environment = try responseFields.appleString("environment")
            let receipt = try responseFields.object("receipt")
            if let receipt { bundleID = try responseFields.nested("receipt", receipt).appleString("bundle_id") }
            if status == 0 {
                if let receipt {
                    let receiptFields = responseFields.nested("receipt", receipt)
                    transactions += try items(receiptFields, key: "in_app", environment: environment)
                }
                transactions += try items(responseFields, key: "latest_receipt_info", environment: environment)
            }
        }
        if let decoded {
            shapes.append("transactions")
            for (index, element) in decoded.enumerated() {
                guard case .object(let payload) = element else {
                    throw .wrongType("transactions[\(index)]", expected: "an object", got: element)
                }
                var transaction = try AppleTransaction(v2: Fields(payload, path: "transactions[\(index)]."), origin: .serverAPI)
                if transaction.environment == nil { transaction.environment = "Production" }
                transactions.append(transaction)
            }
        }
        if let signed {
            shapes.append("signed_transactions")
            for (index, element) in signed.enumerated() {
                let path = "signed_transactions[\(index)]"
                guard case .string(let jws) = element else { throw .wrongType(path, expected: "a JWS string", got: element) }
                let payload = try decodeJWS(jws, path: path)
                let payloadFields = Fields(payload, path: path + ".")
                try checkSignature(jws, path: path, signatures: signatures,
                                   signedMs: try payloadFields.time("signedDate") ?? receivedMs,
                                   environment: try payloadFields.appleString("environment"))
                var transaction = try AppleTransaction(v2: payloadFields, origin: .serverAPI)
                if transaction.environment == nil { transaction.environment = "Production" }
                transactions.append(transaction)
            }
        }
        // A line that names no transaction but carries exactly one names that one.
        let namedTransactionID = claimedTransactionID ?? (transactions.count == 1 ? transactions[0].transactionID : nil)
        var rows = [RawRow(.verifications, [
            .integer(receivedMs), .text(userID), SQLValue(orderID), SQLValue(namedTransactionID), .integer(status),
            SQLValue(environment), SQLValue(bundleID), .text(shapes.joined(separator: "+")),
        ])]
        for (index, var transaction) in transactions.enumerated() {
            transaction.eventMs = receivedMs
            transaction.userID = userID
            transaction.claimedOrderID = orderID
            rows.append(transaction.rawRow(item: index + 1))
        }
        return .accepted(rows)
    }

    /// The transactions of `in_app` or `latest_receipt_info` (an array; an object in iOS 6 receipts).
    private static func items(_ fields: Fields, key: String, environment: String?) throws(LineReject) -> [AppleTransaction] {
        guard let value = fields.value(key) else { return [] }
        let elements: [JSONValue]
        switch value {
        case .array(let array): elements = array
        case .object: elements = [value]
        default: throw .wrongType(fields.path + key, expected: "an array", got: value)
        }
        var transactions: [AppleTransaction] = []
        for (index, element) in elements.enumerated() {
            let path = "\(fields.path)\(key)[\(index)]"
            guard case .object(let item) = element else { throw .wrongType(path, expected: "an object", got: element) }
            transactions.append(try AppleTransaction(receiptItem: Fields(item, path: path + "."), origin: .receipt, environment: environment))
        }
        return transactions
    }
}

/// Rejects a JWS the run does not trust (CONTRACT.md §1.8), naming the field.
///
/// `signedMs` is the payload's `signedDate` (else the time of the line that carried it);
/// `environment` its environment.
func checkSignature(_ jws: String, path: String, signatures: JWSVerifier, signedMs: Int64?, environment: String?) throws(LineReject) {
    if let failure = signatures.failure(jws, signedMs: signedMs, environment: environment) {
        throw LineReject("\(failure) in '\(path)'")
    }
}

/// Decodes a JWS payload, turning failures into a reject naming the field.
func decodeJWS(_ jws: String, path: String) throws(LineReject) -> JSONObject {
    do {
        return try JWS.payload(jws)
    } catch {
        let why: String
        switch error {
        case .notThreeParts: why = "not three dot-separated parts"
        case .badBase64: why = "payload is not base64url"
        case .payload(let syntax): why = "payload is not JSON: \(syntax)"
        case .payloadNotObject: why = "payload is not a JSON object"
        }
        throw LineReject("bad JWS in '\(path)': \(why)")
    }
}
