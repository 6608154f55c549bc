import DarkroomSupport

extension ImageRequest.Priority {
    /// The work-queue level a request at this priority runs at (the same five levels, one to one).
    var queueLevel: WorkQueue.Priority { WorkQueue.Priority(rawValue: rawValue) ?? .normal }
}
