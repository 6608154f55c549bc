// libjpeg(-turbo) shim: every public entry point sets its own setjmp before calling libjpeg, and libjpeg's
// error_exit (and, in strict mode, the premature-EOF warning) longjmps back to it. No globals: all state lives
// in the decoder (or, for the encoder, in a heap context), so separate decoders may run on separate threads.
#include "darkroom_jpeg.h"
#include "darkroom_jpeg_dc.h"
#include "dr_error.h"

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

// MARK: - Decoder

enum {
    ST_CREATED = 0,  // jpeg_create_decompress done, nothing read
    ST_HEADER = 1,   // jpeg_read_header done
    ST_STARTED = 2,  // jpeg_start_decompress done: rows can be read or skipped
    ST_FINISHED = 3, // finish/abort done
    ST_FAILED = 4,   // an error longjmped out; the object was aborted
};

struct dr_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    dr_error_mgr err;
    struct jpeg_progress_mgr progress;
    const uint8_t *data;
    size_t size;
    int max_scans;
    int state;
    int out_components; // bytes per output pixel after dr_jpeg_start
    int dc_only;        // 1 when a progressive file is being output at 1/8 from its DC scans (buffered-image mode)
    dr_dc_image *dc_fast; // a baseline file at 1/8 read by dc_scan.c (libjpeg only parsed the header), or NULL
    int fast_row;       // the next output row of dc_fast
    int dc_mode;        // dr_jpeg_dc_mode for the next dr_jpeg_start
    int dc_used;        // dr_jpeg_start chose the DC-only reader
};

void dr_jpeg_set_dc_reader(dr_jpeg_decoder *d, int mode) {
    if (d != NULL && mode >= DR_JPEG_DC_OFF && mode <= DR_JPEG_DC_HALF_CHROMA) d->dc_mode = mode;
}

// The next output row and the output height, whichever reader delivers the rows.
static unsigned int output_row(const dr_jpeg_decoder *d) {
    return d->dc_fast != NULL ? (unsigned int)d->fast_row : d->cinfo.output_scanline;
}

// Progress monitor: libjpeg calls it before consuming each chunk of input. For progressive files all scans are
// absorbed inside jpeg_start_decompress (whole-image coefficient buffer), so this is where the scan count is
// bounded; this is the technique libjpeg-turbo documents for djpeg -maxscans (cdjpeg.c, "Security" notes).
static void dr_progress_monitor(j_common_ptr common) {
    j_decompress_ptr cinfo = (j_decompress_ptr)common;
    dr_jpeg_decoder *d = (dr_jpeg_decoder *)cinfo->client_data;
    if (d->max_scans > 0 && cinfo->progressive_mode && cinfo->input_scan_number > d->max_scans) {
        snprintf(d->err.message, sizeof d->err.message, "Scan number %d exceeds maximum scans (%d)",
                 cinfo->input_scan_number, d->max_scans);
        d->err.status = DR_JPEG_ERR_TOO_MANY_SCANS;
        longjmp(d->err.jmp, 1);
    }
}

static void fill_info(const dr_jpeg_decoder *d, dr_jpeg_info *info) {
    if (info == NULL) return;
    const struct jpeg_decompress_struct *c = &d->cinfo;
    if (d->state >= ST_HEADER && d->state != ST_FAILED) {
        info->width = (int)c->image_width;
        info->height = (int)c->image_height;
        info->components = c->num_components;
        info->colorspace = dr_map_colorspace(c->jpeg_color_space);
        info->progressive = c->progressive_mode ? 1 : 0;
    }
    if (d->state >= ST_STARTED && d->state != ST_FAILED) {
        info->output_width = (int)c->output_width;
        info->output_height = (int)c->output_height;
    }
    info->warnings = d->err.warnings;
    info->truncated = d->err.truncated;
    info->dc_reader = d->dc_used;
}

// Called right after setjmp returned nonzero: releases libjpeg's per-image memory and marks the decoder failed.
static int fail(dr_jpeg_decoder *d) {
    jpeg_abort_decompress(&d->cinfo);
    d->state = ST_FAILED;
    return d->err.status != DR_JPEG_OK ? d->err.status : DR_JPEG_ERR_CORRUPT;
}

// Keeps the message of an earlier failure: after an error, dr_jpeg_message still explains the first problem.
static int argument_error(dr_jpeg_decoder *d, const char *what) {
    if (d != NULL && d->state != ST_FAILED) snprintf(d->err.message, sizeof d->err.message, "%s", what);
    return DR_JPEG_ERR_ARGUMENT;
}

// The setjmp-protected part of create, in its own frame so that no local of the caller is live across longjmp.
static int create_decompress(dr_jpeg_decoder *d, size_t max_memory) {
    if (setjmp(d->err.jmp)) {
        // jpeg_create_decompress only fails when it cannot allocate its first pool.
        jpeg_destroy_decompress(&d->cinfo);
        return d->err.status;
    }
    jpeg_create_decompress(&d->cinfo);
    d->cinfo.client_data = d;
    d->progress.progress_monitor = dr_progress_monitor;
    d->cinfo.progress = &d->progress;
    if (max_memory > 0) d->cinfo.mem->max_memory_to_use = max_memory > (size_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    return DR_JPEG_OK;
}

dr_jpeg_decoder *dr_jpeg_decoder_create(const uint8_t *data, size_t size, int max_scans, int strict,
                                        size_t max_memory) {
    dr_jpeg_decoder *d = (dr_jpeg_decoder *)calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->data = data;
    d->size = size;
    d->max_scans = max_scans;
    d->state = ST_CREATED;
    d->dc_mode = DR_JPEG_DC_EXACT;
    dr_error_init(&d->err, strict != 0);
    d->cinfo.err = &d->err.pub;
    if (create_decompress(d, max_memory) != DR_JPEG_OK) {
        free(d);
        return NULL;
    }
    return d;
}

void dr_jpeg_decoder_destroy(dr_jpeg_decoder *d) {
    if (d == NULL) return;
    dr_dc_free(d->dc_fast);
    jpeg_destroy_decompress(&d->cinfo); // cannot fail
    free(d);
}

int dr_jpeg_read_header(dr_jpeg_decoder *d, dr_jpeg_info *info) {
    if (d == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (d->state != ST_CREATED) return argument_error(d, "dr_jpeg_read_header called twice or after an error");
    if (d->data == NULL || d->size == 0) {
        snprintf(d->err.message, sizeof d->err.message, "Empty input file");
        d->err.truncated = 1;
        d->state = ST_FAILED;
        fill_info(d, info);
        return DR_JPEG_ERR_TRUNCATED;
    }
    if (setjmp(d->err.jmp)) {
        int status = fail(d);
        fill_info(d, info);
        return status;
    }
    // jpeg_mem_src reads the caller's bytes in place (no copy); at the end it warns JWRN_JPEG_EOF and feeds a
    // fake EOI marker.
    jpeg_mem_src(&d->cinfo, d->data, (unsigned long)d->size);
    (void)jpeg_read_header(&d->cinfo, TRUE); // TRUE: a tables-only stream is an error (JERR_NO_IMAGE)
    d->state = ST_HEADER;
    fill_info(d, info);
    return DR_JPEG_OK;
}

// Whether the data ends with EOI (FF D9), allowing for up to 64 trailing bytes of padding. A cut-off file cannot:
// in entropy-coded data every FF is stuffed (FF 00) or a restart marker (FF D0–D7).
static int ends_with_eoi(const dr_jpeg_decoder *d) {
    size_t from = d->size > 66 ? d->size - 66 : 0;
    for (size_t i = d->size; i >= from + 2; i--) {
        if (d->data[i - 2] == 0xFF && d->data[i - 1] == 0xD9) return 1;
    }
    return 0;
}

// The number of SOS markers (FF DA) in the data.
static int count_scans(const dr_jpeg_decoder *d) {
    int scans = 0;
    const uint8_t *p = d->data, *end = d->data + d->size;
    while (p + 1 < end) {
        const uint8_t *ff = memchr(p, 0xFF, (size_t)(end - p - 1));
        if (ff == NULL) break;
        if (ff[1] == 0xDA) scans++;
        p = ff + 1;
    }
    return scans;
}

// Whether every component's DC coefficients are known to within their last bit: the first DC scan of a standard
// progressive script sends DC with the point transform Al = 1 and refines that bit several scans later, after
// most of the AC data. One DC step is Q00/8 of a pixel level at 1/8 scale (Q00 is 2–8 at quality 90), so
// stopping at Al ≤ 1 changes no pixel by more than about one level and skips nearly all of the file.
static int dc_complete(j_decompress_ptr cinfo) {
    if (cinfo->coef_bits == NULL) return 0;
    for (int c = 0; c < cinfo->num_components; c++) {
        int bits = cinfo->coef_bits[c][0];
        if (bits < 0 || bits > 1) return 0;
    }
    return 1;
}

// The setjmp-protected part of dr_jpeg_start (arguments already validated).
static int start_decompress(dr_jpeg_decoder *d, unsigned int scale_denom, J_COLOR_SPACE out_space, int components,
                            dr_jpeg_info *info) {
    if (setjmp(d->err.jmp)) {
        int status = fail(d);
        fill_info(d, info);
        return status;
    }
    // Defaults stay as jpeg_read_header set them (JDCT_ISLOW, fancy upsampling, block smoothing), so the pixels
    // equal TurboJPEG's defaults.
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = scale_denom;
    d->cinfo.out_color_space = out_space;
    if (scale_denom == 8 && d->dc_mode != DR_JPEG_DC_OFF && d->err.warnings == 0 && !d->cinfo.progressive_mode && !d->cinfo.arith_code && d->cinfo.data_precision == 8 &&
        (out_space == JCS_EXT_BGRA || out_space == JCS_GRAYSCALE) &&
        ((d->cinfo.jpeg_color_space == JCS_YCbCr && d->cinfo.num_components == 3) ||
         (d->cinfo.jpeg_color_space == JCS_GRAYSCALE && d->cinfo.num_components == 1))) {
        // A sequential file at 1/8: each luma output pixel is its block's DC, which dc_scan.c reads while skipping
        // the AC coefficients several at a time, with output equal to libjpeg's (see darkroom_jpeg_dc.h for the numbers).
        // It takes only clean, ordinary files; for anything else it returns NULL and libjpeg decodes as before,
        // with its own errors and warnings.
        d->dc_fast = dr_dc_decode(d->data, d->size, d->dc_mode == DR_JPEG_DC_HALF_CHROMA);
        if (d->dc_fast != NULL) {
            jpeg_calc_output_dimensions(&d->cinfo);
            if ((int)d->cinfo.output_width == dr_dc_width(d->dc_fast) &&
                (int)d->cinfo.output_height == dr_dc_height(d->dc_fast)) {
                d->fast_row = 0;
                d->dc_used = 1;
                d->out_components = components;
                d->state = ST_STARTED;
                fill_info(d, info);
                return DR_JPEG_OK;
            }
            dr_dc_free(d->dc_fast); // cannot happen (both are ceil(size / 8)); libjpeg decides
            d->dc_fast = NULL;
        }
    }
    if (scale_denom == 8 && d->cinfo.progressive_mode && ends_with_eoi(d)) {
        // The scan limit holds for the whole file even though only its first scans are decoded: count its SOS
        // markers (one memchr pass; stuffing keeps FF DA out of entropy-coded data).
        int scans = count_scans(d);
        if (d->max_scans > 0 && scans > d->max_scans) {
            snprintf(d->err.message, sizeof d->err.message, "Scan number %d exceeds maximum scans (%d)",
                     d->max_scans + 1, d->max_scans);
            d->err.status = DR_JPEG_ERR_TOO_MANY_SCANS;
            longjmp(d->err.jmp, 1);
        }
        // At 1/8 each output pixel is its block's DC coefficient alone (the 1×1 IDCT), so a progressive file
        // can be output as soon as every component's DC is complete — usually after the first scan or two,
        // a fraction of the file — instead of after all its AC scans. Buffered-image mode stops there; the
        // remaining scans are never decoded. The pixels match the full decode's at 1/8 to within about one
        // level (see dc_complete). Only for files that visibly end (EOI in the last bytes), so a truncated
        // file still takes the full path and fails as strict decoding demands.
        d->cinfo.buffered_image = TRUE;
        d->cinfo.do_block_smoothing = FALSE; // smoothing estimates ACs, which a 1×1 IDCT ignores
        (void)jpeg_start_decompress(&d->cinfo);
        for (;;) {
            dr_progress_monitor((j_common_ptr)&d->cinfo); // the scan limit, as in the full path
            int r = jpeg_consume_input(&d->cinfo);
            if (r == JPEG_REACHED_EOI || r == JPEG_SUSPENDED) break;
            if (r == JPEG_SCAN_COMPLETED && dc_complete(&d->cinfo)) break;
        }
        (void)jpeg_start_output(&d->cinfo, d->cinfo.input_scan_number);
        d->dc_only = 1;
    } else {
        (void)jpeg_start_decompress(&d->cinfo); // progressive/multi-scan: reads all scans here
    }
    d->out_components = components;
    d->state = ST_STARTED;
    fill_info(d, info);
    return DR_JPEG_OK;
}

int dr_jpeg_start(dr_jpeg_decoder *d, int scale_denom, int output, dr_jpeg_info *info) {
    if (d == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (d->state != ST_HEADER) return argument_error(d, "dr_jpeg_start needs a successful dr_jpeg_read_header first");
    if (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8)
        return argument_error(d, "scale_denom must be 1, 2, 4 or 8");
    J_COLOR_SPACE out_space;
    int components;
    switch (output) {
    case DR_JPEG_OUT_BGRA:
        out_space = JCS_EXT_BGRA; // gray, YCbCr and RGB sources; CMYK/YCCK fail with DR_JPEG_ERR_UNSUPPORTED
        components = 4;
        break;
    case DR_JPEG_OUT_GRAY:
        out_space = JCS_GRAYSCALE;
        components = 1;
        break;
    case DR_JPEG_OUT_CMYK:
        if (d->cinfo.jpeg_color_space != JCS_CMYK && d->cinfo.jpeg_color_space != JCS_YCCK)
            return argument_error(d, "CMYK output needs a CMYK or YCCK file");
        out_space = JCS_CMYK;
        components = 4;
        break;
    default:
        return argument_error(d, "unknown output format");
    }
    return start_decompress(d, (unsigned int)scale_denom, out_space, components, info);
}

#define DR_MAX_ROWS_PER_CALL 16

int dr_jpeg_read_rows(dr_jpeg_decoder *d, uint8_t *dst, size_t stride, int max_rows, int *rows_read) {
    if (rows_read != NULL) *rows_read = 0;
    if (d == NULL || rows_read == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (d->state != ST_STARTED) return argument_error(d, "dr_jpeg_read_rows needs dr_jpeg_start first");
    if (max_rows < 0) return argument_error(d, "max_rows is negative");
    if (max_rows == 0) return DR_JPEG_OK;
    if (dst == NULL) return argument_error(d, "dst is NULL");
    if (stride < (size_t)d->cinfo.output_width * (size_t)d->out_components)
        return argument_error(d, "stride is smaller than a row");
    if (d->dc_fast != NULL) {
        int total = 0;
        int gray = d->out_components == 1;
        while (total < max_rows && d->fast_row < dr_dc_height(d->dc_fast)) {
            dr_dc_row(d->dc_fast, d->fast_row++, gray, dst + (size_t)total * stride);
            total++;
        }
        *rows_read = total;
        return DR_JPEG_OK;
    }
    if (setjmp(d->err.jmp)) return fail(d);
    int total = 0;
    JSAMPROW rows[DR_MAX_ROWS_PER_CALL];
    while (total < max_rows && d->cinfo.output_scanline < d->cinfo.output_height) {
        int want = max_rows - total;
        if (want > DR_MAX_ROWS_PER_CALL) want = DR_MAX_ROWS_PER_CALL;
        for (int i = 0; i < want; i++) rows[i] = (JSAMPROW)(dst + (size_t)(total + i) * stride);
        JDIMENSION got = jpeg_read_scanlines(&d->cinfo, rows, (JDIMENSION)want);
        if (got == 0) break; // cannot happen with a memory source (it never suspends); guard against a loop
        total += (int)got;
        *rows_read = total;
    }
    return DR_JPEG_OK;
}

int dr_jpeg_skip_rows(dr_jpeg_decoder *d, int rows, int *rows_skipped) {
    if (rows_skipped != NULL) *rows_skipped = 0;
    if (d == NULL || rows_skipped == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (d->state != ST_STARTED) return argument_error(d, "dr_jpeg_skip_rows needs dr_jpeg_start first");
    if (rows < 0) return argument_error(d, "rows is negative");
    if (rows == 0 || output_row(d) >= d->cinfo.output_height) return DR_JPEG_OK;
    if (d->dc_fast != NULL) {
        int left = dr_dc_height(d->dc_fast) - d->fast_row;
        *rows_skipped = rows < left ? rows : left;
        d->fast_row += *rows_skipped;
        return DR_JPEG_OK;
    }
    if (d->dc_only) {
        // jpeg_skip_scanlines is not for buffered-image mode; rows at 1/8 are cheap to read and drop.
        size_t stride = (size_t)d->cinfo.output_width * (size_t)d->out_components;
        uint8_t *row = (uint8_t *)malloc(stride);
        if (row == NULL) {
            snprintf(d->err.message, sizeof d->err.message, "out of memory for a %zu-byte row", stride);
            d->err.status = DR_JPEG_ERR_NO_MEMORY;
            return fail(d);
        }
        int skipped = 0;
        int status = DR_JPEG_OK;
        while (skipped < rows && status == DR_JPEG_OK && d->cinfo.output_scanline < d->cinfo.output_height) {
            int got = 0;
            status = dr_jpeg_read_rows(d, row, stride, 1, &got);
            if (got == 0) break;
            skipped += got;
        }
        free(row);
        *rows_skipped = skipped;
        return status;
    }
    if (setjmp(d->err.jmp)) return fail(d);
    *rows_skipped = (int)jpeg_skip_scanlines(&d->cinfo, (JDIMENSION)rows);
    return DR_JPEG_OK;
}

int dr_jpeg_finish(dr_jpeg_decoder *d, dr_jpeg_info *info) {
    if (d == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (d->state == ST_FINISHED) {
        fill_info(d, info);
        return DR_JPEG_OK;
    }
    if (d->state != ST_STARTED) {
        fill_info(d, info);
        return argument_error(d, "dr_jpeg_finish needs dr_jpeg_start first");
    }
    if (setjmp(d->err.jmp)) {
        int status = fail(d);
        fill_info(d, info);
        return status;
    }
    if (d->dc_fast != NULL) {
        // libjpeg read only the header; dc_scan.c saw the scan end cleanly and EOI follow it.
        jpeg_abort_decompress(&d->cinfo);
        dr_dc_free(d->dc_fast);
        d->dc_fast = NULL;
    } else if (d->dc_only) {
        // The later scans are not needed (and not read); the file was seen to end with EOI before starting.
        if (d->cinfo.output_scanline >= d->cinfo.output_height) (void)jpeg_finish_output(&d->cinfo);
        jpeg_abort_decompress(&d->cinfo);
    } else if (d->cinfo.output_scanline >= d->cinfo.output_height) {
        // Reads the rest of the datastream up to EOI: in strict mode a missing EOI is DR_JPEG_ERR_TRUNCATED.
        (void)jpeg_finish_decompress(&d->cinfo);
    } else {
        jpeg_abort_decompress(&d->cinfo);
    }
    d->state = ST_FINISHED;
    fill_info(d, info);
    return DR_JPEG_OK;
}

const char *dr_jpeg_message(const dr_jpeg_decoder *d) {
    return d == NULL ? "" : d->err.message;
}

// MARK: - Encoder

// A growable memory destination. libjpeg-turbo's jpeg_mem_dest would also work on success, but after it has
// grown its buffer the caller's pointer is stale until term_destination runs, so a failed encode would leak
// the live buffer (it is only reachable through libjpeg's private struct). Ours keeps it in reach.
typedef struct {
    struct jpeg_destination_mgr pub;
    uint8_t *buf;
    size_t cap;
    size_t len; // set by term_destination
} dr_mem_dest;

typedef struct {
    struct jpeg_compress_struct cinfo;
    dr_error_mgr err;
    dr_mem_dest dest;
} dr_encoder;

static void dr_dest_init(j_compress_ptr cinfo) {
    dr_mem_dest *dest = (dr_mem_dest *)cinfo->dest;
    dest->pub.next_output_byte = dest->buf;
    dest->pub.free_in_buffer = dest->cap;
}

static boolean dr_dest_empty(j_compress_ptr cinfo) {
    dr_mem_dest *dest = (dr_mem_dest *)cinfo->dest;
    // libjpeg calls this when the buffer is full (free_in_buffer == 0) and ignores free_in_buffer/next_output_byte.
    size_t used = dest->cap;
    if (dest->cap > SIZE_MAX / 2) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    size_t cap = dest->cap * 2;
    uint8_t *buf = (uint8_t *)realloc(dest->buf, cap);
    if (buf == NULL) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
    dest->buf = buf;
    dest->cap = cap;
    dest->pub.next_output_byte = buf + used;
    dest->pub.free_in_buffer = cap - used;
    return TRUE;
}

static void dr_dest_term(j_compress_ptr cinfo) {
    dr_mem_dest *dest = (dr_mem_dest *)cinfo->dest;
    dest->len = dest->cap - dest->pub.free_in_buffer;
}

static int encode_fail(const char *what, char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) snprintf(msg, msg_len, "%s", what);
    return DR_JPEG_ERR_ARGUMENT;
}

int dr_jpeg_encode(const uint8_t *pixels, int width, int height, size_t stride, int input, int quality,
                   int progressive, int optimize, uint8_t **out, size_t *out_size, char *msg, size_t msg_len) {
    dr_jpeg_encode_options options = { quality, progressive, optimize, 2, 2, 0, NULL, 0 };
    return dr_jpeg_encode_with(pixels, width, height, stride, input, &options, out, out_size, msg, msg_len);
}

int dr_jpeg_encode_with(const uint8_t *pixels, int width, int height, size_t stride, int input,
                        const dr_jpeg_encode_options *options, uint8_t **out, size_t *out_size, char *msg,
                        size_t msg_len) {
    if (out != NULL) *out = NULL;
    if (out_size != NULL) *out_size = 0;
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (out == NULL || out_size == NULL) return encode_fail("out and out_size must not be NULL", msg, msg_len);
    if (pixels == NULL) return encode_fail("pixels is NULL", msg, msg_len);
    if (width <= 0 || height <= 0 || width > JPEG_MAX_DIMENSION || height > JPEG_MAX_DIMENSION)
        return encode_fail("width and height must be 1...65500", msg, msg_len);
    if (input != DR_JPEG_OUT_BGRA && input != DR_JPEG_OUT_GRAY)
        return encode_fail("input must be DR_JPEG_OUT_BGRA or DR_JPEG_OUT_GRAY", msg, msg_len);
    if (options == NULL) return encode_fail("options is NULL", msg, msg_len);
    int quality = options->quality;
    if (quality < 1 || quality > 100) return encode_fail("quality must be 1...100", msg, msg_len);
    if (options->luma_h < 1 || options->luma_h > 2 || options->luma_v < 1 || options->luma_v > 2)
        return encode_fail("luma_h and luma_v must be 1 or 2", msg, msg_len);
    if (options->restart_rows < 0 || options->restart_rows > 65535)
        return encode_fail("restart_rows must be 0...65535", msg, msg_len);
    int components = input == DR_JPEG_OUT_BGRA ? 4 : 1;
    if (stride < (size_t)width * (size_t)components) return encode_fail("stride is smaller than a row", msg, msg_len);

    // Heap context: nothing that libjpeg changes after setjmp lives in this frame's automatic variables.
    dr_encoder *e = (dr_encoder *)calloc(1, sizeof *e);
    if (e == NULL) {
        if (msg != NULL && msg_len > 0) snprintf(msg, msg_len, "out of memory");
        return DR_JPEG_ERR_NO_MEMORY;
    }
    dr_error_init(&e->err, 0);
    e->cinfo.err = &e->err.pub;
    if (setjmp(e->err.jmp)) {
        int status = e->err.status != DR_JPEG_OK ? e->err.status : DR_JPEG_ERR_CORRUPT;
        if (msg != NULL && msg_len > 0) snprintf(msg, msg_len, "%s", e->err.message);
        jpeg_destroy_compress(&e->cinfo);
        free(e->dest.buf);
        free(e);
        return status;
    }
    jpeg_create_compress(&e->cinfo);

    // Start at about 1/8 of the raw size (a q90 photo is ~1/10), at least 16 KiB; doubled on demand.
    size_t initial = ((size_t)width * (size_t)height * (size_t)components) / 8;
    if (initial < 16384) initial = 16384;
    e->dest.buf = (uint8_t *)malloc(initial);
    if (e->dest.buf == NULL) ERREXIT1(&e->cinfo, JERR_OUT_OF_MEMORY, 10);
    e->dest.cap = initial;
    e->dest.pub.init_destination = dr_dest_init;
    e->dest.pub.empty_output_buffer = dr_dest_empty;
    e->dest.pub.term_destination = dr_dest_term;
    e->cinfo.dest = &e->dest.pub;

    e->cinfo.image_width = (JDIMENSION)width;
    e->cinfo.image_height = (JDIMENSION)height;
    e->cinfo.input_components = components;
    e->cinfo.in_color_space = input == DR_JPEG_OUT_BGRA ? JCS_EXT_BGRX : JCS_GRAYSCALE;
    jpeg_set_defaults(&e->cinfo); // YCbCr 4:2:0 for color input, ISLOW DCT
    jpeg_set_quality(&e->cinfo, quality, TRUE);
    e->cinfo.optimize_coding = options->optimize ? TRUE : FALSE;
    if (components == 4) {
        e->cinfo.comp_info[0].h_samp_factor = options->luma_h;
        e->cinfo.comp_info[0].v_samp_factor = options->luma_v;
    }
    e->cinfo.restart_in_rows = options->restart_rows;
    if (options->progressive) jpeg_simple_progression(&e->cinfo);

    jpeg_start_compress(&e->cinfo, TRUE);
    // libjpeg splits the profile into APP2 ICC_PROFILE segments of at most 65519 bytes each.
    if (options->icc != NULL && options->icc_len > 0) {
        jpeg_write_icc_profile(&e->cinfo, options->icc, (unsigned int)options->icc_len);
    }
    JSAMPROW rows[DR_MAX_ROWS_PER_CALL];
    while (e->cinfo.next_scanline < e->cinfo.image_height) {
        JDIMENSION first = e->cinfo.next_scanline;
        JDIMENSION want = e->cinfo.image_height - first;
        if (want > DR_MAX_ROWS_PER_CALL) want = DR_MAX_ROWS_PER_CALL;
        for (JDIMENSION i = 0; i < want; i++) rows[i] = (JSAMPROW)(pixels + (size_t)(first + i) * stride);
        if (jpeg_write_scanlines(&e->cinfo, rows, want) == 0) ERREXIT(&e->cinfo, JERR_CANT_SUSPEND);
    }
    jpeg_finish_compress(&e->cinfo);

    *out = e->dest.buf;
    *out_size = e->dest.len;
    e->dest.buf = NULL;
    jpeg_destroy_compress(&e->cinfo);
    free(e);
    return DR_JPEG_OK;
}

void dr_jpeg_free(void *p) {
    free(p);
}
