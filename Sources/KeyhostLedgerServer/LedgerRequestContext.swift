import Hummingbird
import NIOCore

/// A request's context: Hummingbird's basics and the client address its limits count against.
public struct LedgerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The address as `ConnectionAdmission` counts it (an IPv6 address by its /64).
    let client: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        client = ConnectionAdmission.client(of: source.channel)
    }
}
