// A small C shim around libjpeg(-turbo). libjpeg reports errors by calling error_exit, whose default calls
// exit(); ours longjmps back to the setjmp inside each function below. No longjmp ever crosses a Swift frame:
// every entry point sets its own setjmp and returns a status code. Nothing is printed to stderr; libjpeg's
// messages are kept in the decoder (dr_jpeg_message). No globals: one decoder per thread at a time.
//
// Call order: create → read_header → start → (read_rows | skip_rows)* → finish → destroy. A call out of order
// returns DR_JPEG_ERR_ARGUMENT and changes nothing. After any error other than DR_JPEG_ERR_ARGUMENT the decoder
// is spent (libjpeg's object is aborted and its image memory released): every later call except destroy and
// dr_jpeg_message returns DR_JPEG_ERR_ARGUMENT, and dr_jpeg_message keeps explaining the first error.
#ifndef DARKROOM_JPEG_H
#define DARKROOM_JPEG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_JPEG_OK = 0,
    DR_JPEG_ERR_CORRUPT = 1,        // malformed data (libjpeg error_exit)
    DR_JPEG_ERR_TRUNCATED = 2,      // data ended early and the caller asked for strict mode
    DR_JPEG_ERR_TOO_MANY_SCANS = 3, // progressive scan count above max_scans
    DR_JPEG_ERR_UNSUPPORTED = 4,    // valid but unsupported (arithmetic coding off, 12-bit, a dimension > 65500,
                                    // a colour conversion libjpeg lacks such as CMYK → BGRA)
    DR_JPEG_ERR_NO_MEMORY = 5,      // allocation failed or max_memory exceeded (JERR_OUT_OF_MEMORY, JERR_NO_BACKING_STORE)
    DR_JPEG_ERR_ARGUMENT = 6,       // bad argument / called out of order
    DR_JPEG_NEED_DATA = 7,          // not an error (dr_jpeg_stream only): the call needs bytes that have not arrived
} dr_jpeg_status;

typedef enum {
    DR_JPEG_CS_UNKNOWN = 0,
    DR_JPEG_CS_GRAY = 1,
    DR_JPEG_CS_YCBCR = 2,
    DR_JPEG_CS_RGB = 3,
    DR_JPEG_CS_CMYK = 4,
    DR_JPEG_CS_YCCK = 5,
} dr_jpeg_colorspace;

typedef enum {
    DR_JPEG_OUT_BGRA = 0,  // 4 bytes per pixel, B G R 0xFF (libjpeg-turbo JCS_EXT_BGRA)
    DR_JPEG_OUT_GRAY = 1,  // 1 byte per pixel (only for gray sources, or color converted by libjpeg)
    DR_JPEG_OUT_CMYK = 2,  // 4 bytes per pixel C M Y K as libjpeg delivers them (Adobe files are inverted)
} dr_jpeg_output;

typedef struct {
    int width;            // image size as stored
    int height;
    int components;       // 1, 3 or 4
    int colorspace;       // dr_jpeg_colorspace of the file
    int progressive;      // 1 if progressive
    int output_width;     // after dr_jpeg_start: scaled size
    int output_height;
    int warnings;         // number of libjpeg warnings so far (corrupt data that libjpeg recovered from)
    int truncated;        // 1 if libjpeg hit the end of data early (only when strict == 0)
    int dc_reader;        // after dr_jpeg_start: 1 if the rows come from the DC-only reader (see dr_jpeg_start)
} dr_jpeg_info;

typedef struct dr_jpeg_decoder dr_jpeg_decoder;

// Creates a decoder over `data` (not copied: it must stay valid until destroy). max_scans bounds progressive
// scans (DR_JPEG_ERR_TOO_MANY_SCANS beyond it; <= 0 = no limit; baseline files are never limited; a
// jpeg_simple_progression file has 10 scans for YCbCr, 6 for gray). strict != 0 makes premature end of data an
// error (DR_JPEG_ERR_TRUNCATED) as soon as it is seen, including a missing EOI after the last row; strict == 0
// lets libjpeg pad with gray, counts a warning and sets info.truncated (the data ending inside the header is
// DR_JPEG_ERR_TRUNCATED in both modes). max_memory sets libjpeg's max_memory_to_use (0 = no limit). In
// libjpeg-turbo 2.1 that bounds only the whole-image coefficient buffer of progressive/multi-scan files
// (DR_JPEG_ERR_NO_MEMORY from dr_jpeg_start); baseline decoding allocates a few rows and is not checked.
// Returns NULL only when out of memory.
dr_jpeg_decoder *dr_jpeg_decoder_create(const uint8_t *data, size_t size, int max_scans, int strict, size_t max_memory);
void dr_jpeg_decoder_destroy(dr_jpeg_decoder *d);

// Reads the header (jpeg_read_header). Fills width, height, components, colorspace, progressive.
// Empty data is DR_JPEG_ERR_TRUNCATED; data that is not a JPEG is DR_JPEG_ERR_CORRUPT.
int dr_jpeg_read_header(dr_jpeg_decoder *d, dr_jpeg_info *info);

// Sets DCT scaling 1/scale_denom (1, 2, 4 or 8) and the output format, then jpeg_start_decompress.
// Fills output_width/output_height (ceil(width / scale_denom)). For DR_JPEG_OUT_GRAY on a color file libjpeg
// converts to luma. libjpeg defaults are kept (ISLOW IDCT, fancy upsampling), so pixels equal TurboJPEG's —
// also at 1/8, where a clean sequential gray or YCbCr file is read by a DC-only reader that skips AC
// coefficients several per table lookup (1.1–1.7× faster than libjpeg; see dr_jpeg_set_dc_reader), and any file
// it does not take cleanly is decoded by libjpeg as before. One exception: a progressive file at 1/8 is output
// from its first DC scan (pixels within about one level of the full decode's).
// DR_JPEG_OUT_CMYK on a file that is not CMYK/YCCK, a bad scale_denom or output is DR_JPEG_ERR_ARGUMENT and
// leaves the decoder ready for another dr_jpeg_start. DR_JPEG_OUT_BGRA on a CMYK/YCCK file is
// DR_JPEG_ERR_UNSUPPORTED (libjpeg-turbo has no CMYK → RGB conversion: ask for CMYK and convert).
// Progressive and multi-scan files are read entirely here, so TRUNCATED, TOO_MANY_SCANS and NO_MEMORY for them
// come from this call; so is a sequential file taken by the DC-only reader (its rows are then only copied out).
int dr_jpeg_start(dr_jpeg_decoder *d, int scale_denom, int output, dr_jpeg_info *info);

typedef enum {
    DR_JPEG_DC_OFF = 0,          // libjpeg decodes everything (for comparisons)
    DR_JPEG_DC_EXACT = 1,        // the default: the DC-only reader at 1/8, output identical to libjpeg's
    DR_JPEG_DC_HALF_CHROMA = 2,  // as EXACT, but 4:2:0 chroma from DC only (16×16 pixels a sample): ~1.4× faster
                                 // again; for output that will be reduced ≥ ~2× more, where that is all it shows
} dr_jpeg_dc_mode;

// Chooses how the next dr_jpeg_start at scale 1/8 reads a clean sequential file (dr_jpeg_dc_mode; other values
// are ignored). Has no effect at other scales or for progressive, CMYK or damaged files.
void dr_jpeg_set_dc_reader(dr_jpeg_decoder *d, int mode);

// Reads up to max_rows output rows into dst (row i at dst + i*stride; stride >= output_width * bytes per pixel).
// *rows_read gets the count (0 at the end); after an error it counts the rows delivered before it.
int dr_jpeg_read_rows(dr_jpeg_decoder *d, uint8_t *dst, size_t stride, int max_rows, int *rows_read);

// Skips up to `rows` output rows without color-converting them (jpeg_skip_scanlines). *rows_skipped gets the count.
// Rows read after a skip equal those of a full decode. Skipping past the end stops at the end.
int dr_jpeg_skip_rows(dr_jpeg_decoder *d, int rows, int *rows_skipped);

// Finishes decoding (jpeg_finish_decompress if all rows were read, else jpeg_abort_decompress) and refreshes
// info.warnings/info.truncated. In strict mode a file without its EOI fails here with DR_JPEG_ERR_TRUNCATED.
// Calling it again returns DR_JPEG_OK; before dr_jpeg_start or after an error it returns DR_JPEG_ERR_ARGUMENT
// (info.warnings/info.truncated are still filled in).
int dr_jpeg_finish(dr_jpeg_decoder *d, dr_jpeg_info *info);

// The last message libjpeg formatted (error or warning), "" when none. Owned by the decoder.
const char *dr_jpeg_message(const dr_jpeg_decoder *d);

// MARK: Streams

// A JPEG decoded while its bytes arrive, in libjpeg's buffered-image mode: each scan's entropy-coded data is read
// once, as it arrives, into the whole-image coefficient buffer (about 2 bytes per sample, bounded by max_memory),
// and each image out of it is an output pass (IDCT, upsampling, colour conversion) over the scans read so far.
// Made for progressive files, whose early scans already show the whole picture; a sequential file works too but
// shows nothing before its single scan ends. Only the bytes libjpeg has not consumed yet are kept.
//
// Call order: create → append* → read_header (until DR_JPEG_OK) → start → (append | consume | pass)* → destroy,
// where a pass is start_pass → read_rows* → finish_pass. Errors are final as for dr_jpeg_decoder (every later
// call returns DR_JPEG_ERR_ARGUMENT; dr_jpeg_stream_message keeps the first message). The data running out is
// never an error here: a call that needs more returns DR_JPEG_NEED_DATA until dr_jpeg_stream_append is told the
// data has ended, after which libjpeg pads it (info.truncated, a warning) as dr_jpeg_decoder's lenient mode does.
typedef struct dr_jpeg_stream dr_jpeg_stream;

typedef struct {
    int complete_scans; // scans read to their end (all of them once finished is set)
    int finished;       // the end of the image was read (EOI, or the data ended): the next pass is the final image
    int input_scan;     // the scan being read (libjpeg's input_scan_number)
} dr_jpeg_stream_state;

// max_scans as for dr_jpeg_decoder_create (DR_JPEG_ERR_TOO_MANY_SCANS once a scan beyond it starts); max_memory
// bounds libjpeg's allocations. Returns NULL only when out of memory.
dr_jpeg_stream *dr_jpeg_stream_create(int max_scans, size_t max_memory);
void dr_jpeg_stream_destroy(dr_jpeg_stream *s);
// Copies `size` more bytes in (nothing is decoded here). at_end != 0: no more will come. DR_JPEG_ERR_NO_MEMORY
// when the unconsumed bytes cannot be held.
int dr_jpeg_stream_append(dr_jpeg_stream *s, const uint8_t *data, size_t size, int at_end);
// Reads the header once it has arrived (DR_JPEG_NEED_DATA before); fills width … progressive as
// dr_jpeg_read_header does.
int dr_jpeg_stream_read_header(dr_jpeg_stream *s, dr_jpeg_info *info);
// Fixes DCT scaling 1/scale_denom and the output format for every pass (as dr_jpeg_start, without the DC-only
// reader) and fills output_width/output_height.
int dr_jpeg_stream_start(dr_jpeg_stream *s, int scale_denom, int output, dr_jpeg_info *info);
// Reads every byte appended so far (the costly, once-only part: entropy decoding) and reports how far it got.
int dr_jpeg_stream_consume(dr_jpeg_stream *s, dr_jpeg_stream_state *state);
// Starts an output pass: the final image once finished, else the last complete scan (libjpeg's block smoothing
// off, which costs more than the pass and only softens blocks a later scan replaces). DR_JPEG_NEED_DATA when no
// scan is complete yet or the previous pass is still waiting for the next scan's header.
int dr_jpeg_stream_start_pass(dr_jpeg_stream *s, dr_jpeg_info *info);
// Reads up to max_rows rows of the current pass, as dr_jpeg_read_rows.
int dr_jpeg_stream_read_rows(dr_jpeg_stream *s, uint8_t *dst, size_t stride, int max_rows, int *rows_read);
// Ends the pass (rows not read are dropped). After the final pass the stream is done: info.warnings and
// info.truncated say whether libjpeg had to pad or recover.
int dr_jpeg_stream_finish_pass(dr_jpeg_stream *s, dr_jpeg_info *info);
// The last message libjpeg formatted, "" when none. Owned by the stream.
const char *dr_jpeg_stream_message(const dr_jpeg_stream *s);

// Encodes pixels to a JPEG in memory. input: DR_JPEG_OUT_BGRA (alpha ignored) or DR_JPEG_OUT_GRAY.
// quality 1...100; progressive != 0 writes a progressive file; optimize != 0 optimizes Huffman tables.
// 4:2:0 chroma subsampling for colour, ISLOW DCT. On success *out/*out_size hold a malloc'd buffer the caller
// frees with dr_jpeg_free; on failure *out is NULL, nothing is left allocated, and msg (may be NULL) receives the
// reason (libjpeg's message, or which argument is wrong for DR_JPEG_ERR_ARGUMENT).
int dr_jpeg_encode(const uint8_t *pixels, int width, int height, size_t stride, int input, int quality,
                   int progressive, int optimize, uint8_t **out, size_t *out_size, char *msg, size_t msg_len);
// Encoder settings beyond dr_jpeg_encode's: luma sampling factors (1 or 2 each; chroma is 1×1, so 2×2 is 4:2:0,
// 2×1 4:2:2, 1×1 4:4:4; ignored for gray), a restart marker every restart_rows MCU rows (0: none), and an ICC
// profile to embed as APP2 ICC_PROFILE segments (icc NULL or icc_len 0: none; not copied, read during the call).
typedef struct {
    int quality;
    int progressive;
    int optimize;
    int luma_h;
    int luma_v;
    int restart_rows;
    const uint8_t *icc;
    size_t icc_len;
} dr_jpeg_encode_options;

// dr_jpeg_encode with options (dr_jpeg_encode is this with luma 2×2 and no restart markers).
int dr_jpeg_encode_with(const uint8_t *pixels, int width, int height, size_t stride, int input,
                        const dr_jpeg_encode_options *options, uint8_t **out, size_t *out_size, char *msg,
                        size_t msg_len);
void dr_jpeg_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
