/// Why bytes are not a deterministic CBOR item keyhost accepts; `offset` is where the problem starts.
public struct CBORError: Error, Equatable, CustomStringConvertible {
    public let offset: Int
    public let problem: String

    public init(offset: Int, _ problem: String) {
        self.offset = offset
        self.problem = problem
    }

    public var description: String { "CBOR at byte \(offset): \(problem)" }
}
