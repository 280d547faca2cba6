import KeyhostServices
import KeyhostRecord
import ArgumentParser
import KeyhostCrypto
import KeyhostTokens
import KeyhostWallet

/// `keyhost token inspect FILE`: shows tokens without running anything.
struct TokenInspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show the tokens in a file (fields, program size and hash, signature) without running them.",
        discussion: "Exit status: 0 when every token's signature is valid, 1 when one is not or the file cannot be read."
    )

    @Argument(help: ArgumentHelp("A file of armoured tokens ('khtok1:…' lines), - for standard input, or the id (unique hex prefix) of a token in the wallet.", valueName: "file|id"))
    var file: String

    @OptionGroup var options: WalletOptions

    @Flag(help: "Print JSON: {\"tokens\": [...]} with bytes as hex.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            let wallet = try existingWallet()
            let tokens: [SignedToken]
            if file != "-", !SourceFile.exists(file), file.count >= 4, file.allSatisfy(\.isHexDigit) {
                guard let wallet else { throw Failure.kind("not_found", "\(file) is neither a file nor, with no wallet, a token id") }
                tokens = [try wallet.store.find(idPrefix: file).token]
            } else {
                tokens = try TokenArmor.tokens(in: try readTokenFile(file), source: file)
            }
            let states = try tokens.map { try wallet?.store.token(id: $0.token.id) }
            if json {
                print(Record.object([("tokens", .array(zip(tokens, states).map { signed, stored in
                    Record(token: signed).setting("state", .string(stored?.state.rawValue.lowercased()))
                }))]).json())
            } else {
                for (i, (signed, stored)) in zip(tokens, states).enumerated() {
                    if i > 0 { print("") }
                    print(Self.describe(signed, number: i + 1, of: tokens.count))
                    if wallet != nil {
                        var state = stored.map { $0.state.rawValue } ?? "not in the wallet"
                        if let spent = stored?.spentAt { state += " at \(UnixTime.iso8601(spent))" }
                        if let receipt = stored?.receiptID { state += ", receipt \(Hex.encode(receipt))" }
                        print("  " + "wallet".padding(10) + "  " + state)
                    }
                }
            }
            if tokens.contains(where: { !$0.signatureIsValid }) { throw ExitCode(1) }
        }
    }

    /// The wallet, when one exists where --wallet (or the default) points; inspecting never creates one.
    private func existingWallet() throws -> TokenWallet? {
        let path = try options.path()
        guard SourceFile.exists(path) else { return nil }
        return try TokenWallet(path: path)
    }

    static func describe(_ signed: SignedToken, number: Int, of count: Int) -> String {
        let t = signed.token
        var lines = ["token \(number) of \(count)"]
        func row(_ name: String, _ value: String) { lines.append("  " + name.padding(10) + "  " + value) }
        row("id", Hex.encode(t.id))
        row("issuer", Hex.encode(t.issuer.bytes))
        row("value", "\(t.value) \(t.unit)")
        row("valid", window(t))
        row("holder", Hex.encode(t.holder.compressed))
        row("program", "\(t.program.kind.rawValue), \(t.program.code.count) bytes, sha256 \(Hex.encode(t.programHash))")
        if !t.policy.isEmpty { row("limits", Self.limits(t.policy)) }
        if let meta = t.metadata { row("metadata", meta.diagnostic) }
        row("signature", signed.signatureIsValid ? "valid (BIP340 by the issuer)" : "INVALID: not the issuer's signature over this token")
        return lines.joined(separator: "\n")
    }

    static func limits(_ p: TokenPolicy) -> String {
        var parts: [String] = []
        if let n = p.instructions { parts.append("\(n) instructions") }
        if let m = p.memoryBytes { parts.append("\(m) bytes of memory") }
        if let t = p.timeMillis { parts.append("\(t) ms") }
        if let age = p.maxDepositAge { parts.append("deposits at most \(age) s old") }
        return parts.joined(separator: ", ")
    }

    static func window(_ t: Token) -> String {
        switch (t.notBefore, t.expires) {
        case (nil, nil): return "always"
        case (let from?, nil): return "from \(UnixTime.iso8601(from))"
        case (nil, let until?): return "until \(UnixTime.iso8601(until)) (exclusive)"
        case (let from?, let until?): return "from \(UnixTime.iso8601(from)) until \(UnixTime.iso8601(until)) (exclusive)"
        }
    }
}

/// Reads a token file or standard input ("-"), at most `SourceFile.limit` bytes.
func readTokenFile(_ path: String) throws -> [UInt8] {
    do {
        return path == "-" ? try SourceFile.readStandardInput() : try SourceFile.read(path)
    } catch {
        throw Failure.kind("io", "cannot read \(error)")
    }
}
