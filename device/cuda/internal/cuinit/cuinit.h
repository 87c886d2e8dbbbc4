// Shared by cuinit.go and interpose.c (see there).
#include <cuda.h>

extern int gk_cuinit_tolerate;
extern CUresult gk_cuinit_masked;
