import ArgumentParser
import KeyhostBitcoin
import KeyhostCrypto
import KeyhostRecord

/// `keyhost descriptor addresses DESCRIPTOR`: the addresses (and scripts) at a run of indexes.
struct DescriptorAddresses: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "addresses",
        abstract: "Print a descriptor's addresses at --from N for --count N indexes (each part of a multipath descriptor in turn).",
        discussion: """
            The network is the keys' (testnet for tpub, mainnet for xpub and hex keys) unless --network names one; a \
            network the keys were not written for is refused. A descriptor without /* has one address (index 0). \
            --json prints [{index, address, script}], with multipath_index for each part of a multipath descriptor.
            """
    )

    @Argument(help: ArgumentHelp("The descriptor, or - for standard input.", valueName: "descriptor"))
    var descriptor: String

    // Numbers are read unconditionally so that "-1" is a value to refuse with a message, not an unknown flag.
    @Option(parsing: .unconditional, help: ArgumentHelp("The first index (0...2147483647; default 0).", valueName: "n"))
    var from: Int = 0

    @Option(parsing: .unconditional, help: ArgumentHelp("How many addresses (1 to 1000000; default 1, or 20 for a descriptor with /*).", valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("mainnet, testnet, signet or regtest (default: the keys' network).", valueName: "network"))
    var network: String?

    @Flag(help: "Print JSON [{index, address, script}] (with multipath_index for multipath descriptors).")
    var json = false

    static let maxCount = 1_000_000

    func validate() throws {
        guard (0..<Int(DerivationPath.hardenedOffset)).contains(from) else {
            throw ValidationError("--from must be 0 to 2147483647, got \(from)")
        }
        if let count, !(1...Self.maxCount).contains(count) { throw ValidationError("--count must be 1 to \(Self.maxCount), got \(count)") }
        if let network, BitcoinNetwork(name: network) == nil {
            throw ValidationError("--network \(network.prefix(20)): unknown network; use \(BitcoinNetwork.names)")
        }
    }

    func run() throws {
        try DescriptorCommand.run {
            let parsed = try OutputDescriptor.parse(try DescriptorCommand.text(descriptor))
            let network = try parsed.resolve(self.network.flatMap(BitcoinNetwork.init(name:)))
            let number = count ?? (parsed.isRange ? 20 : 1)
            var rows = [Record]()
            for (part, single) in parsed.multipath().enumerated() {
                let addresses = try single.addresses(from: UInt32(from), count: number, network: network)
                for (offset, address) in addresses.enumerated() {
                    guard json else { print(address); continue }
                    let index = UInt32(from) + UInt32(offset)
                    var fields: [(String, Record)] = [("index", .integer(Int64(index))), ("address", .string(address)),
                                                      ("script", .string(Hex.encode(try single.scriptPubKey(index: index))))]
                    if parsed.multipathCount > 1 { fields.append(("multipath_index", .integer(Int64(part)))) }
                    rows.append(.object(fields))
                }
            }
            if json { print(Record.array(rows).json()) }
        }
    }
}
