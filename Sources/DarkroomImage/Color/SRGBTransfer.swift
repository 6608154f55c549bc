import Foundation

/// The sRGB transfer function (IEC 61966-2-1) in one place: the curve between an sRGB-coded value and linear light,
/// both 0…1. A `pow` per call: callers that touch many pixels tabulate it.
enum SRGBTransfer {
    /// An sRGB-coded value to linear light.
    static func toLinear(_ value: Double) -> Double {
        value <= 0.040_45 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// Linear light to an sRGB-coded value.
    static func fromLinear(_ light: Double) -> Double {
        light <= 0.003_130_8 ? 12.92 * light : 1.055 * pow(light, 1 / 2.4) - 0.055
    }

    /// Linear light of each 8-bit sRGB level.
    static let linearLevels: [Float] = (0..<256).map { Float(toLinear(Double($0) / 255)) }
}
