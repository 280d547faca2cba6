import NIOCore
import Synchronization

/// Which connections the service holds, by client address, shared by every event loop.
///
/// Past a client's own limit its new connection is closed at once. At the total limit a client
/// holding fewer connections than the heaviest one takes the place of that one's oldest: a
/// handful of addresses filling the server cannot shut out a client that holds nothing, such as
/// a monitor asking `/v1/health`.
final class ConnectionAdmission: Sendable {
    let limits: ConnectionLimits
    private let state = Mutex(State())

    private struct State {
        var byClient: [String: [Held]] = [:]
        var count = 0
        var lastID = 0
    }

    private struct Held {
        let id: Int
        let channel: any Channel
    }

    struct Ticket {
        let client: String
        let id: Int
    }

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    /// A ticket when `channel` may stay open (to `release` when it closes), nil when it must close now.
    func admit(_ channel: any Channel) -> Ticket? {
        let client = Self.client(of: channel)
        let (ticket, evicted) = state.withLock { state -> (Ticket?, (any Channel)?) in
            let mine = state.byClient[client]?.count ?? 0
            guard mine < limits.perClient else { return (nil, nil) }
            var evicted: (any Channel)?
            if state.count >= limits.total {
                guard let heaviest = state.byClient.max(by: { $0.value.count < $1.value.count }), heaviest.value.count > mine + 1 else {
                    return (nil, nil)
                }
                evicted = heaviest.value[0].channel
                state.byClient[heaviest.key]!.removeFirst()
                state.count -= 1
            }
            state.lastID += 1
            state.byClient[client, default: []].append(Held(id: state.lastID, channel: channel))
            state.count += 1
            return (Ticket(client: client, id: state.lastID), evicted)
        }
        evicted?.close(promise: nil)
        return ticket
    }

    func release(_ ticket: Ticket) {
        state.withLock { state in
            guard let index = state.byClient[ticket.client]?.firstIndex(where: { $0.id == ticket.id }) else { return }
            state.byClient[ticket.client]!.remove(at: index)
            if state.byClient[ticket.client]!.isEmpty { state.byClient[ticket.client] = nil }
            state.count -= 1
        }
    }

    /// How many connections are held now.
    var count: Int { state.withLock { $0.count } }

    /// The address a limit counts against: IPv4 as is, IPv6 by its /64, which one host usually
    /// holds whole (counting single addresses would give it 2^64 allowances).
    static func client(of channel: any Channel) -> String {
        switch channel.remoteAddress {
        case .v6(let address)?:
            let bytes = withUnsafeBytes(of: address.address.sin6_addr) { Array($0.prefix(8)) }
            return "v6:" + bytes.map { String($0, radix: 16) }.joined(separator: ":")
        case let address?:
            return address.ipAddress ?? "\(address)"
        case nil:
            return "unknown"
        }
    }
}
