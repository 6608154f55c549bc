import Testing

@testable import DarkroomServer

@Suite("IPAddress")
struct IPAddressTests {
    static let table: [(String, AddressClass)] = [
        ("8.8.8.8", .publicUnicast), ("1.1.1.1", .publicUnicast), ("93.184.216.34", .publicUnicast),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateNetwork), ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("172.32.0.1", .publicUnicast), ("192.168.1.5", .privateNetwork), ("100.64.0.1", .privateNetwork),
        ("100.127.255.255", .privateNetwork), ("100.128.0.1", .publicUnicast),
        ("169.254.169.254", .linkLocal), ("224.0.0.1", .multicast), ("239.255.255.250", .multicast),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("240.0.0.1", .reserved), ("255.255.255.255", .reserved), ("192.0.0.8", .reserved), ("192.0.2.1", .reserved),
        ("198.18.0.1", .reserved), ("198.19.255.255", .reserved), ("198.51.100.7", .reserved),
        ("203.0.113.9", .reserved), ("192.88.99.1", .reserved),
        ("2606:4700:4700::1111", .publicUnicast), ("2001:4860:4860::8888", .publicUnicast),
        ("::1", .loopback), ("::", .unspecified), ("0:0:0:0:0:0:0:1", .loopback),
        ("fc00::1", .privateNetwork), ("fd12:3456:789a::1", .privateNetwork), ("fec0::1", .privateNetwork),
        ("fe80::1", .linkLocal), ("fe80::1%eth0", .linkLocal), ("[fe80::abcd%25en0]", .linkLocal),
        ("ff02::1", .multicast), ("2001:db8::1", .reserved), ("100::1", .reserved), ("2001::1", .reserved),
        ("3fff::1", .reserved), ("64:ff9b:1::1", .reserved), ("4000::1", .reserved),
        // IPv4 inside IPv6 takes the IPv4 address's class.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:10.1.2.3", .privateNetwork),
        ("::ffff:8.8.8.8", .publicUnicast), ("::ffff:169.254.169.254", .linkLocal),
        ("::127.0.0.1", .loopback), ("::10.0.0.1", .privateNetwork),
        ("64:ff9b::192.168.0.1", .privateNetwork), ("64:ff9b::8.8.8.8", .publicUnicast),
        ("2002:7f00:1::", .loopback), ("2002:c0a8:0101::1", .privateNetwork), ("2002:0808:0808::", .publicUnicast),
        ("[::1]", .loopback),
    ]

    @Test("classification table")
    func classification() throws {
        // Given ≥ 30 addresses with known classes, When each is parsed and classified, Then the class matches
        #expect(Self.table.count >= 30)
        for (text, expected) in Self.table {
            let address = try #require(IPAddress(text), "\(text) should parse")
            #expect(address.addressClass == expected, "\(text) → \(address.addressClass), expected \(expected)")
        }
    }

    @Test(
        "not addresses",
        arguments: [
            "", "localhost", "1.2.3", "1.2.3.4.5", "256.1.1.1", "0x7f.0.0.1",
            "2130706433", "127.1", "01.2.3.4", "::g", "1.2.3.4%eth0", "1:2:3:4:5:6:7:8:9",
            "[127.0.0.1", "example.com",
        ])
    func rejects(text: String) {
        // When / Then
        #expect(IPAddress(text) == nil)
    }

    @Test("canonical text, family and byte form")
    func text() throws {
        // Given various spellings, Then they print canonically and compare equal by value
        #expect(IPAddress("0:0:0:0:0:0:0:1")?.description == "::1")
        #expect(IPAddress("2001:DB8:0::1")?.description == "2001:db8::1")
        #expect(IPAddress("fe80::1%eth0")?.description == "fe80::1")
        #expect(IPAddress("192.0.2.1")?.bytes == [192, 0, 2, 1])
        #expect(IPAddress("192.0.2.1")?.family == .v4)
        #expect(IPAddress("::ffff:7f00:1") == IPAddress("::ffff:127.0.0.1"))
        #expect(IPAddress("::ffff:127.0.0.1")?.family == .v6)
        #expect(IPAddress("2002:7f00:1::")?.embeddedIPv4 == IPAddress("127.0.0.1"))
        #expect(IPAddress("2001:db8::1")?.embeddedIPv4 == nil)
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    }
}
