/// The verification a deposit asks of the ledger once the chains it recorded before are set aside:
/// what a server weighs against its budget and its clients' rates before anything is verified.
public struct DepositWork: Sendable, Equatable {
    /// Distinct chains to verify.
    public var chains: Int
    /// Their links together: each one a signature check and a re-run of the token's program.
    public var links: Int

    public init(chains: Int, links: Int) {
        self.chains = chains
        self.links = links
    }
}
