// A small C shim around giflib: decodes the first frame of a GIF from memory onto its logical screen (giflib reads
// the file's structure; the frame's LZW data is decoded by the shim's dr_gif_rows.c).
// giflib is driven through a read callback over the in-memory bytes; errors come back as status codes, with
// giflib's message (GifErrorString) in msg when msg is not NULL. No globals: calls may run on any thread.
#ifndef DARKROOM_GIF_H
#define DARKROOM_GIF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DR_GIF_OK = 0,
    DR_GIF_ERR_CORRUPT = 1,     // malformed (giflib D_GIF_ERR_* other than the ones below)
    DR_GIF_ERR_TRUNCATED = 2,   // data ended early (the read callback ran short, whatever code giflib gave,
                                // e.g. D_GIF_ERR_NO_SCRN_DSCR for a cut screen descriptor), or
                                // D_GIF_ERR_EOF_TOO_SOON (LZW end before all pixels). Empty data too.
    DR_GIF_ERR_NO_FRAME = 3,    // no image descriptor at all
    DR_GIF_ERR_NO_MEMORY = 4,
    DR_GIF_ERR_ARGUMENT = 5,    // dst too small, bad size
} dr_gif_status;

typedef struct {
    int canvas_width;     // logical screen size
    int canvas_height;
    int has_transparency; // first frame uses a transparent index (from its graphics control extension).
                          // Always 0 from dr_gif_read_info. Note that a frame smaller than the canvas also
                          // leaves 0,0,0,0 pixels around it even when this is 0.
} dr_gif_info;

// Reads the logical screen descriptor (and global color map) only: fills canvas_width/canvas_height.
int dr_gif_read_info(const uint8_t *data, size_t size, dr_gif_info *info, char *msg, size_t msg_len);

// Decodes the first frame onto a canvas_width x canvas_height canvas written at dst (row y at dst + y*stride),
// 4 bytes per pixel, B G R A premultiplied: pixels outside the frame and transparent-index pixels are 0,0,0,0;
// every other pixel is the palette color with A = 255. Interlaced frames are de-interlaced. Frames that extend
// beyond the canvas are clipped. The frame's local color map wins over the global one; a missing color map
// is an error (DR_GIF_ERR_CORRUPT). Indices past the map's size are treated as black.
// canvas_width/canvas_height are the caller's (normally the file's, from dr_gif_read_info; info reports the
// file's) and must be 1...65535; stride >= canvas_width * 4 and dst non-NULL, else DR_GIF_ERR_ARGUMENT. dst is
// cleared first, so on any error it holds zeros or a partly drawn frame. Decoding stops once every visible row
// is drawn (rows below the canvas are not decoded); only the first frame is read. A terminator before any
// image descriptor is DR_GIF_ERR_NO_FRAME.
int dr_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *dst, size_t stride,
                              int canvas_width, int canvas_height, dr_gif_info *info, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif
#endif
