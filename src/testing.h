/*
 * testing.h: the options of the testing build of dlscan (libdlscan_testing.a: the library's
 * sources compiled with DLSCAN_TESTING, policy.h's DL_PROBING), which the tests link to drive
 * every path of the protocol. Not installed: dlscan.h declares what users may call. They go
 * through dlscan_set_option(); the release library answers them with
 * DLSCAN_ERROR_NOT_SUPPORTED.
 */
#ifndef DLSCAN_TESTING_H
#define DLSCAN_TESTING_H

#include "dlscan.h"

/* Pauses inside tiles, so that the look-back's waits on X, long runs of A and stops at P all
 * occur. CPU handles: each tile sleeps a random 0..value microseconds at three points of the
 * protocol, and one tile in 512 holds its aggregate back for 50 times value. GPU handles: each
 * tile pauses 0..value microseconds (picked by hashing the tile) before publishing its
 * aggregate and before its inclusive prefix. Default 0; at most 1000000. Synchronizes a GPU
 * handle's device. */
#define DLSCAN_TESTING_OPTION_DELAY_US ((dlscan_option)3)
/* Sets the epoch (1 .. 2^30 - 1) that the next call uses, so that tests can reach the epoch's
 * wrap-around, and clears the descriptors, which earlier calls may have left with that epoch.
 * Synchronizes a GPU handle's device. */
#define DLSCAN_TESTING_OPTION_EPOCH ((dlscan_option)4)
/* The value (0 .. 2^32 - 1) where the tile counter starts each call, for example just below
 * 2^32 so that it wraps around within a call. Tile indices are counted from it. Synchronizes
 * a GPU handle's device. Default 0. */
#define DLSCAN_TESTING_OPTION_TICKET_BASE ((dlscan_option)6)

/* DLSCAN_OPTION_PERSISTENT = 2: the persistent kernels at any size their GPU and alignment
 * allow, so that tests reach them with small inputs. */
#define DLSCAN_TESTING_PERSISTENT_ALWAYS 2

#endif /* DLSCAN_TESTING_H */
