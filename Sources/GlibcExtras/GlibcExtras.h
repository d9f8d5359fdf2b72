// Functions of glibc that Swift's Glibc module does not import, because glibc declares them only
// under _GNU_SOURCE or in <malloc.h>, which it does not include: declared here as glibc does, and
// linked from the C library itself, in a static executable too (where looking them up at run
// time with dlsym finds nothing). Nothing in this folder is compiled.
#include <stddef.h>

// Linux's renameat2 (glibc 2.28): RENAME_EXCHANGE swaps two paths, RENAME_NOREPLACE refuses an
// existing destination.
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

// Returns the free memory of every malloc arena to the kernel (glibc 2.8).
int malloc_trim(size_t pad);

// Sets one of malloc's parameters (glibc's <malloc.h>); M_MMAP_THRESHOLD is the size from which a
// buffer gets a mapping of its own, and setting it holds it fixed.
int mallopt(int param, int value);
#define M_MMAP_THRESHOLD -3
