import Foundation
import KeyhostCrypto
import KeyhostLedger

/// The JSON the ledger's HTTP API and the CLI's `--json` speak (docs/ledger.md).
public enum LedgerJSON {
    public static func results<Chain: LedgerChain>(_ results: [DepositResult<Chain.Proof>], chain: Chain.Type) -> [String: Any] {
        ["results": results.map { result -> [String: Any] in
            var row: [String: Any] = ["token_id": Hex.encode(result.tokenID), "result": result.name]
            if let proof = result.proof { row["proof"] = Chain.armorProof(proof) }
            return row
        }]
    }

    public static func stats(_ stats: LedgerStats) -> [String: Any] {
        [
            "tokens": stats.tokens,
            "double_spends": stats.doubleSpends,
            "units": stats.totals.keys.sorted().map { unit -> [String: Any] in
                ["unit": unit, "tokens": stats.tokensByUnit[unit] ?? 0, "total": stats.totals[unit] ?? "0"]
            },
        ]
    }

    /// Reads the answer of `GET /v1/stats` back.
    public static func parseStats(_ object: Any) throws -> LedgerStats {
        guard let map = object as? [String: Any], let tokens = map["tokens"] as? Int, let doubleSpends = map["double_spends"] as? Int,
              let units = map["units"] as? [[String: Any]]
        else { throw LedgerError(kind: "protocol", message: "the ledger's stats answer is not the expected JSON") }
        var stats = LedgerStats(tokens: tokens, totals: [:], tokensByUnit: [:], doubleSpends: doubleSpends)
        for entry in units {
            guard let unit = entry["unit"] as? String, let count = entry["tokens"] as? Int, let total = entry["total"] as? String else {
                throw LedgerError(kind: "protocol", message: "the ledger's stats answer has a malformed unit entry")
            }
            stats.tokensByUnit[unit] = count
            stats.totals[unit] = total
        }
        return stats
    }

    public static func error(kind: String, message: String, index: Int? = nil) -> [String: Any] {
        var inner: [String: Any] = ["kind": kind, "message": message]
        if let index { inner["index"] = index }
        return ["error": inner]
    }

    public static func encode(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }

    /// The armoured chains of a deposit body `{"chains": ["khchain1:…", …]}`, or an error saying
    /// what is wrong with it.
    public static func depositChains(_ body: Data) throws -> [String] {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: body, options: [])
        } catch {
            throw LedgerError(kind: "malformed_json", message: "the body is not JSON; send {\"chains\": [\"khchain1:…\", …]}")
        }
        guard let map = object as? [String: Any] else {
            throw LedgerError(kind: "malformed_request", message: "the body must be a JSON object {\"chains\": [\"khchain1:…\", …]}")
        }
        if let extra = map.keys.sorted().first(where: { $0 != "chains" }) {
            throw LedgerError(kind: "malformed_request", message: "unknown field \(extra.prefix(40).debugDescription); the body has only \"chains\"")
        }
        guard let list = map["chains"] as? [Any] else {
            throw LedgerError(kind: "malformed_request", message: "\"chains\" is missing or not an array of strings")
        }
        guard !list.isEmpty else { throw LedgerError(kind: "malformed_request", message: "\"chains\" is empty; send at least one chain") }
        return try list.enumerated().map { index, item in
            guard let text = item as? String else {
                throw LedgerError(kind: "invalid_chain", message: "chain \(index): not a string (chains are \"khchain1:…\" text)", index: index)
            }
            return text
        }
    }
}
