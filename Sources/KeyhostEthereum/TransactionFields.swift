import KeyhostRecord
import KeyhostCrypto

/// A transaction as a JSON object or Lua table with snake_case names (TX.json, `eth.tx{…}`, `eth.decode_tx`).
///
/// Amounts (value and the fees) are read from JSON numbers, decimal strings or 0x-hex strings and written as
/// decimal strings, because they exceed 64 bits; the other quantities are written as numbers when they fit
/// in a signed 64-bit integer. Addresses are EIP-55 text, byte fields 0x-hex. Contract creation is `"to": ""`.
public struct TransactionFields {
    public let transaction: EthereumTransaction
    /// `from` and `hash` given with the fields: checked against the signed transaction, never trusted.
    public let expectedFrom: [UInt8]?
    public let expectedHash: [UInt8]?

    public static let names = ["type", "chain_id", "nonce", "gas_price", "max_priority_fee_per_gas", "max_fee_per_gas", "gas", "to",
                               "value", "data", "access_list", "v", "r", "s", "y_parity", "from", "hash"]

    /// Reads a transaction object. Unknown names are refused, so a typo is an error rather than a default.
    public init(_ json: JSONValue) throws {
        guard case .object(let members) = json else { throw TransactionError.notAnObject(json.kindName) }
        for member in members where !Self.names.contains(member.key) {
            throw TransactionError.unknownField(member.key, known: Self.names)
        }
        func present(_ name: String) -> JSONValue? {
            guard let value = json[name] else { return nil }
            if case .null = value, name != "to" { return nil }
            return value
        }
        let kind: EthereumTransaction.Kind
        if let typeValue = present("type") {
            let number = try Self.quantity(typeValue, "type")
            guard let raw = number.uint64, raw <= 2, let parsed = EthereumTransaction.Kind(rawValue: UInt8(raw)) else {
                throw TransactionError.field("type", "is \(number); keyhost builds types 0 (legacy), 1 (EIP-2930) and 2 (EIP-1559)")
            }
            kind = parsed
        } else if present("max_fee_per_gas") != nil || present("max_priority_fee_per_gas") != nil {
            kind = .dynamicFee
        } else if present("access_list") != nil {
            kind = .accessList
        } else {
            kind = .legacy
        }
        func required(_ name: String, _ why: String) throws -> UInt256 {
            guard let value = present(name) else { throw TransactionError.field(name, "is missing; \(why)") }
            return try Self.quantity(value, name)
        }
        func refuse(_ name: String, _ hint: String) throws {
            if present(name) != nil { throw TransactionError.field(name, "is not a field of type \(kind.rawValue) transactions; \(hint)") }
        }
        let chainID = try required("chain_id", "keyhost signs only replay-protected transactions (1 for Ethereum mainnet)")
        let nonce = try required("nonce", "give the sender's next nonce (eth_getTransactionCount)")
        let gas = try required("gas", "give the gas limit (21000 for a plain transfer)")
        var gasPrice = UInt256.zero, tip = UInt256.zero, cap = UInt256.zero
        if kind == .dynamicFee {
            try refuse("gas_price", "use max_fee_per_gas and max_priority_fee_per_gas")
            tip = try required("max_priority_fee_per_gas", "give the tip per gas in wei")
            cap = try required("max_fee_per_gas", "give the fee cap per gas in wei")
        } else {
            try refuse("max_fee_per_gas", "use gas_price, or type 2")
            try refuse("max_priority_fee_per_gas", "use gas_price, or type 2")
            gasPrice = try required("gas_price", "give the gas price in wei")
        }
        guard let toValue = json["to"] else {
            throw TransactionError.field("to", "is missing; give the recipient's address, or \"\" to create a contract")
        }
        let to: [UInt8]?
        switch toValue {
        case .null: to = nil
        case .string(let text) where text.isEmpty: to = nil
        default: to = try Self.address(toValue, "to")
        }
        let value = try present("value").map { try Self.quantity($0, "value") } ?? .zero
        let data = try present("data").map { try Self.hexBytes($0, "data") } ?? []
        var accessList = [EthereumTransaction.AccessListEntry]()
        if let list = present("access_list") {
            if kind == .legacy { try refuse("access_list", "use type 1 or 2") }
            accessList = try Self.accessList(list)
        }
        let signature = try Self.signature(kind: kind, chainID: chainID, v: present("v"), r: present("r"), s: present("s"), yParity: present("y_parity"))
        transaction = try EthereumTransaction(kind: kind, chainID: chainID, nonce: nonce, gasPrice: gasPrice, maxPriorityFeePerGas: tip,
                                              maxFeePerGas: cap, gas: gas, to: to, value: value, data: data, accessList: accessList,
                                              signature: signature)
        expectedFrom = try present("from").map { try Self.address($0, "from") }
        expectedHash = try present("hash").map { try Self.hexBytes($0, "hash") }
        if transaction.signature != nil { try check(transaction) }
    }

    /// Whether `signed` is what `from` and `hash` said; throws naming the mismatch.
    public func check(_ signed: EthereumTransaction) throws {
        if let expectedFrom {
            let sender = try signed.sender()
            guard sender == expectedFrom else {
                throw TransactionError.field("from", "is \(EthereumAddress.checksummed(expectedFrom)) but the transaction is signed by "
                                             + "\(EthereumAddress.checksummed(sender)); check the key or derivation path")
            }
        }
        if let expectedHash, signed.signature != nil {
            let hash = try signed.hash()
            guard hash == expectedHash else { throw TransactionError.field("hash", "is \(hex0x(expectedHash)) but the transaction hashes to \(hex0x(hash))") }
        }
    }

    private static func signature(kind: EthereumTransaction.Kind, chainID: UInt256, v: JSONValue?, r: JSONValue?, s: JSONValue?,
                                  yParity: JSONValue?) throws -> EthereumTransaction.Signature? {
        if r == nil && s == nil && v == nil && yParity == nil { return nil }
        guard let r, let s else { throw TransactionError.field(r == nil ? "r" : "s", "is missing; a signature needs r, s and \(kind == .legacy ? "v" : "y_parity")") }
        let rValue = try quantity(r, "r"), sValue = try quantity(s, "s")
        let parity: UInt8
        if kind == .legacy {
            guard let v else { throw TransactionError.field("v", "is missing; a legacy signature needs v, r and s") }
            let vValue = try quantity(v, "v")
            guard let offset = vValue.subtracting(UInt256(35)), offset.divided(by: 2).quotient == chainID else {
                throw TransactionError.field("v", "is \(vValue); with chain_id \(chainID) it must be \(chainID) × 2 + 35 or 36 (EIP-155)")
            }
            parity = UInt8(offset.divided(by: 2).remainder)
            if let yParity, try quantity(yParity, "y_parity") != UInt256(UInt64(parity)) {
                throw TransactionError.field("y_parity", "does not match v")
            }
        } else {
            guard let given = yParity ?? v else { throw TransactionError.field("y_parity", "is missing; a typed signature needs y_parity, r and s") }
            let value = try quantity(given, yParity == nil ? "v" : "y_parity")
            guard let bit = value.uint64, bit <= 1 else { throw TransactionError.field("y_parity", "is \(value); it must be 0 or 1") }
            if let v, yParity != nil, try quantity(v, "v") != value { throw TransactionError.field("v", "does not match y_parity") }
            parity = UInt8(bit)
        }
        return EthereumTransaction.Signature(r: rValue, s: sValue, yParity: parity)
    }

    private static func accessList(_ value: JSONValue) throws -> [EthereumTransaction.AccessListEntry] {
        guard case .array(let entries) = value else {
            // An empty Lua table cannot say whether it is an array or an object.
            if case .object(let members) = value, members.isEmpty { return [] }
            throw TransactionError.field("access_list", "must be an array of {address, storage_keys}, got \(value.kindName)")
        }
        return try entries.enumerated().map { i, entry in
            let name = "access_list[\(i)]"
            guard case .object(let members) = entry else { throw TransactionError.field(name, "must be an object {address, storage_keys}") }
            for member in members where member.key != "address" && member.key != "storage_keys" {
                throw TransactionError.field("\(name).\(member.key)", "is unknown; an entry has address and storage_keys")
            }
            guard let address = entry["address"] else { throw TransactionError.field("\(name).address", "is missing") }
            var keys = [[UInt8]]()
            switch entry["storage_keys"] {
            case nil, .null: break
            case .array(let items)?:
                keys = try items.enumerated().map { j, key in
                    let keyName = "\(name).storage_keys[\(j)]"
                    let bytes = try hexBytes(key, keyName)
                    guard bytes.count == 32 else { throw TransactionError.field(keyName, "is \(bytes.count) bytes; a storage key is 32 bytes") }
                    return bytes
                }
            case .object(let members)? where members.isEmpty: break
            case let other?: throw TransactionError.field("\(name).storage_keys", "must be an array of 0x-hex keys, got \(other.kindName)")
            }
            return EthereumTransaction.AccessListEntry(address: try Self.address(address, "\(name).address"), storageKeys: keys)
        }
    }

    // MARK: value readers shared with EIP-712

    /// A non-negative integer from a JSON number or a decimal / 0x-hex string.
    public static func quantity(_ value: JSONValue, _ name: String) throws -> UInt256 {
        switch value {
        case .number(let text), .string(let text):
            if case .number = value, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                throw TransactionError.field(name, "is \(text); it must be a whole number (write big values as decimal strings)")
            }
            if text.hasPrefix("-") { throw TransactionError.field(name, "is negative (\(text)); it must be 0 or more") }
            do { return try UInt256(parsing: text) } catch { throw TransactionError.field(name, "\(error)") }
        default:
            throw TransactionError.field(name, "must be a number, a decimal string or a 0x-hex string, got \(value.kindName)")
        }
    }

    /// Bytes from a 0x-prefixed hex string ("0x" alone is empty).
    public static func hexBytes(_ value: JSONValue, _ name: String) throws -> [UInt8] {
        guard case .string(let text) = value else { throw TransactionError.field(name, "must be a 0x-hex string, got \(value.kindName)") }
        do { return try EthHex.decode(text) } catch { throw TransactionError.field(name, "\(error)") }
    }

    /// 20 address bytes from "0x" + 40 hex digits (a mixed-case address must carry a valid EIP-55 checksum).
    public static func address(_ value: JSONValue, _ name: String) throws -> [UInt8] {
        guard case .string(let text) = value else { throw TransactionError.field(name, "must be an address string \"0x…\", got \(value.kindName)") }
        do { return try EthereumAddress.decode(text) } catch { throw TransactionError.field(name, "is not an address: \(error)") }
    }
}

extension EthereumTransaction {
    /// The transaction as TX.json writes it; a signed one adds v, r, s, y_parity, from and hash.
    public func fields() throws -> JSONValue {
        var members: [JSONValue.Member] = [.init("type", .small(UInt256(UInt64(kind.rawValue))))]
        if let chainID { members.append(.init("chain_id", .small(chainID))) }
        members.append(.init("nonce", .small(nonce)))
        if kind == .dynamicFee {
            members.append(.init("max_priority_fee_per_gas", .string(maxPriorityFeePerGas.description)))
            members.append(.init("max_fee_per_gas", .string(maxFeePerGas.description)))
        } else {
            members.append(.init("gas_price", .string(gasPrice.description)))
        }
        members.append(.init("gas", .small(gas)))
        members.append(.init("to", .string(to.map(EthereumAddress.checksummed) ?? "")))
        members.append(.init("value", .string(value.description)))
        members.append(.init("data", .string(hex0x(data))))
        if kind != .legacy {
            members.append(.init("access_list", .array(accessList.map { entry in
                .object([.init("address", .string(EthereumAddress.checksummed(entry.address))),
                         .init("storage_keys", .array(entry.storageKeys.map { .string(hex0x($0)) }))])
            })))
        }
        if let signature {
            let v = kind == .legacy ? try Self.legacyV(chainID: chainID, yParity: signature.yParity) : UInt256(UInt64(signature.yParity))
            members.append(.init("v", .small(v)))
            members.append(.init("r", .string(hex0x(signature.r.word))))
            members.append(.init("s", .string(hex0x(signature.s.word))))
            members.append(.init("y_parity", .small(UInt256(UInt64(signature.yParity)))))
            members.append(.init("from", .string(EthereumAddress.checksummed(try sender()))))
            members.append(.init("hash", .string(hex0x(try hash()))))
        }
        return .object(members)
    }
}

extension JSONValue {
    /// A quantity as a number when it fits a signed 64-bit integer (a Lua integer), else a decimal string.
    static func small(_ value: UInt256) -> JSONValue {
        if let n = value.uint64, n <= UInt64(Int64.max) { return .number(value.description) }
        return .string(value.description)
    }
}
