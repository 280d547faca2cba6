import NIOCore
import NIOHTTPTypes

/// One connection's admission (when it opens) and its request deadline.
///
/// The deadline runs while the service waits for a request: from the connection's start, or
/// from the answer that left nothing pending, until the request's end has arrived. Hummingbird's
/// idle timeout never ends a request that is being read, so a client sending one byte every few
/// seconds would otherwise hold its connection (and a descriptor) for as long as it likes.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let admission: ConnectionAdmission
    private var ticket: ConnectionAdmission.Ticket?
    private var started = false
    private var deadline: Scheduled<Void>?
    /// Requests whose end has arrived and answers whose end has been written.
    private var received = 0, answered = 0

    init(admission: ConnectionAdmission) {
        self.admission = admission
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            received += 1
            // Answered early (413 on Content-Length) and now complete: the next request's time starts.
            if received > answered { disarm() } else { arm(context, restart: true) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            answered += 1
            if answered >= received { arm(context, restart: false) }
        }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        guard let ticket = admission.admit(context.channel) else {
            context.close(promise: nil)
            return
        }
        self.ticket = ticket
        arm(context, restart: true)
    }

    private func stop() {
        disarm()
        if let ticket { admission.release(ticket) }
        ticket = nil
    }

    private func arm(_ context: ChannelHandlerContext, restart: Bool) {
        guard ticket != nil, restart || deadline == nil else { return }
        disarm()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(admission.limits.requestTimeout)) {
            channel.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
