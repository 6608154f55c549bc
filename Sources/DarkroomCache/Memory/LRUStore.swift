/// The unsynchronized machinery behind ``MemoryCache``: a hash index into an intrusive doubly linked list kept in
/// one array of nodes (free slots reused through a free list), so get, set and remove are O(1) with no allocation
/// per operation once the arrays have grown. The head is the most recently used entry, the tail the least.
///
/// Values leaving the store (evicted, replaced, removed) are appended to a caller-supplied array so the caller can
/// release them after dropping its lock: a value's deinit may be arbitrarily slow or re-enter the cache.
@usableFromInline
struct LRUStore<Key: Hashable, Value>: ~Copyable {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Monotonic nanoseconds after which the entry is stale; `UInt64.max` when the store has no TTL.
        @usableFromInline var expiry: UInt64
        @usableFromInline var prev: Int32
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key?, value: Value?, cost: Int, expiry: UInt64, prev: Int32, next: Int32) {
            (self.key, self.value, self.cost, self.expiry, self.prev, self.next) = (
                key, value, cost, expiry, prev, next
            )
        }
    }

    @usableFromInline var limits: MemoryCacheLimits
    @usableFromInline var index: [Key: Int32] = [:]
    @usableFromInline var nodes: [Node] = []
    @usableFromInline var free: [Int32] = []
    @usableFromInline var head: Int32 = -1
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var totalCost = 0
    @usableFromInline var hits: UInt64 = 0
    @usableFromInline var misses: UInt64 = 0
    @usableFromInline var evictions: UInt64 = 0
    /// The largest cost a single entry may have (the limits' fraction of the cost limit).
    @usableFromInline var maxEntryCost: Int

    @inlinable
    init(limits: MemoryCacheLimits) {
        self.limits = limits
        self.maxEntryCost = limits.maxEntryCost
    }

    @inlinable
    var count: Int { index.count }
    @inlinable
    var hasTTL: Bool { limits.maxAge != nil }

    // MARK: Lookup

    /// The value for `key` if present and fresh, marking it most recently used. A stale entry is removed and
    /// appended to `released`.
    @inlinable
    mutating func value(forKey key: Key, now: UInt64, released: inout [Value]) -> Value? {
        guard let i = index[key] else {
            misses &+= 1
            return nil
        }
        if nodes[Int(i)].expiry <= now {
            if let v = unlinkAndFree(i) { released.append(v) }
            evictions &+= 1
            misses &+= 1
            return nil
        }
        hits &+= 1
        moveToHead(i)
        return nodes[Int(i)].value
    }

    /// Whether `key` is present and fresh, without touching recency or counters.
    @inlinable
    func contains(_ key: Key, now: UInt64) -> Bool {
        guard let i = index[key] else { return false }
        return nodes[Int(i)].expiry > now
    }

    // MARK: Mutation

    /// Stores `value` as the most recently used entry, then evicts from the tail until every limit holds.
    /// A value costing more than the per-entry maximum is not stored (and any older value for the key is dropped).
    @inlinable
    mutating func set(_ value: Value, forKey key: Key, cost: Int, now: UInt64, released: inout [Value]) {
        let cost = max(0, cost)
        if cost > maxEntryCost {
            if let i = index[key], let old = unlinkAndFree(i) { released.append(old) }
            return
        }
        let expiry = limits.maxAge.map { now &+ $0.nanoseconds } ?? UInt64.max
        if let i = index[key] {
            let n = Int(i)
            if let old = nodes[n].value { released.append(old) }
            totalCost += cost - nodes[n].cost
            nodes[n].value = value
            nodes[n].cost = cost
            nodes[n].expiry = expiry
            moveToHead(i)
        } else {
            let node = Node(key: key, value: value, cost: cost, expiry: expiry, prev: -1, next: head)
            let i: Int32
            if let slot = free.popLast() {
                i = slot
                nodes[Int(i)] = node
            } else {
                i = Int32(nodes.count)
                nodes.append(node)
            }
            if head >= 0 { nodes[Int(head)].prev = i }
            head = i
            if tail < 0 { tail = i }
            index[key] = i
            totalCost += cost
        }
        evict(toCost: limits.costLimit, toCount: limits.countLimit, released: &released)
    }

    /// Removes `key`, returning its value (for release outside the lock).
    @inlinable
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        return unlinkAndFree(i)
    }

    /// Evicts least recently used entries until cost ≤ `cost` and count ≤ `count`.
    @inlinable
    mutating func evict(toCost cost: Int, toCount count: Int, released: inout [Value]) {
        while tail >= 0, totalCost > cost || index.count > count {
            if let v = unlinkAndFree(tail) { released.append(v) }
            evictions &+= 1
        }
    }

    /// Removes every stale entry (a walk from the tail; entries are not ordered by age, so this is O(n)).
    @inlinable
    mutating func removeExpired(now: UInt64, released: inout [Value]) {
        guard hasTTL else { return }
        var i = tail
        while i >= 0 {
            let prev = nodes[Int(i)].prev
            if nodes[Int(i)].expiry <= now {
                if let v = unlinkAndFree(i) { released.append(v) }
                evictions &+= 1
            }
            i = prev
        }
    }

    /// Replaces the limits, then evicts to meet them.
    @inlinable
    mutating func setLimits(_ newLimits: MemoryCacheLimits, released: inout [Value]) {
        limits = newLimits
        maxEntryCost = newLimits.maxEntryCost
        evict(toCost: newLimits.costLimit, toCount: newLimits.countLimit, released: &released)
    }

    /// Empties the store, handing back the old storage so its values are released by the caller, outside the lock.
    @inlinable
    mutating func takeAll() -> (index: [Key: Int32], nodes: [Node]) {
        let taken = (index, nodes)
        index = [:]
        nodes = []
        free = []
        head = -1
        tail = -1
        totalCost = 0
        return taken
    }

    /// Keys from most to least recently used (for tests and diagnostics; O(n)).
    @inlinable
    func keysByRecency() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(index.count)
        var i = head
        while i >= 0 {
            if let k = nodes[Int(i)].key { keys.append(k) }
            i = nodes[Int(i)].next
        }
        return keys
    }

    /// Checks the list and the index agree and the cost adds up (O(n); for tests).
    @inlinable
    func isConsistent() -> Bool {
        var seen = 0
        var cost = 0
        var i = head
        var prev: Int32 = -1
        while i >= 0 {
            let n = nodes[Int(i)]
            guard n.prev == prev, let k = n.key, index[k] == i else { return false }
            seen += 1
            cost += n.cost
            prev = i
            i = n.next
        }
        return prev == tail && seen == index.count && cost == totalCost
            && totalCost <= limits.costLimit && index.count <= limits.countLimit
    }

    // MARK: List surgery

    @inlinable
    mutating func moveToHead(_ i: Int32) {
        guard i != head else { return }
        let n = Int(i)
        let prev = nodes[n].prev
        let next = nodes[n].next
        // i is not the head, so prev >= 0.
        nodes[Int(prev)].next = next
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        nodes[n].prev = -1
        nodes[n].next = head
        nodes[Int(head)].prev = i
        head = i
    }

    /// Unlinks node `i`, drops it from the index, frees its slot and returns its value.
    @inlinable
    mutating func unlinkAndFree(_ i: Int32) -> Value? {
        let n = Int(i)
        let prev = nodes[n].prev
        let next = nodes[n].next
        if prev >= 0 { nodes[Int(prev)].next = next } else { head = next }
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        if let k = nodes[n].key { index[k] = nil }
        totalCost -= nodes[n].cost
        let value = nodes[n].value
        nodes[n].key = nil
        nodes[n].value = nil
        nodes[n].cost = 0
        nodes[n].prev = -1
        nodes[n].next = -1
        free.append(i)
        return value
    }
}
