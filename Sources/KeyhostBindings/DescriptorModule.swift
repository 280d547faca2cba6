import KeyhostBitcoin
import KeyhostCrypto
import LuaRuntime

/// `keyhost.descriptor`: output descriptors (BIP380–386, BIP389): parse with checksum, print, derive scripts and addresses.
///
/// The domain module (KeyhostBitcoin) does the work; this file checks arguments and converts values. See docs/lua-api.md.
enum DescriptorModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.descriptor") { module in
            module.function("parse") { ctx in
                ctx.push(object: DescriptorObject(try OutputDescriptor.parse(try ctx.string(1))))
                return 1
            }
            // The checksum of any text in BIP380's character set (a "#checksum" already there is verified and returned).
            module.function("checksum") { ctx in
                let (body, given) = try DescriptorChecksum.split(try ctx.string(1))
                ctx.push(try given ?? DescriptorChecksum.compute(body))
                return 1
            }
        }
    }

    /// The network option of `address`/`addresses`: a name, or absent for the keys' own network.
    static func network(_ ctx: LuaContext, _ i: Int32) throws -> BitcoinNetwork? {
        guard let name = try Options(ctx, i, allowed: ["network"]).string("network") else { return nil }
        guard let network = BitcoinNetwork(name: name) else {
            throw LuaArgumentError(i, "option 'network': unknown network \"\(name.prefix(20))\"; use \(BitcoinNetwork.names)")
        }
        return network
    }

    /// An index argument 0…2^31-1, 0 when absent.
    static func index(_ ctx: LuaContext, _ i: Int32, _ name: String = "index") throws -> UInt32 {
        UInt32(try integerArgument(ctx, i, name, in: 0...Int64(DerivationPath.hardenedOffset - 1), default: 0))
    }
}

/// One parsed descriptor (public keys only): `d:address(i)`, `d:script(i)`, `tostring(d)` with its checksum.
final class DescriptorObject: LuaObject {
    let descriptor: OutputDescriptor
    init(_ descriptor: OutputDescriptor) { self.descriptor = descriptor }

    static let luaTypeName = "keyhost.descriptor"

    /// Most addresses one `addresses` call returns, as `node:addresses` allows.
    static let maxAddresses: Int64 = 1_000_000

    static let luaMethods: [String: LuaMethod<DescriptorObject>] = [
        "address": { object, ctx in
            let index = try DescriptorModule.index(ctx, 2)
            ctx.push(try object.descriptor.address(index: index, network: DescriptorModule.network(ctx, 3)))
            return 1
        },
        "addresses": { object, ctx in
            let from = try DescriptorModule.index(ctx, 2, "from")
            let count = try integerArgument(ctx, 3, "count", in: 0...maxAddresses)
            let network = try DescriptorModule.network(ctx, 4)
            try ctx.reserve(bytes: Int(count) * 96)
            let list = try object.descriptor.addresses(from: from, count: Int(count), network: network)
            return try ctx.return(.table(LuaTable(array: list.map { .text($0) })))
        },
        "script": { object, ctx in
            ctx.push(bytes: try object.descriptor.scriptPubKey(index: DescriptorModule.index(ctx, 2)))
            return 1
        },
        "tostring": { object, ctx in
            ctx.push(object.descriptor.description)
            return 1
        },
        "checksum": { object, ctx in
            ctx.push(object.descriptor.checksum)
            return 1
        },
        "is_range": { object, ctx in
            ctx.push(object.descriptor.isRange)
            return 1
        },
        "multipath": { object, ctx in
            try ctx.push(objects: object.descriptor.multipath().map(DescriptorObject.init))
            return 1
        },
        "info": { object, ctx in
            try ctx.return(LuaValue(record: object.descriptor.record))
        },
    ]

    var luaDescription: String { descriptor.description }
}

/// A descriptor failure as Lua sees it: a table with `kind` (`invalid_descriptor`, `descriptor_checksum`,
/// `unsupported_descriptor`, `private_key_in_descriptor`, `descriptor_derivation`, `descriptor_network`), `message`,
/// and `position` (0-based character offset) when the problem is at a place: its `StructuredError` fields.
extension DescriptorError: LuaErrorConvertible {}
