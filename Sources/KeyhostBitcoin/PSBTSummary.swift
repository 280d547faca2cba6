import KeyhostCrypto

/// What a PSBT spends and pays, for a person to check before signing.
public struct PSBTSummary: Sendable {
    public struct Input: Sendable {
        public let index: Int
        public let previousTxid: String
        public let previousIndex: UInt32
        public let sequence: UInt32
        /// Satoshis, when UTXO data gives them.
        public let amount: UInt64?
        public let address: String?
        /// p2pkh, p2wpkh, p2sh-p2wpkh, p2tr, p2wsh, … or "unknown" without UTXO data.
        public let scriptType: String
        /// Whether a key of the signer given is listed for this input.
        public let ours: Bool
        public let signatures: Int
        public let finalized: Bool
        public let sighash: String?
    }

    public struct Output: Sendable {
        public let index: Int
        public let amount: UInt64
        public let address: String?
        public let scriptType: String
        /// A key of the signer is listed for it and the script pays to that key (or is a multisig script holding it): our change.
        public let change: Bool
    }

    public let version: UInt32
    public let txid: String
    public let lockTime: UInt32
    public let inputs: [Input]
    public let outputs: [Output]
    public let totalIn: UInt64?
    public let totalOut: UInt64
    public let fee: UInt64?
    /// Satoshis per virtual byte, estimated from the unsigned size and typical signature sizes.
    public let feeRate: Double?
    public let warnings: [String]
}

extension PSBT {
    /// Fees above this share of what is spent, or this rate, are flagged as suspicious.
    static let suspiciousFeeShare = 0.05
    static let suspiciousFeeRate = 1000.0

    /// Inputs, outputs (with addresses on `coin`), fee and warnings; `signer`'s keys mark inputs and change as ours.
    public func summary(coin: Coin = .bitcoin, signer: PSBTKeySource? = nil) throws -> PSBTSummary {
        let tx = try unsignedTransaction()
        var warnings = [String]()
        var inputs = [PSBTSummary.Input]()
        var totalIn: UInt64? = 0
        var extraWeight = 0
        for (i, map) in self.inputs.enumerated() {
            let txin = tx.inputs[i]
            var spent: (output: TxOutput, proven: Bool)?
            do { spent = try spentOutput(i, tx: tx) } catch let error as PSBTError {
                warnings.append("input \(i): \(error.message)")
            }
            var scriptType = "unknown"
            if let (utxo, proven) = spent {
                if let spend = try? InputSpend.resolve(map, utxo: utxo) {
                    scriptType = spend.form.rawValue
                    extraWeight += PSBT.estimatedSatisfactionWeight(spend)
                    if spend.sigVersion == .witnessV0 && !proven {
                        warnings.append("input \(i): only witness_utxo states the amount (\(utxo.value) sat); it is not proven by the previous transaction")
                    }
                } else {
                    scriptType = ScriptTemplate(utxo.scriptPubKey).name
                }
                if let sum = totalIn {
                    let (added, overflow) = sum.addingReportingOverflow(utxo.value)
                    totalIn = overflow ? nil : added
                }
            } else {
                totalIn = nil
                warnings.append("input \(i): no UTXO data; the amount spent and the fee are unknown")
            }
            let ours = signer.map { source in
                map.derivations(type: PSBTInputType.bip32Derivation).contains { source.owns(publicKey: $0.publicKey, origin: $0.origin) }
                    || map.tapDerivations(type: PSBTInputType.tapBIP32Derivation).contains { source.owns(publicKey: $0.xOnlyKey, origin: $0.origin.origin) }
            } ?? false
            let sighash = map.sighashType.map { SighashType(rawValue: $0) }
            if let sighash, sighash != .all, sighash != .default {
                warnings.append("input \(i): sighash \(sighash) lets others change parts of the transaction after signing")
            }
            let signatureCount = map.partialSignatures.count + (map.tapKeySignature == nil ? 0 : 1)
            inputs.append(PSBTSummary.Input(
                index: i, previousTxid: txin.previousOutput.displayTxid, previousIndex: txin.previousOutput.index, sequence: txin.sequence,
                amount: spent?.output.value, address: spent.flatMap { Script.address($0.output.scriptPubKey, coin: coin) }, scriptType: scriptType,
                ours: ours, signatures: signatureCount, finalized: map.isFinalized, sighash: sighash?.description))
        }
        var outputs = [PSBTSummary.Output]()
        var totalOut: UInt64 = 0
        for (i, txout) in tx.outputs.enumerated() {
            let (sum, overflow) = totalOut.addingReportingOverflow(txout.value)
            guard !overflow, sum <= BitcoinTransaction.maxMoney else { throw PSBTError.invalid("the outputs add up to more than 21 million BTC") }
            totalOut = sum
            var change = false
            if let signer {
                let claimed = self.outputs[i].derivations(type: PSBTOutputType.bip32Derivation).filter { signer.owns(publicKey: $0.publicKey, origin: $0.origin) }.map(\.publicKey)
                    + self.outputs[i].tapDerivations(type: PSBTOutputType.tapBIP32Derivation).filter { signer.owns(publicKey: $0.xOnlyKey, origin: $0.origin.origin) }.map(\.xOnlyKey)
                if !claimed.isEmpty {
                    change = PSBT.pays(txout.scriptPubKey, toAnyOf: claimed, map: self.outputs[i])
                    if !change {
                        warnings.append("output \(i): it lists a key of this signer, but its script does not pay to that key; it is not our change, whatever it claims")
                    }
                }
            }
            outputs.append(PSBTSummary.Output(index: i, amount: txout.value, address: Script.address(txout.scriptPubKey, coin: coin),
                                              scriptType: ScriptTemplate(txout.scriptPubKey).name, change: change))
        }
        var fee: UInt64? = nil
        var feeRate: Double? = nil
        if let totalIn {
            if totalIn < totalOut {
                warnings.append("the outputs (\(totalOut) sat) exceed the inputs (\(totalIn) sat); the transaction is invalid")
            } else {
                let paid = totalIn - totalOut
                fee = paid
                let vsize = (tx.serialized(witness: false).count * 4 + extraWeight + 3) / 4
                let rate = Double(paid) / Double(max(vsize, 1))
                feeRate = rate
                if totalIn > 0, Double(paid) > Double(totalIn) * PSBT.suspiciousFeeShare {
                    warnings.append("the fee of \(paid) sat is more than \(Int(PSBT.suspiciousFeeShare * 100))% of the amount spent")
                }
                if rate > PSBT.suspiciousFeeRate {
                    warnings.append("the fee rate of about \(Int(rate)) sat/vB is unusually high")
                }
            }
        }
        return PSBTSummary(version: version, txid: tx.displayTxid, lockTime: tx.lockTime, inputs: inputs, outputs: outputs,
                           totalIn: totalIn, totalOut: totalOut, fee: fee, feeRate: feeRate, warnings: warnings)
    }

    /// Weight the scriptSig and witness will add once signed (73-byte signatures, 33-byte keys).
    static func estimatedSatisfactionWeight(_ spend: InputSpend) -> Int {
        switch spend.form {
        case .p2pkh: return 4 * 107
        case .p2wpkh: return 1 + 1 + 73 + 1 + 33
        case .p2shP2wpkh: return 4 * 23 + 1 + 1 + 73 + 1 + 33
        case .p2trKeyPath: return 1 + 1 + 65
        case .p2shMultisig: return 4 * (1 + 74 * spend.required + 3 + spend.scriptCode.count)
        case .p2wshMultisig: return 1 + 1 + 74 * spend.required + 3 + spend.scriptCode.count
        case .p2shP2wshMultisig: return 4 * 35 + 1 + 1 + 74 * spend.required + 3 + spend.scriptCode.count
        }
    }

    /// Whether `script` pays to one of `keys` as a single-key output (p2pkh, p2wpkh, p2sh-p2wpkh, BIP86 p2tr).
    static func pays(_ script: [UInt8], toAnyOf keys: [[UInt8]], map: PSBTMap) -> Bool {
        for key in keys {
            if key.count == 32 {
                let internalKey = map.value(PSBTOutputType.tapInternalKey) ?? key
                guard internalKey == key, let xonly = try? XOnlyPublicKey(bytes: key) else { continue }
                // Only a key-path-only (BIP86) output is plainly ours; a script tree could pay others.
                if !map.contains(PSBTOutputType.tapTree), let output = try? xonly.taprootOutputKey(), script == Script.p2tr(output.bytes) { return true }
                continue
            }
            let hash = Hash.hash160(key)
            if script == Script.p2pkh(hash) || script == Script.p2wpkh(hash) || script == Script.p2sh(Hash.hash160(Script.p2wpkh(hash))) { return true }
        }
        return paysMultisig(script, withAnyOf: keys, map: map)
    }

    /// Whether `script` is a multisig output (p2wsh, p2sh-p2wsh or p2sh; BDK's `wsh(multi)` and
    /// `wsh(sortedmulti)` change) whose script, given in the output's map, hashes to it and names one of
    /// `keys`: ours in the sense a multisig wallet's change is, one key among the cosigners'.
    static func paysMultisig(_ script: [UInt8], withAnyOf keys: [[UInt8]], map: PSBTMap) -> Bool {
        let witness = map.value(PSBTOutputType.witnessScript)
        let redeem = map.value(PSBTOutputType.redeemScript)
        let multisig: [UInt8]
        if let witness {
            let program = Script.p2wsh(Hash.sha256(witness))
            if let redeem {
                guard redeem == program, script == Script.p2sh(Hash.hash160(redeem)) else { return false }
            } else {
                guard script == program else { return false }
            }
            multisig = witness
        } else if let redeem {
            guard script == Script.p2sh(Hash.hash160(redeem)) else { return false }
            multisig = redeem
        } else {
            return false
        }
        guard let (_, members) = Script.multisig(multisig) else { return false }
        return keys.contains { key in key.count != 32 && members.contains(key) }
    }
}
