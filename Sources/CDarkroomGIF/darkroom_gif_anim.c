// giflib shim, animation: frames composited one at a time onto a caller-owned canvas (the way browsers do), and
// an animated GIF writer with one palette per frame. Every path frees what it allocated; no globals.
#include "darkroom_gif_anim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "dr_gif_internal.h"
#include "dr_gif_rows.h"

struct dr_gif_anim {
    GifFileType *gif;
    dr_gif_cursor cursor;
    int canvas_width, canvas_height;
    int frames;                // frames drawn so far
    int pending_disposal;      // the last drawn frame's disposal, applied before the next frame is drawn
    int px, py, pw, ph;        // the last drawn frame's rectangle, clipped to the canvas
    uint8_t *saved;            // pixels under the last drawn frame when its disposal is 3 (pw*ph*4 bytes)
    size_t saved_capacity;
    dr_gif_rows rows;          // the LZW decoder and its row buffer, kept from frame to frame
};

static int grow(void **buffer, size_t *capacity, size_t needed) {
    if (needed <= *capacity) return 1;
    void *bigger = realloc(*buffer, needed);
    if (bigger == NULL) return 0;
    *buffer = bigger;
    *capacity = needed;
    return 1;
}

dr_gif_anim *dr_gif_anim_open(const uint8_t *data, size_t size, int canvas_width, int canvas_height, int *status,
                              char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if ((data == NULL && size > 0) || canvas_width <= 0 || canvas_height <= 0 || canvas_width > 65535 ||
        canvas_height > 65535) {
        dr_gif__set_msg(msg, msg_len, "data is NULL or the canvas size is not 1...65535");
        *status = DR_GIF_ERR_ARGUMENT;
        return NULL;
    }
    dr_gif_anim *anim = calloc(1, sizeof *anim);
    if (anim == NULL) {
        dr_gif__set_msg(msg, msg_len, "out of memory");
        *status = DR_GIF_ERR_NO_MEMORY;
        return NULL;
    }
    anim->cursor = (dr_gif_cursor){data, size, 0, 0};
    int error = 0;
    anim->gif = DGifOpen(&anim->cursor, dr_gif__read, &error);
    if (anim->gif == NULL) {
        *status = dr_gif__map_error(error, &anim->cursor, msg, msg_len);
        free(anim);
        return NULL;
    }
    anim->canvas_width = canvas_width;
    anim->canvas_height = canvas_height;
    *status = DR_GIF_OK;
    return anim;
}

void dr_gif_anim_close(dr_gif_anim *anim) {
    if (anim == NULL) return;
    int error = 0;
    if (anim->gif != NULL) (void)DGifCloseFile(anim->gif, &error);
    free(anim->saved);
    dr_gif_rows_free(&anim->rows);
    free(anim);
}

// Reads one extension; a graphics control block sets the frame's delay, disposal and transparent index.
static int read_extension(GifFileType *gif, GraphicsControlBlock *gcb) {
    int code = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return GIF_ERROR;
    if (code == GRAPHICS_EXT_FUNC_CODE && block != NULL) {
        GraphicsControlBlock read;
        if (DGifExtensionToGCB(block[0], block + 1, &read) == GIF_OK) *gcb = read; // a malformed one is ignored
    }
    while (block != NULL) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return GIF_ERROR;
    }
    return GIF_OK;
}

static void dispose_previous(dr_gif_anim *a, uint8_t *canvas, size_t stride) {
    if (a->pw <= 0 || a->ph <= 0) return;
    for (int y = 0; y < a->ph; y++) {
        uint8_t *row = canvas + (size_t)(a->py + y) * stride + (size_t)a->px * 4;
        if (a->pending_disposal == DISPOSE_BACKGROUND) {
            memset(row, 0, (size_t)a->pw * 4); // browsers clear to transparent, not to the background colour
        } else if (a->pending_disposal == DISPOSE_PREVIOUS) {
            memcpy(row, a->saved + (size_t)y * a->pw * 4, (size_t)a->pw * 4);
        }
    }
}

int dr_gif_anim_next(dr_gif_anim *a, uint8_t *canvas, size_t stride, dr_gif_frame *frame, char *msg,
                     size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (a == NULL || canvas == NULL || frame == NULL || stride < (size_t)a->canvas_width * 4) {
        dr_gif__set_msg(msg, msg_len, "anim, canvas or frame is NULL, or the stride is too small");
        return DR_GIF_ERR_ARGUMENT;
    }
    memset(frame, 0, sizeof *frame);
    GifFileType *gif = a->gif;
    GraphicsControlBlock gcb = {DISPOSAL_UNSPECIFIED, false, 0, NO_TRANSPARENT_COLOR};
    for (;;) {
        GifRecordType type = UNDEFINED_RECORD_TYPE;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            // The data ends between whole frames: what a browser shows is every frame so far.
            if (a->cursor.short_read && a->frames > 0) return DR_GIF_END;
            return dr_gif__map_error(gif->Error, &a->cursor, msg, msg_len);
        }
        if (type == TERMINATE_RECORD_TYPE) {
            if (a->frames > 0) return DR_GIF_END;
            dr_gif__set_msg(msg, msg_len, "GIF has no image");
            return DR_GIF_ERR_NO_FRAME;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            if (read_extension(gif, &gcb) == GIF_ERROR) {
                if (a->cursor.short_read && a->frames > 0) return DR_GIF_END;
                return dr_gif__map_error(gif->Error, &a->cursor, msg, msg_len);
            }
            continue;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) break;
        dr_gif__set_msg(msg, msg_len, "unexpected GIF record");
        return DR_GIF_ERR_CORRUPT;
    }
    if (DGifGetImageDesc(gif) == GIF_ERROR) return dr_gif__map_error(gif->Error, &a->cursor, msg, msg_len);
    const GifImageDesc *desc = &gif->Image;
    const ColorMapObject *map = desc->ColorMap != NULL ? desc->ColorMap : gif->SColorMap;
    if (map == NULL || map->Colors == NULL) {
        dr_gif__set_msg(msg, msg_len, "GIF frame has no color map");
        return DR_GIF_ERR_CORRUPT;
    }
    const int fw = desc->Width, fh = desc->Height, fl = desc->Left, ft = desc->Top;
    const int cw = a->canvas_width, ch = a->canvas_height;
    // The visible part: columns [x0, x1) and rows [y0, y1) of the canvas.
    const int x0 = fl < cw ? fl : cw, y0 = ft < ch ? ft : ch;
    const int x1 = (int)((int64_t)fl + fw < cw ? (int64_t)fl + fw : cw);
    const int y1 = (int)((int64_t)ft + fh < ch ? (int64_t)ft + fh : ch);
    const int vw = x1 > x0 ? x1 - x0 : 0, vh = y1 > y0 ? y1 - y0 : 0;

    const int begun = dr_gif_rows_begin(&a->rows, &a->cursor, fw, msg, msg_len);
    if (begun != DR_GIF_OK) return begun;
    dispose_previous(a, canvas, stride);
    const int disposal = gcb.DisposalMode;
    if (disposal == DISPOSE_PREVIOUS && vw > 0 && vh > 0) {
        if (!grow((void **)&a->saved, &a->saved_capacity, (size_t)vw * vh * 4)) {
            dr_gif__set_msg(msg, msg_len, "out of memory");
            return DR_GIF_ERR_NO_MEMORY;
        }
        for (int y = 0; y < vh; y++) {
            memcpy(a->saved + (size_t)y * vw * 4, canvas + (size_t)(y0 + y) * stride + (size_t)x0 * 4,
                   (size_t)vw * 4);
        }
    }
    // Every index opaque: the transparent index is skipped when drawing, leaving the canvas beneath.
    dr_gif_palette palette;
    dr_gif__build_palette(&palette, map, NO_TRANSPARENT_COLOR);
    const int transparent = gcb.TransparentColor;
    // Rows are drawn as they are decoded (interlaced ones in pass order); the LZW stream is read to its end
    // even below the canvas, since the next frame follows it.
    static const int pass_offset[4] = {0, 4, 2, 1};
    static const int pass_step[4] = {8, 8, 4, 2};
    const int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        const int start = desc->Interlace ? pass_offset[pass] : 0;
        const int step = desc->Interlace ? pass_step[pass] : 1;
        for (int y = start; y < fh; y += step) {
            int status = DR_GIF_OK;
            const uint8_t *line = dr_gif_rows_next(&a->rows, &a->cursor, &status, msg, msg_len);
            if (line == NULL) return status;
            const int cy = ft + y;
            if (cy < y0 || cy >= y1 || vw == 0) continue;
            const uint8_t *src = line + (x0 - fl);
            uint8_t *out = canvas + (size_t)cy * stride + (size_t)x0 * 4;
            if (transparent == NO_TRANSPARENT_COLOR) {
                for (int x = 0; x < vw; x++) memcpy(out + (size_t)x * 4, palette.bgra[src[x]], 4);
            } else {
                for (int x = 0; x < vw; x++) {
                    if (src[x] != transparent) memcpy(out + (size_t)x * 4, palette.bgra[src[x]], 4);
                }
            }
        }
    }
    dr_gif_rows_finish(&a->rows, &a->cursor);
    a->pending_disposal = disposal;
    a->px = x0;
    a->py = y0;
    a->pw = vw;
    a->ph = vh;
    a->frames++;
    frame->left = fl;
    frame->top = ft;
    frame->width = fw;
    frame->height = fh;
    frame->delay_cs = gcb.DelayTime;
    frame->disposal = disposal;
    frame->has_transparency = transparent != NO_TRANSPARENT_COLOR;
    frame->saved_bytes = a->saved_capacity + a->rows.row_capacity + sizeof a->rows;
    return DR_GIF_OK;
}
