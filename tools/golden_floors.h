/* Tolerance floors of the golden replays, per execution space and dtype, shared by the C++ replayer
 * (tools/golden_replay.cpp) and the C ABI stream test (tests/abi/golden_stream.c). docs/support-matrix.md,
 * "Golden replay per space", gives the measurement behind each value. A case is held to
 * max(case tolerance, floor). Only CUDA float64 has one: its summation order (256-thread team trees, fused
 * multiply-adds) moves the reference's rounding-decided weighted case to 1.77x its own rtol 2e-9; 1e-8 / 2e-9
 * is the reference project's own native-CUDA floor. */
#ifndef RH_GOLDEN_FLOORS_H
#define RH_GOLDEN_FLOORS_H
#define RH_GOLDEN_CUDA_F64_FLOOR_RTOL 1e-8
#define RH_GOLDEN_CUDA_F64_FLOOR_ATOL 2e-9
#endif
