#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import HummingbirdCore
import KeyhostLedger
import KeyhostLedgerDeadline
import KeyhostRecord
import KeyhostWorkerProcess
import Logging
import NIOCore

/// The ledger's HTTP service: `POST /v1/deposit`, `GET /v1/stats`, `GET /v1/health` (docs/ledger.md).
public struct LedgerServer<Chain: LedgerChain>: Sendable {
    public let ledger: Ledger<Chain>
    /// The largest request body; more is answered 413 before it is parsed.
    public var maxBodyBytes: Int = 4 << 20
    /// How long one deposit may take in the store before the client is told to retry.
    public var depositTimeout: Duration = .seconds(30)
    /// How long a connection may send or receive nothing (idle keep-alives). Slow clients are
    /// bounded by `connectionLimits.requestTimeout`: the idle timeout never ends a request being read.
    public var idleTimeout: TimeAmount = .seconds(30)
    /// Connections held at once, per client address, and the request deadline; nil: the defaults
    /// for this process's descriptor limit (`ConnectionLimits.resolve`).
    public var connectionLimits: ConnectionLimits?
    /// The workers that re-run programs; `/v1/health` is unhealthy while all of them are stuck.
    public var verifiers: (@Sendable () -> WorkerPool.Health)?
    /// How many links one request, and one client address per second, may ask to verify.
    public var verificationLimits = VerificationLimits()
    /// The clock client allowances refill by (seconds); tests stop it.
    var rateClock: @Sendable () -> Double = VerificationRates.monotonicSeconds

    public init(ledger: Ledger<Chain>) {
        self.ledger = ledger
    }

    public func router() -> Router<LedgerRequestContext> {
        router(rates: VerificationRates(limits: verificationLimits, clock: rateClock))
    }

    /// The routes, with the client allowances (`rates`) every request of this server shares.
    func router(rates: VerificationRates) -> Router<LedgerRequestContext> {
        let router = Router(context: LedgerRequestContext.self)
        router.add(middleware: JSONErrorMiddleware())
        let verifiers = self.verifiers
        router.get("/v1/health") { _, _ in Self.health(verifiers?()) }
        router.get("/v1/stats") { _, _ in
            do {
                return Self.json(.ok, LedgerJSON.stats(try await ledger.stats()))
            } catch {
                return Self.failure(error)
            }
        }
        router.post("/v1/deposit") { request, context in await deposit(request, client: context.client, rates: rates) }
        return router
    }

    func deposit(_ request: Request, client: String, rates: VerificationRates) async -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodyBytes {
            return Self.tooLarge(maxBodyBytes)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maxBodyBytes)
        } catch let error as HTTPResponseError where error.status == .contentTooLarge {
            return Self.tooLarge(maxBodyBytes)
        } catch {
            return Self.json(.badRequest, LedgerJSON.error(kind: "malformed_request", message: "could not read the request body"))
        }
        do {
            let texts = try LedgerJSON.depositChains([UInt8](buffer: body), maxBytes: maxBodyBytes)
            let chains = try Ledger<Chain>.parse(armored: texts)
            let ledger = self.ledger
            let limit = depositTimeout
            let results = try await withDeadline(limit, error: LedgerError(kind: "timeout", message: "the deposit took longer than \(limit); retry it (the same chain gets the same answer)")) {
                try await ledger.deposit(chains) { work in try WorkRefusal.check(work, client: client, rates: rates) }
            }
            return Self.json(.ok, LedgerJSON.results(results, chain: Chain.self))
        } catch let refusal as WorkRefusal {
            return refusal.response
        } catch {
            return Self.failure(error)
        }
    }

    /// Runs the service until it is cancelled or sent SIGTERM/SIGINT; `onRunning` gets the bound port.
    public func run(host: String, port: Int, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        var logger = Logger(label: "keyhost.ledger")
        logger.logLevel = .warning
        let limits = try connectionLimits ?? ConnectionLimits.resolve(total: nil)
        let admission = ConnectionAdmission(limits: limits)
        // Sockets accepted only to be closed (over a limit) hold descriptors too: past this many
        // open at once the listener stops accepting, and the kernel's backlog holds the rest.
        let accepting = MaximumAvailableConnections(limits.total + ConnectionLimits.refusing)
        let app = Application(
            router: router(),
            server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionGuard(admission: admission)], idleTimeout: idleTimeout)),
            configuration: .init(address: .hostname(host, port: port), serverName: "keyhost-ledger", availableConnectionsDelegate: accepting),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService()
    }

    // MARK: - Answers

    static func json(_ status: HTTPResponse.Status, _ object: Record) -> Response { jsonResponse(status, object) }

    /// 200 `ok`, or 503 while every worker that re-runs programs is stuck (deposits would only wait).
    static func health(_ pool: WorkerPool.Health?) -> Response {
        guard let pool else { return json(.ok, .object([("status", .string("ok"))])) }
        let workers: Record = .object([("count", .integer(Int64(pool.workers))), ("free", .integer(Int64(pool.free)))])
        guard !pool.stuck else {
            return json(.serviceUnavailable, .object([
                ("status", .string("unhealthy")), ("kind", .string("no_free_worker")),
                ("message", .string("every worker that re-runs token programs has been busy without answering for longer than one run may take; deposits cannot be checked")),
                ("workers", workers),
            ]))
        }
        return json(.ok, .object([("status", .string("ok")), ("workers", workers)]))
    }

    static func tooLarge(_ limit: Int) -> Response {
        json(.contentTooLarge, LedgerJSON.error(kind: "too_large", message: "the request body is larger than \(limit) bytes; send fewer chains per request"))
    }

    /// 400 for what the client sent, 503 for the store (the client may retry: deposits are idempotent).
    ///
    /// A store failure's text names the database and the server's reason: that is for the operator
    /// (standard error, where `serve` prints its address), not for whoever sent the request.
    static func failure(_ error: Error) -> Response {
        if let error = error as? LedgerError {
            switch error.kind {
            case "store":
                operatorLog("the ledger's database failed: \(error.message)")
                return json(.serviceUnavailable, LedgerJSON.error(kind: "store", message: "the ledger's database failed; try again"))
            case "timeout":
                return json(.serviceUnavailable, LedgerJSON.error(kind: "timeout", message: error.message))
            case "verifier_unavailable":
                // The ledger's own worker failed re-running a program twice: the chain was not judged.
                operatorLog("a program could not be re-run: \(error.message)")
                return json(.serviceUnavailable, LedgerJSON.error(kind: error.kind, message: error.message, index: error.index))
            case "issuer_conflict":
                return json(.conflict, LedgerJSON.error(kind: error.kind, message: error.message, index: error.index))
            default:
                return json(.badRequest, LedgerJSON.error(kind: error.kind, message: error.message, index: error.index))
            }
        }
        operatorLog("a request failed unexpectedly: \(error)")
        return json(.internalServerError, LedgerJSON.error(kind: "internal", message: "the ledger failed unexpectedly; try again"))
    }

    /// One line on standard error for whoever runs the service (messages never hold a password).
    /// One write(2) of the whole line: whole lines from concurrent requests, and no shared FILE* (Swift 6's
    /// checker rightly refuses glibc's global `stderr`).
    static func operatorLog(_ line: String) {
        let bytes = Array("keyhost-ledger: \(line)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// Errors the router itself raises (no such route, wrong method) as the same JSON shape.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = LedgerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPResponseError {
            let kind = error.status == .notFound ? "not_found" : "http"
            return jsonResponse(error.status, LedgerJSON.error(kind: kind, message: "\(request.method) \(request.uri.path): \(error.status.reasonPhrase)"))
        }
    }
}

func jsonResponse(_ status: HTTPResponse.Status, _ object: Record) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: LedgerJSON.encode(object))))
}
