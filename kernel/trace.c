// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the trace events' definitions (trace.h), in a file of their
 * own so that every file that emits one only includes the header.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
