// Differential fuzzing of the JPEG shim's DC-only reader (Sources/CDarkroomJPEG/dc_scan.c) against libjpeg's
// own 1/8 decode, under AddressSanitizer and UndefinedBehaviorSanitizer: `make fuzz-jpeg` (see the Makefile).
//
// Each iteration damages a copy of a seed file (a cut, flipped bits anywhere, random bytes in the first 2 KB of
// headers, or a marker written into the data), then decodes it with the reader (both chroma modes) and with
// libjpeg. The property: whenever the reader accepts a file that libjpeg decodes without an error, the exact-mode
// output equals libjpeg's byte for byte. (The shim only calls the reader after libjpeg read the header without a
// warning; a header warning here is therefore not a finding.) Prints counts; exits 1 on any finding, and writes
// each finding to /tmp/dc-fuzz-finding-N.jpg.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "darkroom_jpeg_dc.h"

typedef struct {
    struct jpeg_error_mgr pub;
    jmp_buf jmp;
    int warnings;
} error_mgr;

static void on_error(j_common_ptr c) { longjmp(((error_mgr *)c->err)->jmp, 1); }
static void on_message(j_common_ptr c, int level) {
    if (level < 0) ((error_mgr *)c->err)->warnings++;
}

// libjpeg's 1/8 BGRA decode into out; returns -1 on error, else the number of warnings.
static int libjpeg_eighth(const unsigned char *b, long n, unsigned char *out, size_t cap, int *w, int *h) {
    struct jpeg_decompress_struct c;
    error_mgr e;
    c.err = jpeg_std_error(&e.pub);
    e.pub.error_exit = on_error;
    e.pub.emit_message = on_message;
    e.warnings = 0;
    jpeg_create_decompress(&c);
    if (setjmp(e.jmp)) {
        jpeg_destroy_decompress(&c);
        return -1;
    }
    jpeg_mem_src(&c, b, (unsigned long)n);
    jpeg_read_header(&c, TRUE);
    c.scale_num = 1;
    c.scale_denom = 8;
    c.out_color_space = JCS_EXT_BGRA;
    jpeg_calc_output_dimensions(&c);
    if ((size_t)c.output_width * c.output_height * 4 > cap) {
        jpeg_destroy_decompress(&c);
        return -1;
    }
    jpeg_start_decompress(&c);
    *w = (int)c.output_width;
    *h = (int)c.output_height;
    while (c.output_scanline < c.output_height) {
        unsigned char *row = out + (size_t)c.output_scanline * (size_t)*w * 4;
        jpeg_read_scanlines(&c, &row, 1);
    }
    jpeg_finish_decompress(&c);
    jpeg_destroy_decompress(&c);
    return e.warnings;
}

static unsigned long long state = 88172645463325252ULL;
static unsigned long long rnd(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s ITERATIONS_PER_SEED SEED.jpg...\n", argv[0]);
        return 2;
    }
    long iterations = atol(argv[1]), total = 0, accepted = 0, findings = 0;
    size_t cap = 64u << 20;
    unsigned char *theirs = malloc(cap), *ours = malloc(cap);
    for (int a = 2; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        if (f == NULL) { perror(argv[a]); return 2; }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        unsigned char *seed = malloc((size_t)n), *m = malloc((size_t)n);
        if (fread(seed, 1, (size_t)n, f) != (size_t)n) { perror(argv[a]); return 2; }
        fclose(f);
        for (long it = 0; it < iterations; it++) {
            long len = n;
            memcpy(m, seed, (size_t)n);
            switch (rnd() % 4) {
            case 0: len = 2 + (long)(rnd() % (unsigned long long)(n - 2)); break;
            case 1: for (int i = 0, k = 1 + (int)(rnd() % 4); i < k; i++) m[2 + rnd() % (unsigned long long)(n - 2)] ^= (unsigned char)(1u << (rnd() % 8)); break;
            case 2: for (int i = 0, k = 1 + (int)(rnd() % 3); i < k; i++) m[2 + rnd() % (unsigned long long)(n < 2050 ? n - 2 : 2048)] = (unsigned char)rnd(); break;
            default: {
                long p = 2 + (long)(rnd() % (unsigned long long)(n - 2));
                m[p] = 0xFF;
                if (p + 1 < n) m[p + 1] = (unsigned char)(rnd() % 2 ? 0xD0 + rnd() % 8 : rnd());
            }
            }
            total++;
            for (int half = 1; half >= 0; half--) {
                dr_dc_image *img = dr_dc_decode(m, (size_t)len, half);
                if (img == NULL) continue;
                int w = dr_dc_width(img), h = dr_dc_height(img);
                if ((size_t)w * (size_t)h * 4 > cap) { dr_dc_free(img); continue; }
                for (int y = 0; y < h; y++) dr_dc_row(img, y, 0, ours + (size_t)y * (size_t)w * 4);
                dr_dc_free(img);
                if (half) continue;
                accepted++;
                int tw = 0, th = 0;
                int warnings = libjpeg_eighth(m, len, theirs, cap, &tw, &th);
                if (warnings < 0 || tw != w || th != h || memcmp(theirs, ours, (size_t)w * (size_t)h * 4) != 0) {
                    findings++;
                    char name[64];
                    snprintf(name, sizeof name, "/tmp/dc-fuzz-finding-%ld.jpg", findings);
                    FILE *o = fopen(name, "wb");
                    if (o != NULL) { fwrite(m, 1, (size_t)len, o); fclose(o); }
                    printf("finding: libjpeg %s, %dx%d vs %dx%d -> %s\n", warnings < 0 ? "failed" : "differs", tw, th, w, h, name);
                }
            }
        }
        free(seed);
        free(m);
    }
    free(theirs);
    free(ours);
    printf("{\"inputs\": %ld, \"accepted_by_reader\": %ld, \"findings\": %ld}\n", total, accepted, findings);
    return findings == 0 ? 0 : 1;
}
