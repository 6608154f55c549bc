#include <SDL2/SDL.h>

/* Macros Swift cannot import, as inline functions. */
static inline int darkroom_sdl_windowpos_undefined(void) { return (int)SDL_WINDOWPOS_UNDEFINED; }
static inline Uint32 darkroom_sdl_pixelformat_bgra(void) { return (Uint32)SDL_PIXELFORMAT_ARGB8888; }
static inline Uint32 darkroom_sdl_pixelformat_bgrx(void) { return (Uint32)SDL_PIXELFORMAT_RGB888; }
