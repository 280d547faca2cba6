#if canImport(Glibc)
import Glibc
#endif
import KeyhostFiles

/// One thread that fires every deadline of the process.
///
/// A deposit sets two deadlines (the request's and the store call's) and almost always ends long
/// before either. A `Task.sleep` per deadline cost a task, a timer registration with Dispatch's
/// manager thread and a wake-up to cancel it, for every deposit. Here setting a deadline is a heap
/// insert under a lock and cancelling one is a removal: the thread sleeps toward the earliest
/// deadline it knew of and is woken only when a new one is earlier than that.
public final class DeadlineTimers: @unchecked Sendable {
    /// The process's timer thread (started on first use).
    public static let shared = DeadlineTimers()

    /// A scheduled action, to cancel it.
    public struct Timer: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private struct Entry {
        let due: UInt64
        let id: UInt64
        let action: @Sendable () -> Void
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`:
    private var heap: [Entry] = []
    private var positions: [UInt64: Int] = [:]
    private var nextID: UInt64 = 1
    /// The time the thread sleeps toward (`.max`: until woken); a deadline no earlier needs no wake-up.
    private var sleepingUntil = UInt64.max
    private var thread: WorkerThread?

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(wake, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Runs `action` on the timer thread once `delay` has passed, unless cancelled before.
    /// Actions must be short: the next deadline waits for them.
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> Timer {
        let due = Self.now() + Self.nanoseconds(delay)
        pthread_mutex_lock(mutex)
        let id = nextID
        nextID += 1
        push(Entry(due: due, id: id, action: action))
        let started = startThreadIfNeeded()
        if due < sleepingUntil { pthread_cond_signal(wake) }
        pthread_mutex_unlock(mutex)
        if !started {
            // No thread to be had (a process or thread limit): this deadline sleeps on its own.
            Task {
                try? await Task.sleep(for: delay)
                self.fire(id)
            }
        }
        return Timer(id: id)
    }

    /// Removes `timer`'s action; false when it has run (or is running) already.
    @discardableResult
    public func cancel(_ timer: Timer) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let position = positions[timer.id] else { return false }
        remove(at: position)
        return true
    }

    /// Deadlines set and not yet fired or cancelled (for tests).
    var pending: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return heap.count
    }

    /// The monotonic time in ns the thread sleeps toward, nil when it is not sleeping toward one (for tests).
    var sleepsUntil: UInt64? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return sleepingUntil == .max ? nil : sleepingUntil
    }

    // MARK: - The thread

    /// Under `mutex`. False when no thread can be started now (that deadline then sleeps as a task).
    private func startThreadIfNeeded() -> Bool {
        if thread == nil { thread = startBackgroundThread { [self] in run() } }
        return thread != nil
    }

    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            guard let first = heap.first else {
                sleepingUntil = .max
                pthread_cond_wait(wake, mutex)
                continue
            }
            if first.due <= Self.now() {
                remove(at: 0)
                pthread_mutex_unlock(mutex)
                first.action()
                pthread_mutex_lock(mutex)
                continue
            }
            sleepingUntil = first.due
            var until = timespec(tv_sec: Int(first.due / 1_000_000_000), tv_nsec: Int(first.due % 1_000_000_000))
            pthread_cond_timedwait(wake, mutex, &until)
        }
    }

    /// Runs `id`'s action if it is still set (the path without a thread).
    private func fire(_ id: UInt64) {
        pthread_mutex_lock(mutex)
        var entry: Entry?
        if let position = positions[id] {
            entry = heap[position]
            remove(at: position)
        }
        pthread_mutex_unlock(mutex)
        entry?.action()
    }

    // MARK: - The heap (earliest due first), with each entry's position for removal

    private func push(_ entry: Entry) {
        heap.append(entry)
        positions[entry.id] = heap.count - 1
        siftUp(heap.count - 1)
    }

    private func remove(at position: Int) {
        positions[heap[position].id] = nil
        let last = heap.removeLast()
        guard position < heap.count else { return }
        heap[position] = last
        positions[last.id] = position
        siftDown(position)
        siftUp(position)
    }

    private func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].due < heap[parent].due else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].due < heap[smallest].due { smallest = left }
            if right < heap.count, heap[right].due < heap[smallest].due { smallest = right }
            if smallest == parent { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        positions[heap[a].id] = a
        positions[heap[b].id] = b
    }

    // MARK: - Time

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// A delay in ns, capped at 2^32 s (136 years, as good as never), which keeps `now + delay` far from overflowing.
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(min(seconds, 1 << 32)) * 1_000_000_000 + UInt64(max(0, attoseconds)) / 1_000_000_000
    }
}
