// The error manager shared by the shim's decoders and the colour-space mapping they report (see dr_error.h).
#include "dr_error.h"
#include "darkroom_jpeg.h"

#include <setjmp.h>
#include <stdio.h>

#include <jerror.h>

int dr_map_error(int code) {
    switch (code) {
    case JERR_OUT_OF_MEMORY:
    case JERR_NO_BACKING_STORE: // max_memory_to_use exceeded by a whole-image (progressive/multi-scan) buffer
        return DR_JPEG_ERR_NO_MEMORY;
    case JERR_ARITH_NOTIMPL:
    case JERR_BAD_PRECISION:
    case JERR_NOT_COMPILED:
    case JERR_CCIR601_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:
    case JERR_IMAGE_TOO_BIG:    // a dimension above JPEG_MAX_DIMENSION (65500)
    case JERR_WIDTH_OVERFLOW:
        return DR_JPEG_ERR_UNSUPPORTED;
    default:
        return DR_JPEG_ERR_CORRUPT;
    }
}

static void dr_error_exit(j_common_ptr cinfo) {
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    int status = dr_map_error(cinfo->err->msg_code);
    // After the data ran out (lenient mode: libjpeg inserted a fake EOI), a "corrupt" error is a consequence
    // of the truncation, e.g. JERR_NO_IMAGE when the file ends inside the header.
    if (status == DR_JPEG_ERR_CORRUPT && err->truncated) status = DR_JPEG_ERR_TRUNCATED;
    err->status = status;
    longjmp(err->jmp, 1);
}

static void dr_output_message(j_common_ptr cinfo) {
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message); // never stderr
}

static void dr_emit_message(j_common_ptr cinfo, int msg_level) {
    dr_error_mgr *err = (dr_error_mgr *)cinfo->err;
    if (msg_level >= 0) return; // trace messages: ignore
    cinfo->err->num_warnings++;
    err->warnings++;
    (*cinfo->err->format_message)(cinfo, err->message);
    // JWRN_JPEG_EOF: the bytes ran out. JWRN_HIT_MARKER: the entropy-coded data ended at a marker (often an
    // EOI appended to a cut file) before every block was decoded. Both leave gray where the image should be.
    if (cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER) {
        err->truncated = 1;
        if (err->strict) {
            err->status = DR_JPEG_ERR_TRUNCATED;
            longjmp(err->jmp, 1);
        }
    }
}

void dr_error_init(dr_error_mgr *err, int strict) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = dr_error_exit;
    err->pub.output_message = dr_output_message;
    err->pub.emit_message = dr_emit_message;
    err->status = DR_JPEG_OK;
    err->warnings = 0;
    err->truncated = 0;
    err->strict = strict;
    err->message[0] = '\0';
}

int dr_map_colorspace(J_COLOR_SPACE cs) {
    switch (cs) {
    case JCS_GRAYSCALE: return DR_JPEG_CS_GRAY;
    case JCS_YCbCr: return DR_JPEG_CS_YCBCR;
    case JCS_RGB: return DR_JPEG_CS_RGB;
    case JCS_CMYK: return DR_JPEG_CS_CMYK;
    case JCS_YCCK: return DR_JPEG_CS_YCCK;
    default: return DR_JPEG_CS_UNKNOWN;
    }
}
