import KeyhostCrypto

/// The per-field rules of BIP174, BIP370 and BIP371, applied on parse so a PSBT in memory is well formed.
enum PSBTValidation {
    static func fail(_ message: String) -> PSBTError { PSBTError.invalid(message) }

    /// BIP371: an internal key is an x-only point on the curve; one that is not can never sign or verify.
    static func xOnlyKey(_ bytes: [UInt8], _ name: String) throws {
        guard (try? XOnlyPublicKey(bytes: bytes)) != nil else { throw fail("\(name) is not a valid x-only public key (not a point on secp256k1)") }
    }

    /// Fields that exist only in version 2 (BIP370), by scope.
    static let v2Global: Set<UInt64> = [PSBTGlobalType.txVersion, PSBTGlobalType.fallbackLocktime, PSBTGlobalType.inputCount,
                                        PSBTGlobalType.outputCount, PSBTGlobalType.txModifiable]
    static let v2Input: Set<UInt64> = [PSBTInputType.previousTxid, PSBTInputType.outputIndex, PSBTInputType.sequence,
                                       PSBTInputType.requiredTimeLocktime, PSBTInputType.requiredHeightLocktime]
    static let v2Output: Set<UInt64> = [PSBTOutputType.amount, PSBTOutputType.script]

    static func checkGlobal(_ map: PSBTMap, version: UInt32) throws {
        for field in map.fields {
            let name = PSBTFieldNames.global(field.type)
            if version == 0, v2Global.contains(field.type) { throw fail("\(name) is a version 2 field, but this PSBT is version 0") }
            switch field.type {
            case PSBTGlobalType.unsignedTx:
                try noKeyData(field, name)
                guard version == 0 else { throw fail("a version 2 PSBT must not have PSBT_GLOBAL_UNSIGNED_TX") }
                let tx = try BitcoinTransaction.parse(field.value, allowWitness: false)
                if let i = tx.inputs.firstIndex(where: { !$0.scriptSig.isEmpty }) {
                    throw fail("the unsigned transaction's input \(i) has a scriptSig; signatures belong in the input maps")
                }
            case PSBTGlobalType.xpub:
                guard field.keyData.count == 78 else { throw fail("\(name) key must hold a 78-byte extended key, got \(field.keyData.count) bytes") }
                try keyOrigin(field.value, name)
            case PSBTGlobalType.txVersion, PSBTGlobalType.fallbackLocktime, PSBTGlobalType.version:
                try noKeyData(field, name)
                try length(field, 4, name)
            case PSBTGlobalType.inputCount, PSBTGlobalType.outputCount:
                try noKeyData(field, name)
                var reader = ByteReader(field.value, what: name, kind: .invalidPSBT)
                _ = try reader.compactSize(limit: UInt64.max)
                guard reader.isAtEnd else { throw fail("\(name) must be exactly one compact size") }
            case PSBTGlobalType.txModifiable:
                try noKeyData(field, name)
                try length(field, 1, name)
            default: break
            }
        }
        if version == 2 {
            for (type, name) in [(PSBTGlobalType.txVersion, "PSBT_GLOBAL_TX_VERSION"), (PSBTGlobalType.inputCount, "PSBT_GLOBAL_INPUT_COUNT"),
                                 (PSBTGlobalType.outputCount, "PSBT_GLOBAL_OUTPUT_COUNT")] where !map.contains(type) {
                throw fail("a version 2 PSBT needs \(name)")
            }
        }
    }

    static func count(_ map: PSBTMap, _ type: UInt64, _ name: String) throws -> Int {
        guard let value = map.value(type) else { throw fail("a version 2 PSBT needs \(name)") }
        var reader = ByteReader(value, what: name, kind: .invalidPSBT)
        let count = try reader.compactSize(limit: UInt64(PSBT.defaultMaxSize))
        return Int(count)
    }

    static func checkInput(_ map: PSBTMap, version: UInt32) throws {
        for field in map.fields {
            let name = PSBTFieldNames.input(field.type)
            if version == 0, v2Input.contains(field.type) { throw fail("\(name) is a version 2 field, but this PSBT is version 0") }
            switch field.type {
            case PSBTInputType.nonWitnessUTXO:
                try noKeyData(field, name)
                _ = try BitcoinTransaction.parse(field.value)
            case PSBTInputType.witnessUTXO:
                try noKeyData(field, name)
                _ = try PSBTMap.parseTxOut(field.value)
            case PSBTInputType.partialSig:
                try publicKeyData(field, name)
                guard !field.value.isEmpty else { throw fail("\(name) has an empty signature") }
            case PSBTInputType.sighashType, PSBTInputType.outputIndex, PSBTInputType.sequence:
                try noKeyData(field, name)
                try length(field, 4, name)
            case PSBTInputType.redeemScript, PSBTInputType.witnessScript, PSBTInputType.finalScriptSig, PSBTInputType.porCommitment:
                try noKeyData(field, name)
            case PSBTInputType.bip32Derivation:
                try publicKeyData(field, name)
                try keyOrigin(field.value, name)
            case PSBTInputType.finalScriptWitness:
                try noKeyData(field, name)
                _ = try PSBTMap.parseWitness(field.value)
            case PSBTInputType.ripemd160, PSBTInputType.hash160:
                guard field.keyData.count == 20 else { throw fail("\(name) key must hold a 20-byte hash") }
            case PSBTInputType.sha256, PSBTInputType.hash256:
                guard field.keyData.count == 32 else { throw fail("\(name) key must hold a 32-byte hash") }
            case PSBTInputType.previousTxid:
                try noKeyData(field, name)
                try length(field, 32, name)
            case PSBTInputType.requiredTimeLocktime:
                try noKeyData(field, name)
                try length(field, 4, name)
                guard let time = LE.uint32(field.value), time >= 500_000_000 else {
                    throw fail("\(name) must be a time (500000000 or more); a block height goes in PSBT_IN_REQUIRED_HEIGHT_LOCKTIME")
                }
            case PSBTInputType.requiredHeightLocktime:
                try noKeyData(field, name)
                try length(field, 4, name)
                guard let height = LE.uint32(field.value), height > 0, height < 500_000_000 else {
                    throw fail("\(name) must be a block height from 1 to 499999999; a time goes in PSBT_IN_REQUIRED_TIME_LOCKTIME")
                }
            case PSBTInputType.tapKeySig:
                try noKeyData(field, name)
                guard field.value.count == 64 || field.value.count == 65 else { throw fail("\(name) must be a 64- or 65-byte Schnorr signature, got \(field.value.count) bytes") }
            case PSBTInputType.tapScriptSig:
                guard field.keyData.count == 64 else { throw fail("\(name) key must be a 32-byte x-only key and a 32-byte leaf hash, got \(field.keyData.count) bytes") }
                guard field.value.count == 64 || field.value.count == 65 else { throw fail("\(name) must be a 64- or 65-byte Schnorr signature, got \(field.value.count) bytes") }
            case PSBTInputType.tapLeafScript:
                let size = field.keyData.count
                guard size >= 33, size <= 33 + 128 * 32, (size - 33) % 32 == 0 else {
                    throw fail("\(name) key must be a control block of 33 + 32·k bytes (k ≤ 128), got \(size) bytes")
                }
                guard !field.value.isEmpty else { throw fail("\(name) must hold a script and its leaf version") }
            case PSBTInputType.tapBIP32Derivation:
                guard field.keyData.count == 32 else { throw fail("\(name) key must be a 32-byte x-only key, got \(field.keyData.count) bytes") }
                _ = try PSBTMap.parseTapOrigin(field.value, name)
            case PSBTInputType.tapInternalKey:
                try noKeyData(field, name)
                try length(field, 32, name)
                try xOnlyKey(field.value, name)
            case PSBTInputType.tapMerkleRoot:
                try noKeyData(field, name)
                try length(field, 32, name)
            default: break
            }
        }
        if version == 2 {
            guard map.contains(PSBTInputType.previousTxid) else { throw fail("a version 2 input needs PSBT_IN_PREVIOUS_TXID") }
            guard map.contains(PSBTInputType.outputIndex) else { throw fail("a version 2 input needs PSBT_IN_OUTPUT_INDEX") }
        }
    }

    static func checkOutput(_ map: PSBTMap, version: UInt32) throws {
        for field in map.fields {
            let name = PSBTFieldNames.output(field.type)
            if version == 0, v2Output.contains(field.type) { throw fail("\(name) is a version 2 field, but this PSBT is version 0") }
            switch field.type {
            case PSBTOutputType.redeemScript, PSBTOutputType.witnessScript, PSBTOutputType.script:
                try noKeyData(field, name)
            case PSBTOutputType.bip32Derivation:
                try publicKeyData(field, name)
                try keyOrigin(field.value, name)
            case PSBTOutputType.amount:
                try noKeyData(field, name)
                try length(field, 8, name)
                guard let amount = LE.uint64(field.value), amount <= BitcoinTransaction.maxMoney else {
                    throw fail("\(name) is above 21 million BTC (or negative)")
                }
            case PSBTOutputType.tapInternalKey:
                try noKeyData(field, name)
                try length(field, 32, name)
                try xOnlyKey(field.value, name)
            case PSBTOutputType.tapTree:
                try noKeyData(field, name)
                try tapTree(field.value, name)
            case PSBTOutputType.tapBIP32Derivation:
                guard field.keyData.count == 32 else { throw fail("\(name) key must be a 32-byte x-only key, got \(field.keyData.count) bytes") }
                _ = try PSBTMap.parseTapOrigin(field.value, name)
            default: break
            }
        }
        if version == 2 {
            guard map.contains(PSBTOutputType.amount) else { throw fail("a version 2 output needs PSBT_OUT_AMOUNT") }
            guard map.contains(PSBTOutputType.script) else { throw fail("a version 2 output needs PSBT_OUT_SCRIPT") }
        }
    }

    static func noKeyData(_ field: PSBTField, _ name: String) throws {
        guard field.key.count == field.keyDataStart else {
            throw fail("\(name) key must be the type byte alone, but it carries \(field.key.count - field.keyDataStart) more bytes")
        }
    }

    static func length(_ field: PSBTField, _ count: Int, _ name: String) throws {
        guard field.value.count == count else { throw fail("\(name) must be \(count) bytes, got \(field.value.count)") }
    }

    static func publicKeyData(_ field: PSBTField, _ name: String) throws {
        let data = field.keyData
        guard data.count == 33 || data.count == 65 else {
            throw fail("\(name) key must hold a 33- or 65-byte public key, got \(data.count) bytes")
        }
        do { _ = try PublicKey(bytes: data) } catch { throw fail("\(name) key holds an invalid public key: \(error)") }
    }

    static func keyOrigin(_ value: [UInt8], _ name: String) throws {
        guard value.count >= 4, value.count % 4 == 0, value.count / 4 - 1 <= DerivationPath.maxDepth else {
            throw fail("\(name) must be a 4-byte fingerprint and 4-byte path indexes, got \(value.count) bytes")
        }
    }

    static func tapTree(_ value: [UInt8], _ name: String) throws {
        guard !value.isEmpty else { throw fail("\(name) must list at least one leaf") }
        var reader = ByteReader(value, what: name, kind: .invalidPSBT)
        while !reader.isAtEnd {
            let depth = try reader.byte()
            guard depth <= 128 else { throw fail("\(name) has a leaf at depth \(depth), deeper than 128") }
            _ = try reader.byte()
            _ = try reader.varBytes()
        }
    }
}

/// Field names as BIP174/370/371 spell them, for messages and inspect output.
public enum PSBTFieldNames {
    public static func global(_ type: UInt64) -> String {
        switch type {
        case 0x00: return "PSBT_GLOBAL_UNSIGNED_TX"
        case 0x01: return "PSBT_GLOBAL_XPUB"
        case 0x02: return "PSBT_GLOBAL_TX_VERSION"
        case 0x03: return "PSBT_GLOBAL_FALLBACK_LOCKTIME"
        case 0x04: return "PSBT_GLOBAL_INPUT_COUNT"
        case 0x05: return "PSBT_GLOBAL_OUTPUT_COUNT"
        case 0x06: return "PSBT_GLOBAL_TX_MODIFIABLE"
        case 0xfb: return "PSBT_GLOBAL_VERSION"
        case 0xfc: return "PSBT_GLOBAL_PROPRIETARY"
        default: return "global type 0x\(String(type, radix: 16))"
        }
    }

    public static func input(_ type: UInt64) -> String {
        let names: [UInt64: String] = [
            0x00: "PSBT_IN_NON_WITNESS_UTXO", 0x01: "PSBT_IN_WITNESS_UTXO", 0x02: "PSBT_IN_PARTIAL_SIG", 0x03: "PSBT_IN_SIGHASH_TYPE",
            0x04: "PSBT_IN_REDEEM_SCRIPT", 0x05: "PSBT_IN_WITNESS_SCRIPT", 0x06: "PSBT_IN_BIP32_DERIVATION", 0x07: "PSBT_IN_FINAL_SCRIPTSIG",
            0x08: "PSBT_IN_FINAL_SCRIPTWITNESS", 0x09: "PSBT_IN_POR_COMMITMENT", 0x0a: "PSBT_IN_RIPEMD160", 0x0b: "PSBT_IN_SHA256",
            0x0c: "PSBT_IN_HASH160", 0x0d: "PSBT_IN_HASH256", 0x0e: "PSBT_IN_PREVIOUS_TXID", 0x0f: "PSBT_IN_OUTPUT_INDEX",
            0x10: "PSBT_IN_SEQUENCE", 0x11: "PSBT_IN_REQUIRED_TIME_LOCKTIME", 0x12: "PSBT_IN_REQUIRED_HEIGHT_LOCKTIME",
            0x13: "PSBT_IN_TAP_KEY_SIG", 0x14: "PSBT_IN_TAP_SCRIPT_SIG", 0x15: "PSBT_IN_TAP_LEAF_SCRIPT", 0x16: "PSBT_IN_TAP_BIP32_DERIVATION",
            0x17: "PSBT_IN_TAP_INTERNAL_KEY", 0x18: "PSBT_IN_TAP_MERKLE_ROOT", 0xfc: "PSBT_IN_PROPRIETARY",
        ]
        return names[type] ?? "input type 0x\(String(type, radix: 16))"
    }

    public static func output(_ type: UInt64) -> String {
        let names: [UInt64: String] = [
            0x00: "PSBT_OUT_REDEEM_SCRIPT", 0x01: "PSBT_OUT_WITNESS_SCRIPT", 0x02: "PSBT_OUT_BIP32_DERIVATION", 0x03: "PSBT_OUT_AMOUNT",
            0x04: "PSBT_OUT_SCRIPT", 0x05: "PSBT_OUT_TAP_INTERNAL_KEY", 0x06: "PSBT_OUT_TAP_TREE", 0x07: "PSBT_OUT_TAP_BIP32_DERIVATION",
            0xfc: "PSBT_OUT_PROPRIETARY",
        ]
        return names[type] ?? "output type 0x\(String(type, radix: 16))"
    }
}
