// GIF animation: frames composited one at a time onto a caller-owned canvas (giflib reads the structure, the
// shim's own LZW decoder in dr_gif_rows.c the pixels), and an encoder that writes an animated GIF one frame at a
// time with a palette per frame. Status codes are dr_gif_status values (darkroom_gif.h); giflib's message goes to
// msg when msg is not NULL. No globals.
#ifndef DARKROOM_GIF_ANIM_H
#define DARKROOM_GIF_ANIM_H

#include <stddef.h>
#include <stdint.h>

#include "darkroom_gif.h"

#ifdef __cplusplus
extern "C" {
#endif

// Returned by dr_gif_anim_next when the trailer (or the end of the data after whole frames) is reached.
#define DR_GIF_END 100

typedef struct dr_gif_anim dr_gif_anim;

typedef struct {
    int left, top, width, height; // the frame's rectangle as the file states it
    int delay_cs;                 // the graphics control extension's delay, centiseconds (0 when absent)
    int disposal;                 // 0 unspecified, 1 keep, 2 restore to background, 3 restore to previous
    int has_transparency;         // the frame has a transparent index
    size_t saved_bytes;           // bytes the decoder holds to restore the canvas ("previous" disposal)
} dr_gif_frame;

// Opens an animation over data (which must outlive the handle). NULL on failure with *status set.
// canvas_width x canvas_height (1...65535) is the logical screen, normally the file's (the prober substitutes the
// first frame's extent when the file says 0).
dr_gif_anim *dr_gif_anim_open(const uint8_t *data, size_t size, int canvas_width, int canvas_height, int *status,
                              char *msg, size_t msg_len);
// Applies the previous frame's disposal to canvas, then draws the next frame over it the way browsers do:
// transparent-index pixels leave the canvas as it was, disposal 2 clears the frame's rectangle to transparent
// (0,0,0,0), disposal 3 restores what was under the frame. The canvas is canvas_width x canvas_height pixels of
// B G R A (alpha 0 or 255, so premultiplied and straight agree), row y at canvas + y*stride; the caller zeroes it
// before the first frame and must not change it between calls. Returns DR_GIF_OK with *frame filled,
// DR_GIF_END after the last frame (also when the data ends between frames), or an error status; a frame cut
// short is DR_GIF_ERR_TRUNCATED and leaves the canvas partly drawn (the animation ends at the frame before).
int dr_gif_anim_next(dr_gif_anim *anim, uint8_t *canvas, size_t stride, dr_gif_frame *frame, char *msg,
                     size_t msg_len);
void dr_gif_anim_close(dr_gif_anim *anim);

typedef struct dr_gif_writer dr_gif_writer;

// Starts an animated GIF of width x height (1...65535) that loops loop_count times (0 = forever, written as a
// NETSCAPE2.0 extension; -1 = play once, no extension). Output accumulates in memory.
dr_gif_writer *dr_gif_writer_open(int width, int height, int loop_count, int *status, char *msg, size_t msg_len);
// Adds one full-canvas frame of straight R G B A pixels (row y at rgba + y*stride), quantized to its own
// palette of up to 255 colours by giflib's median cut; pixels with alpha < 128 become the transparent index.
// delay_cs is the frame's delay in centiseconds. Each frame replaces the previous one (disposal 2 when the
// frame has transparent pixels, 1 otherwise).
int dr_gif_writer_add(dr_gif_writer *writer, const uint8_t *rgba, size_t stride, int delay_cs, char *msg,
                      size_t msg_len);
// Writes the trailer and hands out the bytes (*out, *out_size; free with free()). The writer is freed whatever
// the result.
int dr_gif_writer_finish(dr_gif_writer *writer, uint8_t **out, size_t *out_size, char *msg, size_t msg_len);
// Frees a writer without finishing it.
void dr_gif_writer_discard(dr_gif_writer *writer);

#ifdef __cplusplus
}
#endif
#endif
