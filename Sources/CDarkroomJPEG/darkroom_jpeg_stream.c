// dr_jpeg_stream: a JPEG decoded while its bytes arrive (libjpeg's buffered-image mode over a suspending data
// source). As in darkroom_jpeg.c, every public entry point sets its own setjmp before calling libjpeg, and all
// state lives in the stream.
//
// The data source returns FALSE from fill_input_buffer when it has nothing more, which makes libjpeg suspend: it
// backs up to the last point it can resume from (a marker, an MCU) and leaves next_input_byte/bytes_in_buffer
// there. Those bytes are all the stream keeps; each append moves them to the front and adds the new ones.
#include "darkroom_jpeg.h"
#include "dr_error.h"

#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

enum {
    SS_CREATED = 0, // waiting for the header
    SS_HEADER = 1,  // header read
    SS_RUNNING = 2, // jpeg_start_decompress done (buffered-image mode)
    SS_PASS = 3,    // an output pass is open
    SS_DONE = 4,    // the final pass ended (jpeg_finish_decompress done)
    SS_FAILED = 5,  // an error longjmped out; libjpeg's object was aborted
};

typedef struct {
    struct jpeg_source_mgr pub; // must be first: libjpeg hands us a jpeg_source_mgr*
    uint8_t *buffer;            // [buffer, buffer + length): bytes appended and not yet consumed start at
    size_t length;              // pub.next_input_byte
    size_t capacity;
    size_t skip_pending;        // bytes of a skipped segment that have not arrived yet
    int at_end;
} stream_source;

struct dr_jpeg_stream {
    struct jpeg_decompress_struct cinfo;
    dr_error_mgr err;
    stream_source src;
    int max_scans;
    int state;
    int out_components;
    int complete_scans;
    int eoi;
    int finish_pending; // jpeg_finish_output suspended: it is looking for the next scan's header
    int final_pass;     // the open pass is the final image
};

static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};

static void src_init(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean src_fill(j_decompress_ptr cinfo) {
    stream_source *src = (stream_source *)cinfo->src;
    if (!src->at_end) return FALSE; // suspend: libjpeg keeps its place, the bytes from next_input_byte stay
    // The data ended before the image did: libjpeg's memory source does the same (a warning and a fake EOI).
    WARNMS(cinfo, JWRN_JPEG_EOF);
    src->pub.next_input_byte = fake_eoi;
    src->pub.bytes_in_buffer = 2;
    return TRUE;
}

static void src_skip(j_decompress_ptr cinfo, long count) {
    stream_source *src = (stream_source *)cinfo->src;
    if (count <= 0) return;
    // skip_input_data cannot suspend: a segment longer than the bytes held is skipped as far as they go, and the
    // rest is dropped from the next appends (or, once the data has ended, is simply not there).
    if ((size_t)count > src->pub.bytes_in_buffer) {
        src->skip_pending = (size_t)count - src->pub.bytes_in_buffer;
        src->pub.next_input_byte += src->pub.bytes_in_buffer;
        src->pub.bytes_in_buffer = 0;
        return;
    }
    src->pub.next_input_byte += count;
    src->pub.bytes_in_buffer -= (size_t)count;
}

static void src_term(j_decompress_ptr cinfo) { (void)cinfo; }

// MARK: - Life cycle

static int create_decompress(dr_jpeg_stream *s, size_t max_memory) {
    if (setjmp(s->err.jmp)) {
        jpeg_destroy_decompress(&s->cinfo); // jpeg_create_decompress only fails when it cannot allocate
        return s->err.status;
    }
    jpeg_create_decompress(&s->cinfo);
    s->cinfo.client_data = s;
    if (max_memory > 0) s->cinfo.mem->max_memory_to_use = max_memory > (size_t)LONG_MAX ? LONG_MAX : (long)max_memory;
    s->src.pub.init_source = src_init;
    s->src.pub.fill_input_buffer = src_fill;
    s->src.pub.skip_input_data = src_skip;
    s->src.pub.resync_to_restart = jpeg_resync_to_restart;
    s->src.pub.term_source = src_term;
    s->src.pub.next_input_byte = NULL;
    s->src.pub.bytes_in_buffer = 0;
    s->cinfo.src = &s->src.pub;
    return DR_JPEG_OK;
}

dr_jpeg_stream *dr_jpeg_stream_create(int max_scans, size_t max_memory) {
    dr_jpeg_stream *s = (dr_jpeg_stream *)calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->max_scans = max_scans;
    s->state = SS_CREATED;
    dr_error_init(&s->err, 0);
    s->cinfo.err = &s->err.pub;
    if (create_decompress(s, max_memory) != DR_JPEG_OK) {
        free(s);
        return NULL;
    }
    return s;
}

void dr_jpeg_stream_destroy(dr_jpeg_stream *s) {
    if (s == NULL) return;
    jpeg_destroy_decompress(&s->cinfo); // cannot fail
    free(s->src.buffer);
    free(s);
}

const char *dr_jpeg_stream_message(const dr_jpeg_stream *s) { return s == NULL ? "" : s->err.message; }

static void fill_info(const dr_jpeg_stream *s, dr_jpeg_info *info) {
    if (info == NULL) return;
    const struct jpeg_decompress_struct *c = &s->cinfo;
    if (s->state >= SS_HEADER && s->state != SS_FAILED) {
        info->width = (int)c->image_width;
        info->height = (int)c->image_height;
        info->components = c->num_components;
        info->colorspace = dr_map_colorspace(c->jpeg_color_space);
        info->progressive = c->progressive_mode ? 1 : 0;
    }
    if (s->state >= SS_RUNNING && s->state != SS_FAILED) {
        info->output_width = (int)c->output_width;
        info->output_height = (int)c->output_height;
    }
    info->warnings = s->err.warnings;
    info->truncated = s->err.truncated;
    info->dc_reader = 0;
}

static int fail(dr_jpeg_stream *s) {
    jpeg_abort_decompress(&s->cinfo);
    s->state = SS_FAILED;
    return s->err.status != DR_JPEG_OK ? s->err.status : DR_JPEG_ERR_CORRUPT;
}

static int argument_error(dr_jpeg_stream *s, const char *what) {
    if (s != NULL && s->state != SS_FAILED) snprintf(s->err.message, sizeof s->err.message, "%s", what);
    return DR_JPEG_ERR_ARGUMENT;
}

// MARK: - Input

int dr_jpeg_stream_append(dr_jpeg_stream *s, const uint8_t *data, size_t size, int at_end) {
    if (s == NULL || (data == NULL && size > 0)) return DR_JPEG_ERR_ARGUMENT;
    if (s->state == SS_FAILED || s->src.at_end) return argument_error(s, "dr_jpeg_stream_append after the end or an error");
    stream_source *src = &s->src;
    size_t skip = src->skip_pending < size ? src->skip_pending : size;
    src->skip_pending -= skip;
    data += skip;
    size -= skip;
    size_t held = src->pub.bytes_in_buffer;
    if (size > SIZE_MAX - held) return DR_JPEG_ERR_NO_MEMORY;
    if (held + size > src->capacity) {
        size_t capacity = src->capacity < 65536 ? 65536 : src->capacity;
        while (capacity < held + size) capacity = capacity > SIZE_MAX / 2 ? held + size : capacity * 2;
        uint8_t *buffer = (uint8_t *)malloc(capacity);
        if (buffer == NULL) return DR_JPEG_ERR_NO_MEMORY;
        if (held > 0) memcpy(buffer, src->pub.next_input_byte, held);
        free(src->buffer);
        src->buffer = buffer;
        src->capacity = capacity;
    } else if (held > 0 && src->pub.next_input_byte != src->buffer) {
        memmove(src->buffer, src->pub.next_input_byte, held);
    }
    if (size > 0) memcpy(src->buffer + held, data, size);
    src->length = held + size;
    src->pub.next_input_byte = src->buffer;
    src->pub.bytes_in_buffer = src->length;
    if (at_end) src->at_end = 1;
    return DR_JPEG_OK;
}

int dr_jpeg_stream_read_header(dr_jpeg_stream *s, dr_jpeg_info *info) {
    if (s == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (s->state == SS_HEADER) {
        fill_info(s, info);
        return DR_JPEG_OK;
    }
    if (s->state != SS_CREATED) return argument_error(s, "dr_jpeg_stream_read_header out of order");
    if (setjmp(s->err.jmp)) {
        int status = fail(s);
        fill_info(s, info);
        return status;
    }
    if (jpeg_read_header(&s->cinfo, TRUE) == JPEG_SUSPENDED) {
        fill_info(s, info);
        return DR_JPEG_NEED_DATA;
    }
    s->state = SS_HEADER;
    fill_info(s, info);
    return DR_JPEG_OK;
}

int dr_jpeg_stream_start(dr_jpeg_stream *s, int scale_denom, int output, dr_jpeg_info *info) {
    if (s == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (s->state != SS_HEADER) return argument_error(s, "dr_jpeg_stream_start before the header or twice");
    if (scale_denom != 1 && scale_denom != 2 && scale_denom != 4 && scale_denom != 8)
        return argument_error(s, "scale_denom must be 1, 2, 4 or 8");
    int cmyk = s->cinfo.jpeg_color_space == JCS_CMYK || s->cinfo.jpeg_color_space == JCS_YCCK;
    J_COLOR_SPACE space;
    int components;
    switch (output) {
    case DR_JPEG_OUT_BGRA: space = JCS_EXT_BGRA; components = 4; break;
    case DR_JPEG_OUT_GRAY: space = JCS_GRAYSCALE; components = 1; break;
    case DR_JPEG_OUT_CMYK:
        if (!cmyk) return argument_error(s, "CMYK output asked of a JPEG that is not CMYK");
        space = JCS_CMYK;
        components = 4;
        break;
    default: return argument_error(s, "unknown output format");
    }
    if (setjmp(s->err.jmp)) {
        int status = fail(s);
        fill_info(s, info);
        return status;
    }
    if (cmyk && output != DR_JPEG_OUT_CMYK) ERREXIT(&s->cinfo, JERR_CONVERSION_NOTIMPL);
    s->cinfo.buffered_image = TRUE;
    s->cinfo.scale_num = 1;
    s->cinfo.scale_denom = (unsigned int)scale_denom;
    s->cinfo.out_color_space = space;
    (void)jpeg_start_decompress(&s->cinfo); // in buffered-image mode this reads nothing and cannot suspend
    s->out_components = components;
    s->state = SS_RUNNING;
    fill_info(s, info);
    return DR_JPEG_OK;
}

static void fill_state(const dr_jpeg_stream *s, dr_jpeg_stream_state *state) {
    if (state == NULL) return;
    state->complete_scans = s->complete_scans;
    state->finished = s->eoi;
    state->input_scan = s->state >= SS_RUNNING && s->state != SS_FAILED ? s->cinfo.input_scan_number : 0;
}

int dr_jpeg_stream_consume(dr_jpeg_stream *s, dr_jpeg_stream_state *state) {
    if (s == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (s->state == SS_DONE) {
        fill_state(s, state);
        return DR_JPEG_OK;
    }
    if (s->state != SS_RUNNING) return argument_error(s, "dr_jpeg_stream_consume before start or during a pass");
    if (setjmp(s->err.jmp)) {
        int status = fail(s);
        fill_state(s, state);
        return status;
    }
    if (s->finish_pending) {
        if (!jpeg_finish_output(&s->cinfo)) {
            fill_state(s, state);
            return DR_JPEG_OK;
        }
        s->finish_pending = 0;
    }
    while (!s->eoi) {
        int r = jpeg_consume_input(&s->cinfo);
        if (r == JPEG_SUSPENDED) break;
        if (r == JPEG_REACHED_SOS && s->max_scans > 0 && s->cinfo.progressive_mode &&
            s->cinfo.input_scan_number > s->max_scans) {
            snprintf(s->err.message, sizeof s->err.message, "Scan number %d exceeds maximum scans (%d)",
                     s->cinfo.input_scan_number, s->max_scans);
            s->err.status = DR_JPEG_ERR_TOO_MANY_SCANS;
            longjmp(s->err.jmp, 1);
        }
        if (r == JPEG_SCAN_COMPLETED) s->complete_scans = s->cinfo.input_scan_number;
        if (r == JPEG_REACHED_EOI) {
            s->eoi = 1;
            s->complete_scans = s->cinfo.input_scan_number;
        }
    }
    fill_state(s, state);
    return DR_JPEG_OK;
}

// MARK: - Output passes

int dr_jpeg_stream_start_pass(dr_jpeg_stream *s, dr_jpeg_info *info) {
    if (s == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (s->state != SS_RUNNING) return argument_error(s, "dr_jpeg_stream_start_pass before start or during a pass");
    if (s->finish_pending || s->complete_scans == 0) return DR_JPEG_NEED_DATA;
    if (setjmp(s->err.jmp)) {
        int status = fail(s);
        fill_info(s, info);
        return status;
    }
    // The final pass keeps libjpeg's defaults, so its pixels equal a direct decode's (block smoothing does
    // nothing once every coefficient is known).
    s->final_pass = s->eoi;
    s->cinfo.do_block_smoothing = s->eoi ? TRUE : FALSE;
    (void)jpeg_start_output(&s->cinfo, s->eoi ? s->cinfo.input_scan_number : s->complete_scans);
    s->state = SS_PASS;
    fill_info(s, info);
    return DR_JPEG_OK;
}

int dr_jpeg_stream_read_rows(dr_jpeg_stream *s, uint8_t *dst, size_t stride, int max_rows, int *rows_read) {
    if (rows_read != NULL) *rows_read = 0;
    if (s == NULL || dst == NULL || rows_read == NULL || max_rows < 0) return DR_JPEG_ERR_ARGUMENT;
    if (s->state != SS_PASS) return argument_error(s, "dr_jpeg_stream_read_rows outside a pass");
    if (stride < (size_t)s->cinfo.output_width * (size_t)s->out_components)
        return argument_error(s, "stride is smaller than a row");
    if (setjmp(s->err.jmp)) return fail(s);
    JSAMPROW rows[16];
    while (*rows_read < max_rows && s->cinfo.output_scanline < s->cinfo.output_height) {
        int want = max_rows - *rows_read;
        if (want > 16) want = 16;
        for (int i = 0; i < want; i++) rows[i] = dst + (size_t)(*rows_read + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(&s->cinfo, rows, (JDIMENSION)want);
        if (got == 0) break; // cannot happen for a complete scan; the caller sees the short count
        *rows_read += (int)got;
    }
    return DR_JPEG_OK;
}

int dr_jpeg_stream_finish_pass(dr_jpeg_stream *s, dr_jpeg_info *info) {
    if (s == NULL) return DR_JPEG_ERR_ARGUMENT;
    if (s->state != SS_PASS) return argument_error(s, "dr_jpeg_stream_finish_pass outside a pass");
    if (setjmp(s->err.jmp)) {
        int status = fail(s);
        fill_info(s, info);
        return status;
    }
    if (s->final_pass) {
        // After EOI neither call needs input. Rows not read are dropped (jpeg_finish_output does not need them).
        (void)jpeg_finish_output(&s->cinfo);
        (void)jpeg_finish_decompress(&s->cinfo);
        s->state = SS_DONE;
    } else {
        // jpeg_finish_output reads on to the next scan's header, which may not have arrived: it then suspends
        // and is called again from dr_jpeg_stream_consume.
        s->finish_pending = jpeg_finish_output(&s->cinfo) ? 0 : 1;
        s->state = SS_RUNNING;
    }
    fill_info(s, info);
    return DR_JPEG_OK;
}
