import KeyhostRecord
import ArgumentParser
import KeyhostCrypto

/// `keyhost key address`: the address at a path, or a run of consecutive ones.
struct KeyAddress: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "address",
        abstract: "Print the address at a derivation path (one per line), or a run of them with --count / --index.",
        discussion: """
            Default path: the coin's standard first receive address (m/84'/0'/0'/0/0 for btc, m/44'/60'/0'/0/0 for eth, \
            m/86'/0'/0'/0/0 with --kind p2tr); 0/0 below an --xpub. The kind comes from --kind, else the path's \
            purpose (44', 49', 84', 86'), else the xpub's version (ypub, zpub, ...); when none tells, name it with --kind.
            --count N prints N addresses from the path's last index on; --index A-B replaces the last index with A to B.
            --json prints {address, path, kind, coin, public_key}; with --count or --index A-B, an array of them.
            """
            + "\n" + HelpExamples.text(
                "keyhost key address --count 3                      # from KEYHOST_MNEMONIC, else a prompt",
                "keyhost key address --coin eth --json",
                "keyhost key address --xpub \"$(keyhost key xpub)\" --index 0-4",
                "keyhost key address --card --reader virtual --card-state c.json")
    )

    @OptionGroup var source: KeySourceOptions
    @OptionGroup var target: KeyTargetOptions

    // Numbers are read unconditionally so that "-1" is a value to refuse with a message, not an unknown flag.
    @Option(parsing: .unconditional, help: ArgumentHelp("Print N consecutive addresses, from the path's last index on (1 to 1000000).", valueName: "n"))
    var count: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("The last path index, or a range A-B of them (0...2147483647).", valueName: "range"))
    var index: String?

    @Flag(help: "Print JSON objects {address, path, kind, coin, public_key}.")
    var json = false

    // Caught here so that words pasted without an option are refused without being echoed back.
    @Argument(help: .hidden) var stray: [String] = []

    static let maxCount = 1_000_000

    func validate() throws {
        try StrayArguments.refuse(stray, command: "keyhost key address")
        _ = try plan()
    }

    /// The target and the last indexes to print; bad values are usage errors.
    func plan() throws -> (target: KeyTarget, parent: DerivationPath, children: [UInt32]) {
        let target = try KeyTarget.address(self.target, source: source.kind, xpub: try source.parsedXpub())
        let path = target.path
        if let count, !(1...Self.maxCount).contains(count) {
            throw ValidationError("--count must be 1 to \(Self.maxCount), got \(count)")
        }
        guard count != nil || index != nil else { return (target, path, []) }
        guard let last = path.indexes.last else {
            throw ValidationError("--count and --index step the path's last index, and \(path) has none; give a --path such as m/84'/0'/0'/0/0")
        }
        let hardened = last >= DerivationPath.hardenedOffset
        var first = hardened ? last - DerivationPath.hardenedOffset : last
        var number = count ?? 1
        if let index {
            try SecretArguments.refuse([("--index", index)])
            let range = try Discover.range(index, "--index")
            if range.count > 1 && count != nil { throw ValidationError("--index A-B and --count exclude each other; give one") }
            first = range.lowerBound
            if count == nil { number = range.count }
            if number > Self.maxCount { throw ValidationError("--index \(index) spans \(number) addresses; at most \(Self.maxCount) at once") }
        }
        // Indexes stay within 0...2^31-1 (the hardened flag is kept from the path): never wrap into hardened ones.
        let lastIndex = UInt64(first) + UInt64(number) - 1
        guard lastIndex < UInt64(DerivationPath.hardenedOffset) else {
            throw ValidationError("the run \(first)...\(lastIndex) passes the largest index, 2147483647; start lower or print fewer")
        }
        let parent = try DerivationPath(indexes: Array(path.indexes.dropLast()), absolute: path.isAbsolute)
        let children = (0..<UInt32(number)).map { (first + $0) | (hardened ? DerivationPath.hardenedOffset : 0) }
        return (target, parent, children)
    }

    func run() throws {
        try Failure.exitOnError {
            let (target, parent, children) = try plan()
            let keys = try KeySource.open(source)
            defer { keys.close() }
            let publicKeys = try keys.publicKeys(parent: parent, children: children)
            let paths = children.isEmpty ? [parent] : try children.map { try parent.appending(DerivationPath(indexes: [$0], absolute: false)) }
            var rows: [Record] = []
            for (path, key) in zip(paths, publicKeys) {
                let address = try Address.encode(key, kind: target.kind, coin: target.coin)
                if json {
                    rows.append(["address": .string(address), "path": .string(path.description), "kind": .string(target.kind.rawValue),
                                 "coin": .string(target.coinName), "public_key": .bytes(key.compressed)])
                } else {
                    print(address)
                }
            }
            guard json else { return }
            let ranged = count != nil || (index?.contains("-") ?? false)
            print((ranged ? .array(rows) : rows.first ?? [:]).json())
        }
    }
}
