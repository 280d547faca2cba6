import KeyhostBitcoin
import KeyhostCrypto
import KeyhostRecord

/// The shapes `keyhost.psbt` returns and `keyhost psbt --json` prints (docs/json.md, "keyhost psbt").
public enum PSBTRecords {
    public static func summary(_ s: PSBTSummary, signer: PSBTKeySource?) -> Record {
        .object([
            ("version", .integer(Int64(s.version))),
            ("unsigned_txid", .string(s.txid)),
            ("locktime", .integer(Int64(s.lockTime))),
            ("inputs", .array(s.inputs.map { input in
                .object([
                    ("index", .integer(Int64(input.index))), ("txid", .string(input.previousTxid)), ("vout", .integer(Int64(input.previousIndex))),
                    ("sequence", .integer(Int64(input.sequence))), ("amount", .integer(input.amount)), ("address", .string(input.address)),
                    ("script_type", .string(input.scriptType)), ("ours", .bool(input.ours)), ("signatures", .integer(Int64(input.signatures))),
                    ("finalized", .bool(input.finalized)), ("sighash", .string(input.sighash)),
                ])
            })),
            ("outputs", .array(s.outputs.map { output in
                .object([
                    ("index", .integer(Int64(output.index))), ("amount", .integer(output.amount)), ("address", .string(output.address)),
                    ("script_type", .string(output.scriptType)), ("change", .bool(output.change)),
                ])
            })),
            ("total_in", .integer(s.totalIn)),
            ("total_out", .integer(s.totalOut)),
            ("fee", .integer(s.fee)),
            ("fee_rate", s.feeRate.map { .number(($0 * 100).rounded() / 100) } ?? .null),
            ("warnings", .array(s.warnings.map { .string($0) })),
            ("master_fingerprint", .string(signer?.masterFingerprint.map(KeyOrigin.hex))),
        ])
    }

    public static func signing(_ report: PSBTSigningReport) -> Record {
        .object([
            ("signatures", .integer(Int64(report.signatures.count))),
            ("signed", .array(report.signatures.map { signature in
                .object([
                    ("input", .integer(Int64(signature.input))),
                    ("public_key", .string(Hex.encode(signature.publicKey))),
                    ("fingerprint", .string(signature.origin?.fingerprintHex)),
                    ("path", .string(signature.origin?.path.description)),
                    ("script_type", .string(signature.form)),
                    ("sighash", .string(signature.sighash.description)),
                ])
            })),
            ("skipped", .array(report.skipped.map { .object([("input", .integer(Int64($0.input))), ("reason", .string($0.reason))]) })),
        ])
    }
}
