// The C shim (libjpeg.so.62 API) against TurboJPEG (libturbojpeg.so) on one file, no Swift involved.
// Build and run from the repository root:
//   gcc -O2 -ISources/CDarkroomJPEG/include -o /tmp/shim-vs-tj bench/shim-vs-turbojpeg.c \
//       Sources/CDarkroomJPEG/darkroom_jpeg.c Sources/CDarkroomJPEG/dc_*.c -ISources/CDarkroomJPEG -lturbojpeg -ljpeg &&
//       /tmp/shim-vs-tj ../shared/photos/jpeg-12mp/path-4032x3024.jpg 15
#include <turbojpeg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "darkroom_jpeg.h"
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(int c, char**v){FILE*f=fopen(v[1],"rb");fseek(f,0,2);long n=ftell(f);fseek(f,0,0);unsigned char*b=malloc(n);fread(b,1,n,f);
tjhandle h=tjInitDecompress();int w,hh,s,cs;tjDecompressHeader3(h,b,n,&w,&hh,&s,&cs);
double ttj=0,tsh=0;int N=atoi(v[2]);
for(int i=0;i<N;i++){
 double t0=now(); unsigned char*o=malloc((size_t)w*hh*4);tjDecompress2(h,b,n,o,w,w*4,hh,TJPF_BGRA,0);free(o); ttj+=now()-t0;
 t0=now(); void*o2; posix_memalign(&o2,64,(size_t)w*hh*4);
 dr_jpeg_decoder*d=dr_jpeg_decoder_create(b,n,100,1,512<<20); dr_jpeg_info info; dr_jpeg_read_header(d,&info); dr_jpeg_start(d,1,0,&info);
 int y=0; while(y<hh){int r; dr_jpeg_read_rows(d,(unsigned char*)o2+(size_t)y*w*4,(size_t)w*4,hh-y,&r); if(!r)break; y+=r;}
 dr_jpeg_finish(d,&info); dr_jpeg_decoder_destroy(d); free(o2); tsh+=now()-t0;
}
printf("tj %.2f ms  shim %.2f ms  ratio %.3f\n",ttj/N,tsh/N,tsh/ttj);return 0;}
