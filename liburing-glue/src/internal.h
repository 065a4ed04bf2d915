/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libiopa internals, shared by the .c files of src/.  Not installed.
 */
#ifndef LIBIOPA_INTERNAL_H
#define LIBIOPA_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "libiopa.h"

/*
 * The library is built with -fvisibility=hidden: only what is marked
 * IOPA_EXPORT is exported, and libiopa.map gives it its version node.
 */
#define IOPA_EXPORT	__attribute__((visibility("default")))

#endif /* LIBIOPA_INTERNAL_H */
