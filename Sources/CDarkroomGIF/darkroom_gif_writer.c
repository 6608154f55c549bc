// giflib shim, writing: an animated GIF built one frame at a time in memory, each frame quantized to its own
// palette by giflib's median cut (GifQuantizeBuffer). Only the current frame's planes are held.
#include "darkroom_gif_anim.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "dr_gif_internal.h"

struct dr_gif_writer {
    GifFileType *gif;
    uint8_t *bytes;
    size_t size, capacity;
    int failed; // the output buffer could not grow
    int width, height;
    GifByteType *red, *green, *blue, *indices; // width*height each, reused for every frame
};

static int write_bytes(GifFileType *gif, const GifByteType *data, int len) {
    struct dr_gif_writer *w = (struct dr_gif_writer *)gif->UserData;
    if (len <= 0) return 0;
    if (w->size + (size_t)len > w->capacity) {
        size_t capacity = w->capacity < 4096 ? 4096 : w->capacity;
        while (capacity < w->size + (size_t)len) capacity *= 2;
        uint8_t *bigger = realloc(w->bytes, capacity);
        if (bigger == NULL) {
            w->failed = 1;
            return 0; // giflib reports a write failure
        }
        w->bytes = bigger;
        w->capacity = capacity;
    }
    memcpy(w->bytes + w->size, data, (size_t)len);
    w->size += (size_t)len;
    return len;
}

static int fail(struct dr_gif_writer *w, int code, char *msg, size_t msg_len) {
    if (w->failed) {
        dr_gif__set_msg(msg, msg_len, "out of memory");
        return DR_GIF_ERR_NO_MEMORY;
    }
    dr_gif__set_msg(msg, msg_len, code != 0 ? GifErrorString(code) : "GIF write failed");
    return code == E_GIF_ERR_NOT_ENOUGH_MEM ? DR_GIF_ERR_NO_MEMORY : DR_GIF_ERR_CORRUPT;
}

void dr_gif_writer_discard(dr_gif_writer *w) {
    if (w == NULL) return;
    int error = 0;
    if (w->gif != NULL) (void)EGifCloseFile(w->gif, &error);
    free(w->bytes);
    free(w->red);
    free(w->green);
    free(w->blue);
    free(w->indices);
    free(w);
}

dr_gif_writer *dr_gif_writer_open(int width, int height, int loop_count, int *status, char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (width <= 0 || height <= 0 || width > 65535 || height > 65535 || loop_count < -1 || loop_count > 65535) {
        dr_gif__set_msg(msg, msg_len, "size must be 1...65535 and loop_count -1...65535");
        *status = DR_GIF_ERR_ARGUMENT;
        return NULL;
    }
    dr_gif_writer *w = calloc(1, sizeof *w);
    const size_t pixels = (size_t)width * (size_t)height;
    if (w != NULL) {
        w->red = malloc(pixels);
        w->green = malloc(pixels);
        w->blue = malloc(pixels);
        w->indices = malloc(pixels);
    }
    if (w == NULL || w->red == NULL || w->green == NULL || w->blue == NULL || w->indices == NULL) {
        dr_gif_writer_discard(w);
        dr_gif__set_msg(msg, msg_len, "out of memory");
        *status = DR_GIF_ERR_NO_MEMORY;
        return NULL;
    }
    w->width = width;
    w->height = height;
    int error = 0;
    w->gif = EGifOpen(w, write_bytes, &error);
    if (w->gif == NULL) {
        *status = fail(w, error, msg, msg_len);
        dr_gif_writer_discard(w);
        return NULL;
    }
    EGifSetGifVersion(w->gif, true);
    if (EGifPutScreenDesc(w->gif, width, height, 8, 0, NULL) == GIF_ERROR) goto failed;
    if (loop_count >= 0) {
        GifByteType loop[3] = {1, (GifByteType)(loop_count & 0xFF), (GifByteType)(loop_count >> 8)};
        if (EGifPutExtensionLeader(w->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(w->gif, 11, "NETSCAPE2.0") == GIF_ERROR ||
            EGifPutExtensionBlock(w->gif, 3, loop) == GIF_ERROR || EGifPutExtensionTrailer(w->gif) == GIF_ERROR)
            goto failed;
    }
    *status = DR_GIF_OK;
    return w;
failed:
    *status = fail(w, w->gif->Error, msg, msg_len);
    dr_gif_writer_discard(w);
    return NULL;
}

int dr_gif_writer_add(dr_gif_writer *w, const uint8_t *rgba, size_t stride, int delay_cs, char *msg,
                      size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (w == NULL || rgba == NULL || stride < (size_t)w->width * 4 || delay_cs < 0 || delay_cs > 65535) {
        dr_gif__set_msg(msg, msg_len, "writer or pixels NULL, stride too small or delay not 0...65535");
        return DR_GIF_ERR_ARGUMENT;
    }
    const int width = w->width, height = w->height;
    // Transparent pixels take the colour of the last opaque one, so they do not claim palette entries.
    int any_transparent = 0;
    uint8_t last[3] = {0, 0, 0};
    for (int y = 0; y < height; y++) {
        const uint8_t *row = rgba + (size_t)y * stride;
        for (int x = 0; x < width; x++) {
            const size_t i = (size_t)y * width + x;
            const uint8_t *p = row + (size_t)x * 4;
            if (p[3] >= 128) memcpy(last, p, 3);
            else any_transparent = 1;
            w->red[i] = last[0];
            w->green[i] = last[1];
            w->blue[i] = last[2];
        }
    }
    GifColorType colors[256];
    memset(colors, 0, sizeof colors);
    int color_count = 255; // index 255 stays free for transparency
    if (GifQuantizeBuffer((unsigned)width, (unsigned)height, &color_count, w->red, w->green, w->blue, w->indices,
                          colors) == GIF_ERROR) {
        dr_gif__set_msg(msg, msg_len, "giflib could not quantize the frame");
        return DR_GIF_ERR_NO_MEMORY;
    }
    if (any_transparent) {
        for (int y = 0; y < height; y++) {
            const uint8_t *row = rgba + (size_t)y * stride;
            for (int x = 0; x < width; x++) {
                if (row[(size_t)x * 4 + 3] < 128) w->indices[(size_t)y * width + x] = 255;
            }
        }
    }
    ColorMapObject *map = GifMakeMapObject(256, colors);
    if (map == NULL) {
        dr_gif__set_msg(msg, msg_len, "out of memory");
        return DR_GIF_ERR_NO_MEMORY;
    }
    GraphicsControlBlock gcb = {any_transparent ? DISPOSE_BACKGROUND : DISPOSE_DO_NOT, false, delay_cs,
                                any_transparent ? 255 : NO_TRANSPARENT_COLOR};
    GifByteType extension[4];
    const size_t extension_length = EGifGCBToExtension(&gcb, extension);
    int ok = EGifPutExtension(w->gif, GRAPHICS_EXT_FUNC_CODE, (int)extension_length, extension) != GIF_ERROR &&
             EGifPutImageDesc(w->gif, 0, 0, width, height, false, map) != GIF_ERROR;
    GifFreeMapObject(map); // EGifPutImageDesc keeps its own copy
    for (int y = 0; ok && y < height; y++) {
        ok = EGifPutLine(w->gif, w->indices + (size_t)y * width, width) != GIF_ERROR;
    }
    return ok ? DR_GIF_OK : fail(w, w->gif->Error, msg, msg_len);
}

int dr_gif_writer_finish(dr_gif_writer *w, uint8_t **out, size_t *out_size, char *msg, size_t msg_len) {
    if (msg != NULL && msg_len > 0) msg[0] = '\0';
    if (w == NULL || out == NULL || out_size == NULL) {
        dr_gif_writer_discard(w);
        dr_gif__set_msg(msg, msg_len, "writer or outputs NULL");
        return DR_GIF_ERR_ARGUMENT;
    }
    int error = 0;
    const int closed = EGifCloseFile(w->gif, &error); // writes the trailer, frees the handle either way
    w->gif = NULL;
    if (closed == GIF_ERROR || w->failed) {
        const int status = fail(w, error, msg, msg_len);
        dr_gif_writer_discard(w);
        return status;
    }
    *out = w->bytes;
    *out_size = w->size;
    w->bytes = NULL;
    dr_gif_writer_discard(w);
    return DR_GIF_OK;
}
