import ArgumentParser
import KeyhostTokens

/// `keyhost token inspect FILE`: shows tokens without running anything.
struct TokenInspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show the tokens in a file (fields, program size and hash, signature) without running them.",
        discussion: "Exit status: 0 when every token's signature is valid, 1 when one is not or the file cannot be read."
    )

    @Argument(help: ArgumentHelp("A file of armoured tokens ('khtok1:…' lines), or - for standard input.", valueName: "file"))
    var file: String

    @Flag(help: "Print JSON: {\"tokens\": [...]} with bytes as hex.")
    var json = false

    func run() throws {
        try Failure.exitOnError {
            let text = try readTokenFile(file)
            let tokens = try TokenArmor.tokens(in: text, source: file)
            if json {
                try printJSON(["tokens": tokens.map(Self.json)])
            } else {
                for (i, signed) in tokens.enumerated() {
                    if i > 0 { print("") }
                    print(Self.describe(signed, number: i + 1, of: tokens.count))
                }
            }
            if tokens.contains(where: { !$0.signatureIsValid }) { throw ExitCode(1) }
        }
    }

    static func describe(_ signed: SignedToken, number: Int, of count: Int) -> String {
        let t = signed.token
        var lines = ["token \(number) of \(count)"]
        func row(_ name: String, _ value: String) { lines.append("  " + name.padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + value) }
        row("id", hexString(t.id))
        row("issuer", hexString(t.issuer.bytes))
        row("value", "\(t.value) \(t.unit)")
        row("valid", window(t))
        row("holder", hexString(t.holder.compressed))
        row("program", "\(t.program.kind.rawValue), \(t.program.code.count) bytes, sha256 \(hexString(t.programHash))")
        if let meta = t.metadata { row("metadata", meta.diagnostic) }
        row("signature", signed.signatureIsValid ? "valid (BIP340 by the issuer)" : "INVALID: not the issuer's signature over this token")
        return lines.joined(separator: "\n")
    }

    static func window(_ t: Token) -> String {
        switch (t.notBefore, t.expires) {
        case (nil, nil): return "always"
        case (let from?, nil): return "from \(UnixTime.iso8601(from))"
        case (nil, let until?): return "until \(UnixTime.iso8601(until)) (exclusive)"
        case (let from?, let until?): return "from \(UnixTime.iso8601(from)) until \(UnixTime.iso8601(until)) (exclusive)"
        }
    }

    static func json(_ signed: SignedToken) -> [String: Any] {
        let t = signed.token
        var out: [String: Any] = [
            "id": hexString(t.id), "issuer": hexString(t.issuer.bytes), "value": t.value, "unit": t.unit,
            "holder": hexString(t.holder.compressed), "program_kind": t.program.kind.rawValue, "program_size": t.program.code.count,
            "program_sha256": hexString(t.programHash), "signature": hexString(signed.signature), "signature_valid": signed.signatureIsValid,
        ]
        if let v = t.notBefore { out["not_before"] = v }
        if let v = t.expires { out["expires"] = v }
        if let meta = t.metadata { out["metadata"] = meta.diagnostic }
        return out
    }
}

/// Reads a token file or standard input ("-"), at most `SourceFile.limit` bytes.
func readTokenFile(_ path: String) throws -> [UInt8] {
    do {
        return path == "-" ? try SourceFile.readStandardInput() : try SourceFile.read(path)
    } catch {
        throw Failure.message("cannot read \(error)")
    }
}
