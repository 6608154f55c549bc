import Foundation

/// Which remote sources the server may fetch: an allow list of hosts (`--allow-host`) and the address classes
/// no connection may reach, checked for the first URL and for every redirect (see `GuardedDataLoader`).
///
/// Cost: both checks are a few string and set operations; no I/O.
public struct RemotePolicy: Sendable {
    /// Host names or IP literals that may be fetched, compared case-insensitively with any trailing dot and IPv6
    /// brackets ignored. Empty (the default) allows no remote source at all.
    public var allowedHosts: Set<String>
    /// Address classes no connection may go to. Default: every class except ``AddressClass/publicUnicast``.
    public var blockedClasses: Set<AddressClass>
    /// Most redirects followed per fetch before failing with ``ServerError/Code/upstreamFailed``. Default 5.
    public var maxRedirects: Int = 5

    /// A policy allowing `allowedHosts` and blocking every non-public address class.
    public init(allowedHosts: Set<String> = []) {
        self.allowedHosts = allowedHosts
        self.blockedClasses = Set(AddressClass.allCases).subtracting([.publicUnicast])
    }

    /// Refuses a URL that is not `http`/`https` or carries a user name or password (``ServerError/Code/badRequest``),
    /// or whose host is not in ``allowedHosts`` (``ServerError/Code/hostNotAllowed``).
    func checkURL(_ url: URL) throws(ServerError) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw ServerError(.badRequest, "only http and https sources are allowed")
        }
        guard url.user == nil, url.password == nil else {
            throw ServerError(.badRequest, "source URLs may not carry a user name or password")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ServerError(.badRequest, "source URL has no host")
        }
        let wanted = Self.normalized(host)
        guard !allowedHosts.isEmpty,
            allowedHosts.contains(wanted) || allowedHosts.contains(where: { Self.normalized($0) == wanted })
        else {
            throw ServerError(.hostNotAllowed, "host \(wanted) is not allowed")
        }
    }

    /// Refuses (``ServerError/Code/addressBlocked``) when `addresses` is empty or when any of them is in a
    /// ``blockedClasses`` class. The message names the host only, never an address or its class: a client must
    /// not learn what names resolve to inside the network (``blockedAddress(in:)`` gives the detail for the log).
    func checkAddresses(_ addresses: [IPAddress], host: String) throws(ServerError) {
        guard !addresses.isEmpty else {
            throw ServerError(.addressBlocked, "host \(host) has no addresses")
        }
        if blockedAddress(in: addresses) != nil {
            throw ServerError(.addressBlocked, "host \(host) resolves to an address the server may not connect to")
        }
    }

    /// The first of `addresses` in a blocked class, with that class; `nil` when none is.
    func blockedAddress(in addresses: [IPAddress]) -> (address: IPAddress, class: AddressClass)? {
        for address in addresses {
            let addressClass = address.addressClass
            if blockedClasses.contains(addressClass) { return (address, addressClass) }
        }
        return nil
    }

    /// Lower-cased, without IPv6 brackets or one trailing dot.
    static func normalized(_ host: String) -> String {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h.hasSuffix(".") { h.removeLast() }
        return h
    }
}
