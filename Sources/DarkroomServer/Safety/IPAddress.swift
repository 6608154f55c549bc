#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What kind of network an address belongs to, for deciding whether the server may connect to it.
///
/// Everything except ``publicUnicast`` is blocked by default (``RemotePolicy/blockedClasses``).
public enum AddressClass: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A globally routable unicast address.
    case publicUnicast = "public_unicast"
    /// 127.0.0.0/8, ::1.
    case loopback
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT), fc00::/7 (unique local), fec0::/10 (old site-local).
    case privateNetwork = "private_network"
    /// 169.254/16, fe80::/10.
    case linkLocal = "link_local"
    /// 224/4, ff00::/8.
    case multicast
    /// 0.0.0.0/8, ::.
    case unspecified
    /// Not globally routable for any other reason: 240/4 (incl. 255.255.255.255), 192.0.0/24, 192.0.2/24,
    /// 192.88.99/24, 198.18/15, 198.51.100/24, 203.0.113/24, 2001::/23, 2001:db8::/32, 3fff::/20, 100::/64,
    /// 64:ff9b:1::/48, 5f00::/16, and all IPv6 outside 2000::/3 not named above.
    case reserved

    /// The raw value.
    public var description: String { rawValue }
}

/// An IPv4 or IPv6 address in network byte order, parsed with `inet_pton` and printed with `inet_ntop`.
///
/// Cost: parsing and classifying are a few hundred nanoseconds; the bytes live in a small heap array.
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    enum Family: Sendable, Hashable {
        /// 4 bytes.
        case v4
        /// 16 bytes.
        case v6
    }

    /// 4 bytes (IPv4) or 16 bytes (IPv6), network order.
    let bytes: [UInt8]

    /// Parses a dotted quad (`192.0.2.1`; no octal, hex or short forms) or any textual IPv6 form (`::1`,
    /// `::ffff:1.2.3.4`, `[2001:db8::1]`); a zone id (`fe80::1%eth0`) is dropped. `nil` for anything else.
    init?(_ text: String) {
        var s = Substring(text)
        if s.hasPrefix("["), s.hasSuffix("]") { s = s.dropFirst().dropLast() }
        if let percent = s.firstIndex(of: "%") {
            guard s.contains(":") else { return nil }
            s = s[..<percent]
        }
        guard !s.isEmpty, !s.contains("\0") else { return nil }
        let plain = String(s)
        if plain.contains(":") {
            var raw = in6_addr()
            guard inet_pton(AF_INET6, plain, &raw) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        } else {
            var raw = in_addr()
            guard inet_pton(AF_INET, plain, &raw) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &raw) { Array($0) }
        }
    }

    /// An address from 4 or 16 network-order bytes; `nil` for any other count.
    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The address of an `AF_INET`/`AF_INET6` socket address (as `getaddrinfo` returns); `nil` for other families.
    init?(socketAddress: UnsafePointer<sockaddr>) {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let raw = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            bytes = withUnsafeBytes(of: raw) { Array($0) }
        case AF_INET6:
            let raw = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            bytes = withUnsafeBytes(of: raw) { Array($0) }
        default:
            return nil
        }
    }

    /// ``Family/v4`` or ``Family/v6``.
    var family: Family { bytes.count == 4 ? .v4 : .v6 }

    /// The canonical text (`inet_ntop`): `192.0.2.1`, `2001:db8::1`, `::ffff:1.2.3.4`; no brackets.
    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address carried inside an IPv6 one: IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible (`::/96`
    /// except `::` and `::1`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`). `nil` for IPv4 and other IPv6.
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        let zero80 = b[0..<10].allSatisfy { $0 == 0 }
        if zero80, b[10] == 0xFF, b[11] == 0xFF { return IPAddress(bytes: Array(b[12..<16])) }
        if zero80, b[10] == 0, b[11] == 0 {
            let tail = Array(b[12..<16])
            if tail == [0, 0, 0, 0] || tail == [0, 0, 0, 1] { return nil }
            return IPAddress(bytes: tail)
        }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return IPAddress(bytes: Array(b[12..<16])) }
        if b[0] == 0x20, b[1] == 0x02 { return IPAddress(bytes: Array(b[2..<6])) }
        return nil
    }

    /// The network this address belongs to; IPv6 forms that carry an IPv4 address (``embeddedIPv4``) take
    /// that address's class.
    var addressClass: AddressClass {
        if bytes.count == 4 { return Self.classifyV4(bytes) }
        if let inner = embeddedIPv4 { return inner.addressClass }
        return Self.classifyV6(bytes)
    }

    private static func classifyV4(_ b: [UInt8]) -> AddressClass {
        let (a, b1, c) = (b[0], b[1], b[2])
        switch a {
        case 0: return .unspecified
        case 10: return .privateNetwork
        case 100 where b1 & 0xC0 == 64: return .privateNetwork
        case 127: return .loopback
        case 169 where b1 == 254: return .linkLocal
        case 172 where b1 & 0xF0 == 16: return .privateNetwork
        case 192 where b1 == 168: return .privateNetwork
        case 192 where b1 == 0 && (c == 0 || c == 2): return .reserved
        case 192 where b1 == 88 && c == 99: return .reserved
        case 198 where b1 & 0xFE == 18: return .reserved
        case 198 where b1 == 51 && c == 100: return .reserved
        case 203 where b1 == 0 && c == 113: return .reserved
        case 224...239: return .multicast
        case 240...255: return .reserved
        default: return .publicUnicast
        }
    }

    private static func classifyV6(_ b: [UInt8]) -> AddressClass {
        if b.allSatisfy({ $0 == 0 }) { return .unspecified }
        if b[0..<15].allSatisfy({ $0 == 0 }), b[15] == 1 { return .loopback }
        if b[0] == 0xFF { return .multicast }
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return .linkLocal }
        if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return .privateNetwork }
        if b[0] & 0xFE == 0xFC { return .privateNetwork }
        // Only 2000::/3 is allocated for global unicast; everything else left is reserved or unassigned.
        guard b[0] & 0xE0 == 0x20 else { return .reserved }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return .reserved }
        if b[0] == 0x20, b[1] == 0x01, b[2] & 0xFE == 0 { return .reserved }
        if b[0] == 0x3F, b[1] == 0xFF, b[2] & 0xF0 == 0 { return .reserved }
        return .publicUnicast
    }
}
