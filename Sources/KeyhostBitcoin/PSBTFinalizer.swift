import KeyhostCrypto

extension PSBT {
    /// Builds each input's final scriptSig/witness from its signatures (BIP174 input finalizer) and drops
    /// the fields only signing needed. Inputs already final are kept. Throws, leaving the PSBT unchanged,
    /// when an input lacks signatures or its script is one keyhost does not finalize.
    ///
    /// Every signature used is verified first against its signature hash, so a corrupt signature or one
    /// made for another transaction is reported with its input here, not by the network after broadcast.
    public mutating func finalize() throws {
        let tx = try unsignedTransaction()
        var spent = [TxOutput?]()
        for i in inputs.indices {
            do { spent.append(try spentOutput(i, tx: tx)?.output) } catch let error as PSBTError {
                throw PSBTError(.finalize, error.message, input: i)
            }
        }
        let cache = SighashCache(transaction: tx, spentOutputs: spent.allSatisfy { $0 != nil } ? spent.compactMap { $0 } : nil)
        var copy = self
        for i in inputs.indices where !inputs[i].isFinalized {
            do { try copy.finalizeInput(i, utxo: spent[i], cache: cache) } catch let error as PSBTError {
                throw PSBTError(.finalize, error.message, input: i)
            }
        }
        self = copy
    }

    /// Finalizes every input that can be and leaves the others as they were, as Bitcoin Core's
    /// `finalizepsbt` does; returns those others with why (missing signatures, a signature that does
    /// not verify, a script keyhost does not finalize). Empty: the PSBT is complete.
    public mutating func finalizeWhatCan() throws -> [(input: Int, reason: String)] {
        let tx = try unsignedTransaction()
        var spent = [TxOutput?]()
        var left = [(input: Int, reason: String)]()
        for i in inputs.indices {
            do { spent.append(try spentOutput(i, tx: tx)?.output) } catch let error as PSBTError {
                spent.append(nil)
                left.append((i, error.message))
            }
        }
        let cache = SighashCache(transaction: tx, spentOutputs: spent.allSatisfy { $0 != nil } ? spent.compactMap { $0 } : nil)
        for i in inputs.indices where !inputs[i].isFinalized && !left.contains(where: { $0.input == i }) {
            let before = inputs[i]
            do { try finalizeInput(i, utxo: spent[i], cache: cache) } catch let error as PSBTError {
                inputs[i] = before
                left.append((i, error.message))
            }
        }
        return left.sorted { $0.input < $1.input }
    }

    /// Checks an ECDSA signature (DER + sighash byte) by `key` against this input's signature hash.
    private func verifyECDSA(_ signature: [UInt8], key: [UInt8], input i: Int, spend: InputSpend, amount: UInt64, cache: SighashCache) throws {
        guard let typeByte = signature.last else { throw PSBTError(.finalize, "an empty signature for key \(Hex.encode(key))") }
        let type = SighashType(rawValue: UInt32(typeByte))
        let digest = spend.sigVersion == .legacy
            ? try cache.legacy(input: i, scriptCode: spend.scriptCode, type: type)
            : try cache.segwitV0(input: i, scriptCode: spend.scriptCode, amount: amount, type: type)
        let valid = (try? PublicKey(bytes: key).verify(ECDSASignature(der: Array(signature.dropLast())), digest: digest)) ?? false
        guard valid else {
            throw PSBTError(.finalize, "the signature by key \(Hex.encode(key)) does not verify (sighash \(type)): it is corrupt or was made for another transaction; sign again")
        }
    }

    /// Whether every input has a final scriptSig or witness.
    public var isFinalized: Bool { inputs.allSatisfy(\.isFinalized) }

    private mutating func finalizeInput(_ i: Int, utxo: TxOutput?, cache: SighashCache) throws {
        let map = inputs[i]
        guard let utxo else {
            throw PSBTError(.finalize, "no UTXO data (non_witness_utxo or witness_utxo), so the script to satisfy is unknown")
        }
        let spend = try InputSpend.resolve(map, utxo: utxo)
        var scriptSig = [UInt8]()
        var witness: [[UInt8]]? = nil
        switch spend.form {
        case .p2trKeyPath:
            guard let signature = map.tapKeySignature else { throw PSBTError(.finalize, "the taproot input has no key-path signature (tap_key_sig) yet; sign it first") }
            // 65 bytes carry the sighash type, which must then not be DEFAULT (BIP341).
            let type = signature.count == 65 ? SighashType(rawValue: UInt32(signature[64])) : .default
            let digest = try cache.taproot(input: i, type: type)
            let outputKey = try spend.outputKey.map { try XOnlyPublicKey(bytes: $0) }
            guard signature.count == 64 || type != .default, outputKey?.verify(schnorr: Array(signature.prefix(64)), message: digest) == true else {
                throw PSBTError(.finalize, "the taproot key-path signature does not verify against the output key (sighash \(type)): it is corrupt or was made for another transaction; sign again")
            }
            witness = [signature]
        case .p2pkh, .p2wpkh, .p2shP2wpkh:
            guard let (key, signature) = map.partialSignatures.first(where: { spend.uses($0.publicKey) }) else {
                throw PSBTError(.finalize, "the \(spend.form.rawValue) input has no signature by the key its script names; sign it first")
            }
            try verifyECDSA(signature, key: key, input: i, spend: spend, amount: utxo.value, cache: cache)
            if spend.form == .p2pkh {
                scriptSig = Script.push(signature) + Script.push(key)
            } else {
                witness = [signature, key]
                if let redeem = spend.redeemScript { scriptSig = Script.push(redeem) }
            }
        case .p2shMultisig, .p2wshMultisig, .p2shP2wshMultisig:
            let byKey = Dictionary(map.partialSignatures.map { ($0.publicKey, $0.signature) }, uniquingKeysWith: { first, _ in first })
            // CHECKMULTISIG wants the signatures in the keys' order; the extra empty item is its off-by-one.
            let signatures = spend.multisigKeys.compactMap { byKey[$0] }.prefix(spend.required)
            for key in spend.multisigKeys {
                if let signature = byKey[key], signatures.contains(signature) {
                    try verifyECDSA(signature, key: key, input: i, spend: spend, amount: utxo.value, cache: cache)
                }
            }
            guard signatures.count == spend.required else {
                throw PSBTError(.finalize, "the \(spend.required)-of-\(spend.multisigKeys.count) multisig input has \(signatures.count) of the signatures it needs")
            }
            if spend.form == .p2shMultisig {
                scriptSig = [0x00] + signatures.flatMap(Script.push) + Script.push(spend.scriptCode)
            } else {
                witness = [[]] + Array(signatures) + [spend.scriptCode]
                if let redeem = spend.redeemScript { scriptSig = Script.push(redeem) }
            }
        }
        var kept = PSBTMap(fields: map.fields.filter { PSBT.keptAfterFinalizing.contains($0.type) || !PSBT.knownInputTypes.contains($0.type) })
        if !scriptSig.isEmpty { kept.set(PSBTInputType.finalScriptSig, value: scriptSig) }
        if let witness { kept.set(PSBTInputType.finalScriptWitness, value: PSBTMap.serializeWitness(witness)) }
        inputs[i] = kept
    }

    /// Fields a finalized input keeps: the UTXOs, the final scripts, and BIP370's transaction fields.
    static let keptAfterFinalizing: Set<UInt64> = [
        PSBTInputType.nonWitnessUTXO, PSBTInputType.witnessUTXO, PSBTInputType.finalScriptSig, PSBTInputType.finalScriptWitness,
        PSBTInputType.previousTxid, PSBTInputType.outputIndex, PSBTInputType.sequence, PSBTInputType.requiredTimeLocktime,
        PSBTInputType.requiredHeightLocktime,
    ]
    /// Input types BIP174/370/371 define; others (unknown, proprietary) are carried over untouched.
    static let knownInputTypes = Set<UInt64>(0x00...0x18)

    /// The network transaction, once every input is final (BIP174 transaction extractor).
    public func extractTransaction() throws -> BitcoinTransaction {
        var tx = try unsignedTransaction()
        for (i, map) in inputs.enumerated() {
            guard map.isFinalized else {
                throw PSBTError(.finalize, "the input is not finalized; finalize the PSBT first (keyhost psbt finalize), after every signer has signed", input: i)
            }
            tx.inputs[i].scriptSig = map.finalScriptSig ?? []
            tx.inputs[i].witness = map.finalScriptWitness ?? []
        }
        return tx
    }
}
