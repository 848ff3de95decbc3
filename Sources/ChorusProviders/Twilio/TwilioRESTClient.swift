import AsyncHTTPClient
import ChorusCore
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Places and ends calls through Twilio's Programmable Voice REST API (`2010-04-01`).
///
/// Requests are form-encoded and authenticated with HTTP basic auth (account SID, auth token).
/// Twilio's 4xx error bodies (`{"code","message","more_info","status"}`) become
/// ``TelephonyError/rejected(httpStatus:code:message:)``; network failures, timeouts, 5xx answers and
/// rate limiting (429) become ``TelephonyError/unavailable(_:)``. The auth token is never logged and
/// phone numbers are logged masked.
public struct TwilioRESTClient: Telephony {
    private let accountSID: String
    private let authorization: String
    private let baseURL: URL
    private let httpClient: HTTPClient
    private let timeout: TimeAmount
    private let observer: (any ProviderCallObserver)?
    private let logger: Logger

    /// Creates a client for one Twilio account.
    ///
    /// - Parameters:
    ///   - baseURL: Twilio's API origin; point it at a sandbox (e.g. `http://127.0.0.1:8080/sandbox`) in tests.
    ///   - timeout: The deadline for each HTTP exchange.
    ///   - observer: Told about every exchange (provider `twilio`).
    public init(
        accountSID: String,
        authToken: String,
        baseURL: URL = URL(string: "https://api.twilio.com")!,
        httpClient: HTTPClient,
        timeout: TimeAmount = .seconds(10),
        observer: (any ProviderCallObserver)? = nil,
        logger: Logger
    ) {
        self.observer = observer
        self.accountSID = accountSID
        self.authorization = "Basic " + Data("\(accountSID):\(authToken)".utf8).base64EncodedString()
        self.baseURL = baseURL
        self.httpClient = httpClient
        self.timeout = timeout
        self.logger = logger
    }

    /// Creates the call with `POST /2010-04-01/Accounts/{AccountSid}/Calls.json` (operation `CreateCall`).
    public func placeCall(_ request: OutboundCallRequest) async throws -> PlacedCall {
        var form: [(String, String)] = [
            ("To", request.to),
            ("From", request.from),
            ("Url", request.twimlURL.absoluteString),
            ("Method", "POST"),
            ("StatusCallback", request.statusCallbackURL.absoluteString),
            ("StatusCallbackMethod", "POST"),
        ]
        for event in request.statusCallbackEvents {
            form.append(("StatusCallbackEvent", event))
        }
        form.append(("TimeLimit", String(request.timeLimitSeconds)))
        form.append(("Timeout", String(request.ringTimeoutSeconds)))
        if let amdCallback = request.machineDetectionCallbackURL {
            // Asynchronous answering-machine detection: the call connects at once (the TwiML is fetched on answer) and
            // `AnsweredBy` arrives on its own callback, after a machine's greeting has ended (`DetectMessageEnd`).
            form.append(("MachineDetection", "DetectMessageEnd"))
            form.append(("MachineDetectionTimeout", String(Self.machineDetectionTimeoutSeconds)))
            form.append(("AsyncAmd", "true"))
            form.append(("AsyncAmdStatusCallback", amdCallback.absoluteString))
            form.append(("AsyncAmdStatusCallbackMethod", "POST"))
        }

        var metadata: Logger.Metadata = [
            "to": "\(PhoneNumberMask.mask(request.to))",
            "from": "\(PhoneNumberMask.mask(request.from))",
            "time_limit_s": "\(request.timeLimitSeconds)",
        ]
        logger.info("twilio.calls.create", metadata: metadata)
        let response = try await post(operation: "create_call", path: "/2010-04-01/Accounts/\(Self.pathEscaped(accountSID))/Calls.json", form: form)
        guard response.status == 200 || response.status == 201 else {
            throw logged(Self.error(status: response.status, body: response.body), operation: "create", metadata: metadata)
        }
        let call: CallResource
        do {
            call = try JSONDecoder().decode(CallResource.self, from: response.body)
        } catch {
            metadata["error"] = "\(error)"
            logger.error("twilio.calls.create: unreadable call resource", metadata: metadata)
            throw TelephonyError.unavailable("Twilio returned an unreadable call resource")
        }
        metadata["call_sid"] = "\(call.sid)"
        metadata["status"] = "\(call.status)"
        logger.info("twilio.calls.created", metadata: metadata)
        return PlacedCall(sid: call.sid, status: call.status)
    }

    /// Hangs up with `POST /2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json`, `Status=completed`
    /// (operation `UpdateCall`). Twilio's answer for a call that is no longer in progress
    /// (HTTP 400, code 21220) counts as success.
    public func hangUp(callSid: String) async throws {
        let metadata: Logger.Metadata = ["call_sid": "\(callSid)"]
        logger.info("twilio.calls.hangup", metadata: metadata)
        let path = "/2010-04-01/Accounts/\(Self.pathEscaped(accountSID))/Calls/\(Self.pathEscaped(callSid)).json"
        let response = try await post(operation: "hang_up", path: path, form: [("Status", "completed")])
        switch response.status {
        case 200..<300:
            return
        default:
            let error = Self.error(status: response.status, body: response.body)
            if case .rejected(400, let code, _) = error, code == Self.callNotInProgressCode {
                logger.info("twilio.calls.hangup: call already ended", metadata: metadata)
                return
            }
            throw logged(error, operation: "hangup", metadata: metadata)
        }
    }

    /// Fetches the call resource, `GET /2010-04-01/Accounts/{AccountSid}/Calls/{Sid}.json` (operation `FetchCall`).
    public func callStatus(callSid: String) async throws -> ProviderCallStatus {
        let metadata: Logger.Metadata = ["call_sid": "\(callSid)"]
        let path = "/2010-04-01/Accounts/\(Self.pathEscaped(accountSID))/Calls/\(Self.pathEscaped(callSid)).json"
        var request = HTTPClientRequest(url: Self.join(baseURL, path))
        request.method = .GET
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await send(request, operation: "fetch_call", path: path)
        guard (200..<300).contains(response.status) else {
            throw logged(Self.error(status: response.status, body: response.body), operation: "fetch", metadata: metadata)
        }
        guard let resource = try? JSONDecoder().decode(CallResource.self, from: response.body) else {
            throw logged(.unavailable("Unreadable call resource"), operation: "fetch", metadata: metadata)
        }
        return ProviderCallStatus(status: resource.status, durationSeconds: resource.duration.flatMap { Int($0) })
    }

    /// How long Twilio listens for a machine's greeting to end before it answers `unknown` (Twilio's default).
    public static let machineDetectionTimeoutSeconds = 30

    /// Twilio's error code for updating a call that is no longer in progress.
    static let callNotInProgressCode = 21220

    // MARK: - HTTP

    private func post(operation: String, path: String, form: [(String, String)]) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: Self.join(baseURL, path))
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: TwilioFormEncoding.encode(form)))
        return try await send(request, operation: operation, path: path)
    }

    private func send(_ request: HTTPClientRequest, operation: String, path: String) async throws -> (status: Int, body: Data) {
        let started = ContinuousClock.now
        func observe(_ failure: String?) {
            observer?.providerCall(provider: "twilio", operation: operation, failure: failure, duration: ContinuousClock.now - started)
        }
        do {
            let answer = try await ProviderTracing.exchange(
                tracer: observer?.tracer, provider: "twilio", operation: operation, request: request, status: \.status
            ) { request -> (status: Int, body: Data) in
                let response = try await httpClient.execute(request, timeout: timeout)
                let buffer = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), Data(buffer.readableBytesView))
            }
            observe(ProviderCallFailure.status(answer.status))
            return answer
        } catch let error as CancellationError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            observe(ProviderCallFailure.timeout)
            logger.warning("twilio.request failed", metadata: ["path": "\(path)", "error": "\(error)"])
            throw TelephonyError.unavailable("Twilio request failed: \(error)")
        } catch {
            observe(ProviderCallFailure.unreachable)
            logger.warning("twilio.request failed", metadata: ["path": "\(path)", "error": "\(error)"])
            throw TelephonyError.unavailable("Twilio request failed: \(error)")
        }
    }

    private func logged(_ error: TelephonyError, operation: String, metadata: Logger.Metadata) -> TelephonyError {
        var metadata = metadata
        // Twilio's messages can quote the phone number: log the status and code only.
        switch error {
        case .rejected(let status, let code, _):
            metadata["http_status"] = "\(status)"
            metadata["twilio_code"] = "\(code.map(String.init) ?? "none")"
        case .unavailable:
            metadata["error"] = "unavailable"
        }
        logger.warning("twilio.calls.\(operation) failed", metadata: metadata)
        return error
    }

    static func error(status: Int, body: Data) -> TelephonyError {
        let decoded = try? JSONDecoder().decode(ErrorBody.self, from: body)
        let message = decoded?.message ?? (String(data: body.prefix(512), encoding: .utf8) ?? "")
        if status == 429 || status >= 500 {
            return .unavailable("Twilio HTTP \(status): \(message)")
        }
        return .rejected(httpStatus: status, code: decoded?.code, message: message)
    }

    private static func join(_ baseURL: URL, _ path: String) -> String {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    private static func pathEscaped(_ component: String) -> String {
        component.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? component
    }

    /// The fields of Twilio's call resource that Chorus reads.
    struct CallResource: Decodable {
        let sid: String
        let status: String
        /// Seconds, as a string; `null` until the call ends.
        let duration: String?

        enum CodingKeys: String, CodingKey {
            case sid
            case status
            case duration
        }
    }

    /// Twilio's REST error body.
    struct ErrorBody: Decodable {
        let code: Int?
        let message: String?
        let moreInfo: String?
        let status: Int?

        enum CodingKeys: String, CodingKey {
            case code
            case message
            case moreInfo = "more_info"
            case status
        }
    }
}
