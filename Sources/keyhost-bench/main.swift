// keyhost-bench: KeyhostCrypto's speed on the work scripts/bench.d/crypto_baseline.c does in plain C.
//
//   keyhost-bench [repetitions] [figure]
//
// Prints one line per figure: "<name> <median ns per operation> <checksum>", with the same names,
// inputs and checksums (FNV-1a of every result, plus the last result) as the C baseline, so
// scripts/bench can put them side by side and check both computed the same thing.
// Only KeyhostCrypto's public API is used, the way a caller would use it; and, for card_sign_path (no C
// baseline: scripts/bench puts it next to the same work from Lua), KeyhostCard's KeycardCommandSet driving
// the software card in process.
import KeyhostBitcoinCard
import KeyhostBitcoin
import KeyhostCard
import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

var reps = 7
let arguments = CommandLine.arguments
if arguments.count > 1, let r = Int(arguments[1]), (1...64).contains(r) { reps = r }
let only: String? = arguments.count > 2 ? arguments[2] : nil

/// CPU time of this thread for the one-core figures (as the C baseline measures; time preempted by other load
/// is not counted), wall time for the batch API, which runs on several threads.
func nowNanoseconds(wall: Bool = false) -> Double {
    var ts = timespec()
    clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1e9 + Double(ts.tv_nsec)
}

struct FNV {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    mutating func add<C: Sequence>(_ bytes: C) where C.Element == UInt8 {
        for b in bytes { value = (value ^ UInt64(b)) &* 0x100_0000_01b3 }
    }
    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Runs `body(n, &checksum)` `reps` times and prints the median time per operation with the last run's checksum.
func report(_ name: String, _ n: Int, wall: Bool = false, _ body: (Int, inout FNV) throws -> String) rethrows {
    guard only == nil || only == name else { return }
    var times: [Double] = []
    var last = ""
    var checksum = FNV()
    for _ in 0..<reps {
        checksum = FNV()
        let t0 = nowNanoseconds(wall: wall)
        last = try body(n, &checksum)
        times.append((nowNanoseconds(wall: wall) - t0) / Double(n))
    }
    times.sort()
    let median = reps % 2 == 1 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2
    print("\(name) \(String(format1(median))) \(checksum.hex):\(last)")
    fflush(stdout)
}

func format1(_ x: Double) -> String {
    let tenths = Int((x * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

// The same inputs as the C baseline.
let seed = (0..<64).map { UInt8($0) }
let root = try HDNode(seed: seed)
let btcAccount = try root.derive("m/84'/0'/0'").neutered()
let btcChain = try btcAccount.derive(child: 0)
let ethChain = try root.derive("m/44'/60'/0'/0").neutered()

let messageCount = 4000
let digests: [[UInt8]] = (0..<messageCount).map { (i: Int) -> [UInt8] in
    let le: [UInt8] = withUnsafeBytes(of: UInt32(i).littleEndian) { Array($0) }
    return Hash.sha256(le)
}
let key = try PrivateKey(bytes: (1...32).map { UInt8($0) })
let publicKey = key.publicKey
let xOnly = publicKey.xOnly
let auxZero = [UInt8](repeating: 0, count: 32)
var ecdsaSignatures: [ECDSASignature] = []
var schnorrSignatures: [[UInt8]] = []

func ecdsaSign(_ n: Int, _ sum: inout FNV) throws -> String {
    var signatures: [ECDSASignature] = []
    signatures.reserveCapacity(n)
    for i in 0..<n {
        let signature = try key.sign(digest: digests[i])
        sum.add(signature.compact)
        signatures.append(signature)
    }
    ecdsaSignatures = signatures
    return Hex.encode(signatures[n - 1].compact)
}

func schnorrSign(_ n: Int, _ sum: inout FNV) throws -> String {
    var signatures: [[UInt8]] = []
    signatures.reserveCapacity(n)
    for i in 0..<n {
        let signature = try key.signSchnorr(message: digests[i], auxiliaryRandom: auxZero)
        sum.add(signature)
        signatures.append(signature)
    }
    schnorrSignatures = signatures
    return Hex.encode(signatures[n - 1])
}

func counted(_ valid: Int32, _ sum: inout FNV) -> String {
    withUnsafeBytes(of: valid) { sum.add($0) }  // as the C side hashes its int
    return "\(valid)"
}

try report("derive_p2wpkh", 4000) { n, sum in
    var last = ""
    for i in 0..<n {
        last = try btcChain.derive(child: UInt32(i)).address(.p2wpkh, coin: .bitcoin)
        sum.add(last.utf8)
    }
    return last
}

try report("derive_eip55", 4000) { n, sum in
    var last = ""
    for i in 0..<n {
        last = try ethChain.derive(child: UInt32(i)).address(.ethereum, coin: .ethereum)
        sum.add(last.utf8)
    }
    return last
}

// The batch API over all cores (scripts/bench also runs it pinned to one core). Its first 4000 addresses
// are derive_p2wpkh's, so the checksum covers those and must match the C derive_p2wpkh checksum.
try report("batch_p2wpkh", 16000, wall: true) { n, sum in
    let addresses = try btcAccount.addresses(.p2wpkh, coin: .bitcoin, chain: 0, from: 0, count: n)
    for address in addresses.prefix(4000) { sum.add(address.utf8) }
    return addresses[3999]
}

try report("ecdsa_sign", messageCount, ecdsaSign)

if only == "ecdsa_verify" { var scratch = FNV(); _ = try ecdsaSign(messageCount, &scratch) }
try report("ecdsa_verify", messageCount) { n, sum in
    var valid: Int32 = 0
    for i in 0..<n where try publicKey.verify(ecdsaSignatures[i], digest: digests[i]) { valid += 1 }
    return counted(valid, &sum)
}

try report("schnorr_sign", messageCount, schnorrSign)

if only == "schnorr_verify" { var scratch = FNV(); _ = try schnorrSign(messageCount, &scratch) }
report("schnorr_verify", messageCount) { n, sum in
    var valid: Int32 = 0
    for i in 0..<n where xOnly.verify(schnorr: schnorrSignatures[i], message: digests[i]) { valid += 1 }
    return counted(valid, &sum)
}

let mnemonic = try Mnemonic(phrase: "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about")
report("bip39_seed", 100) { n, sum in
    var last: [UInt8] = []
    for _ in 0..<n {
        let seed = mnemonic.seed(passphrase: "TREZOR")
        seed.withUnsafeBytes { sum.add($0) }
        last = seed.revealedBytes()
    }
    return Hex.encode(last)
}

// SIGN with a path (P1 derive, 3.2 secure channel v1) through KeycardCommandSet to SoftKeycard in this process:
// what `s:sign(digest, {path = ...})` on card.open{reader = "virtual"} does, without Lua. CPU time of both sides.
if only == nil || only == "card_sign_path" {
    let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v3_2))
    let client = KeycardCommandSet(channel: soft, trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
    _ = try client.select()
    try client.initialize(pin: SecretBytes(Array("123456".utf8)), puk: SecretBytes(Array("987654321098".utf8)), pairingSecret: PairingSecret.derive(password: "KeycardTest"))
    _ = try client.select()
    _ = try client.pair(password: "KeycardTest")
    try client.openSecureChannel()
    try client.verifyPIN(SecretBytes(Array("123456".utf8)))
    _ = try client.loadKey(seed: mnemonic.seed())
    let path = try KeyPath("m/44'/60'/0'/0/0")
    let digest = Hash.sha256(Array("keyhost card bench".utf8))
    for _ in 0..<20 { _ = try client.sign(digest: digest, mode: .derive(path)) }
    try report("card_sign_path", 500) { n, sum in
        var last: [UInt8] = []
        for _ in 0..<n {
            let signature = try client.sign(digest: digest, mode: .derive(path)).signature
            last = signature.r + signature.s
            sum.add(last)
        }
        return Hex.encode(last)
    }
}

// PSBT signing (PSBTBench.swift). Figures are per input, so they sit next to ecdsa_sign (one signature):
// psbt_sign_keys signs with keys known up front (what a bare libsecp256k1 loop has), psbt_sign_hd derives
// each input's key from the master on the way (one BIP32 child step per input, ancestors cached).
if only == nil || only?.hasPrefix("psbt_") == true {
    let master = try HDNode(seed: mnemonic.seed())
    let (unsigned, keys) = try PSBTBench.psbt(master: master)
    let keySet = PrivateKeySet(keys)
    try report("psbt_sign_keys", PSBTBench.inputCount) { _, sum in try PSBTBench.sign(unsigned, with: keySet, &sum) }
    try report("psbt_sign_hd", PSBTBench.inputCount) { _, sum in try PSBTBench.sign(unsigned, with: HDKeySource(master: master), &sum) }
    // The end-to-end command: parse the bytes, sign, serialize.
    let bytes = unsigned.serialized()
    try report("psbt_parse_sign_serialize", PSBTBench.inputCount) { _, sum in
        var psbt = try PSBT.parse(bytes)
        try psbt.sign(with: keySet)
        let out = psbt.serialized()
        sum.add(out.suffix(32))
        return Hex.encode(out.suffix(8))
    }
    if only == nil || only == "psbt_card" {
        // The 4.0 software card in process: APDUs per input once the session is open (the master
        // fingerprint's EXPORT KEY is per PSBT, counted apart).
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v4_0))
        let counter = CountingChannel(soft)
        let client = KeycardCommandSet(channel: counter, trustedCAKeys: [SoftKeycard.testCAKey().publicKey])
        _ = try client.select()
        try client.initialize(pin: SecretBytes(Array("123456".utf8)), puk: SecretBytes(Array("987654321098".utf8)))
        _ = try client.select()
        try client.openSecureChannel()
        try client.verifyPIN(SecretBytes(Array("123456".utf8)))
        _ = try client.loadKey(seed: mnemonic.seed())
        let before = counter.count
        let source = try PSBTCardKeySource(card: client)
        let setup = counter.count - before
        let start = counter.count
        let t0 = nowNanoseconds()
        var scratch = FNV()
        _ = try PSBTBench.sign(unsigned, with: source, &scratch)
        let perInput = (nowNanoseconds() - t0) / Double(PSBTBench.inputCount)
        let apdus = counter.count - start
        print("psbt_card apdus_per_input=\(Double(apdus) / Double(PSBTBench.inputCount)) setup_apdus=\(setup) ns_per_input=\(format1(perInput))")
    }
}
