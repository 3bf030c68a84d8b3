/*
 * jit.h: the device headers a user operator's kernel is compiled from at run time, as text
 * (the table src/embed.c generates at build time; jit.c hands it to NVRTC).
 */
#ifndef DLSCAN_JIT_H
#define DLSCAN_JIT_H

typedef struct dl_jit_file {
    const char *name; /* as the sources include it: "block.cuh" */
    const char *text;
} dl_jit_file;

extern const dl_jit_file dl_jit_files[];
extern const int dl_jit_file_count;

#endif /* DLSCAN_JIT_H */
