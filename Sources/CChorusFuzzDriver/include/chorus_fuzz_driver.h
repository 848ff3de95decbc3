#ifndef CHORUS_FUZZ_DRIVER_H
#define CHORUS_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry for a program with its own `main` (LLVM 11 and later). chorus-fuzz calls it only when built by
/// scripts/fuzz with -sanitize=fuzzer, where the fuzzer runtime defines it; the ordinary build never references it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
