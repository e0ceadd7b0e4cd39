#include "base/clock.h"
