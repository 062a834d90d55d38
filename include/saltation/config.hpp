#pragma once
// The one place that says how shared per-trajectory code is compiled: under nvcc it is
// callable from host and device, under a plain C++ compiler it is ordinary inline code.
#if defined(__CUDACC__)
#define SALTATION_HD __host__ __device__
#define SALTATION_CUDA_COMPILER 1
#else
#define SALTATION_HD
#define SALTATION_CUDA_COMPILER 0
#endif

// For a lambda the host compiler would call out of line although inlining it is what makes a
// compile-time-sized loop cheap (the disk engine's per-pair force); nvcc decides for itself.
#if defined(__GNUC__) && !defined(__CUDACC__)
#define SALTATION_HOST_INLINE __attribute__((always_inline))
#else
#define SALTATION_HOST_INLINE
#endif

// For a device function that ptxas allocates better called than inlined into the kernel's loop
// (bench/README.md, "CUDA kernel resources"); the host compiler still decides for itself.
#if defined(__CUDACC__)
#define SALTATION_DEVICE_NOINLINE __noinline__
#else
#define SALTATION_DEVICE_NOINLINE
#endif

#define SALTATION_VERSION_STRING "0.1.0"
