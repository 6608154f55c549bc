// The JPEG shim's DC-only reader (Sources/CDarkroomJPEG/dc_*.c) against libjpeg's own 1/8 decode of the same
// bytes, no Swift involved: checks that the output is identical (exact mode) and times both, interleaved.
// Build and run from the repository root:
//   gcc -O2 -ISources/CDarkroomJPEG/include -o /tmp/dc-vs-libjpeg bench/dc-reader-vs-libjpeg.c Sources/CDarkroomJPEG/dc_*.c -ljpeg -lm
//   /tmp/dc-vs-libjpeg 10 ../shared/photos/jpeg-12mp/*.jpg ../shared/photos/jpeg/*.jpg
// Each line: luma and BGRA differences against libjpeg (exact mode), then libjpeg / exact / chroma-from-DC times.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <jpeglib.h>

#include "darkroom_jpeg_dc.h"

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static unsigned char *libjpeg_eighth(const unsigned char *b, long n, int gray, int *w, int *h) {
    struct jpeg_decompress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_decompress(&c);
    jpeg_mem_src(&c, b, (unsigned long)n);
    jpeg_read_header(&c, TRUE);
    c.scale_num = 1;
    c.scale_denom = 8;
    c.out_color_space = gray ? JCS_GRAYSCALE : JCS_EXT_BGRA;
    jpeg_start_decompress(&c);
    int bpp = gray ? 1 : 4;
    *w = (int)c.output_width;
    *h = (int)c.output_height;
    unsigned char *out = malloc((size_t)*w * (size_t)*h * (size_t)bpp);
    while (c.output_scanline < c.output_height) {
        unsigned char *row = out + (size_t)c.output_scanline * (size_t)*w * (size_t)bpp;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return out;
}

static double reader_ms(const unsigned char *b, long n, int half, unsigned char *out) {
    double t0 = now_ms();
    dr_dc_image *img = dr_dc_decode(b, (size_t)n, half);
    if (img == NULL) return -1;
    int w = dr_dc_width(img), h = dr_dc_height(img);
    for (int y = 0; y < h; y++) dr_dc_row(img, y, 0, out + (size_t)y * (size_t)w * 4);
    dr_dc_free(img);
    return now_ms() - t0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ITERATIONS FILE.jpg...\n", argv[0]);
        return 2;
    }
    int iterations = atoi(argv[1]);
    for (int a = 2; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (f == NULL) { perror(argv[a]); return 2; }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *b = malloc((size_t)n);
        if (fread(b, 1, (size_t)n, f) != (size_t)n) { perror(argv[a]); return 2; }
        fclose(f);
        int w, h;
        unsigned char *ref = libjpeg_eighth(b, n, 0, &w, &h), *refGray = libjpeg_eighth(b, n, 1, &w, &h);
        dr_dc_image *img = dr_dc_decode(b, (size_t)n, 0);
        if (img == NULL) {
            printf("%s: not taken by the reader (libjpeg decodes it)\n", argv[a]);
            continue;
        }
        unsigned char *mine = malloc((size_t)w * (size_t)h * 4), *gray = malloc((size_t)w * (size_t)h);
        for (int y = 0; y < h; y++) {
            dr_dc_row(img, y, 0, mine + (size_t)y * (size_t)w * 4);
            dr_dc_row(img, y, 1, gray + (size_t)y * (size_t)w);
        }
        dr_dc_free(img);
        long lumaDiffs = 0, bgraDiffs = 0;
        for (long i = 0; i < (long)w * h; i++) lumaDiffs += gray[i] != refGray[i];
        for (long i = 0; i < (long)w * h * 4; i++) bgraDiffs += mine[i] != ref[i];
        double tl = 0, te = 0, th = 0;
        for (int i = 0; i < iterations; i++) {
            double t0 = now_ms();
            free(libjpeg_eighth(b, n, 0, &w, &h));
            tl += now_ms() - t0;
            te += reader_ms(b, n, 0, mine);
            th += reader_ms(b, n, 1, mine);
        }
        printf("%s %dx%d: %ld luma / %ld BGRA bytes differ | libjpeg %.2f ms, exact %.2f ms (%.2fx), chroma from DC %.2f ms (%.2fx)\n",
               argv[a], w, h, lumaDiffs, bgraDiffs, tl / iterations, te / iterations, tl / te, th / iterations, tl / th);
        free(b); free(ref); free(refGray); free(mine); free(gray);
    }
    return 0;
}
