@testable import IAPReconCLI
import Testing

@Suite("Option values")
struct ValueKindTests {
    @Test("durations in milliseconds", arguments: [
        ("24h", 86_400_000), ("90m", 5_400_000), ("30s", 30_000), ("2d", 172_800_000),
        ("1h30m", 5_400_000), ("1d12h", 129_600_000), ("500ms", 500), ("3600s", 3_600_000), ("0", 0), ("000", 0),
    ] as [(String, Int64)])
    func durations(text: String, milliseconds: Int64) {
        #expect(DurationText.milliseconds(text) == milliseconds)
    }

    @Test("not durations", arguments: ["", "h", "24x", "1.5h", "-1h", "24 h", "1h30", "99999999999999999999s", "24", "3600", "86400000"])
    func notDurations(text: String) {
        #expect(DurationText.milliseconds(text) == nil)
    }

    @Test("sizes with k and m suffixes")
    func sizes() {
        #expect(SizeListText.counts("100k,1m,4m") == [100_000, 1_000_000, 4_000_000])
        #expect(SizeListText.counts("2500") == [2500])
        #expect(SizeListText.counts("1K,2M") == [1000, 2_000_000])
        for bad in ["", "1m,", ",1m", "0", "1g", "k", "1.5m", "-1"] {
            #expect(SizeListText.counts(bad) == nil, "\(bad)")
        }
    }

    @Test("checks per kind")
    func checks() {
        #expect(ValueKind.integer(minimum: 1).check("8") == .success("8"))
        #expect(ValueKind.integer(minimum: 1).check("0") == .failure(.expected("a whole number of at least 1")))
        #expect(ValueKind.currency.check("jpy") == .success("JPY"))
        #expect(ValueKind.currency.check("EURO") == .failure(.expected("an ISO 4217 currency code such as USD")))
        #expect(ValueKind.timeZone.check("America/Los_Angeles") == .success("America/Los_Angeles"))
        #expect(ValueKind.choice(["a", "b"]).check("c") == .failure(InvalidValue(explanation: ". Please provide one of 'a' or 'b'.")))
    }

    @Test("a number without a unit is no duration: `grace = 24` meant a day, and read as 24 seconds it made every purchase not delivered within them a lost or late delivery; the refusal says so")
    func durationNeedsItsUnit() {
        #expect(ValueKind.duration.check("24") == .failure(.expected("a duration with its unit, such as 24h, 90m, 30s, 2d or 1h30m: '24' names none")))
        #expect(ValueKind.duration.check("86400") == .failure(.expected("a duration with its unit, such as 24h, 90m, 30s, 2d or 1h30m: '86400' names none")))
        // Near misses: zero needs no unit, and a number with its unit is read.
        #expect(ValueKind.duration.check("0") == .success("0"))
        #expect(ValueKind.duration.check("24h") == .success("24h"))
        #expect(ValueKind.duration.check("24x") == .failure(.duration))
    }

    @Test("a time is an instant: ISO 8601 with its offset, epoch milliseconds, or the zone-less form with a space in UTC; an ISO 8601 time without an offset is refused")
    func times() throws {
        #expect(try ValueKind.instantMs("2026-11-01T01:30:00-07:00").get() == 1_793_521_800_000)
        #expect(try ValueKind.instantMs("2026-11-01T08:30:00Z").get() == 1_793_521_800_000)
        #expect(try ValueKind.instantMs("1793521800000").get() == 1_793_521_800_000)
        #expect(try ValueKind.instantMs("2026-11-01 08:30:00").get() == 1_793_521_800_000)
        #expect(ValueKind.time.check("2026-11-01T08:30:00Z") == .success("2026-11-01T08:30:00Z"))
        #expect(try ValueKind.instantMs("2026-11-01t08:30:00z").get() == 1_793_521_800_000)
        for refused in ["2026-11-01T01:30:00", "2026-11-01T01:30:00.000", "2026-11-01t01:30:00", "yesterday", ""] {
            #expect(ValueKind.time.check(refused) != .success(refused), "\(refused)")
        }
    }

    @Test("--currency takes the ISO 4217 codes of money with a minor unit, in any case; a made-up code or one with no minor unit is refused", arguments: [
        ("clf", "CLF"), ("UYW", "UYW"), ("kwd", "KWD"), ("JPY", "JPY"), ("XCG", "XCG"),
    ])
    func isoCurrencies(code: String, stored: String) {
        #expect(ValueKind.currency.check(code) == .success(stored))
    }

    @Test("near miss: three letters that are no ISO 4217 currency with a minor unit are refused", arguments: ["XBT", "BTC", "ABC", "XAU", "XXX", "usdt"])
    func notISOCurrencies(code: String) {
        #expect(ValueKind.currency.check(code) == .failure(.expected("an ISO 4217 currency code such as USD")))
    }

    @Test("choices are listed the way swift-argument-parser lists them")
    func alternatives() {
        #expect(UsageMessage.quotedAlternatives(["text"]) == "'text'")
        #expect(UsageMessage.quotedAlternatives(["text", "json"]) == "'text' or 'json'")
        #expect(UsageMessage.quotedAlternatives(["text", "json", "csv"]) == "'text', 'json' or 'csv'")
    }

    @Test("did you mean: close typos and prefixes, nothing for unrelated words")
    func suggestions() {
        let commands = ["run", "ingest", "normalize", "join", "report", "validate", "history", "runs", "generate", "bench"]
        #expect(Suggestion.closest(to: "rnu", among: commands) == "run")
        #expect(Suggestion.closest(to: "runn", among: commands) == "run")
        #expect(Suggestion.closest(to: "injest", among: commands) == "ingest")
        #expect(Suggestion.closest(to: "repotr", among: commands) == "report")
        #expect(Suggestion.closest(to: "gen", among: commands) == "generate")
        #expect(Suggestion.closest(to: "deploy", among: commands) == nil)
        #expect(Suggestion.closest(to: "x", among: commands) == nil)
        #expect(Suggestion.editDistance(Array("kitten"), Array("sitting")) == 3)
        #expect(Suggestion.editDistance(Array("ab"), Array("ba")) == 1)
    }
}
