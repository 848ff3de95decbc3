import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import WebSocketKit

/// Scale-out, proven (issue 18): three `chorus serve` processes on one PostgreSQL database and one S3 bucket, behind
/// nginx on loopback, sharing one standalone `chorus sandbox` (Twilio, OpenAI, Realtime). Through the balancer it places
/// N sandbox calls at once, fans voice messages out to members whose WebSockets are held by different instances,
/// runs stories and scheduled calls on the instances' job workers, kills one instance with SIGKILL in the middle and
/// checks what must hold: every call completes and is charged once, no acknowledged message is lost or duplicated,
/// the dead instance's leased jobs are taken over, each scheduled call is placed once. Then it measures
/// check-call-permission through nginx with one and three instances, beside one instance on SQLite.
struct Cluster: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Three instances on PostgreSQL behind nginx: calls, messages, stories, scheduled calls, one instance killed; throughput 1 vs 3.",
        discussion: """
            Needs a PostgreSQL server whose user may CREATE DATABASE (--postgres or CHORUS_TEST_POSTGRES_URL; a fresh \
            database per run, dropped at the end), an S3-compatible server that creates buckets without signatures such \
            as moto (--s3 or CHORUS_TEST_S3_URL), nginx (--nginx, else on PATH or /usr/sbin/nginx), and the `chorus` \
            binary next to this one. Exits non-zero, naming each check that failed; logs stay in the printed directory.
            """)

    @ArgumentParser.Option(help: "A PostgreSQL URL whose user may create databases (default CHORUS_TEST_POSTGRES_URL).")
    var postgres: String?

    @ArgumentParser.Option(help: "An S3-compatible endpoint that creates buckets without signatures, e.g. moto (default CHORUS_TEST_S3_URL).")
    var s3: String?

    @ArgumentParser.Option(help: "The nginx binary (default: nginx on PATH, else /usr/sbin/nginx).")
    var nginx: String?

    @ArgumentParser.Option(help: "Sandbox calls placed at once through the balancer.")
    var calls = 200

    @ArgumentParser.Option(help: "How long each callee stays on the line, in seconds.")
    var callSeconds = 20.0

    @ArgumentParser.Option(
        help: "Calls each caller account places, all at once (its trial allowance, CHORUS_TRIAL_CALLS; fewer accounts: bcrypt makes each cost ~0.3 s).")
    var callsPerAccount = 4

    @ArgumentParser.Option(help: "Stories made while the calls run.")
    var stories = 6

    @ArgumentParser.Option(help: "Calls scheduled a few seconds ahead while the calls run.")
    var scheduled = 3

    @ArgumentParser.Option(help: "Voice messages sent to the group (half before the kill, half after).")
    var messages = 20

    @ArgumentParser.Option(help: "Job lease of the instances (CHORUS_JOB_LEASE_SECONDS): how soon a dead instance's jobs are taken over.")
    var jobLeaseSeconds = 6.0

    @ArgumentParser.Option(help: "Seconds of check-call-permission load per configuration (after a 1 s warm-up).")
    var seconds = 5.0

    @ArgumentParser.Option(help: "Connections of the check-call-permission load.")
    var concurrency = 64

    @ArgumentParser.Flag(help: "Skip the check-call-permission throughput figures.")
    var noThroughput = false

    func validate() throws {
        guard calls > 0, calls <= 2_000 else { throw ValidationError("--calls must be between 1 and 2000") }
        guard callSeconds >= 4, callSeconds <= 600 else { throw ValidationError("--call-seconds must be between 4 and 600") }
        guard (1...100).contains(callsPerAccount) else { throw ValidationError("--calls-per-account must be between 1 and 100") }
        guard (0...50).contains(stories), (0...50).contains(scheduled) else { throw ValidationError("--stories and --scheduled: 0 to 50") }
        guard messages >= 2, messages <= 1_000 else { throw ValidationError("--messages must be between 2 and 1000") }
        guard jobLeaseSeconds >= 3, jobLeaseSeconds <= 3_600 else { throw ValidationError("--job-lease-seconds must be between 3 and 3600") }
        guard seconds > 0, seconds <= 600, concurrency > 0, concurrency <= 1_000 else {
            throw ValidationError("--seconds must be in (0, 600] and --concurrency in 1...1000")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let postgres = postgres ?? environment["CHORUS_TEST_POSTGRES_URL"], !postgres.isEmpty else {
            throw ValidationError("no PostgreSQL: pass --postgres or set CHORUS_TEST_POSTGRES_URL")
        }
        guard let s3 = s3 ?? environment["CHORUS_TEST_S3_URL"], !s3.isEmpty else {
            throw ValidationError("no S3-compatible server: pass --s3 or set CHORUS_TEST_S3_URL (moto_server works)")
        }
        guard let nginxPath = nginx ?? ClusterTools.find("nginx") else {
            throw ValidationError("nginx not found: install it (apt-get install nginx-light) or pass --nginx")
        }
        guard let psql = ClusterTools.find("psql") else { throw ValidationError("psql not found: install postgresql-client") }
        let run = try ClusterRun(
            options: self, adminURL: postgres, s3: s3, nginxPath: nginxPath, psqlPath: psql)
        let failures = await run.execute()
        if failures.isEmpty {
            say("cluster: every check passed")
            run.removeDirectory()
        } else {
            for failure in failures { say("FAILED: \(failure)") }
            say("cluster: \(failures.count) check(s) failed; logs in \(run.directory.path)")
            throw ExitCode(1)
        }
    }
}

/// Prints a line and flushes it: progress shows line by line also when the output is a CI log file.
func say(_ text: String) {
    print(text)
    fflush(nil)
}

/// Executables and PostgreSQL through `psql`.
enum ClusterTools {
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin"]
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable arguments` to its end; returns (status, standard output, standard error).
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Standard error is read on another thread so neither pipe can fill up and stall the child.
        let errorData = NIOLockedValueBox(Data())
        let reader = Thread { errorData.withLockedValue { $0 = errors.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(1_000) }
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: errorData.withLockedValue { $0 }, as: UTF8.self))
    }
}

/// A child process whose output goes to a log file.
final class ClusterChild: @unchecked Sendable {
    let name: String
    let process = Process()
    let log: URL

    init(name: String, executable: String, arguments: [String], environment: [String: String], log: URL) throws {
        self.name = name
        self.log = log
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    /// SIGKILL, and waits for the process to be gone.
    func kill() async {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
    }

    /// `signal` (SIGTERM by default), then SIGKILL if it has not exited after `grace`.
    func stop(signal: Int32 = SIGTERM, grace: Duration = .seconds(15)) async {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, signal)
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        await kill()
    }

    func logText() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
}

/// One run of the cluster bench: the processes, the clients and what was observed.
final class ClusterRun: @unchecked Sendable {
    let options: Cluster
    let adminURL: String
    let s3: String
    let nginxPath: String
    let psqlPath: String
    let directory: URL
    let chorus: String
    let database: String
    let databaseURL: String
    let bucket: String
    let accountSID = "AC" + String(repeating: "0", count: 31) + "3"
    let authToken = ChorusBridgeBench.randomHex(32)
    let jwtSecret = ChorusBridgeBench.randomHex(64)
    let numberSecret = ChorusBridgeBench.randomHex(64)

    var failures: [String] = []
    var sandbox: ClusterChild?
    var instances: [ClusterChild?] = []
    var ports: [Int] = []
    var nginxProcess: ClusterChild?
    var balancerPort = 0
    var singlePort = 0
    var sandboxBase = ""
    let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let client: HTTPClient
    var http: BenchHTTP { BenchHTTP(client: client) }
    var balancer: String { "http://127.0.0.1:\(balancerPort)" }

    init(options: Cluster, adminURL: String, s3: String, nginxPath: String, psqlPath: String) throws {
        self.options = options
        self.adminURL = adminURL
        self.s3 = s3.hasSuffix("/") ? String(s3.dropLast()) : s3
        self.nginxPath = nginxPath
        self.psqlPath = psqlPath
        let suffix = ChorusBridgeBench.randomHex(8)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cluster-\(suffix)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let bin = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).deletingLastPathComponent()
        chorus = bin.appendingPathComponent("chorus").path
        guard FileManager.default.isExecutableFile(atPath: chorus) else {
            throw ValidationError("\(chorus) not found: build it first (swift build --product chorus)")
        }
        database = "chorus_cluster_\(suffix)"
        bucket = "chorus-cluster-\(suffix)"
        guard var components = URLComponents(string: adminURL), components.host != nil else {
            throw ValidationError("the PostgreSQL URL is not a URL: \(adminURL)")
        }
        components.path = "/" + database
        guard let url = components.string else { throw ValidationError("cannot build a database URL from \(adminURL)") }
        databaseURL = url
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        client = HTTPClient(eventLoopGroupProvider: .shared(clientGroup), configuration: configuration)
    }

    func removeDirectory() { try? FileManager.default.removeItem(at: directory) }

    func fail(_ message: String) {
        say("  ✘ \(message)")
        failures.append(message)
    }

    func check(_ condition: Bool, _ message: @autoclosure () -> String, passed: @autoclosure () -> String) {
        if condition { say("  ✔ \(passed())") } else { fail(message()) }
    }

    /// The whole run; returns the failed checks (an error that stops the run is one of them).
    func execute() async -> [String] {
        do {
            try await start()
            try await scenario()
            if !options.noThroughput { try await throughput() }
        } catch {
            fail("the run stopped: \(error)")
        }
        await shutdown()
        return failures
    }

    // MARK: Processes

    func psql(_ sql: String, url: String? = nil) throws -> String {
        let (status, output, errors) = try ClusterTools.run(psqlPath, ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", url ?? databaseURL, "-c", sql])
        guard status == 0 else { throw ValidationError("psql failed (\(status)): \(errors.trimmingCharacters(in: .whitespacesAndNewlines))") }
        return output
    }

    /// Rows of `psql -At` output, fields split on `|`.
    func rows(_ sql: String) throws -> [[String]] {
        try psql(sql).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The environment every instance shares: the database, the bucket, the sandbox, the balancer as public URL.
    func instanceEnvironment(dataDirectory: URL, sqlite: Bool = false) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CHORUS_") }
        let settings: [String: String] = [
            "CHORUS_ENVIRONMENT": "development", "CHORUS_DATA_DIR": dataDirectory.path, "CHORUS_LOG_LEVEL": "info",
            "CHORUS_JWT_SECRET": jwtSecret, "CHORUS_NUMBER_HASH_SECRET": numberSecret, "CHORUS_PLAYGROUND": "false",
            "CHORUS_RATE_LIMITS": "off", "CHORUS_SIGNUPS_PER_IP": "off", "CHORUS_SIGNUPS_PER_NETWORK": "off",
            "CHORUS_TRIAL_CALLS_PER_DAY": "off", "CHORUS_TRIAL_CALLS": String(options.callsPerAccount), "CHORUS_TWILIO_CALLS_PER_SECOND": "1000", "CHORUS_CALL_HOURS": "any",
            "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
            "CHORUS_TRIAL_CALL_SECONDS": String(Int(options.callSeconds) + 30),
            "CHORUS_TWILIO_ACCOUNT_SID": accountSID, "CHORUS_TWILIO_AUTH_TOKEN": authToken, "CHORUS_TWILIO_FROM_NUMBER": "+15005550006",
            "CHORUS_TWILIO_API_BASE_URL": sandboxBase, "CHORUS_OPENAI_BASE_URL": sandboxBase + "/openai/v1",
            "CHORUS_JOB_POLL_SECONDS": "0.5", "CHORUS_JOB_LEASE_SECONDS": String(options.jobLeaseSeconds),
            "CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS": "0", "CHORUS_STORIES_DAILY_BUDGET_USD": "off",
            "CHORUS_STORIES_MONTHLY_BUDGET_USD": "off", "CHORUS_MAX_REALTIME_CONNECTIONS": "10000",
        ]
        environment.merge(settings) { $1 }
        if sqlite {
            environment["CHORUS_DATABASE_URL"] = dataDirectory.appendingPathComponent("chorus.sqlite").path
        } else {
            environment.merge([
                "CHORUS_DATABASE_URL": databaseURL, "CHORUS_PUBLIC_URL": balancer,
                "CHORUS_S3_ENDPOINT": s3, "CHORUS_S3_BUCKET": bucket, "CHORUS_S3_REGION": "us-east-1", "CHORUS_S3_ACCESS_KEY_ID": "test",
                "CHORUS_S3_SECRET_ACCESS_KEY": "test", "CHORUS_S3_ADDRESSING": "path",
            ]) { $1 }
        }
        return environment
    }

    /// Starts instance `index` on its port; `logLevel` info during the scenario (the bench reads which calls each
    /// instance bridged from its log), warning under load (a log line per request would be measured too).
    func startInstance(_ index: Int, logLevel: String = "info", logName: String? = nil, rateLimits: String = "off") async throws {
        let data = directory.appendingPathComponent("instance-\(index)")
        let child = try ClusterChild(
            name: "instance \(index)", executable: chorus, arguments: ["serve", "--hostname", "127.0.0.1", "--port", String(ports[index])],
            environment: instanceEnvironment(dataDirectory: data).merging(["CHORUS_LOG_LEVEL": logLevel, "CHORUS_RATE_LIMITS": rateLimits]) { $1 },
            log: directory.appendingPathComponent(logName ?? "instance-\(index).log"))
        instances[index] = child
    }

    func waitHealthy(_ base: String, _ child: ClusterChild) async throws {
        for _ in 0..<600 {
            if let (status, _) = try? await http.send(.GET, base + "/health"), status == 200 { return }
            guard child.isRunning else { throw ValidationError("\(child.name) exited at start: see \(child.log.path)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("\(child.name) did not become healthy: see \(child.log.path)")
    }

    func start() async throws {
        say("cluster: directory \(directory.path)")
        _ = try psql("CREATE DATABASE \(database)", url: adminURL)
        let (bucketStatus, bucketBody) = try await http.send(.PUT, "\(s3)/\(bucket)")
        guard (200..<300).contains(bucketStatus) else {
            throw ValidationError("creating bucket \(bucket) at \(s3) answered \(bucketStatus): \(String(decoding: bucketBody, as: UTF8.self).prefix(200))")
        }

        // One sandbox for every instance: the same emulated phone network, OpenAI and Realtime whichever instance asks.
        let sandboxPort = try freeLoopbackPort()
        sandboxBase = "http://127.0.0.1:\(sandboxPort)"
        sandbox = try ClusterChild(
            name: "sandbox", executable: chorus,
            arguments: [
                "sandbox", "--port", String(sandboxPort), "--account-sid", accountSID, "--auth-token", authToken, "--ring-seconds", "0.5",
                "--talk-seconds", String(options.callSeconds), "--no-message-log", "--kept-calls", String(options.calls + options.scheduled + 100),
                "--kept-audio-bytes", String((options.calls + options.scheduled + 100) * 1_000_000),
                "--data-dir", directory.appendingPathComponent("sandbox-data").path,
            ],
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CHORUS_") },
            log: directory.appendingPathComponent("sandbox.log"))
        try await waitUntilListening(http, sandboxBase + "/requests")

        balancerPort = try freeLoopbackPort()
        singlePort = try freeLoopbackPort()
        ports = try (0..<3).map { _ in try freeLoopbackPort() }
        instances = [nil, nil, nil]

        // The migrations once, then three instances (three at once would race to create the same tables).
        let (status, _, errors) = try ClusterTools.run(
            chorus, ["migrate"], environment: instanceEnvironment(dataDirectory: directory.appendingPathComponent("migrate")))
        guard status == 0 else { throw ValidationError("chorus migrate failed: \(errors.suffix(500))") }
        for index in 0..<3 { try await startInstance(index) }
        for index in 0..<3 { try await waitHealthy("http://127.0.0.1:\(ports[index])", instances[index]!) }

        try writeNginxConfiguration()
        let (testStatus, _, testErrors) = try ClusterTools.run(nginxPath, ["-t"] + nginxArguments)
        guard testStatus == 0 else { throw ValidationError("nginx -t refused the configuration: \(testErrors)") }
        nginxProcess = try ClusterChild(
            name: "nginx", executable: nginxPath, arguments: nginxArguments + ["-g", "daemon off;"],
            environment: ProcessInfo.processInfo.environment, log: directory.appendingPathComponent("nginx.out"))
        try await waitHealthy(balancer, nginxProcess!)
        try await waitHealthy("http://127.0.0.1:\(singlePort)", nginxProcess!)
        say("cluster: sandbox \(sandboxBase), instances \(ports.map(String.init).joined(separator: ", ")), nginx \(balancerPort) (all three) and \(singlePort) (instance 0 alone), database \(database)")
    }

    var nginxConfiguration: URL { directory.appendingPathComponent("nginx.conf") }

    /// The configuration, the prefix and the error log in the run's directory (`-e`: nginx opens its default error log,
    /// which a user other than root may not write, before it reads the configuration).
    var nginxArguments: [String] {
        ["-c", nginxConfiguration.path, "-p", directory.path + "/", "-e", directory.appendingPathComponent("nginx-error.log").path]
    }

    /// Round robin over the instances, WebSocket upgrades passed through, no buffering (event streams, media), kept-alive
    /// upstream connections; a refused connection moves the request to the next instance.
    func writeNginxConfiguration() throws {
        let path = directory.path
        for temp in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("nginx-\(temp)"), withIntermediateDirectories: true)
        }
        func server(_ port: Int, upstream: String) -> String {
            """
                server {
                    listen 127.0.0.1:\(port);
                    client_max_body_size 32m;
                    location / {
                        proxy_pass http://\(upstream);
                        proxy_http_version 1.1;
                        proxy_set_header Host $host;
                        proxy_set_header Upgrade $http_upgrade;
                        proxy_set_header Connection $connection_upgrade;
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header X-Forwarded-Proto $scheme;
                        proxy_buffering off;
                        proxy_request_buffering off;
                        proxy_read_timeout 3600s;
                        proxy_send_timeout 3600s;
                        proxy_next_upstream error timeout;
                        proxy_connect_timeout 2s;
                    }
                }

            """
        }
        let upstream = ports.map { "        server 127.0.0.1:\($0) max_fails=1 fail_timeout=5s;" }.joined(separator: "\n")
        let text = """
            \(getuid() == 0 ? "user root;" : "")
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/nginx-error.log warn;
            events { worker_connections 8192; }
            http {
                access_log off;
                client_body_temp_path \(path)/nginx-client_body;
                proxy_temp_path \(path)/nginx-proxy;
                fastcgi_temp_path \(path)/nginx-fastcgi;
                uwsgi_temp_path \(path)/nginx-uwsgi;
                scgi_temp_path \(path)/nginx-scgi;
                map $http_upgrade $connection_upgrade { default upgrade; '' ''; }
                upstream chorus_all {
            \(upstream)
                    keepalive 128;
                }
                upstream chorus_one {
                    server 127.0.0.1:\(ports[0]);
                    keepalive 128;
                }
            \(server(balancerPort, upstream: "chorus_all"))\(server(singlePort, upstream: "chorus_one"))}

            """
        try text.write(to: nginxConfiguration, atomically: true, encoding: .utf8)
    }

    func shutdown() async {
        await nginxProcess?.stop(signal: SIGQUIT, grace: .seconds(5))
        for instance in instances { await instance?.stop() }
        await sandbox?.stop(signal: SIGINT, grace: .seconds(5))
        try? await client.shutdown()
        try? await clientGroup.shutdownGracefully()
        _ = try? psql("DROP DATABASE IF EXISTS \(database) WITH (FORCE)", url: adminURL)
    }

    // MARK: Accounts

    struct Account {
        var email: String
        var token: String
        var userID: String
    }

    func register(_ base: String, _ prefix: String, count: Int) async throws -> [Account] {
        let http = http
        let suffix = ChorusBridgeBench.randomHex(6)
        return try await withThrowingTaskGroup(of: (Int, Account).self) { group in
            var accounts = [Account?](repeating: nil, count: count)
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask {
                    let email = "\(prefix)\(index)-\(suffix)@cluster.test"
                    let reply = try await http.object(.POST, base + "/auth/register", json: #"{"email":"\#(email)","password":"cluster-password"}"#)
                    let token = reply["access_token"] as? String ?? ""
                    return (index, Account(email: email, token: token, userID: ClusterRun.subject(of: token) ?? ""))
                }
            }
            // bcrypt (cost 12) dominates: a few at a time keep both cores busy without starving the instances' loops.
            for _ in 0..<min(count, 8) { add() }
            while let (index, account) = try await group.next() {
                accounts[index] = account
                if next < count { add() }
            }
            return accounts.compactMap { $0 }
        }
    }

    /// The `sub` claim (the user id) of an access token.
    static func subject(of token: String) -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let claims = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return nil }
        return claims["sub"] as? String
    }

    // MARK: The scenario

    func scenario() async throws {
        let callSeconds = options.callSeconds
        let callerCount = (options.calls + options.callsPerAccount - 1) / options.callsPerAccount
        say("cluster: preparing \(callerCount) callers, \(options.scheduled) schedulers, 12 group members, \(options.stories) storytellers…")
        let clock = ContinuousClock()
        let preparing = clock.now
        let callers = try await register(balancer, "caller", count: callerCount)
        loadTokens = callers.prefix(16).map(\.token)
        let schedulers = try await register(balancer, "scheduler", count: options.scheduled)
        let members = try await register(balancer, "member", count: 12)
        let tellers = try await register(balancer, "teller", count: options.stories)
        say(String(format: "cluster: %d accounts registered through nginx in %.1f s", callers.count + schedulers.count + members.count + tellers.count, (clock.now - preparing).seconds))

        // The callees: they say hello and answer; the sandbox's --talk-seconds (--call-seconds) hangs up for them.
        let script = #"{"behavior":"answer","lines":["Hello?","Sure, go on.","Okay, thanks, bye."],"first_line_after_ms":300,"reply_after_ms":600}"#
        let numbers = (0..<(options.calls + options.scheduled)).map { "+1415610" + String(format: "%04d", $0) }
        for number in numbers {
            _ = try await http.object(.PUT, sandboxBase + "/callees/" + number.replacingOccurrences(of: "+", with: "%2B"), json: script)
        }

        // The group: 12 members, each socket held by instance (index % 3), connected to it directly.
        let group = try await makeGroup(members)
        let sockets = try await connectSockets(members)

        // Heroes for the stories.
        var heroes: [String] = []
        for teller in tellers {
            let hero = try await http.object(
                .POST, balancer + "/heroes", json: #"{"name":"Mia","traits":["brave"],"appearance":"a girl with red curly hair"}"#,
                token: teller.token)
            heroes.append(hero["id"] as? String ?? "")
        }

        // The job workers' names, from each instance's log.
        var owners: [String: Int] = [:]
        for (index, instance) in instances.enumerated() {
            if let owner = Self.workerName(in: instance?.logText() ?? "") { owners[owner] = index }
        }
        let observer = JobObserver(run: self)
        observer.start()

        // Go: scheduled calls, and every call at once.
        let scheduledAt = ISO8601DateFormatter().string(from: Date().addingTimeInterval(4))
        var scheduleIDs: [(Account, Int)] = []
        for (index, scheduler) in schedulers.enumerated() {
            let number = numbers[options.calls + index]
            let reply = try await http.object(
                .POST, balancer + "/mobile/schedule-call",
                json: #"{"phone_number":"\#(number)","scenario":"default","scheduled_time":"\#(scheduledAt)"}"#, token: scheduler.token)
            scheduleIDs.append((scheduler, reply["schedule_id"] as? Int ?? -1))
        }
        let placing = clock.now
        let http = http
        let balancer = balancer
        let placed = try await withThrowingTaskGroup(of: (Int, Int, String).self) { tasks in
            for index in 0..<options.calls {
                let caller = callers[index / options.callsPerAccount]
                tasks.addTask {
                    let (status, body) = try await http.send(
                        .POST, balancer + "/mobile/make-call", json: #"{"phone_number":"\#(numbers[index])","scenario":"default"}"#,
                        token: caller.token)
                    let sid = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["call_sid"] as? String ?? ""
                    return (index, status, sid)
                }
            }
            return try await tasks.reduce(into: [(Int, Int, String)]()) { $0.append($1) }
        }
        let refused = placed.filter { $0.1 != 200 }
        check(
            refused.isEmpty, "\(refused.count) of \(options.calls) make-call requests were refused (statuses \(Set(refused.map(\.1)).sorted()))",
            passed: String(format: "%d calls placed at once through nginx in %.1f s", options.calls, (clock.now - placing).seconds))

        // Messages before the kill: every socket, whichever instance holds it, gets each exactly once.
        let firstHalf = options.messages / 2
        try await sendMessages(group: group, from: members[0], range: 0..<firstHalf, sockets: sockets, expecting: Set(sockets.indices))

        // Wait until the calls are bridged and the instance to kill holds a job, then SIGKILL it.
        let victim = 2
        let victimOwner = owners.first { $0.value == victim }?.key
        // Bridged: every call's stream is attached to its realtime session on some instance (their logs say which).
        let callSIDs = Set(placed.map(\.2))
        let bridgedDeadline = clock.now + .seconds(30)
        var bridged = 0
        while clock.now < bridgedDeadline {
            let sids = instances.reduce(into: Set<String>()) { $0.formUnion(Self.bridgedCalls(in: $1?.logText() ?? "")) }
            bridged = sids.intersection(callSIDs).count
            if bridged >= options.calls { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        // The stories start while the calls run, so the instance to kill is likely to hold one of their jobs.
        let storyIDs = try await startStories(tellers: tellers, heroes: heroes)
        let jobDeadline = clock.now + .seconds(min(8, callSeconds / 3))
        var leasedAtKill: [Int] = []
        while clock.now < jobDeadline {
            leasedAtKill = victimOwner.map { owner in observer.running().filter { $0.owner == owner }.map(\.id) } ?? []
            if !leasedAtKill.isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        await instances[victim]?.kill()
        let killedAt = clock.now
        observer.killed(owner: victimOwner)
        let streamsBeforeKill = Self.bridgedCalls(in: instances[victim]?.logText() ?? "").intersection(callSIDs)
        say(
            "cluster: SIGKILL instance \(victim) (\(victimOwner ?? "worker unknown")) with \(bridged) of \(options.calls) calls bridged, \(streamsBeforeKill.count) of them "
                + "on it, \(leasedAtKill.count) job(s) leased to it")

        // Messages after the kill, through the balancer: the survivors' sockets get each exactly once.
        let survivors = Set(sockets.indices.filter { $0 % 3 != victim })
        try await sendMessages(group: group, from: members[0], range: firstHalf..<options.messages, sockets: sockets, expecting: survivors)

        // Every call reaches its end.
        let callDeadline = clock.now + .seconds(callSeconds + 90 + options.jobLeaseSeconds)
        var statuses: [String: Int] = [:]
        while clock.now < callDeadline {
            statuses = [:]
            for row in try rows("SELECT status, COUNT(*) FROM calls GROUP BY status") where row.count == 2 { statuses[row[0]] = Int(row[1]) ?? 0 }
            let open = statuses.filter { !["completed", "busy", "failed", "no-answer", "canceled"].contains($0.key) }.values.reduce(0, +)
            if open == 0, statuses.values.reduce(0, +) >= options.calls + options.scheduled { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        try await checkCalls(callers: callers, schedulers: schedulers, bridgedOnVictim: streamsBeforeKill, killedAfter: (killedAt - placing).seconds)
        try checkScheduled(scheduleIDs)
        try await checkMessages(group: group, members: members, sockets: sockets, victim: victim)
        try await checkStories(storyIDs, deadline: clock.now + .seconds(120))
        observer.stop()
        checkJobs(observer: observer, owners: owners, victimOwner: victimOwner, leasedAtKill: leasedAtKill)
        for socket in sockets { try? await socket.socket.close() }

        // The killed instance comes back (same port) and the others restart with it, quieter, for the throughput figures.
        for index in instances.indices where index != victim { await instances[index]?.stop() }
        for index in instances.indices {
            try await startInstance(index, logLevel: "warning", logName: "instance-\(index)-load.log", rateLimits: Self.sharedLimits)
        }
        for index in instances.indices { try await waitHealthy("http://127.0.0.1:\(ports[index])", instances[index]!) }
        try await checkSharedLimits(scheduler: schedulers.first)
    }

    /// The limits the restarted instances run with: sign-in/sign-up and call placement low enough to count, the
    /// per-user flood guard out of the throughput figures' way.
    static let sharedLimits = "user=1000000/60,calls=2/60,auth=8/60"

    /// The limits that guard money and accounts hold across instances: requests spread over the three by nginx admit
    /// the configured limit once, not once per instance.
    func checkSharedLimits(scheduler: Account?) async throws {
        // Windows are whole minutes: start early in one, so the requests do not straddle two.
        let second = Int(Date().timeIntervalSince1970) % 60
        if second > 40 { try await Task.sleep(for: .seconds(61 - second)) }
        let http = http
        let balancer = balancer
        let email = "nobody-\(ChorusBridgeBench.randomHex(6))@cluster.test"
        let signIns = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<24 {
                group.addTask {
                    try await http.send(.POST, balancer + "/auth/login", json: #"{"email":"\#(email)","password":"wrong-password"}"#).0
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let signInsAdmitted = signIns.filter { $0 != 429 }.count
        check(
            signInsAdmitted == 8, "auth=8/60 across 3 instances admitted \(signInsAdmitted) of 24 sign-ins (statuses \(Set(signIns).sorted()))",
            passed: "auth=8/60 holds across the instances: 8 of 24 concurrent sign-ins through nginx admitted, 16 answered 429")
        guard let scheduler else { return }
        let when = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
        let schedules = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await http.send(
                        .POST, balancer + "/mobile/schedule-call",
                        json: #"{"phone_number":"+1415620\#(String(format: "%04d", index))","scenario":"default","scheduled_time":"\#(when)"}"#,
                        token: scheduler.token
                    ).0
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let schedulesAdmitted = schedules.filter { $0 != 429 }.count
        check(
            schedulesAdmitted == 2, "calls=2/60 across 3 instances admitted \(schedulesAdmitted) of 8 schedule-calls (statuses \(Set(schedules).sorted()))",
            passed: "calls=2/60 holds across the instances: 2 of 8 concurrent schedule-calls by one user admitted, 6 answered 429")
    }

    func startStories(tellers: [Account], heroes: [String]) async throws -> [(Account, String)] {
        var storyIDs: [(Account, String)] = []
        for (teller, hero) in zip(tellers, heroes) {
            let story = try await http.object(
                .POST, balancer + "/stories",
                json: #"{"hero_id":"\#(hero)","event_id":"birthday","length_minutes":5,"language":"en","voice":"coral","illustration_count":2}"#,
                token: teller.token)
            storyIDs.append((teller, story["id"] as? String ?? ""))
        }
        return storyIDs
    }

    /// The worker name an instance's job runner logged at start.
    static func workerName(in log: String) -> String? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("job worker started") }),
            let range = line.range(of: #"worker-[0-9a-f]+"#, options: .regularExpression)
        else { return nil }
        return String(line[range])
    }

    /// The call SIDs an instance's log says it bridged.
    static func bridgedCalls(in log: String) -> Set<String> {
        var sids = Set<String>()
        for line in log.split(separator: "\n") where line.contains("media stream bridged") {
            if let range = line.range(of: #"CA[0-9a-f]{32}"#, options: .regularExpression) { sids.insert(String(line[range])) }
        }
        return sids
    }

    // MARK: Calls

    func checkCalls(callers: [Account], schedulers: [Account], bridgedOnVictim: Set<String>, killedAfter: Double) async throws {
        let callSeconds = options.callSeconds
        let records = try rows("SELECT user_id, call_sid, status, charge_state, COALESCE(duration_seconds, -1), COALESCE(ended_reason, ''), schedule_id IS NOT NULL FROM calls")
        let callerIDs = Set(callers.map(\.userID))
        let direct = records.filter { callerIDs.contains($0[0]) }
        let completed = direct.filter { $0[2] == "completed" }
        check(
            direct.count == options.calls && completed.count == options.calls,
            "\(completed.count) of \(options.calls) calls completed (\(direct.count) recorded; statuses \(Dictionary(grouping: direct, by: { $0[2] }).mapValues(\.count)))",
            passed: "all \(options.calls) calls completed")
        // Charged once: one row per placement, and what each account's usage says it used is its charged calls (a call
        // the provider refused is given back; an answered call stays charged, once).
        let perUser = Dictionary(grouping: records, by: { $0[0] })
        var expected: [String: Int] = [:]
        for index in 0..<options.calls { expected[callers[index / options.callsPerAccount].userID, default: 0] += 1 }
        for scheduler in schedulers { expected[scheduler.userID, default: 0] += 1 }
        var wrong: [String] = []
        let http = http
        let balancer = balancer
        let usages = try await withThrowingTaskGroup(of: (String, Int?).self) { group in
            for account in callers + schedulers {
                group.addTask {
                    let usage = try await http.object(.GET, balancer + "/mobile/usage-stats", token: account.token)
                    return (account.userID, usage["trial_calls_used"] as? Int)
                }
            }
            return try await group.reduce(into: [String: Int?]()) { $0[$1.0] = $1.1 }
        }
        for (userID, count) in expected {
            let calls = perUser[userID] ?? []
            let charged = calls.filter { $0[3] == "charged" }.count
            let completedUncharged = calls.filter { $0[2] == "completed" && $0[3] != "charged" }.count
            let used = usages[userID] ?? nil
            if calls.count != count || used != charged || completedUncharged > 0 {
                wrong.append("\(calls.count) rows for \(count) placements, \(charged) charged, usage says \(used.map(String.init) ?? "nothing")")
            }
        }
        check(
            wrong.isEmpty, "\(wrong.count) of \(expected.count) accounts were not charged exactly once per call: \(wrong.prefix(3))",
            passed: "each of the \(options.calls + schedulers.count) calls is recorded once and charged at most once; each account's usage-stats "
                + "(\(expected.count), through nginx) counts exactly its charged calls")
        // Calls bridged on the survivors ran their full length; those on the killed instance ended with it.
        let onVictim = direct.filter { bridgedOnVictim.contains($0[1]) }
        let onSurvivors = direct.filter { !bridgedOnVictim.contains($0[1]) }
        let short = onSurvivors.filter { (Double($0[4]) ?? -1) < callSeconds - 1 }
        check(
            short.isEmpty,
            "\(short.count) of the \(onSurvivors.count) calls on the surviving instances ended early (durations \(short.prefix(5).map { $0[4] }), reasons \(Set(short.map { $0[5] })))",
            passed: "the \(onSurvivors.count) calls on the surviving instances ran their full \(Int(callSeconds)) s")
        let victimDurations = onVictim.compactMap { Int($0[4]) }.sorted()
        say(
            "  · \(onVictim.count) calls were bridged on the killed instance (killed \(String(format: "%.1f", killedAfter)) s after placing): ended "
                + "\(Set(onVictim.map { $0[5] }).sorted()), durations \(victimDurations.first ?? 0)–\(victimDurations.last ?? 0) s")
    }

    func checkScheduled(_ schedules: [(Account, Int)]) throws {
        guard !schedules.isEmpty else { return }
        let ids = schedules.map { String($0.1) }.joined(separator: ",")
        let statuses = try rows("SELECT id, status FROM scheduled_calls WHERE id IN (\(ids))")
        let placedCalls = try rows("SELECT schedule_id, COUNT(*) FROM calls WHERE schedule_id IN (\(ids)) GROUP BY schedule_id")
        let once = placedCalls.filter { $0.count == 2 && $0[1] == "1" }.count
        check(
            once == schedules.count && placedCalls.count == schedules.count,
            "scheduled calls: \(placedCalls.map { "schedule \($0[0]): \($0[1]) calls" }), statuses \(statuses.map { $0.joined(separator: "=") })",
            passed: "each of the \(schedules.count) scheduled calls was placed exactly once (\(Set(statuses.map { $0.count > 1 ? $0[1] : "" }).sorted().joined(separator: ", ")))")
    }

    // MARK: Messages

    struct MemberSocket {
        var socket: WebSocket
        var instance: Int
        /// Message ids received as `message.created`, in order.
        var received: NIOLockedValueBox<[String]>
    }

    func makeGroup(_ members: [Account]) async throws -> String {
        for (index, member) in members.enumerated() {
            _ = try await http.object(.PUT, balancer + "/me/profile", json: #"{"display_name":"Member \#(index)","birth_year":1980}"#, token: member.token)
        }
        let emails = members.dropFirst().map { "\"\($0.email)\"" }.joined(separator: ",")
        let conversation = try await http.object(
            .POST, balancer + "/conversations", json: #"{"kind":"group","title":"Cluster","member_emails":[\#(emails)]}"#, token: members[0].token)
        guard let id = conversation["id"] as? String else { throw ValidationError("no conversation id: \(conversation)") }
        for member in members.dropFirst() {
            let invitations = try await http.object(.GET, balancer + "/invitations", token: member.token)["invitations"] as? [[String: Any]] ?? []
            guard let invitation = invitations.first(where: { ($0["conversation_id"] as? String) == id })?["id"] as? String else {
                throw ValidationError("no invitation for \(member.email)")
            }
            _ = try await http.object(.POST, balancer + "/invitations/\(invitation)/accept", token: member.token)
        }
        return id
    }

    func connectSockets(_ members: [Account]) async throws -> [MemberSocket] {
        var sockets: [MemberSocket] = []
        for (index, member) in members.enumerated() {
            let instance = index % 3
            let received = NIOLockedValueBox<[String]>([])
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: "Bearer \(member.token)")
            let upgraded = clientGroup.any().makePromise(of: WebSocket.self)
            try await WebSocket.connect(to: "ws://127.0.0.1:\(ports[instance])/ws", headers: headers, on: clientGroup) { socket in
                socket.onText { _, text in
                    guard text.contains("\"message.created\""),
                        let event = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                        let id = (event["message"] as? [String: Any])?["id"] as? String
                    else { return }
                    received.withLockedValue { $0.append(id) }
                }
                upgraded.succeed(socket)
            }.get()
            sockets.append(MemberSocket(socket: try await upgraded.futureResult.get(), instance: instance, received: received))
        }
        try await Task.sleep(for: .milliseconds(500))
        return sockets
    }

    var sentMessages: [String] = []
    /// Tokens of the callers, for the throughput load (check-call-permission reads, never charges).
    var loadTokens: [String] = []

    func sendMessages(group: String, from sender: Account, range: Range<Int>, sockets: [MemberSocket], expecting: Set<Int>) async throws {
        let clock = ContinuousClock()
        var latencies: [Double] = []
        for index in range {
            let sent = clock.now
            let message = try await http.object(
                .POST, balancer + "/conversations/\(group)/messages",
                json: #"{"client_message_id":"cluster-\#(index)","send_mode":"text","content":"cluster message \#(index)"}"#, token: sender.token)
            guard let id = message["id"] as? String else { throw ValidationError("message \(index) has no id") }
            sentMessages.append(id)
            let deadline = clock.now + .seconds(10)
            while expecting.contains(where: { !sockets[$0].received.withLockedValue({ $0.contains(id) }) }), clock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            latencies.append((clock.now - sent).seconds)
        }
        let sorted = latencies.sorted()
        say(
            String(
                format: "  · %d messages to %d sockets on %d instance(s): slowest socket p50 %.1f ms, max %.1f ms from the send request",
                range.count, expecting.count, Set(expecting.map { sockets[$0].instance }).count, (sorted.isEmpty ? 0 : sorted[sorted.count / 2]) * 1000,
                (sorted.last ?? 0) * 1000))
    }

    func checkMessages(group: String, members: [Account], sockets: [MemberSocket], victim: Int) async throws {
        try await Task.sleep(for: .seconds(1))  // late duplicates would have arrived by now
        let firstHalf = Array(sentMessages.prefix(options.messages / 2))
        var problems: [String] = []
        for (index, socket) in sockets.enumerated() {
            let received = socket.received.withLockedValue { $0 }
            let expected = socket.instance == victim ? firstHalf : sentMessages
            let counts = Dictionary(received.map { ($0, 1) }, uniquingKeysWith: +)
            let missing = expected.filter { counts[$0] == nil }
            let duplicated = counts.filter { $0.value > 1 }
            if !missing.isEmpty || !duplicated.isEmpty {
                problems.append("socket \(index) (instance \(socket.instance)): \(missing.count) missing, \(duplicated.count) duplicated")
            }
        }
        check(
            problems.isEmpty, "WebSocket delivery: \(problems.joined(separator: "; "))",
            passed: "every message reached every socket exactly once (sockets on 3 instances before the kill, on 2 after)")
        // The members whose socket died with the instance read the conversation through the balancer: nothing lost.
        let orphan = members[victim]
        let page = try await http.object(.GET, balancer + "/conversations/\(group)/messages?limit=100", token: orphan.token)
        let ids = (page["messages"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let missing = sentMessages.filter { !ids.contains($0) }
        check(
            missing.isEmpty && ids.count == Set(ids).count,
            "the conversation read after the kill lacks \(missing.count) acknowledged message(s) (\(ids.count) listed)",
            passed: "all \(sentMessages.count) acknowledged messages are in the conversation, once each, for a member whose socket died")
    }

    // MARK: Stories and jobs

    func checkStories(_ stories: [(Account, String)], deadline: ContinuousClock.Instant) async throws {
        guard !stories.isEmpty else { return }
        var states: [String: String] = [:]
        while ContinuousClock.now < deadline {
            for (teller, id) in stories where states[id] != "done" && states[id] != "failed" {
                let story = try await http.object(.GET, balancer + "/stories/\(id)", token: teller.token)
                let stages = (story["stages"] as? [String: String]) ?? [:]
                if stages.values.contains("failed") {
                    states[id] = "failed"
                } else if !stages.isEmpty, stages.values.allSatisfy({ $0 == "succeeded" }) {
                    states[id] = "done"
                } else {
                    states[id] = stages.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                }
            }
            if states.count == stories.count, states.values.allSatisfy({ $0 == "done" || $0 == "failed" }) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        let done = states.values.filter { $0 == "done" }.count
        check(done == stories.count, "\(done) of \(stories.count) stories finished: \(states.values.sorted())", passed: "all \(stories.count) stories finished")
    }

    func checkJobs(observer: JobObserver, owners: [String: Int], victimOwner: String?, leasedAtKill: [Int]) {
        let seen = observer.owners()
        let instancesSeen = Set(seen.compactMap { owners[$0] })
        check(
            instancesSeen.count >= 2, "jobs were run by \(instancesSeen.count) instance(s) only (workers \(seen.sorted()))",
            passed: "jobs were claimed by \(instancesSeen.count) instances (\(observer.claims()) claims seen)")
        guard let victimOwner else {
            fail("the killed instance's job worker was not found in its log")
            return
        }
        if leasedAtKill.isEmpty {
            say("  · the killed instance held no job when it died: no takeover to check")
            return
        }
        let takenOver = observer.takenOver(leasedAtKill, from: victimOwner)
        check(
            takenOver.count == leasedAtKill.count,
            "\(leasedAtKill.count - takenOver.count) of the \(leasedAtKill.count) jobs leased to the killed instance were not taken over",
            passed: String(
                format: "the %d job(s) leased to the killed instance were taken over by the others (after %.1f s; lease %.0f s)", leasedAtKill.count,
                observer.takeoverSeconds ?? 0, options.jobLeaseSeconds))
    }

    // MARK: Throughput

    func throughput() async throws {
        say("cluster: check-call-permission, \(options.concurrency) connections, \(options.seconds) s each")
        let tokens = loadTokens
        var results: [(String, API.Result)] = []
        results.append(("PostgreSQL, 1 instance via nginx", try await measure(port: singlePort, tokens: tokens)))
        results.append(("PostgreSQL, 3 instances via nginx", try await measure(port: balancerPort, tokens: tokens)))

        // One instance on SQLite, direct (no balancer: SQLite is one process's).
        let sqlitePort = try freeLoopbackPort()
        let data = directory.appendingPathComponent("sqlite")
        let sqlite = try ClusterChild(
            name: "sqlite instance", executable: chorus, arguments: ["serve", "--hostname", "127.0.0.1", "--port", String(sqlitePort)],
            environment: instanceEnvironment(dataDirectory: data, sqlite: true).merging(["CHORUS_LOG_LEVEL": "warning"]) { $1 },
            log: directory.appendingPathComponent("sqlite.log"))
        do {
            try await waitHealthy("http://127.0.0.1:\(sqlitePort)", sqlite)
            let sqliteTokens = try await register("http://127.0.0.1:\(sqlitePort)", "load", count: min(8, options.concurrency)).map(\.token)
            results.append(("SQLite, 1 instance direct", try await measure(port: sqlitePort, tokens: sqliteTokens)))
        } catch {
            await sqlite.stop()
            throw error
        }
        await sqlite.stop()
        say("configuration                           req/s   p50 ms   p99 ms   errors")
        for (name, result) in results {
            say(name.padding(toLength: 36, withPad: " ", startingAt: 0) + String(format: "%9.0f %8.2f %8.2f %8d", result.rate, result.p50, result.p99, result.errors))
        }
        if results.count >= 2, results[0].1.rate > 0 {
            say(
                String(
                    format: "scale-out ratio 3 vs 1 instance: %.2f× (2 cores shared by nginx, three servers, PostgreSQL and the load generator bound it)",
                    results[1].1.rate / results[0].1.rate))
        }
        let errors = results.reduce(0) { $0 + $1.1.errors }
        check(errors == 0, "check-call-permission answered \(errors) non-200s under load", passed: "check-call-permission load: no errors")
    }

    func measure(port: Int, tokens: [String]) async throws -> API.Result {
        let request: @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?) = { client, _ in
            var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/mobile/check-call-permission")
            head.headers.add(name: "Host", value: "127.0.0.1")
            head.headers.add(name: "Authorization", value: "Bearer \(tokens[client % tokens.count])")
            return (head, nil)
        }
        _ = try await LoopbackLoad.run(
            host: "127.0.0.1", port: port, clients: options.concurrency, group: clientGroup, until: .now() + .seconds(1), request: request)
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await LoopbackLoad.run(
            host: "127.0.0.1", port: port, clients: options.concurrency, group: clientGroup,
            until: .now() + .milliseconds(Int64(options.seconds * 1000)), request: request)
        let sorted = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))] * 1000
        }
        return API.Result(
            count: sorted.count, rate: Double(sorted.count) / (clock.now - start).seconds, p50: percentile(0.5), p99: percentile(0.99),
            errors: outcome.errors)
    }
}

/// Samples the `jobs` table while the scenario runs: which workers claimed what, and what happened to the jobs a
/// killed worker held.
final class JobObserver: @unchecked Sendable {
    struct Claim: Hashable {
        var id: Int
        var owner: String
    }

    private struct State {
        var current: [Claim] = []
        var seen = Set<Claim>()
        var killedAt: ContinuousClock.Instant?
        var deadOwner: String?
        /// Jobs of the dead owner and when each was claimed by another worker or finished.
        var takeovers: [Int: ContinuousClock.Instant] = [:]
        var lastSeenIDs = Set<Int>()
    }

    private let run: ClusterRun
    private let state = NIOLockedValueBox(State())
    private let stopped = NIOLockedValueBox(false)

    init(run: ClusterRun) { self.run = run }

    /// Polls on a thread of its own (psql is a blocking child process), every 200 ms until ``stop()``.
    func start() {
        let thread = Thread { [self] in
            while !stopped.withLockedValue({ $0 }) {
                if let rows = try? run.rows("SELECT id, COALESCE(lease_owner, ''), status FROM jobs") {
                    let now = ContinuousClock.now
                    let claims = rows.compactMap { row -> Claim? in
                        guard row.count == 3, row[2] == "running", !row[1].isEmpty, let id = Int(row[0]) else { return nil }
                        return Claim(id: id, owner: row[1])
                    }
                    let ids = Set(rows.compactMap { Int($0[0]) })
                    state.withLockedValue { state in
                        state.current = claims
                        state.seen.formUnion(claims)
                        if let dead = state.deadOwner {
                            // A dead worker's job is taken over once another worker holds it or it is gone (done).
                            for claim in state.seen where claim.owner == dead && state.takeovers[claim.id] == nil {
                                let heldByOther = claims.contains { $0.id == claim.id && $0.owner != dead }
                                if heldByOther || !ids.contains(claim.id) { state.takeovers[claim.id] = now }
                            }
                        }
                        state.lastSeenIDs = ids
                    }
                }
                usleep(200_000)
            }
        }
        thread.start()
    }

    func stop() {
        stopped.withLockedValue { $0 = true }
    }

    func running() -> [Claim] { state.withLockedValue { $0.current } }
    func owners() -> Set<String> { state.withLockedValue { Set($0.seen.map(\.owner)) } }
    func claims() -> Int { state.withLockedValue { $0.seen.count } }

    func killed(owner: String?) {
        state.withLockedValue {
            $0.deadOwner = owner
            $0.killedAt = .now
        }
    }

    func takenOver(_ ids: [Int], from owner: String) -> [Int] {
        state.withLockedValue { state in ids.filter { state.takeovers[$0] != nil } }
    }

    /// From the kill to the last of the dead worker's jobs taken over.
    var takeoverSeconds: Double? {
        state.withLockedValue { state in
            guard let killed = state.killedAt, let last = state.takeovers.values.max() else { return nil }
            return (last - killed).seconds
        }
    }
}
