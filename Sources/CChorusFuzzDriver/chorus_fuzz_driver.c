// Declarations only (include/chorus_fuzz_driver.h): SwiftPM needs a source file in every C target.
#include "chorus_fuzz_driver.h"
