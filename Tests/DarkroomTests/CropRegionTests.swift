import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// A crop before the resize (``ImageRequest/crop``, ``DecodeOptions/crop``): the decode reads the region as if it
/// were the whole image, in the upright picture whatever the EXIF orientation.
@Suite("Crop before resize")
struct CropRegionTests {
    let decoder = ImageDecoder()

    @Test func aRegionOfEveryOrientationIsTheSameUprightPixels() throws {
        // Given the eight orientation files and a 300×200 region at (100, 50) of the upright picture
        let files = SamplePhotos.files("orientation")
        try #require(files.count == 8)
        let region = CropRegion.corners(left: 100, top: 50, right: 400, bottom: 250)
        let full = try decoder.decode(SamplePhotos.bytes(files[0])).bitmap
        let reference = try ImageProcessors.Crop(x: 100, y: 50, width: 300, height: 200).process(full)
        for path in files {
            // When each file is decoded with the crop at its own size
            var options = DecodeOptions()
            options.geometry.crop = region
            let cropped = try decoder.decode(SamplePhotos.bytes(path), options: options).bitmap
            // Then it is the upright reference's region (within the files' JPEG re-encoding noise)
            #expect(cropped.width == 300 && cropped.height == 200, "\(path)")
            let psnr = PixelCompare.psnr(cropped, reference)
            #expect(psnr > 30, "\(path): PSNR \(psnr) dB against the upright region")
            // And against its own full decode cropped afterwards, the same pixels
            let own = try ImageProcessors.Crop(x: 100, y: 50, width: 300, height: 200)
                .process(try decoder.decode(SamplePhotos.bytes(path)).bitmap)
            #expect(PixelCompare.psnr(cropped, own) > 50, "\(path)")
        }
    }

    @Test func aCroppedThumbnailMatchesCroppingThenResizing() throws {
        // Given a 12 MP JPEG and the middle half of it as fractions
        let path = try #require(SamplePhotos.files("jpeg-12mp").first)
        let bytes = try SamplePhotos.bytes(path)
        var options = DecodeOptions(size: .fit(width: 400, height: 400))
        options.geometry.crop = CropRegion(width: .fraction(0.5), height: .fraction(0.5))
        // When it is decoded straight to 400 px, and separately decoded whole, cropped, and the region resized
        let direct = try decoder.decode(bytes, options: options).bitmap
        var exactOptions = options
        exactOptions.shrinkOnLoadMargin = 100
        let exact = try decoder.decode(bytes, options: exactOptions).bitmap
        let full = try decoder.decode(bytes).bitmap
        let (w, h) = (Int((Double(full.width) * 0.5).rounded()), Int((Double(full.height) * 0.5).rounded()))
        let crop = try ImageProcessors.Crop(x: (full.width - w) / 2, y: (full.height - h) / 2, width: w, height: h)
            .process(full)
        // (the region saved losslessly and resized by the same resampler, so only the crop path differs)
        let slow = try decoder.decode(
            try ImageEncoder.encode(crop, as: .png), options: DecodeOptions(size: .fit(width: 400, height: 400))
        ).bitmap
        // Then the sizes agree and the pixels are within shrink-on-load's usual difference
        #expect(direct.width == slow.width && direct.height == slow.height)
        let psnr = PixelCompare.psnr(direct, slow)
        #expect(psnr > 35, "PSNR \(psnr) dB")
        let exactPSNR = PixelCompare.psnr(exact, slow)
        #expect(exactPSNR > 45, "PSNR \(exactPSNR) dB without shrink-on-load")
    }

    @Test func gravityPlacesTheRegionAndItStaysInside() throws {
        // Given a 600×375 upright picture
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("orientation")[0])
        let full = try decoder.decode(bytes).bitmap
        func crop(_ region: CropRegion) throws -> Bitmap {
            var options = DecodeOptions()
            options.geometry.crop = region
            return try decoder.decode(bytes, options: options).bitmap
        }
        // When a 200×100 region sits south-east, 10 px in from each edge
        let se = try crop(
            CropRegion(
                width: .pixels(200), height: .pixels(100),
                position: Gravity.southEast(offsetX: 10, offsetY: 10).cropPosition))
        // Then it is the pixels at (390, 265)
        let expected = try ImageProcessors.Crop(x: 390, y: 265, width: 200, height: 100).process(full)
        #expect(PixelCompare.psnr(se, expected) > 50)
        // And a focus point at the top-left corner clamps the region inside the picture
        let corner = try crop(
            CropRegion(width: .pixels(200), height: .pixels(100), position: Gravity.focusPoint(x: 0, y: 0).cropPosition)
        )
        let topLeft = try ImageProcessors.Crop(x: 0, y: 0, width: 200, height: 100).process(full)
        #expect(PixelCompare.psnr(corner, topLeft) > 50)
        // And a region larger than the picture is the whole picture
        let whole = try crop(CropRegion(width: .pixels(5000), height: nil))
        #expect(whole.width == 600 && whole.height == 375)
    }

    @Test func anEmptyRegionIsATypedError() throws {
        // Given a crop of zero width
        var options = DecodeOptions()
        options.geometry.crop = CropRegion(width: .pixels(0), height: .pixels(10))
        // When decoding / Then invalidArgument, not a crash
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("orientation")[0])
        #expect(throws: DarkroomImageError.self) { try decoder.decode(bytes, options: options) }
    }

    @Test func requestsWithDifferentCropsAreDifferentImagesAndEnlargingIsOptIn() async throws {
        // Given one file, two crops of it, and a box larger than the crop
        let path = SamplePhotos.files("orientation")[0]
        let pipeline = makePipeline()
        var left = ImageRequest(path: path, size: .fit(width: 400, height: 400))
        left.geometry.crop = .corners(left: 0, top: 0, right: 200, bottom: 200)
        var right = left
        right.geometry.crop = .corners(left: 400, top: 0, right: 600, bottom: 200)
        var enlarged = left
        enlarged.geometry.allowsUpscaling = true
        // When all three are loaded
        let a = try #require(try await pipeline.image(for: left).bitmap)
        let b = try #require(try await pipeline.image(for: right).bitmap)
        let c = try #require(try await pipeline.image(for: enlarged).bitmap)
        // Then each was decoded: the crops differ, the plain one stays at the crop's 200 px, the enlarged one fills
        // the box
        #expect(pipeline.statistics.decodes == 3)
        #expect(left.cacheKey != right.cacheKey && left.cacheKey != enlarged.cacheKey)
        #expect(PixelCompare.psnr(a, b) < 30)
        #expect(a.width == 200 && a.height == 200)
        #expect(c.width == 400 && c.height == 400)
    }
}
