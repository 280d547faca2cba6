import KeyhostCrypto

/// Choices a signer makes on behalf of its user.
public struct PSBTSigningOptions: Sendable {
    /// Sign a segwit v0 input whose amount only `witness_utxo` states. Off by default: BIP143 signs the
    /// amount, but a signer shown a false amount in two sessions can be led to overpay fees (the 2020
    /// "segwit fee attack"), so keyhost wants `non_witness_utxo`, whose transaction the outpoint commits to.
    /// Taproot inputs need only `witness_utxo`: BIP341 signs every input's amount and script.
    public var allowWitnessUTXOOnly = false
    /// The sighash type to sign with; nil signs with the input's PSBT_IN_SIGHASH_TYPE, or ALL (DEFAULT for taproot).
    /// When the input names a type, a different one here is refused.
    public var sighashType: SighashType?

    public init(allowWitnessUTXOOnly: Bool = false, sighashType: SighashType? = nil) {
        self.allowWitnessUTXOOnly = allowWitnessUTXOOnly
        self.sighashType = sighashType
    }
}

/// What signing did to each input.
public struct PSBTSigningReport: Sendable {
    public struct Signature: Sendable {
        public let input: Int
        /// The public key signed for (33/65 bytes, or 32 x-only for taproot).
        public let publicKey: [UInt8]
        public let origin: KeyOrigin?
        public let form: String
        public let sighash: SighashType
    }

    public var signatures: [Signature] = []
    /// Inputs left alone, with why (finalized, no key of ours, script path…).
    public var skipped: [(input: Int, reason: String)] = []
}

extension PSBT {
    /// Signs every input a key of `source` can sign, adding PSBT_IN_PARTIAL_SIG or PSBT_IN_TAP_KEY_SIG.
    ///
    /// Throws, leaving the PSBT unchanged, when an input that is ours cannot be signed safely: no UTXO
    /// data proving the amount, scripts that do not match the output, a key the source derives
    /// differently, a sighash type the PSBT forbids or that is unsafe.
    @discardableResult
    public mutating func sign(with source: PSBTKeySource, options: PSBTSigningOptions = PSBTSigningOptions()) throws -> PSBTSigningReport {
        var copy = self
        let report = try copy.signInPlace(source, options)
        self = copy
        return report
    }

    private mutating func signInPlace(_ source: PSBTKeySource, _ options: PSBTSigningOptions) throws -> PSBTSigningReport {
        let tx = try unsignedTransaction()
        var spent = [(output: TxOutput, proven: Bool)?]()
        spent.reserveCapacity(inputs.count)
        for i in inputs.indices { spent.append(try spentOutput(i, tx: tx)) }
        let allSpent = spent.allSatisfy { $0 != nil } ? spent.compactMap { $0?.output } : nil
        let cache = SighashCache(transaction: tx, spentOutputs: allSpent)
        var report = PSBTSigningReport()
        for i in inputs.indices {
            do {
                try signInput(i, source: source, options: options, spent: spent[i], cache: cache, report: &report)
            } catch let error as PSBTError {
                throw error.located(input: i)
            }
        }
        if version == 2 { updateModifiableFlags(report.signatures.map(\.sighash)) }
        return report
    }

    /// BIP370's signer rule: a signature without ANYONECANPAY fixes the inputs (bit 0 cleared), one without
    /// NONE fixes the outputs (bit 1 cleared), and one with SINGLE sets bit 2 (Has SIGHASH_SINGLE).
    private mutating func updateModifiableFlags(_ types: [SighashType]) {
        guard !types.isEmpty else { return }
        let present = global.value(PSBTGlobalType.txModifiable)
        var flags = present?.first ?? 0
        for type in types {
            if !type.anyoneCanPay { flags &= ~0x01 }
            if type.rawValue & 3 != SighashType.none.rawValue { flags &= ~0x02 }
            if type.rawValue & 3 == SighashType.single.rawValue { flags |= 0x04 }
        }
        if flags != (present?.first ?? 0) || (present != nil && present?.count != 1) {
            global.set(PSBTGlobalType.txModifiable, value: [flags])
        }
    }

    private mutating func signInput(_ i: Int, source: PSBTKeySource, options: PSBTSigningOptions, spent: (output: TxOutput, proven: Bool)?,
                                    cache: SighashCache, report: inout PSBTSigningReport) throws {
        let map = inputs[i]
        if map.isFinalized { report.skipped.append((i, "already finalized")); return }
        // BIP174's signer checks hold for every input, ours or not: an inconsistent PSBT is refused whole.
        if let (utxo, _) = spent { try InputSpend.checkConsistency(map, utxo: utxo) }
        let ecdsaKeys = map.derivations(type: PSBTInputType.bip32Derivation).filter { source.owns(publicKey: $0.publicKey, origin: $0.origin) }
        let tapKeys = map.tapDerivations(type: PSBTInputType.tapBIP32Derivation).filter { source.owns(publicKey: $0.xOnlyKey, origin: $0.origin.origin) }
        if ecdsaKeys.isEmpty && tapKeys.isEmpty { report.skipped.append((i, "no key of this signer is listed for it")); return }
        guard let (utxo, proven) = spent else {
            throw PSBTError(.signing, "no UTXO data: the input has neither non_witness_utxo nor witness_utxo, so the amount and script being spent are unknown; ask the PSBT's creator (updater) to add them")
        }
        let spend = try InputSpend.resolve(map, utxo: utxo)
        switch spend.sigVersion {
        case .legacy:
            guard proven else {
                throw PSBTError(.signing, "a \(spend.form.rawValue) (non-segwit) input needs non_witness_utxo, the previous transaction; it has only a witness_utxo, which BIP174 forbids for non-witness inputs")
            }
        case .witnessV0:
            guard proven || options.allowWitnessUTXOOnly else {
                throw PSBTError(.signing, "a \(spend.form.rawValue) input has only witness_utxo, so its amount is not proven (BIP143 fee attack); add non_witness_utxo (the previous transaction), or accept the risk with allow_witness_utxo / --allow-witness-utxo")
            }
        case .taproot:
            break
        }
        let type = try sighashType(for: map, spend: spend, options: options, index: i, outputCount: cache.transaction.outputs.count)
        if spend.sigVersion == .taproot {
            try signTaproot(i, spend: spend, keys: tapKeys, type: type, source: source, cache: cache, report: &report)
            return
        }
        let digest = spend.sigVersion == .legacy
            ? try cache.legacy(input: i, scriptCode: spend.scriptCode, type: type)
            : try cache.segwitV0(input: i, scriptCode: spend.scriptCode, amount: utxo.value, type: type)
        var signedAny = false
        for (keyBytes, origin) in ecdsaKeys where spend.uses(keyBytes) {
            if spend.sigVersion == .witnessV0, keyBytes.count != 33 {
                throw PSBTError(.signing, "key \(Hex.encode(keyBytes)) is uncompressed, which segwit forbids (BIP143 policy)")
            }
            guard let signature = try source.signECDSA(digest: digest, publicKey: keyBytes, origin: origin) else { continue }
            inputs[i].set(PSBTInputType.partialSig, keyData: keyBytes, value: signature.der + [UInt8(truncatingIfNeeded: type.rawValue)])
            report.signatures.append(.init(input: i, publicKey: keyBytes, origin: origin, form: spend.form.rawValue, sighash: type))
            signedAny = true
        }
        if !signedAny { report.skipped.append((i, "keys of this signer are listed, but the \(spend.form.rawValue) script does not use them")) }
    }

    private mutating func signTaproot(_ i: Int, spend: InputSpend, keys: [(xOnlyKey: [UInt8], origin: TapKeyOrigin)], type: SighashType,
                                      source: PSBTKeySource, cache: SighashCache, report: inout PSBTSigningReport) throws {
        let keyPath = keys.filter { $0.origin.leafHashes.isEmpty }
        guard !keyPath.isEmpty else {
            report.skipped.append((i, "keys of this signer appear only in taproot script leaves; script-path signing is not supported"))
            return
        }
        guard let internalBytes = inputs[i].tapInternalKey else {
            throw PSBTError(.signing, "a taproot input needs tap_internal_key (PSBT_IN_TAP_INTERNAL_KEY) to sign with the key path")
        }
        let internalKey = try XOnlyPublicKey(bytes: internalBytes)
        let merkleRoot = inputs[i].tapMerkleRoot
        guard try internalKey.taprootOutputKey(merkleRoot: merkleRoot).bytes == spend.outputKey else {
            throw PSBTError(.signing, "tap_internal_key\(merkleRoot == nil ? "" : " and tap_merkle_root") do not give the output key being spent; the PSBT is inconsistent")
        }
        guard let (_, origin) = keyPath.first(where: { $0.xOnlyKey == internalBytes }) else {
            report.skipped.append((i, "the signer's taproot key is not the input's internal key"))
            return
        }
        // Not the PSBT's fault: the other inputs are signed, this one is reported (as HWI and walletprocesspsbt do).
        guard source.supportsSchnorr else {
            report.skipped.append((i, "a taproot input, and this signer cannot make Schnorr (BIP340) signatures (Keycard applet 3.x signs ECDSA only); sign it with a 4.x card or software keys"))
            return
        }
        let digest = try cache.taproot(input: i, type: type)
        guard let signature = try source.signSchnorr(digest: digest, internalKey: internalKey, origin: origin.origin, merkleRoot: merkleRoot) else {
            report.skipped.append((i, "the signer does not hold the internal key"))
            return
        }
        inputs[i].set(PSBTInputType.tapKeySig, value: type == .default ? signature : signature + [UInt8(type.rawValue)])
        report.signatures.append(.init(input: i, publicKey: internalBytes, origin: origin.origin, form: spend.form.rawValue, sighash: type))
    }

    private func sighashType(for map: PSBTMap, spend: InputSpend, options: PSBTSigningOptions, index: Int, outputCount: Int) throws -> SighashType {
        let named = map.sighashType.map(SighashType.init(rawValue:))
        let type: SighashType
        if let requested = options.sighashType {
            if let named, named != requested {
                throw PSBTError(.signing, "the PSBT asks for sighash \(named) on this input, not \(requested); sign without choosing a type, or ask the creator to change PSBT_IN_SIGHASH_TYPE")
            }
            type = requested
        } else {
            type = named ?? (spend.sigVersion == .taproot ? .default : .all)
        }
        let allowed = spend.sigVersion == .taproot ? [.default] + SighashType.standard : SighashType.standard
        guard allowed.contains(type) else {
            throw PSBTError(.signing, "sighash type \(type) is not a standard type for a \(spend.form.rawValue) input (ALL, NONE, SINGLE, each optionally |ANYONECANPAY\(spend.sigVersion == .taproot ? ", or DEFAULT" : ""))")
        }
        if type.rawValue & 3 == SighashType.single.rawValue, index >= outputCount {
            throw PSBTError(.signing, "SIGHASH_SINGLE on input \(index) has no output \(index) to sign; such a signature would let anyone spend the input (the SIGHASH_SINGLE bug)")
        }
        return type
    }
}
