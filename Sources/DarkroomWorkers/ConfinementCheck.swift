import CDarkroomSandbox

#if canImport(Glibc)
    import Glibc
#endif

/// Proof that a ``Confinement`` holds on this machine: a child process is forked, confines itself as a worker does,
/// and makes one forbidden attempt; the outcome says whether it was refused (and with which error) or the child was
/// ended (and by which signal). What tests and an operator's check run; blocking (a fork and a wait, milliseconds).
package enum ConfinementCheck {
    /// What the confined child tries.
    package enum Attempt: Sendable, CaseIterable {
        /// Nothing: a confined process runs and exits normally.
        case nothing
        /// Opening `path` for reading, then reading it.
        case open
        /// Creating `path` and writing to it.
        case create
        /// Writing a byte to a file descriptor opened before the confinement.
        case write
        /// Opening an internet socket, then a Unix one.
        case socket
        /// Running the program at `path`.
        case exec
        /// Asking to be traced.
        case ptrace
        /// Mapping twice the address-space limit.
        case allocate

        var code: dr_sandbox_attempt {
            switch self {
            case .nothing: DR_SANDBOX_TRY_NOTHING
            case .open: DR_SANDBOX_TRY_OPEN
            case .create: DR_SANDBOX_TRY_CREATE
            case .write: DR_SANDBOX_TRY_WRITE
            case .socket: DR_SANDBOX_TRY_SOCKET
            case .exec: DR_SANDBOX_TRY_EXEC
            case .ptrace: DR_SANDBOX_TRY_PTRACE
            case .allocate: DR_SANDBOX_TRY_ALLOCATE
            }
        }
    }

    /// How the attempt ended.
    package struct Outcome: Sendable, Equatable {
        /// The child confined itself.
        package var confined: Bool
        /// The namespaces applied (an empty root, no network).
        package var namespaces: Bool
        /// The child reached the attempt and reported it (false when it was ended during it).
        package var attempted: Bool
        /// The call's result (-1 when it failed).
        package var result: Int
        /// Its `errno` when it failed.
        package var error: Int32
        /// The signal that ended the child; 0 when it exited.
        package var signal: Int32
        /// Its exit status when it exited.
        package var exitStatus: Int32
    }

    /// Runs `attempt` in a confined child. `path` is the file `open`, `create` and `exec` use; `descriptor` the one
    /// `write` uses.
    /// - Throws: ``WorkerError``: `.confinementUnavailable` when the filter cannot be built, `.spawnFailed` when no
    ///   child could be made.
    package static func run(
        _ attempt: Attempt, confinement: Confinement = .default, path: String = "", descriptor: Int32 = -1
    ) throws(WorkerError) -> Outcome {
        let filter = try SeccompFilter.shared.get()
        var outcome = dr_sandbox_outcome()
        let status = confinement.withLimits { limits in
            path.withCString { path in
                dr_sandbox_try(filter.pointer, &limits, attempt.code, path, descriptor, &outcome)
            }
        }
        guard status == 0 else {
            throw WorkerError(.spawnFailed, "no child could be made: \(String(cString: strerror(-status)))")
        }
        return Outcome(
            confined: outcome.confined != 0, namespaces: outcome.namespaces != 0, attempted: outcome.attempted != 0,
            result: Int(outcome.result), error: outcome.error, signal: outcome.signal,
            exitStatus: outcome.exit_status)
    }
}
