// libjpeg error handling for the shim: error_exit longjmps back to the setjmp of the entry point that called
// libjpeg (never across a Swift frame); warnings are counted, the data running out is noted (and, in strict mode,
// is fatal); no message reaches stderr.
#ifndef DR_ERROR_H
#define DR_ERROR_H

#include <setjmp.h>
#include <stdio.h>

#include <jpeglib.h>

typedef struct {
    struct jpeg_error_mgr pub; // must be first: libjpeg hands us a jpeg_error_mgr*
    jmp_buf jmp;
    int status;                // dr_jpeg_status to return after the longjmp
    int warnings;              // warnings seen (msg_level == -1)
    int truncated;             // JWRN_JPEG_EOF seen
    int strict;                // JWRN_JPEG_EOF is fatal (DR_JPEG_ERR_TRUNCATED)
    char message[JMSG_LENGTH_MAX];
} dr_error_mgr;

// Installs the handlers; strict != 0 makes the data running out an error (DR_JPEG_ERR_TRUNCATED).
void dr_error_init(dr_error_mgr *err, int strict);
// The dr_jpeg_status for a libjpeg error code.
int dr_map_error(int code);
// The dr_jpeg_colorspace for a libjpeg colour space.
int dr_map_colorspace(J_COLOR_SPACE cs);

#endif
