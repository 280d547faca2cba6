import KeyhostRecord
import ArgumentParser
import KeyhostCrypto
import KeyhostFiles

/// `keyhost key mnemonic new|check`.
struct KeyMnemonic: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mnemonic",
        abstract: "Make a new BIP39 mnemonic, or check one without showing it.",
        subcommands: [New.self, Check.self]
    )

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Print a new BIP39 mnemonic (English) made from the system CSPRNG.",
            discussion: """
                The words go to standard output and nowhere else: redirect them to where they belong \
                (KEYHOST_MNEMONIC="$(keyhost key mnemonic new)" keeps them off the screen). --json prints {mnemonic, words}.
                """
                + "\n" + HelpExamples.text(
                    "keyhost key mnemonic new --words 12 > words.txt",
                    "keyhost key mnemonic new --json")
        )

        @Option(parsing: .unconditional, help: ArgumentHelp("How many words: 12, 15, 18, 21 or 24 (128 to 256 bits of entropy).", valueName: "n"))
        var words = 24

        @Flag(help: "Print a JSON object {mnemonic, words}.")
        var json = false

        func validate() throws {
            guard Mnemonic.validWordCounts.contains(words) else {
                throw ValidationError("--words must be 12, 15, 18, 21 or 24, got \(words)")
            }
        }

        func run() throws {
            try Failure.exitOnError {
                let mnemonic = try Mnemonic.generate(wordCount: words)
                if json {
                    print(Record.object([("mnemonic", .string(mnemonic.phrase)), ("words", .count(words))]).json())
                } else {
                    print(mnemonic.phrase)
                }
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check a BIP39 mnemonic: exit 0 when valid, 1 when not, saying why without showing it.",
            discussion: """
                The phrase comes from standard input with - (as every command reads -), from the variable \
                --mnemonic-env names, else KEYHOST_MNEMONIC, else a prompt that does not echo; never from the command line. A problem is named precisely: the word count, \
                the POSITION of a word not in the wordlist, or a checksum that does not match. Neither the phrase nor \
                any word of it is printed, because output ends up in logs and scrollback; --suggest adds up to three \
                wordlist words close to an unknown one (which points at a word of the secret: use it at a private terminal).
                --json prints {valid, words} or {valid, problem (word_count, unknown_word, checksum, too_long), message, \
                position, suggestions}.
                Examples:
                  keyhost key mnemonic new | keyhost key mnemonic check -
                  keyhost key mnemonic check --mnemonic-env WORDS --json
                """
        )

        // `-` (the argument) is how every command names standard input; --stdin is the older spelling, kept working.
        @Flag(help: .hidden)
        var stdin = false

        /// `-`, or words typed on the command line (refused).
        @Argument(help: ArgumentHelp("- to read the mnemonic from standard input.", valueName: "-"))
        var input: [String] = []

        var fromStandardInput: Bool { stdin || input == ["-"] }

        @Option(help: ArgumentHelp("Read the mnemonic from environment variable VAR (default KEYHOST_MNEMONIC, else a prompt).", valueName: "var"))
        var mnemonicEnv: String?

        @Flag(help: "For a word not in the wordlist, suggest close wordlist words (they hint at the secret word).")
        var suggest = false

        @Flag(help: "Print a JSON object {valid, words} or {valid, problem, message, position, suggestions}.")
        var json = false

        func validate() throws {
            // Words typed on the command line are already in shell history; refused without echoing any.
            if !input.isEmpty && (input != ["-"] || stdin) {
                throw ValidationError("a mnemonic is never taken on the command line (it is now in your shell history: consider it exposed); "
                    + "pipe it in with -, export KEYHOST_MNEMONIC, or type it at the prompt")
            }
            try SecretArguments.refuse([("--mnemonic-env", mnemonicEnv)])
            if fromStandardInput && mnemonicEnv != nil { throw ValidationError("- (standard input) and --mnemonic-env exclude each other") }
        }

        func run() throws {
            try Failure.exitOnError {
                // Far more than any phrase on standard input is still a phrase that is too long, as
                // it is from --mnemonic-env: the same verdict, not a read error.
                let phrase: SecretBytes?
                do { phrase = try read() } catch is StandardInputTooLong { phrase = nil }
                let text = phrase?.text ?? ""
                var out: Record = [:]
                let verdict: String
                do {
                    guard phrase != nil else { throw MnemonicError.tooLong(Self.standardInputLimit + 1, limit: InputLimit.mnemonic) }
                    let mnemonic = try Mnemonic(phrase: text)
                    let count = mnemonic.entropy.count * 3 / 4
                    out = ["valid": true, "words": .count(count)]
                    verdict = "valid: \(count) words, BIP39 checksum correct"
                } catch let error as MnemonicError {
                    out = ["valid": false, "message": .string(error.description)]
                    var line = "invalid: " + error.description.replacing("invalid mnemonic: ", with: "")
                    switch error {
                    case .wordCount(let n): out = out.setting("problem", "word_count").setting("words", .count(n))
                    case .checksum: out = out.setting("problem", "checksum")
                    case .tooLong: out = out.setting("problem", "too_long")
                    case .entropyLength: out = out.setting("problem", "entropy_length")
                    case .unknownWord(let position, _):
                        out = out.setting("problem", "unknown_word").setting("position", .count(position))
                        if suggest {
                            let close = Mnemonic.suggestions(forWordAt: position, in: text)
                            out = out.setting("suggestions", .strings(close))
                            line += close.isEmpty ? "\nno wordlist word is close to word \(position)"
                                : "\nword \(position) might be: \(close.joined(separator: ", "))"
                        }
                    }
                    verdict = line
                }
                if json { print(out.json()) } else { print(verdict) }
                if out["valid"] != .bool(true) { throw ExitCode(1) }
            }
        }

        static let standardInputLimit = 64 << 10
        struct StandardInputTooLong: Error {}

        private func read() throws -> SecretBytes {
            guard fromStandardInput else {
                return try SecretEnvironment.mnemonic(variable: mnemonicEnv, alternatives: ", or pipe it in with -").phrase
            }
            // Read well past the phrase limit so the parser names the length; the copy is wiped at once.
            var bytes: [UInt8]
            do {
                bytes = try BoundedFile.readStandardInput(limit: Self.standardInputLimit)
            } catch let error as BoundedFile.ReadError where error.problem.hasPrefix("file is larger") {
                throw StandardInputTooLong()
            } catch {
                throw Failure.kind("io", "cannot read the mnemonic from standard input: \(error)")
            }
            defer { for i in bytes.indices { bytes[i] = 0 } }
            guard !bytes.isEmpty else { throw Failure.kind("no_secret", "standard input was empty; pipe the mnemonic in") }
            return SecretBytes(bytes)
        }
    }
}
