/// `receipts/*.jsonl`: each verification the server made, with Apple's answer (CONTRACT.md §1.2).
///
/// One line yields a verification row (item 0) and one row per transaction it
/// carries (items 1...n). An iOS 7 receipt lists every transaction of the
/// app, so the same transaction recurs in many lines; normalize merges them.
/// Only `status` 0 and 21006 verify: another status is stored as a failed
/// verification with no transactions. A verifying response that carries no
/// transaction anywhere is rejected rather than accepted empty.
enum ReceiptParser {
    /// The statuses whose response carries verified data: 0, and 21006 (an iOS 6 receipt of an
    /// expired subscription, which Apple still decodes).
    static let verifyingStatuses: Set<Int64> = [0, 21006]

    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let receivedMs = try fields.requiredTime("received_at")
        let userID = try fields.requiredString("user_id")
        let orderID = try fields.string("order_id")
        let claimedTransactionID = try fields.appleString("transaction_id")
        // The endpoint the server called, for a response that does not say (CONTRACT.md §1.2).
        let calledEnvironment = try fields.appleString("environment")
        let response = try fields.object("response")
        let decoded = try fields.array("transactions")
        let signed = try fields.array("signed_transactions")
        guard response != nil || decoded != nil || signed != nil else {
            throw LineReject("missing required field 'response', 'transactions' or 'signed_transactions'")
        }
        var transactions: [AppleTransaction] = []
        // Refund times inside the payloads, judged by the clock with `received_at`, last.
        var reported: [ReportedTime] = []
        var status: Int64 = 0
        var environment: String?
        var bundleID: String?
        var shapes: [String] = []
        if let responseFields = response {
            shapes.append("response")
            guard let code = try responseFields.integer("status") else { throw .missing("response.status") }
            status = code
            let answered = try responseFields.appleString("environment")
            environment = answered ?? calledEnvironment ?? "Production"
            let receipt = try responseFields.object("receipt")
            if let receiptFields = receipt {
                // iOS 6 receipts name the bundle `bid`.
                let iOS6Bundle = try receiptFields.appleString("bid")
                bundleID = try receiptFields.appleString("bundle_id") ?? iOS6Bundle
            }
            try rules.checkBundle(bundleID)
            if verifyingStatuses.contains(status) {
                transactions = try responseTransactions(responseFields, receipt: receipt, environment: environment, reported: &reported)
            }
        }
        if let decoded {
            shapes.append("transactions")
            for (index, element) in decoded.enumerated() {
                guard element.kind == .object else {
                    throw .wrongType("transactions[\(index)]", expected: "an object", got: element)
                }
                transactions.append(try serverAPITransaction(Fields(element, path: "transactions[\(index)]."), rules: rules, bundleID: &bundleID,
                                                             reported: &reported))
            }
        }
        if let signed {
            shapes.append("signed_transactions")
            for (index, element) in signed.enumerated() {
                let path = "signed_transactions[\(index)]"
                guard element.kind == .string else { throw .wrongType(path, expected: "a JWS string", got: element) }
                transactions.append(try withJWSPayload(element, path: path) { payloadFields, jws throws(LineReject) in
                    try checkSignature(jws, path: path, rules: rules,
                                       signedMs: try payloadFields.time("signedDate") ?? receivedMs,
                                       environment: try payloadFields.appleString("environment"))
                    return try serverAPITransaction(payloadFields, rules: rules, bundleID: &bundleID, reported: &reported)
                })
            }
        }
        // A verified answer with nothing in it is not a verification of anything (CONTRACT.md §1.2).
        if transactions.isEmpty, verifyingStatuses.contains(status) { throw LineReject("no transaction in response") }
        // A line that names no transaction but carries exactly one names that one.
        let namedTransactionID = claimedTransactionID ?? (transactions.count == 1 ? transactions[0].transactionID : nil)
        var rows = [VerificationLine(
            receivedMs: receivedMs, userID: userID, orderID: orderID, transactionID: namedTransactionID, status: status,
            environment: environment, bundleID: bundleID, shape: shapes.joined(separator: "+")
        ).rawRow()]
        // Each completed where it lies: a copy of a transaction is a copy of each of its strings.
        for index in transactions.indices {
            transactions[index].eventMs = receivedMs
            transactions[index].userID = userID
            transactions[index].claimedOrderID = orderID
            transactions[index].appendRawRows(item: index + 1, to: &rows)
        }
        try rules.checkEventTime(receivedMs, field: "received_at", reported: reported)
        return .accepted(rows)
    }

    /// Every transaction a verifying response carries: `receipt.in_app` (iOS 7), or the receipt
    /// itself (iOS 6: it has a `transaction_id` and no `in_app`), then `latest_receipt_info` and
    /// `latest_expired_receipt_info`.
    private static func responseTransactions(_ response: Fields, receipt: Fields?, environment: String?,
                                             reported: inout [ReportedTime]) throws(LineReject) -> [AppleTransaction] {
        var transactions: [AppleTransaction] = []
        if let receiptFields = receipt {
            if try receiptFields.element("in_app") == nil, try receiptFields.element("transaction_id") != nil {
                transactions.append(try AppleTransaction(receiptItem: receiptFields, origin: .receipt, environment: environment, reported: &reported))
            } else {
                try items(receiptFields, key: "in_app", origin: .receipt, environment: environment, reported: &reported, into: &transactions)
            }
        }
        try items(response, key: "latest_receipt_info", origin: .receipt, environment: environment, reported: &reported, into: &transactions)
        try items(response, key: "latest_expired_receipt_info", origin: .receipt, environment: environment, reported: &reported,
                  into: &transactions)
        return transactions
    }

    /// A decoded App Store Server API transaction: Production unless it says otherwise, of our
    /// bundle. The first app a line names is the line's (`bundleID`); a transaction of another
    /// keeps its own apart.
    private static func serverAPITransaction(_ fields: Fields, rules: LineRules, bundleID: inout String?,
                                             reported: inout [ReportedTime]) throws(LineReject) -> AppleTransaction {
        let bundle = try fields.appleString("bundleId")
        try rules.checkBundle(bundle)
        var transaction = try AppleTransaction(v2: fields, origin: .serverAPI, environment: "Production", reported: &reported)
        if bundleID == nil { bundleID = bundle } else if bundle != bundleID { transaction.bundleApartFromLine = bundle }
        return transaction
    }

    /// Appends to `transactions` the transactions under `key`: an array, or one object (iOS 6 receipts,
    /// pre-2021 V1 notifications).
    static func items(_ fields: Fields, key: String, origin: TransactionOrigin, environment: String?,
                      reported: inout [ReportedTime], into transactions: inout [AppleTransaction]) throws(LineReject) {
        for item in try itemFields(fields, key: key) {
            transactions.append(try AppleTransaction(receiptItem: item, origin: origin, environment: environment, reported: &reported))
        }
    }

    /// The transaction ids of the items under `keys` that an upgrade cancelled (`AppleTransaction.isUpgraded`).
    static func upgradedTransactionIDs(_ fields: Fields, keys: [String]) throws(LineReject) -> Set<String> {
        var ids = Set<String>()
        for key in keys {
            for item in try itemFields(fields, key: key) where try AppleTransaction.isUpgraded(item) {
                if let id = try item.appleString("transaction_id") { ids.insert(id) }
            }
        }
        return ids
    }

    /// The items under `key`: an array of objects, or one object.
    private static func itemFields(_ fields: Fields, key: String) throws(LineReject) -> [Fields] {
        guard let value = try fields.element(key) else { return [] }
        switch value.kind {
        case .object: return [Fields(value, path: fields.path + key + ".")]
        case .array: break
        default: throw .wrongType(fields.path + key, expected: "an array or an object", got: value)
        }
        var items: [Fields] = []
        for (index, element) in value.elements.enumerated() {
            let path = "\(fields.path)\(key)[\(index)]"
            guard element.kind == .object else { throw .wrongType(path, expected: "an object", got: element) }
            items.append(Fields(element, path: path + "."))
        }
        return items
    }
}

/// Rejects a JWS the run does not trust (CONTRACT.md §1.8), naming the field.
///
/// `signedMs` is the payload's `signedDate`, else the carrying line's time (a receipt's
/// `received_at`, a notification's `signedDate`); nil when there is none, and then the chain is
/// judged at the run's clock, as Apple's library judges it at the current time, and the clocks
/// that judge it alike are recorded (`LineRules.clockJudged`). `environment` is its payload's.
func checkSignature(_ jws: UnsafeBufferPointer<UInt8>, path: String, rules: LineRules, signedMs: Int64?, environment: String?) throws(LineReject) {
    let verdict = rules.signatures.judge(jws, signedMs: signedMs ?? rules.nowMs, environment: environment)
    if signedMs == nil, let validity = verdict.validity {
        rules.clockJudged?.judged(validity: validity, atClock: rules.nowMs)
    }
    if let failure = verdict.failure {
        throw LineReject("\(failure) in '\(path)'")
    }
}

/// Decodes the payload of the JWS held in the string `jws`, turning failures into a reject naming
/// the field, and calls `body` with its fields (named under `path`) and the JWS's text, for its signature.
func withJWSPayload<Result>(
    _ jws: JSONElement, path: String, _ body: (_ payload: Fields, _ jws: UnsafeBufferPointer<UInt8>) throws(LineReject) -> Result
) throws(LineReject) -> Result {
    try jws.withJWSPayload(failure: { error in
        let why: String
        switch error {
        case .notThreeParts: why = "not three dot-separated parts"
        case .badBase64: why = "payload is not base64url"
        case .payload(let syntax): why = "payload is not JSON: \(syntax)"
        case .payloadNotObject: why = "payload is not a JSON object"
        }
        return LineReject("bad JWS in '\(path)': \(why)")
    }) { text, payload throws(LineReject) in
        try body(Fields(payload, path: path + "."), text)
    }
}
