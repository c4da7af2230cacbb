/* SPDX-License-Identifier: MIT */
#include "native.h"

#ifdef __clang__
const char native_compiler[] = "clang " __clang_version__ " -O2";
#else
const char native_compiler[] = "cc " __VERSION__ " -O2";
#endif
