import KeyhostCrypto
import KeyhostRecord
import KeyhostTokens

/// The JSON the ledger speaks (docs/ledger.md): the HTTP API's bodies, the lines keyhost and a
/// `keyhost-ledger pipe` child exchange, and the CLI's `--json`. Written as `Record`s, read with
/// the strict `JSONValue` parser; no Foundation, so keyhost links it at no cost.
public enum LedgerJSON {
    // MARK: - Writing

    public static func results<Chain: LedgerChain>(_ results: [DepositResult<Chain.Proof>], chain: Chain.Type) -> Record {
        .object([("results", .array(results.map { LedgerResultRow($0, chain: chain).record }))])
    }

    public static func stats(_ stats: LedgerStats) -> Record {
        .object([
            ("tokens", .integer(Int64(stats.tokens))),
            ("double_spends", .integer(Int64(stats.doubleSpends))),
            ("units", .array(stats.totals.keys.sorted().map { unit in
                .object([("unit", .string(unit)), ("tokens", .integer(Int64(stats.tokensByUnit[unit] ?? 0))), ("total", .string(stats.totals[unit] ?? "0"))])
            })),
        ])
    }

    public static func error(kind: String, message: String, index: Int? = nil) -> Record {
        var inner: [(String, Record)] = [("kind", .string(kind)), ("message", .string(message))]
        if let index { inner.append(("index", .integer(Int64(index)))) }
        return .object([("error", .object(inner))])
    }

    public static func error(_ error: LedgerError) -> Record { self.error(kind: error.kind, message: error.message, index: error.index) }

    /// The body of a deposit: `{"chains": ["khchain1:…", …]}`.
    public static func depositBody(_ armored: [String]) -> Record {
        .object([("chains", .array(armored.map { .string($0) }))])
    }

    /// One line of JSON (no newline inside: strings escape theirs), as bytes.
    public static func encode(_ record: Record) -> [UInt8] { Array(record.json(pretty: false).utf8) }

    // MARK: - Reading

    /// The armoured chains of a deposit body `{"chains": ["khchain1:…", …]}`, or an error saying
    /// what is wrong with it.
    public static func depositChains(_ body: [UInt8], maxBytes: Int = 64 << 20) throws -> [String] {
        let object: JSONValue
        do {
            object = try JSONValue.parse(body, maxBytes: maxBytes)
        } catch {
            throw LedgerError(kind: "malformed_json", message: "the body is not JSON (\(error)); send {\"chains\": [\"khchain1:…\", …]}")
        }
        return try depositChains(object)
    }

    public static func depositChains(_ object: JSONValue) throws -> [String] {
        guard case .object(let members) = object else {
            throw LedgerError(kind: "malformed_request", message: "the body must be a JSON object {\"chains\": [\"khchain1:…\", …]}")
        }
        if let extra = members.map(\.key).sorted().first(where: { $0 != "chains" }) {
            throw LedgerError(kind: "malformed_request", message: "unknown field \(extra.prefix(40).debugDescription); the body has only \"chains\"")
        }
        guard case .array(let list)? = object["chains"] else {
            throw LedgerError(kind: "malformed_request", message: "\"chains\" is missing or not an array of strings")
        }
        guard !list.isEmpty else { throw LedgerError(kind: "malformed_request", message: "\"chains\" is empty; send at least one chain") }
        return try list.enumerated().map { index, item in
            guard case .string(let text) = item else {
                throw LedgerError(kind: "invalid_chain", message: "chain \(index): not a string (chains are \"khchain1:…\" text)", index: index)
            }
            return text
        }
    }

    /// Reads a stats answer (`GET /v1/stats`) back.
    public static func parseStats(_ value: JSONValue) throws -> LedgerStats {
        guard let tokens = integer(value["tokens"]), let doubleSpends = integer(value["double_spends"]), case .array(let units)? = value["units"] else {
            throw LedgerError(kind: "protocol", message: "the ledger's stats answer is not the expected JSON")
        }
        var stats = LedgerStats(tokens: tokens, totals: [:], tokensByUnit: [:], doubleSpends: doubleSpends)
        for entry in units {
            guard case .string(let unit)? = entry["unit"], let count = integer(entry["tokens"]), case .string(let total)? = entry["total"] else {
                throw LedgerError(kind: "protocol", message: "the ledger's stats answer has a malformed unit entry")
            }
            stats.tokensByUnit[unit] = count
            stats.totals[unit] = total
        }
        return stats
    }

    /// Reads a deposit answer `{"results": [...]}` with one row per deposited chain.
    public static func parseResults(_ value: JSONValue, count: Int) throws -> [LedgerResultRow] {
        guard case .array(let rows)? = value["results"], rows.count == count else {
            throw LedgerError(kind: "protocol", message: "the deposit answer does not have one result per chain")
        }
        return try rows.map { row in
            guard case .string(let id)? = row["token_id"], case .string(let result)? = row["result"] else {
                throw LedgerError(kind: "protocol", message: "a deposit result has no token_id or result")
            }
            var proof: String?
            if let value = row["proof"] {
                guard case .string(let text) = value else { throw LedgerError(kind: "protocol", message: "a deposit result's proof is not text") }
                proof = text
            }
            return LedgerResultRow(tokenID: id, result: result, proof: proof)
        }
    }

    /// Rows read from a ledger's answer as deposit results: a double spend must carry a proof that
    /// reads (whether it verifies is for the depositor to check); anything else is a `protocol` error
    /// naming `source`.
    public static func depositResults(_ rows: [LedgerResultRow], from source: String) throws -> [DepositResult<FraudProof>] {
        try rows.map { row in
            guard let id = try? Hex.decode(row.tokenID), id.count == 32 else {
                throw LedgerError(kind: "protocol", message: "\(source): a deposit result's token id is not 32 bytes of hex")
            }
            switch row.result {
            case "accepted": return .accepted(tokenID: id)
            case "already_deposited": return .alreadyDeposited(tokenID: id)
            case "double_spend":
                guard let text = row.proof, let proof = try? FraudProof(armored: Array(text.utf8)) else {
                    throw LedgerError(kind: "protocol", message: "\(source): token \(row.tokenID): a double spend without a proof that reads")
                }
                return .doubleSpend(tokenID: id, proof: proof)
            default:
                throw LedgerError(kind: "protocol", message: "\(source): token \(row.tokenID): unknown result \(row.result.prefix(40).debugDescription)")
            }
        }
    }

    /// The ledger's error in an answer `{"error": {"kind", "message", "index"?}}`, if it is one.
    public static func parseError(_ value: JSONValue) -> LedgerError? {
        guard let inner = value["error"], case .string(let kind)? = inner["kind"] else { return nil }
        guard case .string(let message)? = inner["message"] else { return LedgerError(kind: kind, message: "no error message") }
        return LedgerError(received: kind, message: message, index: integer(inner["index"]))
    }

    private static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let text)? = value else { return nil }
        return Int(text)
    }
}

/// One deposit's answer as the JSON says it: hex token id, `accepted`/`already_deposited`/`double_spend`, armoured proof.
public struct LedgerResultRow: Sendable, Equatable {
    public var tokenID: String
    public var result: String
    public var proof: String?

    public init(tokenID: String, result: String, proof: String?) {
        self.tokenID = tokenID
        self.result = result
        self.proof = proof
    }

    public init<Chain: LedgerChain>(_ result: DepositResult<Chain.Proof>, chain: Chain.Type) {
        self.init(tokenID: Hex.encode(result.tokenID), result: result.name, proof: result.proof.map(Chain.armorProof))
    }

    public var record: Record {
        var fields: [(String, Record)] = [("token_id", .string(tokenID)), ("result", .string(result))]
        if let proof { fields.append(("proof", .string(proof))) }
        return .object(fields)
    }
}
