import KeyhostRecord
import Foundation
import KeyhostTestSupport
import Testing
@testable import KeyhostEthereum

/// Bytes of 0x-hex test data; data that is not hex is a broken test, recorded and returned empty.
func bytes(_ text: String) -> [UInt8] {
    do { return try EthHex.decode(text.hasPrefix("0x") ? text : "0x" + text) } catch {
        Issue.record("test data is not hex: \(text)")
        return []
    }
}

func hex(_ bytes: [UInt8]) -> String { hex0x(bytes) }

/// Runs Tests/Oracles/eth_oracle.py (eth-account, pyrlp) in the repository's venv and decodes its JSON output.
enum EthOracle {
    static func run(_ arguments: [String], input: Any? = nil) throws -> Any {
        let data = try input.map { try JSONSerialization.data(withJSONObject: $0) }
        return try JSONSerialization.jsonObject(with: PythonOracle.run("eth_oracle.py", arguments, input: data))
    }

    /// The same output as keyhost's own JSON value (numbers keep their exact text).
    static func runJSON(_ arguments: [String], input: Any? = nil) throws -> JSONValue {
        let data = try input.map { try JSONSerialization.data(withJSONObject: $0) }
        return try JSONValue.parse(Array(PythonOracle.run("eth_oracle.py", arguments, input: data)), maxBytes: 64 << 20)
    }
}

extension JSONValue {
    var text: String? { if case .string(let s) = self { return s } else { return nil } }
    var items: [JSONValue] { if case .array(let a) = self { return a } else { return [] } }
}
