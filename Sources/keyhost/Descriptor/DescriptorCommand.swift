import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord

/// `keyhost descriptor …`: output descriptors (BIP380–386, BIP389): checksums, normal form, addresses.
struct DescriptorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "descriptor",
        abstract: "Check, normalise and derive output descriptors (BIP380-386, BIP389 multipath).",
        discussion: """
            DESCRIPTOR is the text (quote it: it holds parentheses), or - to read it from standard input. keyhost takes \
            public descriptors: pkh, wpkh, sh(wpkh), tr(KEY), multi/sortedmulti under sh, wsh and sh(wsh) (also pk and \
            bare multi), with xpub/tpub keys, origins [fingerprint/path], /*, hardened steps (h or ') and <0;1> \
            multipath steps. A #checksum is verified when present. Private keys (xprv, WIF) are refused, never echoed.
            Examples:
              keyhost descriptor checksum "wpkh([d34db33f/84h/0h/0h]xpub6…/0/*)"
              keyhost descriptor addresses "wpkh([d34db33f/84h/0h/0h]xpub6…/<0;1>/*)" --count 5
              keyhost key xpub --descriptor | keyhost descriptor parse - --json
            """,
        subcommands: [DescriptorChecksumCommand.self, DescriptorParse.self, DescriptorAddresses.self]
    )

    /// Longest input read from standard input: room for the longest descriptor and surrounding whitespace.
    static let inputLimit = OutputDescriptor.maxLength + 1024

    /// The descriptor text an argument names: itself, or standard input for "-"; surrounding whitespace dropped.
    /// Text carrying a private key is refused here, before anything could print it.
    static func text(_ argument: String) throws -> String {
        let raw = argument == "-" ? String(decoding: try BoundedFile.readStandardInput(limit: inputLimit), as: UTF8.self) : argument
        let text = raw.trimmingWhitespaceAndNewlines()
        let findings = SecretDetector.findings(in: text)
        if findings.contains(.extendedPrivateKey) || findings.contains(.wif) {
            throw ValidationError("the descriptor holds a PRIVATE key (\(findings.contains(.wif) ? "WIF" : "xprv/tprv")), so it is not shown and not used: "
                + "keyhost takes public descriptors only (keyhost key xpub --descriptor prints one); if the key was real, consider it exposed")
        }
        return text
    }

    /// Runs `body` with keyhost's error reporting (descriptor errors carry their kind and position to --json).
    static func run(_ body: () throws -> Void) throws {
        try Failure.exitOnError(body)
    }
}

/// `keyhost descriptor checksum DESCRIPTOR`: the text with its BIP380 checksum.
struct DescriptorChecksumCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checksum",
        abstract: "Print the descriptor with its BIP380 checksum (an existing #checksum is verified).",
        discussion: "Works on any text in BIP380's character set, as Bitcoin Core's getdescriptorinfo checksum does; "
            + "use 'descriptor parse' to check the descriptor itself. --json prints {descriptor, checksum}."
    )

    @Argument(help: ArgumentHelp("The descriptor, or - for standard input.", valueName: "descriptor"))
    var descriptor: String

    @Flag(help: "Print JSON {descriptor, checksum}.")
    var json = false

    func run() throws {
        try DescriptorCommand.run {
            let (body, given) = try DescriptorChecksum.split(try DescriptorCommand.text(descriptor))
            let checksum = try given ?? DescriptorChecksum.compute(body)
            guard json else { print(body + "#" + checksum); return }
            print(Record.object([("descriptor", .string(body + "#" + checksum)), ("checksum", .string(checksum))]).json())
        }
    }
}

/// `keyhost descriptor parse DESCRIPTOR`: check it and print its normal form.
struct DescriptorParse: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parse",
        abstract: "Check a descriptor and print its normal form with checksum (one line per part of a multipath descriptor).",
        discussion: """
            Errors name the position (0-based character offset) and the problem. The normal form writes hex in lower case \
            and hardened steps as the text did (h, or ' when it used '). --json prints {descriptor, checksum, form, \
            is_range, multipath, network, threshold, keys: [{origin, kind, key, steps, wildcard, multipath}], descriptors}.
            """
    )

    @Argument(help: ArgumentHelp("The descriptor, or - for standard input.", valueName: "descriptor"))
    var descriptor: String

    @Flag(help: "Print JSON {descriptor, checksum, form, is_range, multipath, network, threshold, keys, descriptors}.")
    var json = false

    func run() throws {
        try DescriptorCommand.run {
            let parsed = try OutputDescriptor.parse(try DescriptorCommand.text(descriptor))
            if json { print(parsed.record.json()); return }
            print(parsed.description)
            if parsed.multipathCount > 1 {
                for part in parsed.multipath() { print(part.description) }
            }
        }
    }
}
