import KeyhostCrypto

extension EthereumTransaction {
    /// Largest raw transaction `decode` reads: geth's pool takes at most 128 KiB; this leaves room.
    public static let maxRawBytes = 1 << 20

    /// Decodes a raw signed transaction (legacy, 0x01 or 0x02). The result re-serializes to the same bytes.
    public static func decode(raw: [UInt8]) throws -> EthereumTransaction {
        guard raw.count <= maxRawBytes else { throw TransactionError.decode("\(raw.count) bytes is over the \(maxRawBytes)-byte limit") }
        guard let first = raw.first else { throw TransactionError.decode("no bytes") }
        let kind: Kind
        let body: [UInt8]
        switch first {
        case 0xc0...0xff:
            kind = .legacy
            body = raw
        case 0x01, 0x02:
            kind = first == 0x01 ? .accessList : .dynamicFee
            body = Array(raw.dropFirst())
        case 0x03:
            throw TransactionError.decode("type 3 (EIP-4844 blob) transactions are not supported; keyhost reads types 0, 1 and 2")
        case 0x00...0x7f:
            throw TransactionError.decode("unknown transaction type \(first); keyhost reads types 0 (legacy), 1 (EIP-2930) and 2 (EIP-1559)")
        default:
            throw TransactionError.decode("first byte 0x\(hexDigits([first])) starts neither a typed transaction (0x01, 0x02) nor a legacy RLP list")
        }
        let item: RLPItem
        do { item = try RLP.decode(body) } catch let error as RLPError {
            // Report offsets in the raw transaction, type byte included.
            throw TransactionError.rlp(RLPError(offset: error.offset + (kind == .legacy ? 0 : 1), problem: error.problem))
        }
        guard case .list(let items) = item else { throw TransactionError.decode("the body is an RLP string; a transaction is an RLP list") }
        var reader = FieldReader(items: items, kind: kind)
        switch kind {
        case .legacy:
            try reader.expectCount(9, names: "nonce, gas_price, gas, to, value, data, v, r, s")
            let nonce = try reader.quantity("nonce"), gasPrice = try reader.quantity("gas_price"), gas = try reader.quantity("gas")
            let to = try reader.to(), value = try reader.quantity("value"), data = try reader.bytes("data")
            let v = try reader.quantity("v"), r = try reader.quantity("r"), s = try reader.quantity("s")
            let chainID: UInt256?
            let parity: UInt8
            if v == UInt256(27) || v == UInt256(28) {
                chainID = nil
                parity = v == UInt256(28) ? 1 : 0
            } else if let offset = v.subtracting(UInt256(35)) {
                let (half, bit) = offset.divided(by: 2)
                chainID = half
                parity = UInt8(bit)
            } else {
                throw TransactionError.field("v", "is \(v); a legacy transaction has v 27 or 28, or chain_id × 2 + 35 or 36 (EIP-155)")
            }
            return try EthereumTransaction(kind: .legacy, chainID: chainID, nonce: nonce, gasPrice: gasPrice, gas: gas, to: to, value: value,
                                           data: data, signature: Signature(r: r, s: s, yParity: parity))
        case .accessList:
            try reader.expectCount(11, names: "chain_id, nonce, gas_price, gas, to, value, data, access_list, y_parity, r, s")
            let chainID = try reader.quantity("chain_id"), nonce = try reader.quantity("nonce"), gasPrice = try reader.quantity("gas_price")
            let gas = try reader.quantity("gas"), to = try reader.to(), value = try reader.quantity("value"), data = try reader.bytes("data")
            let accessList = try reader.accessList()
            let signature = try reader.signature()
            return try EthereumTransaction(kind: .accessList, chainID: chainID, nonce: nonce, gasPrice: gasPrice, gas: gas, to: to, value: value,
                                           data: data, accessList: accessList, signature: signature)
        case .dynamicFee:
            try reader.expectCount(12, names: "chain_id, nonce, max_priority_fee_per_gas, max_fee_per_gas, gas, to, value, data, access_list, y_parity, r, s")
            let chainID = try reader.quantity("chain_id"), nonce = try reader.quantity("nonce")
            let tip = try reader.quantity("max_priority_fee_per_gas"), cap = try reader.quantity("max_fee_per_gas")
            let gas = try reader.quantity("gas"), to = try reader.to(), value = try reader.quantity("value"), data = try reader.bytes("data")
            let accessList = try reader.accessList()
            let signature = try reader.signature()
            return try EthereumTransaction(kind: .dynamicFee, chainID: chainID, nonce: nonce, maxPriorityFeePerGas: tip, maxFeePerGas: cap,
                                           gas: gas, to: to, value: value, data: data, accessList: accessList, signature: signature)
        }
    }
}

/// Reads a transaction's RLP fields in order, naming each one in errors.
private struct FieldReader {
    let items: [RLPItem]
    let kind: EthereumTransaction.Kind
    var index = 0

    init(items: [RLPItem], kind: EthereumTransaction.Kind) {
        self.items = items
        self.kind = kind
    }

    func expectCount(_ count: Int, names: String) throws {
        guard items.count == count else {
            let unsigned = kind == .legacy ? 6 : count - 3
            let hint = items.count == unsigned ? "; this looks like an unsigned transaction, which decode does not read" : ""
            throw TransactionError.decode("a type \(kind.rawValue) transaction has \(count) fields (\(names)), found \(items.count)\(hint)")
        }
    }

    mutating func next(_ name: String) throws -> [UInt8] {
        let item = items[index]
        index += 1
        guard case .bytes(let bytes) = item else { throw TransactionError.field(name, "is an RLP list; expected a byte string") }
        return bytes
    }

    /// An RLP integer: at most 32 bytes, no leading zero (zero is the empty string).
    mutating func quantity(_ name: String) throws -> UInt256 {
        let bytes = try next(name)
        if bytes.first == 0 { throw TransactionError.field(name, "has a leading zero byte; RLP integers are written without one (non-canonical)") }
        guard let value = UInt256(bigEndian: bytes) else { throw TransactionError.field(name, "is \(bytes.count) bytes; integers are at most 32") }
        return value
    }

    mutating func bytes(_ name: String) throws -> [UInt8] { try next(name) }

    mutating func to() throws -> [UInt8]? {
        let bytes = try next("to")
        if bytes.isEmpty { return nil }
        guard bytes.count == 20 else { throw TransactionError.field("to", "is \(bytes.count) bytes; expected 20 (or empty for contract creation)") }
        return bytes
    }

    mutating func accessList() throws -> [EthereumTransaction.AccessListEntry] {
        let item = items[index]
        index += 1
        guard case .list(let entries) = item else { throw TransactionError.field("access_list", "is an RLP string; expected a list") }
        return try entries.enumerated().map { i, entry in
            let name = "access_list[\(i)]"
            guard case .list(let pair) = entry, pair.count == 2, case .bytes(let address) = pair[0], case .list(let keys) = pair[1] else {
                throw TransactionError.field(name, "must be a list [address, [storage keys…]]")
            }
            return EthereumTransaction.AccessListEntry(address: address, storageKeys: try keys.enumerated().map { j, key in
                guard case .bytes(let bytes) = key else { throw TransactionError.field("\(name).storage_keys[\(j)]", "is an RLP list; expected 32 bytes") }
                return bytes
            })
        }
    }

    mutating func signature() throws -> EthereumTransaction.Signature {
        let parity = try quantity("y_parity")
        guard let bit = parity.uint64, bit <= 1 else { throw TransactionError.field("y_parity", "is \(parity); it must be 0 or 1") }
        return EthereumTransaction.Signature(r: try quantity("r"), s: try quantity("s"), yParity: UInt8(bit))
    }
}
