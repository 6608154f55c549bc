// What the giflib shim's still decoder, animation reader, row decoder and writer share: reading from the in-memory
// cursor, error messages and codes, and palettes. Every other file of the shim calls these; they call none of those.
#include "dr_gif_internal.h"

#include <stdio.h>
#include <string.h>

#include "darkroom_gif.h"

int dr_gif__read(GifFileType *gif, GifByteType *buf, int len) {
    dr_gif_cursor *c = (dr_gif_cursor *)gif->UserData;
    if (c == NULL || buf == NULL || len <= 0) return 0;
    size_t avail = c->size - c->pos;
    size_t n = (size_t)len < avail ? (size_t)len : avail;
    if (n > 0) memcpy(buf, c->data + c->pos, n);
    c->pos += n;
    if (n < (size_t)len) c->short_read = 1;
    return (int)n; // fewer than len: giflib fails (usually D_GIF_ERR_READ_FAILED, see map_gif_error)
}

void dr_gif__set_msg(char *msg, size_t msg_len, const char *text) {
    if (msg != NULL && msg_len > 0) snprintf(msg, msg_len, "%s", text != NULL ? text : "unknown GIF error");
}

// giflib's error codes do not always say that the data ran out: DGifOpen reports any failure inside the screen
// descriptor or global color map as D_GIF_ERR_NO_SCRN_DSCR, DGifSetupDecompress fails without setting an error
// code (0) when the LZW code-size byte is missing, and D_GIF_ERR_READ_FAILED also stands for a code size > 8.
// So truncation is decided by the cursor: a short read means the bytes ended early, whatever giflib said.
int dr_gif__map_error(int code, const dr_gif_cursor *cursor, char *msg, size_t msg_len) {
    const char *text = code != 0 ? GifErrorString(code) : NULL;
    char fallback[48];
    if (cursor->short_read) {
        text = "Input file EOF too soon (data truncated)";
    } else if (text == NULL) {
        snprintf(fallback, sizeof fallback, "GIF error %d", code);
        text = fallback;
    }
    dr_gif__set_msg(msg, msg_len, text);
    if (cursor->short_read) return DR_GIF_ERR_TRUNCATED;
    switch (code) {
    case D_GIF_ERR_EOF_TOO_SOON: // LZW end code before the frame's pixels were all produced
        return DR_GIF_ERR_TRUNCATED;
    case D_GIF_ERR_NOT_ENOUGH_MEM:
        return DR_GIF_ERR_NO_MEMORY;
    default:
        return DR_GIF_ERR_CORRUPT;
    }
}

void dr_gif__build_palette(dr_gif_palette *p, const ColorMapObject *map, int transparent) {
    memset(p, 0, sizeof *p);
    int count = map->ColorCount;
    if (count > 256) count = 256;
    if (count < 0) count = 0;
    for (int i = 0; i < 256; i++) {
        if (i < count) {
            const GifColorType *c = &map->Colors[i];
            p->bgra[i][0] = c->Blue;
            p->bgra[i][1] = c->Green;
            p->bgra[i][2] = c->Red;
        } // else: index past the map's size is opaque black
        p->bgra[i][3] = 255;
    }
    if (transparent >= 0 && transparent < 256) memset(p->bgra[transparent], 0, 4);
}
