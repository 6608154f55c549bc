import Testing

@testable import DarkroomServer

@Suite("QueryString")
struct QueryStringTests {
    @Test("items in order; percent-escapes, + and empty values decoded; empty pairs skipped")
    func parse() throws {
        let items = try QueryString.parse("src=a%2Fb+c.jpg&w=256&&flag&h=&x=%E2%9C%93&src=2")
        #expect(items.map(\.name) == ["src", "w", "flag", "h", "x", "src"])
        #expect(items.map(\.value) == ["a/b c.jpg", "256", "", "", "✓", "2"])
        #expect(try QueryString.parse(nil).isEmpty && QueryString.parse("").isEmpty)
        #expect(try QueryString.parse("a=b=c").map(\.value) == ["b=c"], "only the first = splits")
    }

    @Test("malformed escapes, invalid UTF-8 and too many items are bad_request")
    func refusals() {
        for query in ["a=%", "a=%4", "a=%zz", "%g1=x", "a=%FF%FE"] {
            #expect(throws: ServerError.self, "\(query)") { try QueryString.parse(query) }
        }
        let many = (0..<65).map { "k\($0)=v" }.joined(separator: "&")
        #expect(throws: ServerError.self) { try QueryString.parse(many) }
        #expect((try? QueryString.parse(many, maxItems: 65))?.count == 65)
    }

    @Test("build and parse round-trip anything")
    func roundTrip() throws {
        let items: [(name: String, value: String)] = [("src", "dir/a b+c&d=e%.jpg"), ("ü", "✓ ?#")]
        let parsed = try QueryString.parse(QueryString.build(items))
        #expect(parsed.map(\.name) == items.map(\.name) && parsed.map(\.value) == items.map(\.value))
    }
}
