#ifndef DARKROOM_SVG_H
#define DARKROOM_SVG_H

#include <stddef.h>
#include <stdint.h>

/* librsvg behind status codes. A document is parsed from memory with no base URL, so nothing outside it can be
 * referenced: librsvg then loads no external image, stylesheet or file (only data: URLs inside the document).
 * Rendering runs on a thread of its own so that the caller can stop waiting after a time limit; a render that
 * overruns finishes on that thread, holding its own reference to the document and its own pixel buffer. */

typedef enum {
    DR_SVG_OK = 0,
    DR_SVG_ERR_PARSE = 1,    /* not a document librsvg can read */
    DR_SVG_ERR_RENDER = 2,   /* librsvg or cairo failed while rendering */
    DR_SVG_ERR_TIMEOUT = 3,  /* the render did not finish within the limit */
    DR_SVG_ERR_NO_MEMORY = 4,
    DR_SVG_ERR_ARGUMENT = 5,
    DR_SVG_ERR_BUSY = 6,     /* `max_running` renders (overrunning ones included) are still drawing */
} dr_svg_status;

typedef struct dr_svg dr_svg;

/* Parses `length` bytes (copied: the caller's buffer may go once this returns). */
int dr_svg_open(const void *data, size_t length, dr_svg **out, char *message, size_t message_length);
void dr_svg_close(dr_svg *svg);

/* The document's size in pixels: its width and height (at 96 dpi), else its viewBox, else 300 x 150 as browsers
 * use. `has_size` says whether the document gave one. */
void dr_svg_size(dr_svg *svg, double *width, double *height, int *has_size);

/* Renders into `out` (premultiplied BGRA in memory order, cairo's ARGB32 on little-endian), `width` x `height`
 * pixels `stride` bytes apart, the document laid out in the viewport (x, y, w, h) in output pixels; waits at most
 * `seconds`. Refused with DR_SVG_ERR_BUSY while `max_running` render threads of this process (those that overran
 * their limit included) are still drawing, so overruns cannot pile up. */
int dr_svg_render(dr_svg *svg, uint8_t *out, int width, int height, size_t stride, double x, double y, double w,
                  double h, double seconds, int max_running, char *message, size_t message_length);

/* Render threads of this process still drawing. */
int dr_svg_running(void);

#endif
