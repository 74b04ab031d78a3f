import Foundation
@testable import IAPReconCLI
import IAPRecon
import Testing

@Suite("Config files")
struct ConfigFileTests {
    @Test("key = value lines, comments, blank lines and quotes")
    func syntax() throws {
        let text = """
            \u{FEFF}# Nightly reconciliation
            input = /data/iap/exports

              db    = "/data/iap/iap #1.sqlite"   # quoted: the # is kept
            grace = 36h        # Apple retries deliveries
            tz='Asia/Tokyo'
            fail-on = critical\r
            quiet = yes
            """
        let config = try parseConfig(text, path: "iaprecon.conf")
        #expect(config.entries == [
            .init(key: "input", value: "/data/iap/exports", line: 2),
            .init(key: "db", value: "/data/iap/iap #1.sqlite", line: 4),
            .init(key: "grace", value: "36h", line: 5),
            .init(key: "tz", value: "Asia/Tokyo", line: 6),
            .init(key: "fail-on", value: "critical", line: 7),
            .init(key: "quiet", value: "true", line: 8),
        ])
        #expect(config.values["grace"] == "36h")
    }

    @Test("syntax errors name the file and line", arguments: [
        ("input = a\n[run]\n", "Error: iaprecon.conf:2: Expected 'key = value', found '[run]'"),
        ("input\n", "Error: iaprecon.conf:1: Expected 'key = value', found 'input'"),
        ("= a\n", "Error: iaprecon.conf:1: Expected 'key = value', found '= a'"),
        ("# ok\ninptu = a\n", "Error: iaprecon.conf:2: Unknown key 'inptu'. Did you mean 'input'?"),
        ("verbose = true\n", "Error: iaprecon.conf:1: Unknown key 'verbose'."),
        ("users = 50\n", "Error: iaprecon.conf:1: Unknown key 'users'."),
        ("--db = a\n", "Error: iaprecon.conf:1: Unknown key '--db'. Did you mean 'db'?"),
        ("config = other.conf\n", "Error: iaprecon.conf:1: A config file cannot name another config file"),
        ("db = a\r\n\r\ndb = b\r\n", "Error: iaprecon.conf:3: 'db' is already set on line 1"),
        ("db =\n", "Error: iaprecon.conf:1: Missing value for 'db'"),
        ("db = # nothing\n", "Error: iaprecon.conf:1: Missing value for 'db'"),
        ("db = \"a.sqlite\n", "Error: iaprecon.conf:1: Missing closing quote in '\"a.sqlite'"),
        ("db = 'a' b\n", "Error: iaprecon.conf:1: Unexpected text 'b' after the closing quote"),
        ("quiet = maybe\n", "Error: iaprecon.conf:1: The value 'maybe' is invalid for 'quiet'. Please provide 'true' or 'false' (or yes/no, on/off, 1/0)."),
    ])
    func syntaxErrors(text: String, expected: String) {
        do {
            _ = try parseConfig(text, path: "iaprecon.conf")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.text == expected)
            #expect(error.exitCode == .usage)
        }
    }

    @Test("command line over config over spec defaults")
    func precedence() throws {
        let config = try parseConfig(
            """
            db = from-config.sqlite
            grace = 36h
            out = config-out
            """, path: "team.conf")
        let command = try parseExpectingCommand(["run", "--db", "cli.sqlite"]).applyingDefaults(fromConfig: config)
        #expect(try command.string("db") == "cli.sqlite")
        #expect(command.origin("db") == .commandLine)
        #expect(try command.duration("grace") == 129_600_000)
        #expect(command.origin("grace") == .config(file: "team.conf", line: 2))
        #expect(try command.string("out") == "config-out")
        #expect(try command.string("input") == "sample-data")
        #expect(command.origin("input") == .specDefault)
    }

    @Test("a flag set in the config file is set; the command line still wins for options")
    func configFlag() throws {
        let config = try parseConfig("quiet = on\njobs = 2\n", path: "c.conf")
        let command = try parseExpectingCommand(["ingest", "-j", "8"]).applyingDefaults(fromConfig: config)
        #expect(command.flag("quiet"))
        #expect(try command.int("jobs") == 8)
    }

    @Test("the command line's --trust-unsigned or --trust-root wins over the file's other, which it excludes")
    func signatureModeFromCommandLine() throws {
        // A night's config trusting a test root, run by hand with --trust-unsigned, and the other way round.
        let roots = try parseConfig("trust-root = /etc/iaprecon/test-root.pem\ntrust-root = /etc/iaprecon/xcode.pem\n", path: "c.conf")
        let unsigned = try parseExpectingCommand(["run", "--trust-unsigned"]).applyingDefaults(fromConfig: roots)
        #expect(unsigned.flag("trust-unsigned"))
        #expect(unsigned.allValues("trust-root").isEmpty)
        #expect(try unsigned.signatureCheck() == .trustUnsigned)
        let unsignedFile = try parseConfig("trust-unsigned = true\n", path: "c.conf")
        let rooted = try parseExpectingCommand(["nightly", "--trust-root", "/tmp/root.pem"]).applyingDefaults(fromConfig: unsignedFile)
        #expect(!rooted.flag("trust-unsigned"))
        #expect(rooted.allValues("trust-root") == ["/tmp/root.pem"])
        // Near misses: both from one place are still refused; either from the file alone is taken.
        let both = try parseConfig("trust-unsigned = true\ntrust-root = /tmp/root.pem\n", path: "c.conf")
        let fromFile = try parseExpectingCommand(["run"]).applyingDefaults(fromConfig: both)
        #expect(throws: UsageError.self) { try fromFile.signatureCheck() }
        let onLine = try parseExpectingCommand(["run", "--trust-unsigned", "--trust-root", "/tmp/root.pem"])
        #expect(throws: UsageError.self) { try onLine.signatureCheck() }
        #expect(try parseExpectingCommand(["run"]).applyingDefaults(fromConfig: unsignedFile).flag("trust-unsigned"))
        #expect(try parseExpectingCommand(["run"]).applyingDefaults(fromConfig: roots).allValues("trust-root").count == 2)
    }

    @Test("a bad value in the config file is reported at its file and line", arguments: [
        ("fail-on = fatal", "Error: c.conf:1: The value 'fatal' is invalid for 'fail-on'. Please provide one of 'critical', 'warning' or 'info'."),
        ("grace = a day", "Error: c.conf:1: The value 'a day' is invalid for 'grace': expected a duration such as 24h, 90m, 30s, 2d or 1h30m"),
        ("jobs = 0", "Error: c.conf:1: The value '0' is invalid for 'jobs': expected a whole number of at least 1"),
    ])
    func badConfigValue(line: String, expected: String) throws {
        let config = try parseConfig(line, path: "c.conf")
        let command = try parseExpectingCommand(["run"])
        do {
            _ = try command.applyingDefaults(fromConfig: config)
            Issue.record("accepted \(line)")
        } catch {
            #expect(error.text == expected)
        }
    }

    @Test("a bad config value does not matter when the command line overrides it")
    func overriddenBadValue() throws {
        let config = try parseConfig("fail-on = fatal", path: "c.conf")
        let command = try parseExpectingCommand(["run", "--fail-on", "warning"]).applyingDefaults(fromConfig: config)
        #expect(try command.choice("fail-on") == "warning")
    }

    @Test("--config FILE is read by parseWithConfig")
    func parseWithConfigFile() throws {
        let path = try temporaryFile("out = nightly\nfail-on = warning\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard case .command(let command) = parseWithConfig(["run", "--config", path, "--out", "here"], program: .iaprecon)
        else {
            Issue.record("expected a command")
            return
        }
        #expect(try command.string("out") == "here")
        #expect(try command.choice("fail-on") == "warning")
        #expect(command.origin("fail-on") == .config(file: path, line: 2))
        #expect(command.configPath == path)
    }

    @Test("the stages a night is resumed with read the night's config: its zone, currency, grace and store, not the defaults")
    func stagesReadConfig() throws {
        let path = try temporaryFile("db = /var/lib/iaprecon/store.sqlite\ntz = Asia/Tokyo\ncurrency = JPY\ngrace = 36h\nmmp-tz = Europe/Berlin\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        func command(_ arguments: [String]) throws -> ParsedCommand {
            guard case .command(let command) = parseWithConfig(arguments + ["--config", path], program: .iaprecon) else {
                Issue.record("expected a command for \(arguments)")
                throw CancellationError()
            }
            return command
        }
        for stage in ["normalize", "join", "report"] {
            #expect(try command([stage]).string("db") == "/var/lib/iaprecon/store.sqlite", "\(stage)")
        }
        let report = try command(["report"])
        #expect(try report.string("tz") == "Asia/Tokyo")
        #expect(try report.string("currency") == "JPY")
        let join = try command(["join"])
        #expect(try join.string("mmp-tz") == "Europe/Berlin")
        #expect(join.origin("grace") == .config(file: path, line: 4))
        // Near miss: the command line still wins over the config.
        #expect(try command(["report", "--tz", "UTC"]).string("tz") == "UTC")
    }

    @Test("config errors become usage errors from parseWithConfig")
    func parseWithConfigErrors() throws {
        let path = try temporaryFile("db = a\ninptu = b\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(
            parseWithConfig(["ingest", "--config", path], program: .iaprecon)
                == .usageError(message: "Error: \(path):2: Unknown key 'inptu'. Did you mean 'input'?"))
        #expect(
            parseWithConfig(["run", "--config", "/nonexistent/iaprecon.conf"], program: .iaprecon)
                == .usageError(message: "Error: Cannot read config file '/nonexistent/iaprecon.conf': no such file"))
        #expect(
            parseWithConfig(["run", "--config", NSTemporaryDirectory()], program: .iaprecon)
                == .usageError(message: "Error: Cannot read config file '\(NSTemporaryDirectory())': it is a folder"))
    }

    @Test("a path starting with ~ is refused, from a config file or the command line: only a shell expands it, and cron's files pass it as written")
    func tildePaths() throws {
        let path = try temporaryFile("root = /srv/iaprecon/input\nreports = ~/reports\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let why = "'~' is not expanded here (cron and config files pass it as written); give the full path"
        guard case .usageError(let fromFile) = parseWithConfig(["nightly", "--config", path], program: .iaprecon) else {
            Issue.record("a config file's ~/reports was taken")
            return
        }
        #expect(fromFile.contains("\(path):2: The value '~/reports' is invalid for 'reports': \(why)"))
        for arguments in [["run", "--out", "~/out"], ["run", "--db=~/iaprecon.sqlite"], ["nightly", "--log-dir", "~"],
                          ["run", "--input", "~iaprecon/input"], ["run", "--trust-root", "~/root.pem"]] {
            guard case .usageError(let message) = parseWithConfig(arguments, program: .iaprecon) else {
                Issue.record("\(arguments) was taken")
                continue
            }
            #expect(message.contains(why), "\(arguments)")
        }
        // Near misses: a `~` that is not the first character names a folder of that name, as the system reads it.
        for arguments in [["run", "--out", "./~/out"], ["run", "--db", "/srv/a~b/iaprecon.sqlite"], ["nightly", "--reports", "reports~"]] {
            guard case .command = parseWithConfig(arguments, program: .iaprecon) else {
                Issue.record("\(arguments) was refused")
                continue
            }
        }
    }

    @Test("loadConfig reads a file")
    func load() throws {
        let path = try temporaryFile("currency = jpy\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try loadConfig(path: path).values == ["currency": "jpy"])
    }

    private func temporaryFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "iaprecon-config-\(UUID().uuidString).conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
