import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import DarkroomServer

@Suite("AdmissionController")
struct AdmissionControllerTests {
    @Test("runs at most maxRunning at once, queues maxQueued, refuses the rest")
    func bounds() async throws {
        // Given 2 slots and 3 queue places, and 10 operations held until a gate opens
        let admission = AdmissionController(maxRunning: 2, maxQueued: 3)
        let peak = Locked((now: 0, max: 0))
        let gate = AsyncGate()
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        try await admission.run {
                            peak.withLock {
                                $0.now += 1
                                $0.max = max($0.max, $0.now)
                            }
                            await gate.wait()
                            peak.withLock { $0.now -= 1 }
                        }
                        return "ran"
                    } catch let error as ServerError {
                        return error.code.rawValue
                    } catch {
                        return "other"
                    }
                }
            }
            // When all 10 have arrived (2 running, 3 queued, 5 refused), the gate opens
            let settled = await eventually {
                admission.running == 2 && admission.queued == 3 && admission.refusedCount == 5
            }
            #expect(
                settled, "running \(admission.running), queued \(admission.queued), refused \(admission.refusedCount)")
            gate.open()
            return await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        }
        // Then 5 ran (never more than 2 at once) and 5 were refused as overloaded
        #expect(outcomes == ["ran": 5, "overloaded": 5])
        #expect(peak.withLock { $0.max } == 2)
        #expect(admission.running == 0 && admission.queued == 0)
        #expect(admission.refusedCount == 5)
    }

    @Test("a cancelled waiter leaves the queue and frees its place")
    func cancellation() async throws {
        let admission = AdmissionController(maxRunning: 1, maxQueued: 1)
        let release = AsyncGate()
        let holder = Task { try await admission.run { await release.wait() } }
        #expect(await eventually { admission.running == 1 })
        // Given a waiter in the only queue place
        let waiter = Task { try await admission.run { "ran" } }
        #expect(await eventually { admission.queued == 1 })
        // When it is cancelled
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        // Then its place is free for the next one, which runs once the slot is released
        #expect(admission.queued == 0)
        let next = Task { try await admission.run { "next" } }
        #expect(await eventually { admission.queued == 1 })
        release.open()
        #expect(try await next.value == "next")
        try await holder.value
        #expect(admission.running == 0)
    }

    @Test("renders start only while their costs fit in the memory budget; one alone may exceed it")
    func memoryBudget() async throws {
        // Given 4 slots but a budget of 100 bytes, and renders costing 60, 60, 30 and 500 arriving in that order,
        // each held until a gate opens
        let admission = AdmissionController(maxRunning: 4, maxQueued: 8, memoryBudget: 100)
        let peak = Locked((now: 0, max: 0, maxConcurrent: 0, concurrent: 0))
        let gate = AsyncGate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, cost) in [60, 60, 30, 500].enumerated() {
                group.addTask {
                    try await admission.run(cost: cost) {
                        peak.withLock { p in
                            p.now += cost
                            p.concurrent += 1
                            p.max = max(p.max, p.now)
                            p.maxConcurrent = max(p.maxConcurrent, p.concurrent)
                        }
                        await gate.wait()
                        peak.withLock { p in
                            p.now -= cost
                            p.concurrent -= 1
                        }
                    }
                }
                // the next arrives only once this one is running or queued
                #expect(await eventually { admission.running + admission.queued == i + 1 })
            }
            // When only the first fits and the rest wait, the gate opens
            #expect(admission.running == 1 && admission.reservedBytes == 60)
            gate.open()
            try await group.waitForAll()
        }
        // Then the reserved bytes never passed the budget except for the 500 running by itself
        let p = peak.withLock { $0 }
        #expect(p.max == 500, "the oversized render ran, alone")
        #expect(p.maxConcurrent <= 2, "60 + 60 never overlapped with more than a 30")
        #expect(admission.reservedBytes == 0 && admission.running == 0)
    }

    @Test("Retry-After grows with the backlog and is at least 1 s")
    func retryAfter() async throws {
        let admission = AdmissionController(maxRunning: 1, maxQueued: 4)
        #expect(admission.retryAfterSeconds >= 1)
    }
}
