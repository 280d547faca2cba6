import KeyhostBitcoin
import KeyhostDiscovery
import LuaRuntime

extension DiscoveryModule {
    /// `discovery.scan{descriptors = …}`: a descriptor text or `keyhost.descriptor`, or a list of one or two of them
    /// (one <0;1> multipath descriptor, or receive then change). Nil without the option.
    static func descriptorWallet(_ ctx: LuaContext, _ opts: Options) throws -> DescriptorWallet? {
        let value = opts["descriptors"]
        if value.isNil { return nil }
        for excluded in ["purpose", "kind", "scheme", "template", "accounts", "account_gap"] where opts.has(excluded) {
            throw LuaArgumentError(1, "option '\(excluded)' does not go with 'descriptors': the descriptors say the scripts, and they are one wallet")
        }
        var network: BitcoinNetwork?
        if let coin = try opts.coin() {
            guard let named = BitcoinNetwork(coin: coin) else {
                throw LuaArgumentError(1, "option 'coin' with 'descriptors': descriptors are Bitcoin's; use btc, test or regtest")
            }
            network = named
        }
        let items: [LuaValue]
        if case .table(let list) = value { items = list.array } else { items = [value] }
        let parsed = try items.enumerated().map { i, item -> OutputDescriptor in
            let what = "option 'descriptors'" + (items.count > 1 ? " #\(i + 1)" : "")
            switch item {
            case .string:
                return try OutputDescriptor.parse(item.stringValue ?? "")
            case .reference(let reference):
                return try ctx.object(reference, as: DescriptorObject.self, what: what).descriptor
            default:
                throw LuaArgumentError(1, "\(what) must be a descriptor (text or \(DescriptorObject.luaTypeName)), got \(item.typeName)")
            }
        }
        do { return try DescriptorWallet(parsed, network: network) } catch let error as DescriptorError {
            throw error
        } catch {
            throw LuaArgumentError(1, "option 'descriptors': \(error)")
        }
    }
}
