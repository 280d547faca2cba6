import ArgumentParser
import KeyhostRecord
import KeyhostServices
import KeyhostCrypto
import KeyhostPlayer
import KeyhostTokens
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// `keyhost token issue`: signs a new token as its issuer.
struct TokenIssue: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue",
        abstract: "Issue a token: sign a Lua program, a value and a holder key with the issuer's key.",
        discussion: """
            The issuer's key comes from the environment variable named by --issuer-key-env (never the command \
            line): a 32-byte private key in hex, or a BIP39 mnemonic (key at \(IssuerKey.mnemonicPath)). The \
            armoured token ('khtok1:…') goes to standard output, or to --output (created 0600, never overwritten).
            """
            + "\n" + HelpExamples.text(
                "keyhost token issue --program keyhost.cash --value 500 --unit EUR-cent --to 02…holder… --issuer-key-env ISSUER_KEY -o cash.tok")
    )

    @Option(help: ArgumentHelp("The token's Lua program (source): a file, or a module of keyhost's stdlib by name, such as keyhost.cash.", valueName: "file|module"))
    var program: String

    @Flag(help: "Ship the program as Lua 5.4 bytecode (runs only for wallets that trust this issuer).")
    var precompile = false

    @Option(help: ArgumentHelp("The amount, in the unit's smallest denomination.", valueName: "integer"))
    var value: UInt64

    @Option(help: ArgumentHelp("The unit: 1 to 32 printable ASCII characters, e.g. EUR-cent.", valueName: "unit"))
    var unit: String

    @Option(help: ArgumentHelp("The holder's public key: 33 bytes, compressed, in hex.", valueName: "hex"))
    var to: String

    @Option(help: ArgumentHelp("Not valid before: Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.", valueName: "time"))
    var notBefore: String?

    @Option(help: ArgumentHelp("Not valid from this time on: Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ.", valueName: "time"))
    var expires: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("The program's instruction budget (wallets cap it; default: the wallet's).", valueName: "count"))
    var instructionLimit: UInt64?

    @Option(parsing: .unconditional, help: ArgumentHelp("The program's memory cap in MiB (wallets cap it; default: the wallet's).", valueName: "mib"))
    var memoryLimit: UInt64?

    @Option(parsing: .unconditional, help: ArgumentHelp("The program's wall-clock limit in seconds (wallets cap it; default: the wallet's).", valueName: "seconds"))
    var timeLimit: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("The issuer's ledger takes a deposit link at most this many seconds after its time (default: any age).", valueName: "seconds"))
    var maxDepositAge: UInt64?

    @Option(help: ArgumentHelp("The environment variable holding the issuer's private key or mnemonic.", valueName: "name"))
    var issuerKeyEnv: String?

    @Flag(help: "Sign with an issuer key on a Keycard (applet 4.x: BIP340 Schnorr), at --issuer-path; PIN from KEYHOST_PIN, else a prompt.")
    var issuerCard = false

    @Option(help: ArgumentHelp("With --issuer-card: the issuer key's absolute path on the card, e.g. m/7419'/0'/0'.", valueName: "path"))
    var issuerPath: String?

    /// --reader, --card-state and --trusted-ca, as every command that opens a Keycard takes them.
    @OptionGroup var cardOptions: TokenCardOptions

    @Option(name: [.short, .long], help: ArgumentHelp("Write the token to this new file (mode 0600) instead of standard output.", valueName: "file"))
    var output: String?

    @Flag(help: "Print JSON {token, id, issuer, holder, value, unit, program_sha256, file}.")
    var json = false

    func validate() throws {
        if issuerCard == (issuerKeyEnv != nil) {
            throw ValidationError(issuerCard ? "give one issuer key: --issuer-key-env VAR or --issuer-card, not both"
                : "give the issuer's key: --issuer-key-env VAR, or --issuer-card with --issuer-path PATH")
        }
        if issuerCard && issuerPath == nil { throw ValidationError("--issuer-card needs --issuer-path PATH, the issuer key's path on the card, e.g. m/7419'/0'/0'") }
        if !issuerCard && issuerPath != nil { throw ValidationError("--issuer-path goes with --issuer-card") }
        if !issuerCard && cardOptions.given { throw ValidationError("--reader, --card-state and --trusted-ca go with --issuer-card") }
        try cardOptions.validate()
        if instructionLimit == 0 { throw ValidationError("--instruction-limit must be at least 1, got 0") }
        if let memoryLimit, !(1...(1 << 20)).contains(memoryLimit) {
            throw ValidationError("--memory-limit must be between 1 and 1048576 MiB, got \(memoryLimit)")
        }
        if let timeLimit, !(timeLimit >= 0.001 && timeLimit <= 3600) {
            throw ValidationError("--time-limit must be between 0.001 and 3600 seconds, got \(timeLimit)")
        }
        if let maxDepositAge, !(1...TokenPolicy.maxDepositAgeLimit).contains(maxDepositAge) {
            throw ValidationError("--max-deposit-age is in seconds, from 1 to \(TokenPolicy.maxDepositAgeLimit), got \(maxDepositAge)")
        }
        if let notBefore, UnixTime.parse(notBefore) == nil {
            throw ValidationError("--not-before must be Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, got \(notBefore.debugDescription)")
        }
        if let expires, UnixTime.parse(expires) == nil {
            throw ValidationError("--expires must be Unix seconds, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, got \(expires.debugDescription)")
        }
    }

    func run() throws {
        try Failure.exitOnError {
            var software: PrivateKey?
            if let issuerKeyEnv {
                guard let secret = getenv(issuerKeyEnv).map({ String(cString: $0) }), !secret.isEmpty else {
                    throw Failure.kind("no_secret", "the environment variable \(issuerKeyEnv) (--issuer-key-env) is not set: put the issuer's private key (hex) or mnemonic there")
                }
                software = try IssuerKey.from(secret: secret)
            }
            let holderBytes = try? Hex.decode(to)
            guard let holderBytes, holderBytes.count == 33, let holder = try? PublicKey(bytes: holderBytes) else {
                throw Failure.kind("invalid_argument", "--to must be the holder's compressed public key, 33 bytes in hex (66 digits), got \(to.debugDescription)")
            }
            var code: [UInt8]
            code = try Self.programSource(program)
            // The program must at least compile: a token that can never run is a mistake best caught now.
            let compiled = try Self.compile(code, chunkName: "=" + program, dump: precompile)
            if precompile { code = compiled }
            // The issuer's key: read from the environment above, or on a card, opened only now, once the
            // command line and the program checked out, so a mistake costs no PIN entry.
            var key: PrivateKey?
            var connection: SigningCard?
            var cardIssuer: CardIssuer?
            defer { connection?.close() }
            if let software { key = software } else {
                connection = try cardOptions.openSigner()
                do { cardIssuer = try CardIssuer(signer: connection!.signer, path: issuerPath!) } catch {
                    throw CardServiceError.from(error, command: "EXPORT KEY")
                }
            }
            let token = Token(
                id: secureRandomBytes(32), issuer: key?.publicKey.xOnly ?? cardIssuer!.key, value: value, unit: unit,
                notBefore: notBefore.flatMap(UnixTime.parse), expires: expires.flatMap(UnixTime.parse),
                program: TokenProgram(kind: precompile ? .luaBytecode : .luaSource, code: code), holder: holder,
                policy: TokenPolicy(
                    instructions: instructionLimit, memoryBytes: memoryLimit.map { $0 << 20 },
                    timeMillis: timeLimit.map { UInt64(($0 * 1000).rounded(.up)) }, maxDepositAge: maxDepositAge
                )
            )
            let signed: SignedToken
            if let key {
                signed = try SignedToken.issue(token, issuerKey: key)
            } else {
                do { signed = try cardIssuer!.issue(token) } catch { throw CardServiceError.from(error, command: "SIGN") }
            }
            let line = TokenArmor.armor(signed) + "\n"
            if let output { try OutputFile.create(output, text: line) }
            if json {
                print(Record.object([
                    ("token", .string(String(line.dropLast()))), ("id", .bytes(signed.token.id)), ("issuer", .bytes(signed.token.issuer.bytes)),
                    ("holder", .bytes(signed.token.holder.compressed)), ("value", .integer(signed.token.value)), ("unit", .string(signed.token.unit)),
                    ("program_sha256", .bytes(signed.token.programHash)), ("file", .string(output)),
                ]).json())
            } else if let output {
                OutputFile.note("issued token \(Hex.encode(signed.token.id.prefix(8)))… (\(value) \(unit)) into \(output)")
            } else {
                print(line, terminator: "")
            }
        }
    }

    /// The program's source: the file at `given`, else, when `given` is a module name with no such file
    /// (`keyhost.cash`), that module of the stdlib keyhost runs with (the resolver Lua's `token.issue` uses too).
    static func programSource(_ given: String) throws -> [UInt8] {
        if TokenProgramSource.isModuleName(given), !SourceFile.exists(given) {
            do { return try TokenProgramSource.stdlibModule(given) } catch let error as TokenProgramSourceError {
                throw Failure.kind("not_found", "--program \(given): no such file, and \(error)")
            }
        }
        do { return try SourceFile.read(given) } catch { throw Failure.kind("io", "cannot read \(error)") }
    }

    /// Compiles the program in a fresh state; returns its bytecode (`string.dump`) when asked.
    static func compile(_ code: [UInt8], chunkName: String, dump: Bool) throws -> [UInt8] {
        do { return try ProgramCompiler.compile(code, chunkName: chunkName, dump: dump) } catch let error as TokenError {
            throw Failure.kind("syntax", error.message)
        }
    }
}
