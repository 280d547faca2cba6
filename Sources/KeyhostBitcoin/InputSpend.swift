import KeyhostCrypto

/// How an input is spent, worked out from the output it spends and the scripts the PSBT supplies.
/// Signer, finalizer and inspect share this, so they agree on what an input is.
struct InputSpend {
    enum Form: String {
        case p2pkh, p2wpkh
        case p2shP2wpkh = "p2sh-p2wpkh"
        case p2shMultisig = "p2sh"
        case p2wshMultisig = "p2wsh"
        case p2shP2wshMultisig = "p2sh-p2wsh"
        case p2trKeyPath = "p2tr"
    }

    enum SigVersion { case legacy, witnessV0, taproot }

    let form: Form
    let sigVersion: SigVersion
    /// What BIP143 or the legacy algorithm signs as the script (empty for taproot).
    let scriptCode: [UInt8]
    /// Single-key forms: the key's HASH160; multisig: the keys in script order.
    let keyHash: [UInt8]?
    let multisigKeys: [[UInt8]]
    let required: Int
    let redeemScript: [UInt8]?
    let witnessScript: [UInt8]?
    /// Taproot: the output key in the script.
    let outputKey: [UInt8]?

    /// Whether `publicKey` (serialized as the PSBT lists it) is a key this spend checks a signature of.
    func uses(_ publicKey: [UInt8]) -> Bool {
        if let keyHash { return Hash.hash160(publicKey) == keyHash }
        return multisigKeys.contains(publicKey)
    }

    /// Works out the spend of `utxo` from `map`'s redeem and witness scripts, refusing forms it does not sign.
    static func resolve(_ map: PSBTMap, utxo: TxOutput) throws -> InputSpend {
        let spk = utxo.scriptPubKey
        switch ScriptTemplate(spk) {
        case .p2pkh(let hash):
            return InputSpend(form: .p2pkh, sigVersion: .legacy, scriptCode: spk, keyHash: hash, multisigKeys: [], required: 1,
                              redeemScript: nil, witnessScript: nil, outputKey: nil)
        case .p2wpkh(let hash):
            return InputSpend(form: .p2wpkh, sigVersion: .witnessV0, scriptCode: Script.p2pkh(hash), keyHash: hash, multisigKeys: [],
                              required: 1, redeemScript: nil, witnessScript: nil, outputKey: nil)
        case .p2tr(let key):
            return InputSpend(form: .p2trKeyPath, sigVersion: .taproot, scriptCode: [], keyHash: nil, multisigKeys: [], required: 1,
                              redeemScript: nil, witnessScript: nil, outputKey: key)
        case .p2wsh(let hash):
            let (script, m, keys) = try witnessMultisig(map, hash: hash)
            return InputSpend(form: .p2wshMultisig, sigVersion: .witnessV0, scriptCode: script, keyHash: nil, multisigKeys: keys,
                              required: m, redeemScript: nil, witnessScript: script, outputKey: nil)
        case .p2sh(let hash):
            guard let redeem = map.redeemScript else {
                throw PSBTError(.signing, "the output spent is P2SH, but the input has no redeem_script (PSBT_IN_REDEEM_SCRIPT); ask the PSBT's creator to add it")
            }
            guard Hash.hash160(redeem) == hash else {
                throw PSBTError(.signing, "the redeem_script does not hash to the P2SH output being spent; the PSBT is inconsistent")
            }
            switch ScriptTemplate(redeem) {
            case .p2wpkh(let keyHash):
                return InputSpend(form: .p2shP2wpkh, sigVersion: .witnessV0, scriptCode: Script.p2pkh(keyHash), keyHash: keyHash,
                                  multisigKeys: [], required: 1, redeemScript: redeem, witnessScript: nil, outputKey: nil)
            case .p2wsh(let scriptHash):
                let (script, m, keys) = try witnessMultisig(map, hash: scriptHash)
                return InputSpend(form: .p2shP2wshMultisig, sigVersion: .witnessV0, scriptCode: script, keyHash: nil, multisigKeys: keys,
                                  required: m, redeemScript: redeem, witnessScript: script, outputKey: nil)
            case .multisig(let m, let keys):
                return InputSpend(form: .p2shMultisig, sigVersion: .legacy, scriptCode: redeem, keyHash: nil, multisigKeys: keys,
                                  required: m, redeemScript: redeem, witnessScript: nil, outputKey: nil)
            default:
                throw PSBTError(.signing, "the redeem_script is not P2WPKH, P2WSH or multisig; keyhost signs standard scripts only")
            }
        default:
            throw PSBTError(.signing, "the output spent has a \(ScriptTemplate(spk).name) script (\(Hex.encode(spk))); keyhost signs P2PKH, P2SH-P2WPKH, P2WPKH, P2TR key path and multisig only")
        }
    }

    /// BIP174's signer checks: scripts given must hash to what is spent, and a witness_utxo only
    /// describes a segwit output. Unlike `resolve`, scripts keyhost does not sign are no error here.
    static func checkConsistency(_ map: PSBTMap, utxo: TxOutput) throws {
        var program = utxo.scriptPubKey
        if case .p2sh(let hash) = ScriptTemplate(program) {
            if let redeem = map.redeemScript {
                guard Hash.hash160(redeem) == hash else {
                    throw PSBTError(.signing, "the redeem_script does not hash to the P2SH output being spent; the PSBT is inconsistent")
                }
                program = redeem
            }
        } else if map.redeemScript != nil {
            throw PSBTError(.signing, "the input has a redeem_script, but the output it spends is not P2SH; the PSBT is inconsistent")
        }
        let template = ScriptTemplate(program)
        if case .p2wsh(let hash) = template, let script = map.witnessScript, Hash.sha256(script) != hash {
            throw PSBTError(.signing, "the witness_script does not hash to the P2WSH program being spent; the PSBT is inconsistent")
        }
        let isWitness: Bool
        switch template {
        case .p2wpkh, .p2wsh, .p2tr, .futureWitness: isWitness = true
        default: isWitness = false
        }
        // BIP174's signer takes the script from a witness_utxo whenever there is one, and refuses
        // unless it is a witness program: a witness_utxo on a non-segwit input is refused even
        // beside its non_witness_utxo.
        if !isWitness, map.witnessUTXO != nil {
            throw PSBTError(.signing, map.nonWitnessUTXO == nil
                ? "the input spends a non-segwit output but gives only witness_utxo; a non-witness input needs non_witness_utxo (BIP174)"
                : "the input spends a non-segwit output but also carries a witness_utxo, which describes only segwit outputs; BIP174's signer refuses it: remove the witness_utxo")
        }
    }

    private static func witnessMultisig(_ map: PSBTMap, hash: [UInt8]) throws -> ([UInt8], Int, [[UInt8]]) {
        guard let script = map.witnessScript else {
            throw PSBTError(.signing, "the output spent is P2WSH, but the input has no witness_script (PSBT_IN_WITNESS_SCRIPT); ask the PSBT's creator to add it")
        }
        guard Hash.sha256(script) == hash else {
            throw PSBTError(.signing, "the witness_script does not hash to the P2WSH program being spent; the PSBT is inconsistent")
        }
        guard case .multisig(let m, let keys) = ScriptTemplate(script) else {
            throw PSBTError(.signing, "the witness_script is not a standard multisig; keyhost signs standard scripts only")
        }
        return (script, m, keys)
    }
}

extension PSBT {
    /// The output input `index` spends, from non_witness_utxo (checked against the outpoint) or witness_utxo.
    /// `proven` says the amount comes from a full previous transaction the outpoint commits to.
    func spentOutput(_ index: Int, tx: BitcoinTransaction) throws -> (output: TxOutput, proven: Bool)? {
        let map = inputs[index]
        let outpoint = tx.inputs[index].previousOutput
        let witness = map.witnessUTXO
        if let previous = map.nonWitnessUTXO {
            guard previous.txid == outpoint.txid else {
                throw PSBTError(.signing, "the non_witness_utxo is transaction \(previous.displayTxid), but the input spends from \(outpoint.displayTxid)", input: index)
            }
            guard Int(outpoint.index) < previous.outputs.count else {
                throw PSBTError(.signing, "the input spends output \(outpoint.index) of a transaction with \(previous.outputs.count) outputs", input: index)
            }
            let output = previous.outputs[Int(outpoint.index)]
            if let witness, witness != output {
                throw PSBTError(.signing, "the witness_utxo disagrees with the non_witness_utxo's output (amount or script); the PSBT is inconsistent", input: index)
            }
            return (output, true)
        }
        return witness.map { ($0, false) }
    }
}
