import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own (Foundation's Thread would bring Foundation proper, and ICU, into keyhost). @unchecked:
/// started once, joined once, by the thread that holds it.
public final class WorkerThread: @unchecked Sendable {
    private var thread: pthread_t?
    private var body: (@Sendable () -> Void)?
    /// Whether the body runs on the caller's thread when no thread can be had (never for a loop that waits to be stopped).
    private let inlineIfNoThread: Bool

    fileprivate init(inlineIfNoThread: Bool = true, _ body: @escaping @Sendable () -> Void) {
        self.inlineIfNoThread = inlineIfNoThread
        self.body = body
    }

    /// Waits for the body to return.
    public func join() {
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
            if inlineIfNoThread { runBody() } else { body = nil }
        }
    }

    /// Whether a thread runs (or ran) the body.
    fileprivate var started: Bool { thread != nil }

    private func runBody() {
        let body = self.body
        self.body = nil
        body?()
    }
}

/// Runs `body` on a new thread; `join()` the result to wait for it.
public func startThread(_ body: @escaping @Sendable () -> Void) -> WorkerThread {
    let worker = WorkerThread(body)
    worker.start()
    return worker
}

/// Runs `body` on a new thread if one can be had (nil if not): for helpers such as a keep-alive that loop until told to stop.
public func startBackgroundThread(_ body: @escaping @Sendable () -> Void) -> WorkerThread? {
    let worker = WorkerThread(inlineIfNoThread: false, body)
    worker.start()
    return worker.started ? worker : nil
}

/// A mutex with try-lock (DispatchQueue has none), for locks held across a blocking exchange.
public final class ThreadLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Takes the lock if it is free; never waits.
    public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
}

/// `body` over `items` on at most `width` threads, results in order. The first failure (by position) is thrown
/// after in-flight work ends; items not yet started are not started. The remote usage sources and a wallet's
/// batch of token runs share it.
public func parallelMap<T: Sendable, R: Sendable>(_ items: [T], width: Int, _ body: @escaping @Sendable (T) throws -> R) throws -> [R] {
    try parallelMap(items, width: width) { item, _ in try body(item) }
}

/// `parallelMap` whose body also gets the number of the thread running it (0 ..< width), for work that
/// needs something of its own per thread (a wallet's batch: one worker process per lane).
public func parallelMap<T: Sendable, R: Sendable>(_ items: [T], width: Int, _ body: @escaping @Sendable (T, Int) throws -> R) throws -> [R] {
    if items.count == 1 { return [try body(items[0], 0)] }
    // Workers pull the next index from shared state; everything shared sits behind one lock.
    let state = MapState<R>(count: items.count)
    // Dedicated threads, not the GCD pool: these block on sockets or pipes for whole requests, and blocked GCD
    // workers would starve other work queued on the pool.
    let workers = min(max(1, width), items.count)
    let threads = (0..<workers).map { worker in
        startThread {
            while true {
                let index: Int? = state.locked { s in
                    guard s.failure == nil, s.next < items.count else { return nil }
                    s.next += 1
                    return s.next - 1
                }
                guard let index else { return }
                do {
                    let result = try body(items[index], worker)
                    state.locked { $0.results[index] = result }
                } catch {
                    state.locked { s in
                        if s.failure == nil || index < s.failure!.index { s.failure = (index, error) }
                    }
                }
            }
        }
    }
    threads.forEach { $0.join() }
    if let failure = state.failure { throw failure.error }
    return state.results.map { $0! }
}

/// The shared state of `parallelMap`, behind one lock: the next item to start, the results so far and the
/// first failure by position.
private final class MapState<R: Sendable>: Sendable {
    struct Fields {
        var results: [R?]
        var next = 0
        var failure: (index: Int, error: any Error)?
    }
    private let fields: Mutex<Fields>
    init(count: Int) { fields = Mutex(Fields(results: Array(repeating: nil, count: count))) }
    func locked<V: Sendable>(_ body: (inout Fields) -> V) -> V { fields.withLock { body(&$0) } }
    var results: [R?] { locked { $0.results } }
    var failure: (index: Int, error: any Error)? { fields.withLock { $0.failure } }
}
