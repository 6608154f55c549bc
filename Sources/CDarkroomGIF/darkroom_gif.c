// giflib shim: decodes the first frame of an in-memory GIF onto a BGRA (premultiplied) canvas.
// giflib reads through an InputFunc over a cursor; every path closes the GifFileType with DGifCloseFile.
// No globals: separate calls may run on separate threads.
#include "darkroom_gif.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "dr_gif_internal.h"
#include "dr_gif_rows.h"

static GifFileType *open_gif(dr_gif_cursor *cursor, int *status, char *msg, size_t msg_len) {
    int error = 0;
    GifFileType *gif = DGifOpen(cursor, dr_gif__read, &error); // reads the screen descriptor and global map
    if (gif == NULL) *status = dr_gif__map_error(error, cursor, msg, msg_len);
    return gif;
}

static void close_gif(GifFileType *gif) {
    int error = 0;
    if (gif != NULL) (void)DGifCloseFile(gif, &error); // frees gif whatever it returns
}

int dr_gif_read_info(const uint8_t *data, size_t size, dr_gif_info *info, char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (info == NULL || (data == NULL && size > 0)) {
        dr_gif__set_msg(msg, msg_len, "info is NULL or data is NULL");
        return DR_GIF_ERR_ARGUMENT;
    }
    memset(info, 0, sizeof *info);
    dr_gif_cursor cursor = {data, size, 0, 0};
    int status = DR_GIF_OK;
    GifFileType *gif = open_gif(&cursor, &status, msg, msg_len);
    if (gif == NULL) return status;
    info->canvas_width = gif->SWidth;
    info->canvas_height = gif->SHeight;
    info->has_transparency = 0; // unknown until the first frame's graphics control extension is read
    close_gif(gif);
    return DR_GIF_OK;
}

// Reads extension sub-blocks of the current extension; returns the GCB transparent index via *transparent when
// the extension is a graphics control block. Returns GIF_OK or GIF_ERROR (error code in gif->Error).
static int read_extension(GifFileType *gif, int *transparent) {
    int code = 0;
    GifByteType *block = NULL;
    if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return GIF_ERROR;
    if (code == GRAPHICS_EXT_FUNC_CODE && block != NULL) {
        GraphicsControlBlock gcb;
        // block[0] is the sub-block length, the payload follows. A malformed GCB (length != 4) is ignored.
        if (DGifExtensionToGCB(block[0], block + 1, &gcb) == GIF_OK) *transparent = gcb.TransparentColor;
    }
    while (block != NULL) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return GIF_ERROR;
    }
    return GIF_OK;
}

int dr_gif_decode_first_frame(const uint8_t *data, size_t size, uint8_t *dst, size_t stride,
                              int canvas_width, int canvas_height, dr_gif_info *info, char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (info != NULL) memset(info, 0, sizeof *info);
    if (dst == NULL || (data == NULL && size > 0)) {
        dr_gif__set_msg(msg, msg_len, "dst or data is NULL");
        return DR_GIF_ERR_ARGUMENT;
    }
    if (canvas_width <= 0 || canvas_height <= 0 || canvas_width > 65535 || canvas_height > 65535) {
        dr_gif__set_msg(msg, msg_len, "canvas size must be 1...65535");
        return DR_GIF_ERR_ARGUMENT;
    }
    const size_t row_bytes = (size_t)canvas_width * 4;
    if (stride < row_bytes) {
        dr_gif__set_msg(msg, msg_len, "stride is smaller than canvas_width * 4");
        return DR_GIF_ERR_ARGUMENT;
    }
    // Pixels outside the frame stay transparent black.
    for (int y = 0; y < canvas_height; y++) memset(dst + (size_t)y * stride, 0, row_bytes);

    dr_gif_cursor cursor = {data, size, 0, 0};
    int status = DR_GIF_OK;
    GifFileType *gif = open_gif(&cursor, &status, msg, msg_len);
    if (gif == NULL) return status;
    if (info != NULL) {
        info->canvas_width = gif->SWidth;
        info->canvas_height = gif->SHeight;
    }

    int transparent = NO_TRANSPARENT_COLOR; // from the last GCB before the first image descriptor
    dr_gif_rows *rows = NULL;
    dr_gif_palette *palette = NULL;
    for (;;) {
        GifRecordType type = UNDEFINED_RECORD_TYPE;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            status = dr_gif__map_error(gif->Error, &cursor, msg, msg_len);
            goto done;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            if (read_extension(gif, &transparent) == GIF_ERROR) {
                status = dr_gif__map_error(gif->Error, &cursor, msg, msg_len);
                goto done;
            }
            continue;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            dr_gif__set_msg(msg, msg_len, "GIF has no image");
            status = DR_GIF_ERR_NO_FRAME;
            goto done;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) break;
        // DGifGetRecordType rejects other bytes itself (D_GIF_ERR_WRONG_RECORD); be defensive anyway.
        dr_gif__set_msg(msg, msg_len, "unexpected GIF record");
        status = DR_GIF_ERR_CORRUPT;
        goto done;
    }

    if (DGifGetImageDesc(gif) == GIF_ERROR) {
        status = dr_gif__map_error(gif->Error, &cursor, msg, msg_len);
        goto done;
    }
    if (info != NULL) info->has_transparency = transparent != NO_TRANSPARENT_COLOR;

    const GifImageDesc *desc = &gif->Image;
    const ColorMapObject *map = desc->ColorMap != NULL ? desc->ColorMap : gif->SColorMap;
    if (map == NULL || map->Colors == NULL) {
        dr_gif__set_msg(msg, msg_len, "GIF frame has no color map");
        status = DR_GIF_ERR_CORRUPT;
        goto done;
    }
    const int fw = desc->Width, fh = desc->Height, fl = desc->Left, ft = desc->Top;
    if (fw < 0 || fh < 0 || fl < 0 || ft < 0) { // giflib reads 16-bit unsigned values; cannot happen
        dr_gif__set_msg(msg, msg_len, "bad GIF frame geometry");
        status = DR_GIF_ERR_CORRUPT;
        goto done;
    }
    // Visible part of the frame on the canvas: columns [x0, x1), frame rows [0, vis_rows).
    const int x0 = fl < canvas_width ? fl : canvas_width;
    const int x1 = (int)((int64_t)fl + fw < canvas_width ? (int64_t)fl + fw : canvas_width);
    const int vis_cols = x1 - x0;
    const int vis_rows = (int)((int64_t)ft + fh < canvas_height ? fh : (ft < canvas_height ? canvas_height - ft : 0));
    if (fw == 0 || fh == 0 || vis_cols <= 0 || vis_rows <= 0) {
        status = DR_GIF_OK; // nothing of the frame lands on the canvas
        goto done;
    }

    palette = (dr_gif_palette *)malloc(sizeof *palette);
    rows = (dr_gif_rows *)calloc(1, sizeof *rows);
    if (palette == NULL || rows == NULL) {
        dr_gif__set_msg(msg, msg_len, "out of memory");
        status = DR_GIF_ERR_NO_MEMORY;
        goto done;
    }
    dr_gif__build_palette(palette, map, transparent);
    status = dr_gif_rows_begin(rows, &cursor, fw, msg, msg_len);
    if (status != DR_GIF_OK) goto done;

    // Row order: sequential, or the four interlace passes. Stop as soon as every visible row is written: rows
    // below the canvas are never needed, and decoding them would only cost time.
    static const int pass_offset[4] = {0, 4, 2, 1};
    static const int pass_step[4] = {8, 8, 4, 2};
    const int passes = desc->Interlace ? 4 : 1;
    int written = 0;
    for (int pass = 0; pass < passes && written < vis_rows; pass++) {
        const int start = desc->Interlace ? pass_offset[pass] : 0;
        const int step = desc->Interlace ? pass_step[pass] : 1;
        for (int y = start; y < fh && written < vis_rows; y += step) {
            const uint8_t *line = dr_gif_rows_next(rows, &cursor, &status, msg, msg_len);
            if (line == NULL) goto done;
            if (y >= vis_rows) continue; // below the canvas (interlaced passes still have to be decoded)
            uint8_t *out = dst + (size_t)(ft + y) * stride + (size_t)x0 * 4;
            const uint8_t *src = line + (x0 - fl);
            for (int x = 0; x < vis_cols; x++) memcpy(out + (size_t)x * 4, palette->bgra[src[x]], 4);
            written++;
        }
    }
    status = DR_GIF_OK;

done:
    if (rows != NULL) dr_gif_rows_free(rows);
    free(rows);
    free(palette);
    close_gif(gif);
    return status;
}
