import Foundation

/// How long the tests wait for a state a healthy system reaches (a server started, a row locked,
/// a process gone): only a broken one gets near it, however loaded the machine. It bounds a
/// failing run, and is never the thing a test measures.
let patienceSeconds: Double = 300

/// Polls `condition` until it holds; false when it still does not after `seconds`.
func eventually(seconds: Double = patienceSeconds, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}

/// The same from an async test: it sleeps between polls instead of blocking its thread. The test
/// process has as many cooperative threads as cores (two here), and a test that blocks one stalls
/// every async test beside it: a store's connection, ready at once, then waited 15 s and more for
/// a thread to hear about it.
func eventually(seconds: Double = patienceSeconds, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}
