import Foundation
import Testing
@testable import IAPRecon

/// CONTRACT.md §3 `consumption_requests.jsonl`: Apple's refund questions answered from the store.
@Suite("consumption requests")
struct ConsumptionRequestsTests {
    private static let asOf = "2026-11-29T12:00:00Z"

    private func signup(_ ts: String, _ userID: String, idfv: String? = nil) -> String {
        "{\"ts\":\"\(ts)\",\"user_id\":\"\(userID)\",\"method\":\"apple\"" + (idfv.map { ",\"idfv\":\"\($0)\"" } ?? "") + "}"
    }

    /// A user who signed up 39 days before Apple asked, bought 59.99 USD of gems and had 55 USD of it refunded.
    private func scenario(deliveries: [String], currency: String = "USD") throws -> Scenario {
        let scenario = try Scenario()
        try scenario.catalog()
        // fx.csv converts into the reporting currency.
        try scenario.write("fx.csv", currency == "USD" ? ["date,currency,rate", "2026-10-01,USD,1", "2026-10-01,EUR,1.1"]
                                                        : ["date,currency,rate", "2026-10-01,EUR,1", "2026-10-01,USD,0.9"])
        try scenario.write("registrations/r.jsonl", [
            signup("2026-10-20T09:00:00Z", "u_1", idfv: "B3B7756A-9E5E-404E-A956-31FE49D3E5E6"),
        ])
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u_1", transaction: Line.v2("t_old", "gems300", purchase: "2026-11-01T10:00:00Z", price: 55_000,
                                                                          revocation: "2026-11-02T10:00:00Z")),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u_1", transaction: Line.v2("t_ask", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990,
                                                                          token: "7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47")),
        ])
        let request = Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3d1", signed: "2026-11-29T08:00:00Z",
                                        transaction: Line.v2("t_ask", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990))
        // Apple retries until it hears back: the same notificationUUID twice is one request.
        try scenario.write("notifications/n.jsonl", [request, request])
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-01T10:00:09Z", "u_1", "t_old", "gems300")] + deliveries)
        _ = try Pipeline.run(RunOptions(
            input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1, lineRules: LineRules(signatures: .testChain),
            reconcile: ReconcileSettings(asOfMs: Timestamp.parse(Self.asOf)),
            report: ReportSettings(outFolder: scenario.out, currency: currency)), progress: nil)
        return scenario
    }

    private func lines(_ scenario: Scenario) throws -> [String] {
        try scenario.output("consumption_requests.jsonl").split(separator: "\n").map(String.init)
    }

    @Test("a delivered purchase: delivered, tenure, lifetime dollars in Apple's buckets, token, platform; the rest undeclared")
    func delivered() throws {
        let scenario = try scenario(deliveries: [Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems300")])
        #expect(try lines(scenario) == [
            "{\"notificationUUID\":\"0a3cee3d-920a-4658-8128-61d634efc3d1\",\"transactionId\":\"t_ask\",\"requestDate\":\"2026-11-29T08:00:00.000Z\","
                + "\"consumptionRequest\":{\"accountTenure\":4,\"appAccountToken\":\"7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47\","
                + "\"consumptionStatus\":0,\"customerConsented\":false,\"deliveryStatus\":0,\"lifetimeDollarsPurchased\":3,"
                + "\"lifetimeDollarsRefunded\":3,\"platform\":1,\"playTime\":0,\"refundPreference\":0,\"sampleContentProvided\":false,"
                + "\"userStatus\":0}}",
        ])
    }

    @Test("a CONSUMPTION_REQUEST with no uuid or signing time (a V1 one) cannot be answered: the run that reads it says so once, naming its line; a V2 one is answered")
    func unanswerableRequestNamed() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let v1 = #"{"notification_type":"CONSUMPTION_REQUEST","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t_v1","product_id":"gems300","purchase_date_ms":"1795860900000","quantity":"1"}]}}"#
        let v2 = Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3d1", signed: "2026-11-29T08:00:00Z",
                                   transaction: Line.v2("t_v2", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990))
        try scenario.write("notifications/n.jsonl", [v2, v1])
        let result = try scenario.run(asOf: Self.asOf)
        #expect(result.ingest.warnings == [
            "1 CONSUMPTION_REQUEST notification has no notificationUUID or signedDate (V1 notifications have neither), "
                + "so consumption_requests.jsonl cannot answer it: notifications/n.jsonl:2",
        ])
        #expect(try lines(scenario).count == 1)
        // The next night reads no new notifications file: nothing to say again. A new file's request is named alone.
        #expect(try scenario.run(asOf: Self.asOf).ingest.warnings.isEmpty)
        try scenario.write("notifications/o.jsonl", [v1.replacingOccurrences(of: "t_v1", with: "t_v1b")])
        #expect(try scenario.run(asOf: Self.asOf).ingest.warnings == [
            "1 CONSUMPTION_REQUEST notification has no notificationUUID or signedDate (V1 notifications have neither), "
                + "so consumption_requests.jsonl cannot answer it: notifications/o.jsonl:1",
        ])
    }

    @Test("a notification of a type Apple does not document, V2 or V1, is named with its line once by the run that reads it; its transaction still counts")
    func unknownNotificationTypesNamed() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let known = Line.purchaseNotification("ONE_TIME_CHARGE", "t_known", number: 1)
        let v2 = Line.purchaseNotification("NEW_THING", "t_new", number: 2)
        let v1 = #"{"notification_type":"OLD_NEW_THING","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t_v1","product_id":"gems300","purchase_date_ms":"1795860900000","quantity":"1"}]}}"#
        try scenario.write("notifications/n.jsonl", [known, v2, v1])
        let result = try scenario.run(asOf: Self.asOf)
        #expect(result.ingest.warnings == [
            "2 notifications have a type iaprecon does not know (NEW_THING 1, OLD_NEW_THING 1); they are treated as any other notification: "
                + "the transactions they carry count as purchases Apple confirmed, and as refunded only if they give a refund date; "
                + "check Apple's notes for what they mean: notifications/n.jsonl:2, notifications/n.jsonl:3",
        ])
        // Kept as verified Apple transactions: never delivered, so each is a lost delivery.
        let lost = try Scenario.findings(try scenario.open()).filter { $0.kind == .lostDelivery }.compactMap(\.transactionID)
        #expect(lost.sorted() == ["t_known", "t_new", "t_v1"])
        // The next night reads no new notifications file: nothing to say again.
        #expect(try scenario.run(asOf: Self.asOf).ingest.warnings.isEmpty)
    }

    @Test("more than five unknown notifications: five lines named, the rest counted, the types counted")
    func unknownNotificationTypesCounted() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let lines = (1...7).map { index in
            Line.notification(index == 7 ? "OTHER_THING" : "NEW_THING", uuid: "1b2c3d4e-0000-4000-8000-00000000001\(index)", signed: "2026-11-20T08:00:00Z",
                              transaction: Line.v2("t_\(index)", "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990))
        }
        try scenario.write("notifications/n.jsonl", lines)
        #expect(try scenario.run(asOf: Self.asOf).ingest.warnings == [
            "7 notifications have a type iaprecon does not know (NEW_THING 6, OTHER_THING 1); they are treated as any other notification: "
                + "the transactions they carry count as purchases Apple confirmed, and as refunded only if they give a refund date; "
                + "check Apple's notes for what they mean: notifications/n.jsonl:1, notifications/n.jsonl:2, "
                + "notifications/n.jsonl:3, notifications/n.jsonl:4, notifications/n.jsonl:5 and 2 more",
        ])
    }

    @Test("one unknown notification is named in the singular; its transaction counts, as a purchase without a refund date, and as a refund with one")
    func unknownNotificationTypeSingular() throws {
        // What the warning says: never delivered, a lost delivery unless its transaction carries a refund date.
        let cases: [(revocation: String?, kinds: [FindingKind])] = [(nil, [.lostDelivery]), ("2026-11-20T09:00:00Z", [])]
        for (revocation, kinds) in cases {
            let scenario = try Scenario()
            try scenario.catalog()
            let line = Line.notification("NEW_THING", uuid: "1b2c3d4e-0000-4000-8000-000000000021", signed: "2026-11-20T08:00:00Z",
                                         transaction: Line.v2("t_new", "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990, revocation: revocation))
            try scenario.write("notifications/n.jsonl", [line])
            #expect(try scenario.run(asOf: Self.asOf).ingest.warnings == [
                "1 notification has a type iaprecon does not know (NEW_THING 1); it is treated as any other notification: "
                    + "a transaction it carries counts as a purchase Apple confirmed, and as refunded only if it gives a refund date; "
                    + "check Apple's notes for what it means: notifications/n.jsonl:1",
            ])
            #expect(try Scenario.findings(try scenario.open()).map(\.kind) == kinds, "\(revocation ?? "no refund date")")
        }
    }

    @Test("every type Apple documents, V2 and V1, gives no warning")
    func knownNotificationTypesQuiet() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let v2 = NotificationParser.knownV2Types.sorted().enumerated().map { index, type in
            Line.notification(type, uuid: "1b2c3d4e-0000-4000-8000-\(String(format: "%012d", index))", signed: "2026-11-20T08:00:00Z",
                              transaction: Line.v2("t_v2_\(index)", "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990,
                                                   revocation: NotificationParser.refundTypes.contains(type) ? "2026-11-20T07:59:30Z" : nil))
        }
        let v1 = NotificationParser.knownV1Types.sorted().enumerated().map { index, type in
            let cancelled = NotificationParser.refundTypes.contains(type) ? #","cancellation_date_ms":"1795860930000""# : ""
            return #"{"notification_type":"\#(type)","environment":"PROD","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t_v1_\#(index)","product_id":"gems300","purchase_date_ms":"1795860900000","quantity":"1"\#(cancelled)}]}}"#
        }
        #expect(NotificationParser.knownV2Types.isSuperset(of: ["RESCIND_CONSENT", "ONE_TIME_CHARGE", "PRICE_CHANGE", "REFUND"]))
        #expect(NotificationParser.knownV1Types.isSuperset(of: ["INITIAL_BUY", "CANCEL", "DID_RECOVER", "REFUND"]))
        try scenario.write("notifications/n.jsonl", v2 + v1)
        let result = try scenario.run(asOf: Self.asOf)
        #expect(result.ingest.files.first { $0.kind == .notifications }?.counts.accepted == v2.count + v1.count)
        // The V1 CONSUMPTION_REQUEST is named, for what it lacks, by the warning of its own alone.
        let request = v2.count + (NotificationParser.knownV1Types.sorted().firstIndex(of: "CONSUMPTION_REQUEST") ?? 0) + 1
        #expect(result.ingest.warnings == [
            "1 CONSUMPTION_REQUEST notification has no notificationUUID or signedDate (V1 notifications have neither), "
                + "so consumption_requests.jsonl cannot answer it: notifications/n.jsonl:\(request)",
        ])
    }

    @Test("a V2 CONSUMPTION_REQUEST with a uuid and signing time but no transaction is rejected, naming its line (Apple always sends the transaction asked about); one with its transaction is answered")
    func unanswerableRequestWithoutTransaction() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let bare = #"{"notificationType":"CONSUMPTION_REQUEST","notificationUUID":"5b0c2f4e-1d7a-4b8e-a3f6-9c2d1e0f7a18","signedDate":1795939200000,"data":{"environment":"Production","bundleId":"com.example.game"}}"#
        let answered = Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3d1", signed: "2026-11-29T08:00:00Z",
                                         transaction: Line.v2("t_v2", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990))
        try scenario.write("notifications/n.jsonl", [answered, bare])
        let result = try scenario.run(asOf: Self.asOf)
        #expect(result.ingest.warnings.isEmpty)
        let rejects = try scenario.output("rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == [
            "notifications/n.jsonl,2,CONSUMPTION_REQUEST without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'",
        ])
        #expect(try lines(scenario).map { $0.contains("\"transactionId\":\"t_v2\"") } == [true])
    }

    @Test("never delivered, or delivered only after Apple asked: not delivered (5); the wrong product: 2")
    func notDelivered() throws {
        let never = try scenario(deliveries: [])
        #expect(try lines(never).count == 1)
        #expect(try lines(never).first?.contains("\"deliveryStatus\":5") == true)
        let late = try scenario(deliveries: [Line.delivered("2026-11-29T09:00:00Z", "u_1", "t_ask", "gems300")])
        #expect(try lines(late).first?.contains("\"deliveryStatus\":5") == true)
        let wrong = try scenario(deliveries: [Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems60")])
        #expect(try lines(wrong).first?.contains("\"deliveryStatus\":2") == true)
    }

    @Test("delivered, then taken back before Apple asked (a refund reversed and asked for again, fraud): not delivered (5), never 'delivered and working'")
    func revokedBeforeTheRequest() throws {
        let delivered = Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems300")
        let revoked = try scenario(deliveries: [delivered, Line.revoked("2026-11-28T20:00:00Z", "u_1", "t_ask")])
        #expect(try lines(revoked).first?.contains("\"deliveryStatus\":5") == true)
        // Near misses: taken back only after Apple asked, or delivered again after it was taken back: it was working when asked.
        let revokedAfter = try scenario(deliveries: [delivered, Line.revoked("2026-11-29T09:00:00Z", "u_1", "t_ask")])
        #expect(try lines(revokedAfter).first?.contains("\"deliveryStatus\":0") == true)
        let redelivered = try scenario(deliveries: [delivered, Line.revoked("2026-11-28T20:00:00Z", "u_1", "t_ask"),
                                                    Line.delivered("2026-11-28T21:00:00Z", "u_1", "t_ask", "gems300", deliveryID: "d_again")])
        #expect(try lines(redelivered).first?.contains("\"deliveryStatus\":0") == true)
        // Another transaction's revocation says nothing of this one.
        let other = try scenario(deliveries: [delivered, Line.revoked("2026-11-28T20:00:00Z", "u_1", "t_old")])
        #expect(try lines(other).first?.contains("\"deliveryStatus\":0") == true)
        // Delivered to two users and taken back from one: the other still had it.
        let twoUsers = try scenario(deliveries: [delivered, Line.delivered("2026-11-28T10:05:00Z", "u_2", "t_ask", "gems300"),
                                                 Line.revoked("2026-11-28T20:00:00Z", "u_2", "t_ask")])
        #expect(try lines(twoUsers).first?.contains("\"deliveryStatus\":0") == true)
        let bothRevoked = try scenario(deliveries: [delivered, Line.delivered("2026-11-28T10:05:00Z", "u_2", "t_ask", "gems300"),
                                                    Line.revoked("2026-11-28T20:00:00Z", "u_2", "t_ask"), Line.revoked("2026-11-28T20:00:00Z", "u_1", "t_ask")])
        #expect(try lines(bothRevoked).first?.contains("\"deliveryStatus\":5") == true)
    }

    @Test("refunded, taken back, the refund reversed and not given back, then asked about again: not delivered, and the reversed refund is no refund")
    func reversedRefundAskedAgain() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let purchase = Line.v2("t_r", "gems300", purchase: "2026-11-20T10:00:00Z", price: 4990)
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-20T10:00:05Z", "u_1", transaction: purchase)])
        try scenario.write("server/s.jsonl", [Line.delivered("2026-11-20T10:00:09Z", "u_1", "t_r", "gems300"),
                                              Line.revoked("2026-11-21T11:00:00Z", "u_1", "t_r")])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "0a3cee3d-920a-4658-8128-61d634efc3e1", signed: "2026-11-21T10:00:00Z",
                              transaction: Line.v2("t_r", "gems300", purchase: "2026-11-20T10:00:00Z", price: 4990,
                                                   revocation: "2026-11-21T09:00:00Z", revocationType: "REFUND_FULL")),
            Line.notification("REFUND_REVERSED", uuid: "0a3cee3d-920a-4658-8128-61d634efc3e2", signed: "2026-11-23T10:00:00Z", transaction: purchase),
            Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3e3", signed: "2026-11-25T10:00:00Z", transaction: purchase),
        ])
        _ = try scenario.run(asOf: Self.asOf)
        let answers = try ConsumptionRequestsReport.answers(database: try scenario.open(), transactionID: "t_r")
        #expect(answers.map { [$0.deliveryStatus, $0.lifetimeDollarsPurchased, $0.lifetimeDollarsRefunded] } == [[5, 2, 1]])
    }

    @Test("lifetime dollars are undeclared when the reporting currency is not USD: never a guess")
    func otherCurrency() throws {
        let scenario = try scenario(deliveries: [Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems300")], currency: "EUR")
        let line = try #require(try lines(scenario).first)
        #expect(line.contains("\"lifetimeDollarsPurchased\":0,\"lifetimeDollarsRefunded\":0"))
        #expect(line.contains("\"deliveryStatus\":0"))
    }

    @Test("history in a store whose fx.csv converts into EUR shows euros by default, answers as the run did, and refuses to call them dollars")
    func historyInTheStoresCurrency() throws {
        let scenario = try scenario(deliveries: [Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems300")], currency: "EUR")
        let database = try scenario.open()
        // 4.99 + 55 USD at 0.9 EUR, each purchase rounded to the cent: 4.491 is 4.49, plus 49.5.
        let history = try UserHistory.load(database, .user("u_1"))
        #expect((history.spent, history.refunded, history.reportingCurrency) == ("53.99", "49.5", "EUR"))
        #expect(throws: ReportingCurrency.Mismatch.self) { try UserHistory.load(database, .user("u_1"), currency: "USD") }
        // history --transaction prints what consumption_requests.jsonl says, in the same currency.
        let answers = try ConsumptionRequestsReport.answers(database: database, currency: history.reportingCurrency, transactionID: "t_ask")
        #expect(answers.map { JSONWriter.compact($0.body) } == [try #require(try lines(scenario).first?.split(separator: ",\"consumptionRequest\":").last
            .map { String($0.dropLast()) })])
    }

    @Test("platform comes from a sign-up the store had seen when Apple asked, as tenure does")
    func platformFromAnEarlierSignup() throws {
        let scenario = try scenario(deliveries: [Line.delivered("2026-11-28T10:00:09Z", "u_1", "t_ask", "gems300")])
        let answers = try ConsumptionRequestsReport.answers(database: try scenario.open(), transactionID: "t_ask")
        #expect(answers.map(\.platform) == [1])
        let later = try Scenario()
        try later.catalog()
        try later.write("registrations/r.jsonl", [signup("2026-11-29T09:00:00Z", "u_2", idfv: "B3B7756A-9E5E-404E-A956-31FE49D3E5E6")])
        try later.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-28T10:00:05Z", "u_2", transaction: Line.v2("t_2", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990)),
        ])
        try later.write("notifications/n.jsonl", [Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3d2",
                                                                      signed: "2026-11-29T08:00:00Z", transaction: Line.v2("t_2", "gems300", purchase: "2026-11-28T10:00:00Z", price: 4990))])
        _ = try later.run(asOf: Self.asOf)
        let laterAnswers = try ConsumptionRequestsReport.answers(database: try later.open(), transactionID: "t_2")
        #expect(laterAnswers.map { [$0.accountTenure, $0.platform] } == [[0, 0]])
    }

    /// `u_1` bought and was refunded `euroMilli` / 1000 EUR (at 1.1 USD), then asked Apple about a free purchase.
    private func lifetimeAnswer(euroMilli: Int) throws -> (answer: [Int], spent: String, refunded: String) {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("fx.csv", ["date,currency,rate", "2026-10-01,USD,1", "2026-10-01,EUR,1.1"])
        let euros = Line.v2("t_eur", "gems300", purchase: "2026-11-01T10:00:00Z", price: euroMilli, revocation: "2026-11-02T10:00:00Z")
            .replacingOccurrences(of: "\"currency\":\"USD\"", with: "\"currency\":\"EUR\"")
        let ask = Line.v2("t_ask", "gems300", purchase: "2026-11-28T10:00:00Z", price: 0)
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u_1", transaction: euros),
            Line.v2Receipt("2026-11-28T10:00:05Z", "u_1", transaction: ask),
        ])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("CONSUMPTION_REQUEST", uuid: "0a3cee3d-920a-4658-8128-61d634efc3d9", signed: "2026-11-29T08:00:00Z", transaction: ask),
        ])
        _ = try scenario.run(asOf: Self.asOf)
        let database = try scenario.open()
        let answers = try ConsumptionRequestsReport.answers(database: database, transactionID: "t_ask")
        let history = try UserHistory.load(database, .user("u_1"))
        return (answers.flatMap { [$0.lifetimeDollarsPurchased, $0.lifetimeDollarsRefunded] }, history.spent, history.refunded)
    }

    @Test("lifetime dollars add each purchase and refund rounded to the cent, as history and transactions.csv show them")
    func lifetimeDollarsInCents() throws {
        // 45.45 EUR × 1.1 = 49.995 USD: 50.00 USD in history and transactions.csv, so 50–99.99 USD (3), not under 50.
        let rounded = try lifetimeAnswer(euroMilli: 45_450)
        #expect(rounded.answer == [3, 3])
        #expect((rounded.spent, rounded.refunded) == ("50", "50"))
        // Near miss: 45.44 EUR × 1.1 = 49.984 USD is 49.98 USD, under 50 (2).
        let below = try lifetimeAnswer(euroMilli: 45_440)
        #expect(below.answer == [2, 2])
        #expect((below.spent, below.refunded) == ("49.98", "49.98"))
    }

    @Test("Apple's buckets: tenure in days and lifetime dollars")
    func buckets() {
        #expect([0, 2, 3, 9, 10, 29, 30, 89, 90, 179, 180, 364, 365, 4000].map {
            ConsumptionRequestsReport.tenureBucket(days: Int64($0), registered: true)
        } == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7])
        #expect(ConsumptionRequestsReport.tenureBucket(days: 0, registered: false) == 0)
        #expect(["0", "0.01", "49.99", "50", "99.99", "100", "499.99", "500", "999.99", "1000", "1999.99", "2000", "9000"].map {
            ConsumptionRequestsReport.dollarBucket(Decimal(string: $0) ?? -1)
        } == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7])
    }

    @Test("each bucket is said in words with the bounds that give it, for history's readers")
    func bucketMeanings() {
        #expect((0...7).map(ConsumptionRequestsReport.tenureMeaning) == [
            "undeclared (no sign-up before the request)", "0 to 3 days since sign-up", "3 to 10 days since sign-up",
            "10 to 30 days since sign-up", "30 to 90 days since sign-up", "90 to 180 days since sign-up",
            "180 to 365 days since sign-up", "365 days or more since sign-up",
        ])
        #expect((0...7).map(ConsumptionRequestsReport.dollarMeaning) == [
            "undeclared (not every amount converts to USD)", "0 USD", "0.01 to 49.99 USD", "50 to 99.99 USD", "100 to 499.99 USD",
            "500 to 999.99 USD", "1000 to 1999.99 USD", "2000 USD or more",
        ])
    }
}
