#include "darkroom_gif.h"
