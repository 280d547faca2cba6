import Foundation
import KeyhostCrypto
@testable import KeyhostCard

let tapCVC = SecretBytes(Array("123456".utf8))
let wrongTapCVC = SecretBytes(Array("654321".utf8))

/// A software tap card and a client on it, both seeded; the card never answers 205 unless asked to.
func makeTapCard(_ kind: SoftCKTapState.Kind, seed: String = "tap", unlucky: Bool = false, store: SoftCKTapStore? = nil) throws -> (soft: SoftCKTap, client: CKTapCommandSet) {
    let options = SoftCKTapOptions(kind: kind, randomSeed: Array(seed.utf8), unluckySigning: unlucky)
    let soft = try store.map { try SoftCKTap(store: $0, options: options) } ?? SoftCKTap(options: options)
    return (soft, CKTapCommandSet(channel: soft, random: SeededRandom(seed: "client-" + seed)))
}

/// A TAPSIGNER set up with a fixed chain code.
func makeReadyTapsigner(seed: String = "tap", unlucky: Bool = false) throws -> (soft: SoftCKTap, client: CKTapCommandSet) {
    let pair = try makeTapCard(.tapsigner, seed: seed, unlucky: unlucky)
    try pair.client.select()
    try pair.client.setup(chainCode: Hash.sha256(Array("chain code".utf8)), cvc: tapCVC)
    return pair
}

let testRoot = SoftCKTap.testFactoryRootKey().publicKey.compressed

/// Runs Tests/Oracles/<script> with the repository's venv (a missing venv fails, never skips).
func tapOracle(_ arguments: [String], input: String? = nil, script: String = "cktap_oracle.py") throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let process = Process()
    process.executableURL = root.appendingPathComponent(".venv/bin/python")
    process.arguments = [root.appendingPathComponent("Tests/Oracles/\(script)").path] + arguments
    let out = Pipe(), stdin = Pipe()
    process.standardOutput = out
    process.standardInput = stdin
    try process.run()
    let writer = Thread {
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
    }
    writer.start()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CKTapError.invalidArgument("oracle \(script) \(arguments.first ?? "") exited with \(process.terminationStatus)") }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func hexOf(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A channel answering whatever the test scripts, for the client's parsers.
final class ScriptedChannel: CardChannel {
    var answers: [ResponseAPDU]
    init(_ answers: [ResponseAPDU]) { self.answers = answers }
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        guard !answers.isEmpty else { throw CardChannelError.connectionLost }
        return answers.removeFirst()
    }
}
