import KeyhostCrypto

/// An Ethereum transaction: legacy (with or without EIP-155 replay protection), EIP-2930 or EIP-1559.
///
/// Built from fields, hashed for signing, signed by a key or by anything that signs a 32-byte digest
/// (a card), serialized, and decoded back from raw bytes with its sender recovered.
public struct EthereumTransaction: Equatable, Sendable {
    public enum Kind: UInt8, Sendable, CaseIterable {
        case legacy = 0
        /// EIP-2930: access lists, serialized as 0x01 ‖ rlp(…).
        case accessList = 1
        /// EIP-1559: priority fee and fee cap, serialized as 0x02 ‖ rlp(…).
        case dynamicFee = 2
    }

    public struct AccessListEntry: Equatable, Sendable {
        /// 20 bytes.
        public var address: [UInt8]
        /// 32 bytes each.
        public var storageKeys: [[UInt8]]
        public init(address: [UInt8], storageKeys: [[UInt8]]) {
            self.address = address
            self.storageKeys = storageKeys
        }
    }

    /// r, s and the y parity of R (the recovery id, 0 or 1).
    public struct Signature: Equatable, Sendable {
        public let r: UInt256
        public let s: UInt256
        public let yParity: UInt8
        public init(r: UInt256, s: UInt256, yParity: UInt8) {
            self.r = r
            self.s = s
            self.yParity = yParity
        }
    }

    public var kind: Kind
    /// Required for typed transactions; nil on a legacy transaction means no EIP-155 protection (v is 27/28).
    public var chainID: UInt256?
    public var nonce: UInt256
    /// Legacy and EIP-2930.
    public var gasPrice: UInt256
    /// EIP-1559.
    public var maxPriorityFeePerGas: UInt256
    public var maxFeePerGas: UInt256
    public var gas: UInt256
    /// 20 bytes, or nil for contract creation.
    public var to: [UInt8]?
    public var value: UInt256
    public var data: [UInt8]
    public var accessList: [AccessListEntry]
    public var signature: Signature?

    public init(kind: Kind, chainID: UInt256?, nonce: UInt256, gasPrice: UInt256 = .zero, maxPriorityFeePerGas: UInt256 = .zero,
                maxFeePerGas: UInt256 = .zero, gas: UInt256, to: [UInt8]?, value: UInt256 = .zero, data: [UInt8] = [],
                accessList: [AccessListEntry] = [], signature: Signature? = nil) throws {
        self.kind = kind
        self.chainID = chainID
        self.nonce = nonce
        self.gasPrice = gasPrice
        self.maxPriorityFeePerGas = maxPriorityFeePerGas
        self.maxFeePerGas = maxFeePerGas
        self.gas = gas
        self.to = to
        self.value = value
        self.data = data
        self.accessList = accessList
        self.signature = signature
        try validate()
    }

    /// Rules every transaction keyhost builds or decodes must follow.
    func validate() throws {
        if kind != .legacy && chainID == nil { throw TransactionError.field("chain_id", "is required for type \(kind.rawValue) transactions") }
        if kind == .legacy && !accessList.isEmpty {
            throw TransactionError.field("access_list", "is not part of legacy (type 0) transactions; use type 1 or 2")
        }
        // EIP-2681 bounds the nonce to 64 bits.
        if nonce.uint64 == nil || nonce == UInt256(UInt64.max) { throw TransactionError.field("nonce", "must be below 2^64 - 1 (EIP-2681)") }
        if let to, to.count != 20 { throw TransactionError.field("to", "is \(to.count) bytes; an address is 20 bytes") }
        for (i, entry) in accessList.enumerated() {
            if entry.address.count != 20 { throw TransactionError.field("access_list[\(i)].address", "is \(entry.address.count) bytes; an address is 20 bytes") }
            for (j, key) in entry.storageKeys.enumerated() where key.count != 32 {
                throw TransactionError.field("access_list[\(i)].storage_keys[\(j)]", "is \(key.count) bytes; a storage key is 32 bytes")
            }
        }
        if kind == .dynamicFee && maxPriorityFeePerGas > maxFeePerGas {
            throw TransactionError.field("max_priority_fee_per_gas", "exceeds max_fee_per_gas; the tip cannot be above the fee cap")
        }
        if let signature, signature.yParity > 1 { throw TransactionError.field("y_parity", "is \(signature.yParity); it must be 0 or 1") }
    }

    // MARK: encoding

    private var accessListItem: RLPItem {
        .list(accessList.map { .list([.bytes($0.address), .list($0.storageKeys.map { .bytes($0) })]) })
    }

    /// The fields common to the signing payload and the serialization, in the order of the transaction's type.
    private var fieldItems: [RLPItem] {
        let to = RLPItem.bytes(self.to ?? [])
        switch kind {
        case .legacy:
            return [.integer(nonce), .integer(gasPrice), .integer(gas), to, .integer(value), .bytes(data)]
        case .accessList:
            return [.integer(chainID ?? .zero), .integer(nonce), .integer(gasPrice), .integer(gas), to, .integer(value), .bytes(data), accessListItem]
        case .dynamicFee:
            return [.integer(chainID ?? .zero), .integer(nonce), .integer(maxPriorityFeePerGas), .integer(maxFeePerGas), .integer(gas), to,
                    .integer(value), .bytes(data), accessListItem]
        }
    }

    private func typed(_ items: [RLPItem]) -> [UInt8] {
        let body = RLP.encode(.list(items))
        return kind == .legacy ? body : [kind.rawValue] + body
    }

    /// What is hashed for signing: EIP-155 appends chain id, 0, 0 to a legacy transaction.
    public var signingPayload: [UInt8] {
        var items = fieldItems
        if kind == .legacy, let chainID { items += [.integer(chainID), .bytes([]), .bytes([])] }
        return typed(items)
    }

    /// The 32-byte digest a key or card signs.
    public var signingHash: [UInt8] { Keccak256.hash(signingPayload) }

    /// Legacy v: 27/28 without a chain id, else chain id × 2 + 35 + y parity (EIP-155).
    public static func legacyV(chainID: UInt256?, yParity: UInt8) throws -> UInt256 {
        guard let chainID else { return UInt256(27 + UInt64(yParity)) }
        guard let v = chainID.multipliedAdding(2, 35 + UInt64(yParity)) else {
            throw TransactionError.field("chain_id", "is too large for an EIP-155 v value (chain_id × 2 + 36 must fit in 256 bits)")
        }
        return v
    }

    /// The signed transaction's bytes, as eth_sendRawTransaction takes them.
    public func serialized() throws -> [UInt8] {
        guard let signature else { throw TransactionError.unsigned }
        let v: UInt256 = kind == .legacy ? try Self.legacyV(chainID: chainID, yParity: signature.yParity) : UInt256(UInt64(signature.yParity))
        return typed(fieldItems + [.integer(v), .integer(signature.r), .integer(signature.s)])
    }

    /// The transaction hash: Keccak-256 of the serialized signed transaction.
    public func hash() throws -> [UInt8] { Keccak256.hash(try serialized()) }

    // MARK: signing

    /// This transaction signed by `signer`, which gets the 32-byte signing hash (a card, a remote key…).
    public func signed(by signer: ([UInt8]) throws -> RecoverableSignature) throws -> EthereumTransaction {
        let digest = signingHash
        let signature = try signer(digest)
        guard signature.signature.isLowS else { throw TransactionError.highS }
        // Recovery ids 2 and 3 (R.x above the group order) have no place in an Ethereum signature.
        guard signature.recoveryID <= 1 else { throw TransactionError.field("y_parity", "the signer returned recovery id \(signature.recoveryID); Ethereum needs 0 or 1") }
        var copy = self
        copy.signature = Signature(r: UInt256(bigEndian: signature.r) ?? .zero, s: UInt256(bigEndian: signature.s) ?? .zero,
                                   yParity: UInt8(signature.recoveryID))
        // Check the signer's answer before anyone broadcasts it: it must recover to some key.
        _ = try copy.senderPublicKey()
        return copy
    }

    /// This transaction signed with `key` (RFC 6979 deterministic, low s).
    public func signed(with key: PrivateKey) throws -> EthereumTransaction {
        try signed { try key.signRecoverable(digest: $0) }
    }

    /// The public key that signed this transaction.
    public func senderPublicKey() throws -> PublicKey {
        guard let signature else { throw TransactionError.unsigned }
        let recoverable: RecoverableSignature
        do {
            recoverable = try RecoverableSignature(compact: signature.r.word + signature.s.word, recoveryID: Int(signature.yParity))
        } catch {
            throw TransactionError.badSignature("\(error)")
        }
        // EIP-2: since Homestead a transaction with s above n/2 is invalid.
        guard recoverable.signature.isLowS else { throw TransactionError.highS }
        do {
            return try recoverable.recoverPublicKey(digest: signingHash)
        } catch {
            throw TransactionError.badSignature("\(error)")
        }
    }

    /// The sender's 20-byte address.
    public func sender() throws -> [UInt8] { EthereumAddress.addressBytes(of: try senderPublicKey()) }
}
