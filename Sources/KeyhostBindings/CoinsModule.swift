import KeyhostCrypto
import LuaRuntime

/// `keyhost.coins`: the coin registry (symbols, SLIP-44 numbers, address kinds).
enum CoinsModule {
    static func register(in state: LuaState) {
        state.registerModule("keyhost.coins") { module in
            module.function("get") { ctx in
                try ctx.return(table(try Coins.resolve(ctx, 1)))
            }

            module.function("list") { ctx in
                try ctx.return(.table(LuaTable(array: Coin.all.map(table))))
            }
        }
    }

    /// `{symbol=, name=, slip44=, testnet=, kinds={...}, default_kind=}`.
    static func table(_ coin: Coin) -> LuaValue {
        .table(LuaTable([
            "symbol": .text(coin.symbol),
            "name": .text(coin.name),
            "slip44": .integer(Int64(coin.slip44)),
            "testnet": .boolean(coin.isTestnet),
            "kinds": .table(LuaTable(array: coin.addressKinds.map { .text($0.rawValue) })),
            "default_kind": .text(coin.defaultKind.rawValue),
        ]))
    }
}
