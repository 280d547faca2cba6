// URL and Data only: FoundationEssentials (full Foundation would bring ICU).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostHTTP
import KeyhostLedger
import KeyhostRecord

/// Talks to a ledger service (`keyhost token ledger serve`) over HTTP, with keyhost's own HTTP
/// transport: URLSession would link FoundationNetworking (libcurl and its thirty-odd libraries)
/// into every keyhost run's start-up.
struct LedgerClient {
    let base: URL
    var timeout: Double = 60

    init(_ text: String) throws {
        guard text.hasPrefix("http://") || text.hasPrefix("https://"), let url = URL(string: text), url.host != nil else {
            throw Failure.message("the ledger's address must be http://HOST:PORT, got \(String(text.prefix(80)).debugDescription)")
        }
        base = url
    }

    /// The parsed JSON answer and its status; an answer that is not JSON is an error naming the status.
    func call(_ method: String, _ path: String, body: Record? = nil) throws -> (status: Int, object: JSONValue) {
        let where_ = "\(method) \(base.absoluteString)\(path)"
        let answer: OneShotHTTP.Answer
        do {
            answer = try OneShotHTTP.send(method, base.appendingPathComponent(path), body: body.map { Data(LedgerJSON.encode($0)) },
                                          contentType: body == nil ? nil : "application/json", timeout: timeout)
        } catch {
            throw Failure.message("ledger \(where_): \(error); is the ledger running?")
        }
        guard let object = try? JSONValue.parse([UInt8](answer.body), maxBytes: 256 << 20) else {
            throw Failure.message("ledger \(where_): the answer is not JSON (HTTP \(answer.status)); is this a keyhost ledger?")
        }
        return (answer.status, object)
    }

    /// Throws the ledger's own error text for an answer that is not 200.
    func expectOK(_ answer: (status: Int, object: JSONValue)) throws -> JSONValue {
        guard answer.status == 200 else {
            let error = LedgerJSON.parseError(answer.object)
            throw Failure.message("the ledger refused (HTTP \(answer.status), \(error?.kind ?? "error")): \(error?.message ?? "no error message")")
        }
        return answer.object
    }

    func stats() throws -> LedgerStats {
        do {
            return try LedgerJSON.parseStats(try expectOK(try call("GET", "/v1/stats")))
        } catch let error as LedgerError {
            throw Failure.message("ledger \(base.absoluteString): \(error.message)")
        }
    }

    /// One result per chain of `armored`, in order.
    func deposit(_ armored: [String]) throws -> [LedgerResultRow] {
        let object = try expectOK(try call("POST", "/v1/deposit", body: LedgerJSON.depositBody(armored)))
        do {
            return try LedgerJSON.parseResults(object, count: armored.count)
        } catch let error as LedgerError {
            throw Failure.message("ledger \(base.absoluteString): \(error.message)")
        }
    }
}
