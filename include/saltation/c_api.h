/* The C API: the built-in models and model files through the same JSON request and result
 * documents as the `saltation solve` command (docs/schema.md), for host applications in C or any
 * language with a C FFI. Every function is safe to call from C; no C++ exception crosses it. */
#ifndef SALTATION_C_API_H
#define SALTATION_C_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
enum saltation_code {
  SALTATION_OK = 0,
  SALTATION_INVALID_INPUT = 1, /* the request names a bad parameter (the message says which, and the row) */
  SALTATION_CUDA_ERROR = 2,    /* the CUDA backend failed or is not available */
  SALTATION_ERROR = 3,         /* anything else */
  SALTATION_IO_ERROR = 4,      /* a file could not be read or written */
  SALTATION_COMPILE_ERROR = 5  /* a model file could not be compiled (the message says why) */
};

/* Solves the JSON request `request_json`. On SALTATION_OK, *result_json receives the result JSON;
 * otherwise *error_message receives a message naming the bad parameter. Both strings (either may be
 * NULL to discard) must be released with saltation_free. */
int saltation_solve_json(const char* request_json, char** result_json, char** error_message);

/* A constant description of a trajectory status (0..8) or of a return code, for messages. */
const char* saltation_status_name(int status);
const char* saltation_code_name(int code);

/* The library version and the git commit it was built from. */
const char* saltation_version(void);

void saltation_free(char* text);

#ifdef __cplusplus
}
#endif

#endif
