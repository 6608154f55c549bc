import Testing
@testable import Darkroom
