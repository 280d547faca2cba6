import KeyhostCrypto
import KeyhostRecord
import KeyhostTokens
import KeyhostWallet

/// A token as both front ends show it: the names of Lua's token tables and of `token inspect --json`, one list.
/// Absent values are null (JSON prints them; Lua drops them).
extension Record {
    /// The token's fields and whether its issuer's signature holds.
    public init(token signed: SignedToken) {
        let t = signed.token
        var limits: Record = .null
        if !t.policy.isEmpty {
            limits = ["instructions": t.policy.instructions.map(Record.unsigned) ?? .null,
                      "memory": t.policy.memoryBytes.map(Record.unsigned) ?? .null,
                      "time_ms": t.policy.timeMillis.map(Record.unsigned) ?? .null,
                      "max_deposit_age": t.policy.maxDepositAge.map(Record.unsigned) ?? .null]
        }
        self = [
            "id": .bytes(t.id), "issuer": .bytes(t.issuer.bytes), "holder": .bytes(t.holder.compressed),
            "value": .unsigned(t.value), "unit": .string(t.unit),
            "not_before": .integer(t.notBefore), "expires": .integer(t.expires),
            "program_kind": .string(t.program.kind.rawValue), "program_size": .count(t.program.code.count),
            "program_sha256": .bytes(t.programHash), "limits": limits, "meta": t.metadata.map(Record.init(cbor:)) ?? .null,
            "signature": .bytes(signed.signature), "signature_valid": .bool(signed.signatureIsValid),
        ]
    }

    /// A wallet's token: its fields and where it is in its life (`spent_at` and `receipt_id` once SPENT).
    public init(storedToken stored: StoredToken) {
        self = Record(token: stored.token)
            .setting("state", .string(stored.state.rawValue.lowercased()))
            .setting("imported_at", .integer(stored.importedAt))
            .setting("spent_at", .integer(stored.spentAt))
            .setting("receipt_id", .bytes(stored.receiptID))
    }

    /// A wallet row that cannot be read back: its id, `state` "damaged" and why.
    public init(damagedToken id: [UInt8], reason: String) {
        self = ["id": .bytes(id), "state": "damaged", "reason": .string(reason)]
    }

    /// Program data (effects, metadata) as JSON can carry it: text as strings, bytes as bytes, integers as
    /// numbers up to 2^53 and as decimal strings beyond (JSON readers hold no more exactly), maps as objects
    /// keyed by their text keys or, for other keys, their CBOR diagnostic notation.
    public init(cbor value: CBORValue) {
        let exact: UInt64 = 1 << 53
        switch value {
        case .unsigned(let n): self = n <= exact ? .integer(Int64(n)) : .string(String(n))
        case .negative(let n):
            // -1 - n; for n = 2^64 - 1 the decimal needs a 20th digit, which the diagnostic form has.
            self = n < exact ? .integer(-Int64(n) - 1) : .string(n == .max ? value.diagnostic : "-" + String(n + 1))
        case .bytes(let b): self = .bytes(b)
        case .text(let t): self = .string(t)
        case .bool(let b): self = .bool(b)
        case .null: self = .null
        case .array(let items): self = .array(items.map(Record.init(cbor:)))
        case .map(let pairs):
            var fields: [(String, Record)] = []
            for pair in pairs {
                let key: String
                if case .text(let t) = pair.key { key = t } else { key = pair.key.diagnostic }
                // A later duplicate key wins, as a JSON reader would take it.
                fields.removeAll { $0.0 == key }
                fields.append((key, Record(cbor: pair.value)))
            }
            self = .object(fields)
        }
    }
}

extension Record {
    /// What `receive` did: the payment's worth against the request, and per token `added` or `already_present`
    /// (with the state it already had).
    public init(received: TokenWallet.Received) {
        self = [
            "amount": .unsigned(received.amount), "requested": .unsigned(received.request.amount),
            "unit": .string(received.request.unit), "complete": .bool(received.complete),
            "request_id": .bytes(received.request.id),
            "tokens": .array(received.results.map { result in
                switch result.outcome {
                case .added: return ["id": .bytes(result.tokenID), "result": "added", "state": nil]
                case .alreadyPresent(let state):
                    return ["id": .bytes(result.tokenID), "result": "already_present", "state": .string(state.rawValue.lowercased())]
                }
            }),
        ]
    }

    /// A payment made: the request it answers, what it is worth and the tokens it hands over.
    public init(payment: Payment, unit: String) {
        self = [
            "request_id": .bytes(payment.requestID),
            "amount": .unsigned(payment.chains.reduce(UInt64(0)) { $0 &+ $1.token.token.value }),
            "unit": .string(unit), "tokens": .array(payment.chains.map { .bytes($0.token.token.id) }),
        ]
    }
}
