import KeyhostRecord
import KeyhostCrypto

/// An EIP-712 typed-data document (the JSON of eth_signTypedData_v4): types, primaryType, domain, message.
///
/// The types are checked when the document is read (every referenced type defined, no unknown or
/// malformed type, no struct that can only contain itself); values are checked while hashing, with the
/// path of the offending value (`message.to.wallets[1]`) in the error.
public struct TypedData: Sendable {
    public struct Member: Equatable, Sendable {
        public let name: String
        /// The type as written (`Person[]`), which encodeType repeats verbatim.
        public let type: String
        let parsed: FieldType
    }

    public let types: [String: [Member]]
    public let primaryType: String
    public let domain: JSONValue
    public let message: JSONValue

    public static let domainTypeName = "EIP712Domain"
    /// Limits on hostile documents (a real one has a handful of types and shallow nesting).
    public static let maxTypes = 256
    public static let maxMembers = 256
    public static let maxDepth = 32
    public static let maxArrayLength = 1 << 20

    /// Reads a document from JSON text.
    public init(json bytes: [UInt8]) throws {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch { throw TypedDataError("the document is not JSON: \(error)") }
        try self.init(value)
    }

    public init(_ document: JSONValue) throws {
        guard let top = document.objectMembers else { throw TypedDataError("the document must be an object {types, primaryType, domain, message}, got \(document.kindName)") }
        for member in top where !["types", "primaryType", "domain", "message"].contains(member.key) {
            throw TypedDataError("unknown top-level field '\(member.key)'; a typed-data document has types, primaryType, domain and message")
        }
        guard let typeList = document["types"]?.objectMembers else { throw TypedDataError("'types' is missing or not an object of struct definitions") }
        guard case .string(let primary)? = document["primaryType"] else { throw TypedDataError("'primaryType' is missing or not a string; name the struct being signed") }
        guard typeList.count <= Self.maxTypes else { throw TypedDataError("'types' defines \(typeList.count) structs, over the limit of \(Self.maxTypes)") }
        let domain = document["domain"] ?? .object([])
        guard let domainMembers = domain.objectMembers else { throw TypedDataError("'domain' must be an object, got \(domain.kindName)") }
        let message = document["message"] ?? .null

        let names = Set(typeList.map(\.key))
        var types = [String: [Member]]()
        for definition in typeList {
            let typeName = definition.key
            guard isIdentifier(typeName) else { throw TypedDataError("struct name '\(typeName)' is not an identifier (letters, digits, _ and $, not starting with a digit)") }
            if (try? FieldType.parse(typeName, structs: [])) != nil {
                throw TypedDataError("struct name '\(typeName)' is a built-in type name; rename the struct")
            }
            guard case .array(let fields) = definition.value else {
                // An empty Lua table is an empty object; a struct with no fields is legal.
                if case .object(let members) = definition.value, members.isEmpty { types[typeName] = []; continue }
                throw TypedDataError("types.\(typeName) must be an array of {name, type}, got \(definition.value.kindName)")
            }
            guard fields.count <= Self.maxMembers else { throw TypedDataError("types.\(typeName) has \(fields.count) fields, over the limit of \(Self.maxMembers)") }
            var members = [Member]()
            for (i, field) in fields.enumerated() {
                let at = "types.\(typeName)[\(i)]"
                guard case .object(let pairs) = field, case .string(let name)? = field["name"], case .string(let type)? = field["type"] else {
                    throw TypedDataError("\(at) must be an object {name = \"…\", type = \"…\"} with string values")
                }
                for pair in pairs where pair.key != "name" && pair.key != "type" {
                    throw TypedDataError("\(at) has unknown key '\(pair.key)'; a field has only name and type")
                }
                guard isIdentifier(name) else { throw TypedDataError("\(at): field name '\(name)' is not an identifier") }
                guard !members.contains(where: { $0.name == name }) else { throw TypedDataError("\(at): field '\(name)' is defined twice in \(typeName)") }
                let parsed: FieldType
                do { parsed = try FieldType.parse(type, structs: names) } catch let error as TypedDataError {
                    throw TypedDataError("\(at) (\(typeName).\(name)): \(error.detail)")
                }
                members.append(Member(name: name, type: type, parsed: parsed))
            }
            types[typeName] = members
        }
        if types[Self.domainTypeName] == nil {
            types[Self.domainTypeName] = try Self.inferredDomainType(domainMembers)
        }
        guard types[primary] != nil else {
            throw TypedDataError("primaryType '\(primary)' is not defined in types; defined: \(types.keys.sorted().joined(separator: ", "))")
        }
        self.types = types
        self.primaryType = primary
        self.domain = domain
        self.message = message
        try checkNoUnboundedCycle()
    }

    /// The standard domain fields in EIP-712's order, for documents that leave EIP712Domain out of types.
    private static func inferredDomainType(_ members: [JSONValue.Member]) throws -> [Member] {
        let standard: [(String, String)] = [("name", "string"), ("version", "string"), ("chainId", "uint256"),
                                            ("verifyingContract", "address"), ("salt", "bytes32")]
        for member in members where !standard.contains(where: { $0.0 == member.key }) {
            throw TypedDataError("domain field '\(member.key)' is not a standard EIP712Domain field; declare EIP712Domain in types to use it")
        }
        return try standard.filter { name, _ in members.contains { $0.key == name } }.map { name, type in
            Member(name: name, type: type, parsed: try FieldType.parse(type, structs: []))
        }
    }

    /// A struct that contains itself other than through an array can have no finite value: refuse the types.
    private func checkNoUnboundedCycle() throws {
        var state = [String: Int]()  // 1 visiting, 2 done
        func visit(_ name: String, _ trail: [String]) throws {
            if state[name] == 2 { return }
            if state[name] == 1 {
                throw TypedDataError("struct \(name) contains itself without an array (\((trail + [name]).joined(separator: " → "))); "
                                     + "no finite value exists, make the recursive field an array")
            }
            state[name] = 1
            for member in types[name] ?? [] {
                if case .structure(let child) = member.parsed { try visit(child, trail + [name]) }
            }
            state[name] = 2
        }
        for name in types.keys.sorted() { try visit(name, []) }
    }

    // MARK: hashing

    /// `Name(type1 field1,…)` followed by every struct it refers to, sorted by name.
    public func encodeType(_ name: String) throws -> String {
        guard types[name] != nil else { throw TypedDataError("type '\(name)' is not defined") }
        var found = Set<String>()
        var pending = [name]
        while let next = pending.popLast() {
            for member in types[next] ?? [] {
                if let child = member.parsed.structName, found.insert(child).inserted { pending.append(child) }
            }
        }
        found.remove(name)
        return ([name] + found.sorted()).map { typeName in
            typeName + "(" + (types[typeName] ?? []).map { "\($0.type) \($0.name)" }.joined(separator: ",") + ")"
        }.joined()
    }

    public func typeHash(_ name: String) throws -> [UInt8] { Keccak256.hash(Array(try encodeType(name).utf8)) }

    /// keccak256(typeHash ‖ encodeData(value)).
    public func hashStruct(_ name: String, _ value: JSONValue) throws -> [UInt8] {
        var cache = [String: [UInt8]]()
        return try hashStruct(name, value, path: name == Self.domainTypeName ? "domain" : "message", depth: 0, cache: &cache)
    }

    public func domainSeparator() throws -> [UInt8] { try hashStruct(Self.domainTypeName, domain) }

    /// The digest that is signed: keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message)).
    public func digest() throws -> [UInt8] {
        var bytes: [UInt8] = [0x19, 0x01] + (try domainSeparator())
        // With the domain as primary type there is no message hash (as eth-account and MetaMask do).
        if primaryType != Self.domainTypeName {
            if case .null = message { throw TypedDataError("'message' is missing; give the \(primaryType) being signed") }
            bytes += try hashStruct(primaryType, message)
        }
        return Keccak256.hash(bytes)
    }

    public func sign(with key: PrivateKey) throws -> RecoverableSignature { try key.signRecoverable(digest: try digest()) }

    /// The EIP-55 address that made `signature` over this document.
    public func recoverAddress(_ signature: RecoverableSignature) throws -> String {
        EthereumAddress.address(of: try signature.recoverPublicKey(digest: try digest()))
    }

    private func hashStruct(_ name: String, _ value: JSONValue, path: String, depth: Int, cache: inout [String: [UInt8]]) throws -> [UInt8] {
        guard depth <= Self.maxDepth else { throw TypedDataError("\(path): structs nest deeper than \(Self.maxDepth) levels") }
        guard let members = types[name] else { throw TypedDataError("\(path): type '\(name)' is not defined") }
        guard let given = value.objectMembers else {
            throw TypedDataError("\(path) must be an object (a \(name)), got \(value.kindName)")
        }
        for field in given where !members.contains(where: { $0.name == field.key }) {
            throw TypedDataError("\(path).\(field.key) is not a field of \(name); remove it or add it to types.\(name)")
        }
        let typeHash: [UInt8]
        if let cached = cache[name] { typeHash = cached } else {
            typeHash = try self.typeHash(name)
            cache[name] = typeHash
        }
        var encoded = typeHash
        encoded.reserveCapacity(32 * (members.count + 1))
        for member in members {
            guard let fieldValue = value[member.name] else {
                throw TypedDataError("\(path).\(member.name) is missing; \(name) needs \(Self.article(member.type)) \(member.type) '\(member.name)'")
            }
            encoded += try encode(member.parsed, fieldValue, path: "\(path).\(member.name)", depth: depth, cache: &cache)
        }
        return Keccak256.hash(encoded)
    }

    /// One 32-byte word for a field value.
    private func encode(_ type: FieldType, _ value: JSONValue, path: String, depth: Int, cache: inout [String: [UInt8]]) throws -> [UInt8] {
        switch type {
        case .structure(let name):
            return try hashStruct(name, value, path: path, depth: depth + 1, cache: &cache)
        case .array(let element, let length):
            let items: [JSONValue]
            switch value {
            case .array(let list): items = list
            case .object(let members) where members.isEmpty: items = []  // an empty Lua table
            default: throw TypedDataError("\(path) must be an array (\(type.written)), got \(value.kindName)")
            }
            if let length, items.count != length { throw TypedDataError("\(path) has \(items.count) elements; \(type.written) needs exactly \(length)") }
            guard depth < Self.maxDepth else { throw TypedDataError("\(path): arrays nest deeper than \(Self.maxDepth) levels") }
            var concatenated = [UInt8]()
            concatenated.reserveCapacity(32 * items.count)
            for (i, item) in items.enumerated() {
                concatenated += try encode(element, item, path: "\(path)[\(i)]", depth: depth + 1, cache: &cache)
            }
            return Keccak256.hash(concatenated)
        case .string:
            guard case .string(let text) = value else { throw TypedDataError("\(path) must be a string, got \(value.kindName)") }
            return Keccak256.hash(Array(text.utf8))
        case .bytes:
            return Keccak256.hash(try hexValue(value, path: path))
        case .bool:
            guard case .bool(let flag) = value else { throw TypedDataError("\(path) must be true or false, got \(value.kindName)") }
            return UInt256(flag ? 1 : 0).word
        case .address:
            guard case .string(let text) = value else { throw TypedDataError("\(path) must be an address string \"0x…\", got \(value.kindName)") }
            do { return [UInt8](repeating: 0, count: 12) + (try EthereumAddress.decode(text)) } catch {
                throw TypedDataError("\(path) is not an address: \(error)")
            }
        case .fixedBytes(let n):
            let bytes = try hexValue(value, path: path)
            guard bytes.count == n else { throw TypedDataError("\(path) is \(bytes.count) bytes; bytes\(n) needs exactly \(n)") }
            return bytes + [UInt8](repeating: 0, count: 32 - n)
        case .uint(let bits):
            let (negative, magnitude) = try integerValue(value, path: path)
            if negative && !magnitude.isZero { throw TypedDataError("\(path) is negative; uint\(bits) takes 0 or more") }
            guard magnitude.bitWidth <= bits else { throw TypedDataError("\(path) does not fit in uint\(bits)") }
            return magnitude.word
        case .int(let bits):
            let (negative, magnitude) = try integerValue(value, path: path)
            // intN holds -2^(N-1) … 2^(N-1) - 1.
            let fits = negative ? magnitude.bitWidth < bits || magnitude == Self.powerOfTwo(bits - 1) : magnitude.bitWidth < bits
            guard fits else { throw TypedDataError("\(path) does not fit in int\(bits) (-2^\(bits - 1) … 2^\(bits - 1) - 1)") }
            return negative ? magnitude.negated.word : magnitude.word
        }
    }

    private static func powerOfTwo(_ exponent: Int) -> UInt256 {
        var value = UInt256(1)
        for _ in 0..<exponent { value = value.multipliedAdding(2, 0) ?? .zero }
        return value
    }

    private func hexValue(_ value: JSONValue, path: String) throws -> [UInt8] {
        guard case .string(let text) = value else { throw TypedDataError("\(path) must be a 0x-hex string, got \(value.kindName)") }
        do { return try EthHex.decode(text) } catch { throw TypedDataError("\(path) \(error)") }
    }

    /// Sign and magnitude from a JSON integer, a decimal string (sign allowed) or a 0x-hex string.
    private func integerValue(_ value: JSONValue, path: String) throws -> (negative: Bool, magnitude: UInt256) {
        let text: String
        switch value {
        case .number(let t):
            guard !t.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) else {
                throw TypedDataError("\(path) is \(t); it must be a whole number (write large values as decimal strings)")
            }
            text = t
        case .string(let t): text = t
        default: throw TypedDataError("\(path) must be an integer or a decimal / 0x-hex string, got \(value.kindName)")
        }
        let negative = text.hasPrefix("-")
        do { return (negative, try UInt256(parsing: negative ? String(text.dropFirst()) : text)) } catch {
            throw TypedDataError("\(path): \(error)")
        }
    }
}

private func isIdentifier(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, text.utf8.count <= 256 else { return false }
    func letter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) || c == "_" || c == "$" }
    return letter(first) && text.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
}

/// A typed-data document that cannot be hashed; the text names the value or type and what to change.
extension TypedData {
    /// Top-level fields of the primary type that name who grants (EIP-2612's `owner`, DAI's `holder`,
    /// a transfer's `from`), as address text, when they are not `signer` (0x-hex, any case): signing a
    /// permit whose owner is someone else is either useless or a sign the document is not what the user
    /// thinks. Wallets such as MetaMask warn the same way.
    public func grantorsOtherThan(_ signer: String) -> [(field: String, address: String)] {
        guard let members = types[primaryType] else { return [] }
        var found = [(field: String, address: String)]()
        for member in members where member.type == "address" && ["owner", "holder", "from"].contains(member.name) {
            guard case .string(let given)? = message[member.name] else { continue }
            if given.lowercased() != signer.lowercased() { found.append((member.name, given)) }
        }
        return found
    }
}

extension TypedData {
    /// "a" or "an" before a type name, as it is read aloud ("an address", "an int256", "a uint8").
    static func article(_ type: String) -> String {
        guard let first = type.first?.lowercased() else { return "a" }
        return "aeio".contains(first) ? "an" : "a"
    }
}

public struct TypedDataError: Error, Equatable, CustomStringConvertible {
    public let detail: String
    public init(_ detail: String) { self.detail = detail }
    public var description: String { "EIP-712: " + detail }
    public var kind: String { "invalid_typed_data" }
}
