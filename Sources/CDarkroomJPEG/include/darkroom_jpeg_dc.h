// A DC-only reader for sequential JPEGs, used for output at 1/8 scale: the shim's own (darkroom_jpeg.c), public
// so that its differential fuzzer (scripts/fuzz-jpeg-dc.c) and benchmark (bench/dc-reader-vs-libjpeg.c) test it alone.
//
// At 1/8 each luma output pixel is its 8×8 block's DC coefficient (libjpeg's 1×1 IDCT), yet libjpeg still
// Huffman-decodes every AC coefficient of a sequential file one symbol at a time, and that is nearly all of the
// cost of a 1/8 decode. This reader walks the same entropy-coded data but skips AC coefficients several symbols
// per table lookup (the code lengths and extra bits of a run of symbols are summed into one table entry) and keeps
// only what the 1/8 output needs. Its output equals libjpeg's 1/8 output byte for byte: the same DC arithmetic
// and range limit; 4:2:2 and 4:4:0 chroma replicated (libjpeg's fancy upsampling needs a DCT scale above 1);
// 4:2:0 chroma through libjpeg's 2×2 reduced IDCT, whose 25 coefficients are decoded with their values;
// libjpeg's YCbCr → RGB fixed point. With `half_chroma`, 4:2:0 chroma is instead taken from its DC alone
// (one sample per 16×16 pixels, replicated): its AC coefficients are skipped too, which makes the decode about
// 1.4× faster again, for callers that will reduce the 1/8 image by about 2 more, where chroma at 1/16 is all
// the output can show.
//
// It accepts only clean, ordinary files: 8-bit baseline or extended sequential Huffman (SOF0/SOF1), one scan
// holding every component, gray or YCbCr with 4:4:4, 4:2:2, 4:4:0 or 4:2:0 sampling, every table defined,
// restart markers in order, and EOI right after the scan. Anything else — progressive, arithmetic, CMYK, a
// damaged or truncated stream, a bad Huffman code, extraneous bytes — makes dr_dc_decode return NULL and the
// caller decodes with libjpeg, which then reports or recovers from the problem exactly as before.
//
// Bounds: every read is checked against the input's end; memory is 1/64 of the image's samples (1/16 for 4:2:0
// chroma at full quality) plus the Huffman tables (16 KiB each). No globals; thread-safe for separate images.
#ifndef DARKROOM_JPEG_DC_H
#define DARKROOM_JPEG_DC_H

#include <stddef.h>
#include <stdint.h>

typedef struct dr_dc_image dr_dc_image;

// Decodes what the 1/8 output of `data` needs, or returns NULL when the file is not one this reader takes (see
// above) or memory runs out. half_chroma != 0: 4:2:0 chroma from DC only (see above). The result is independent
// of `data` afterwards.
dr_dc_image *dr_dc_decode(const uint8_t *data, size_t size, int half_chroma);

// Output size: ceil(width / 8) × ceil(height / 8), as libjpeg's at scale 1/8.
int dr_dc_width(const dr_dc_image *img);
int dr_dc_height(const dr_dc_image *img);

// Writes output row y (0 ≤ y < height): gray != 0 gives 1 byte per pixel (luma), else B G R 0xFF.
void dr_dc_row(dr_dc_image *img, int y, int gray, uint8_t *dst);

void dr_dc_free(dr_dc_image *img);

#endif
