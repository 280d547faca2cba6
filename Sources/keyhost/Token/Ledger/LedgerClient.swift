import Foundation
import KeyhostDiscovery
import KeyhostLedger
import KeyhostLedgerServer

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
    func call(_ method: String, _ path: String, body: Data? = nil) throws -> (status: Int, object: Any) {
        let where_ = "\(method) \(base.absoluteString)\(path)"
        let answer: OneShotHTTP.Answer
        do {
            answer = try OneShotHTTP.send(method, base.appendingPathComponent(path), body: body,
                                          contentType: body == nil ? nil : "application/json", timeout: timeout)
        } catch {
            throw Failure.message("ledger \(where_): \(error); is the ledger running?")
        }
        guard let object = try? JSONSerialization.jsonObject(with: answer.body) else {
            throw Failure.message("ledger \(where_): the answer is not JSON (HTTP \(answer.status)); is this a keyhost ledger?")
        }
        let status = answer.status
        return (status, object)
    }

    /// Throws the ledger's own error text for an answer that is not 200.
    func expectOK(_ answer: (status: Int, object: Any)) throws -> Any {
        guard answer.status == 200 else {
            let inner = (answer.object as? [String: Any])?["error"] as? [String: Any]
            let message = inner?["message"] as? String ?? "no error message"
            throw Failure.message("the ledger refused (HTTP \(answer.status), \(inner?["kind"] as? String ?? "error")): \(message)")
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

    /// `{"results": [...]}` rows for `chains`, in order.
    func deposit(_ armored: [String]) throws -> [[String: Any]] {
        let body = LedgerJSON.encode(["chains": armored])
        let object = try expectOK(try call("POST", "/v1/deposit", body: body))
        guard let rows = (object as? [String: Any])?["results"] as? [[String: Any]], rows.count == armored.count else {
            throw Failure.message("ledger \(base.absoluteString): the deposit answer does not have one result per chain")
        }
        return rows
    }
}
