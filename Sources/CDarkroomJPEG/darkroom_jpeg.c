#include "darkroom_jpeg.h"
