#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own (Foundation's Thread would bring Foundation proper, and ICU, into keyhost).
final class WorkerThread {
    private var thread: pthread_t?
    private var body: (() -> Void)?

    fileprivate init(_ body: @escaping () -> Void) { self.body = body }

    /// Waits for the body to return.
    func join() {
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    fileprivate func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Glibc)
        var id = pthread_t()
        #else
        var id: pthread_t?
        #endif
        let status = pthread_create(&id, nil, { raw in
            let worker = Unmanaged<WorkerThread>.fromOpaque(raw!).takeRetainedValue()
            worker.runBody()
            return nil
        }, context)
        if status == 0 {
            thread = id
        } else {
            // No thread to be had (a process or memory limit): the work still gets done, on the caller's thread.
            Unmanaged<WorkerThread>.fromOpaque(context).release()
            runBody()
        }
    }

    private func runBody() {
        let body = self.body
        self.body = nil
        body?()
    }
}

/// Runs `body` on a new thread; `join()` the result to wait for it.
func startThread(_ body: @escaping () -> Void) -> WorkerThread {
    let worker = WorkerThread(body)
    worker.start()
    return worker
}

/// Sleeps `seconds` (as Thread.sleep did: a signal does not cut the wait short).
func sleepSeconds(_ seconds: Double) {
    guard seconds > 0 else { return }
    let clamped = min(seconds, Double(Int32.max))
    var request = timespec(tv_sec: Int(clamped), tv_nsec: Int((clamped - clamped.rounded(.towardZero)) * 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}
