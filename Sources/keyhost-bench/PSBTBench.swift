// PSBT signing figures for scripts/bench: a 100-input P2WPKH PSBT signed with software keys (against the
// C baseline's bare libsecp256k1 signatures), and with the software Keycard in process (APDUs per input).
import KeyhostBitcoinCard
import KeyhostBitcoin
import KeyhostCard
import KeyhostCrypto

enum PSBTBench {
    static let inputCount = 100

    /// A 100-input P2WPKH PSBT as a wallet would hand it over: each input with its previous transaction
    /// (non_witness_utxo), witness_utxo and BIP32 origin m/84'/1'/0'/0/i under `master`.
    static func psbt(master: HDNode) throws -> (psbt: PSBT, keys: [PrivateKey]) {
        let account = try master.derive("m/84'/1'/0'/0")
        var keys = [PrivateKey]()
        var previous = [BitcoinTransaction]()
        var tx = BitcoinTransaction(version: 2, lockTime: 0)
        for i in 0..<inputCount {
            let node = try account.derive(child: UInt32(i))
            guard let key = node.privateKey else { throw PSBTError(.signing, "no private key") }
            keys.append(key)
            let funding = BitcoinTransaction(
                version: 2,
                inputs: [TxInput(previousOutput: OutPoint(txid: Hash.sha256(Array("funding \(i)".utf8)), index: 0))],
                outputs: [TxOutput(value: 100_000 + UInt64(i), scriptPubKey: Script.p2wpkh(node.publicKey.hash160))])
            previous.append(funding)
            tx.inputs.append(TxInput(previousOutput: OutPoint(txid: funding.txid, index: 0), sequence: 0xffff_fffd))
        }
        tx.outputs = [TxOutput(value: 9_000_000, scriptPubKey: Script.p2wpkh([UInt8](repeating: 7, count: 20)))]
        var psbt = try PSBT(unsignedTransaction: tx)
        let fingerprint = master.fingerprint
        for i in 0..<inputCount {
            psbt.inputs[i].set(PSBTInputType.nonWitnessUTXO, value: previous[i].serialized())
            psbt.inputs[i].set(PSBTInputType.witnessUTXO, value: previous[i].outputs[0].serialized)
            let origin = KeyOrigin(fingerprint: fingerprint, path: try DerivationPath("m/84'/1'/0'/0/\(i)"))
            psbt.inputs[i].set(PSBTInputType.bip32Derivation, keyData: keys[i].publicKey.compressed, value: origin.bytes)
        }
        return (psbt, keys)
    }

    /// Signs a copy of `psbt` and folds every signature into the checksum; returns the last one's hex.
    static func sign(_ psbt: PSBT, with source: PSBTKeySource, _ sum: inout FNV) throws -> String {
        var copy = psbt
        let report = try copy.sign(with: source)
        guard report.signatures.count == inputCount else { throw PSBTError(.signing, "signed \(report.signatures.count) of \(inputCount)") }
        var last: [UInt8] = []
        for map in copy.inputs {
            last = map.partialSignatures.first?.signature ?? []
            sum.add(last)
        }
        return Hex.encode(last)
    }
}

/// A channel that counts the APDUs a command set sends to the card behind it.
final class CountingChannel: CardChannel {
    let inner: CardChannel
    var count = 0
    init(_ inner: CardChannel) { self.inner = inner }
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        count += 1
        return try inner.transmit(apdu)
    }
}
