/* The C API used from C: a good request, bad ones, and the status names. Exits non-zero on failure. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saltation/c_api.h"

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  char *result = NULL, *error = NULL;
  int code = saltation_solve_json(
      "{\"model\": \"bouncing_ball\", \"options\": {\"t_final\": 1.0}, \"backend\": \"cpu\", \"theta\": [[1.0, 0.0, "
      "0.5]]}",
      &result, &error);
  CHECK(code == SALTATION_OK);
  CHECK(error == NULL);
  CHECK(result != NULL && strstr(result, "\"trajectories\"") != NULL);
  CHECK(result != NULL && strstr(result, "0.4515236409") != NULL); /* first impact time sqrt(2/9.81) */
  saltation_free(result);

  code = saltation_solve_json("{\"model\": \"bouncing_ball\", \"theta\": [[1.0, 0.0, 1.5]]}", &result, &error);
  CHECK(code == SALTATION_INVALID_INPUT);
  CHECK(result == NULL);
  CHECK(error != NULL && strstr(error, "e (row 0)") != NULL);
  saltation_free(error);

  code = saltation_solve_json("{not json", &result, &error);
  CHECK(code == SALTATION_INVALID_INPUT);
  saltation_free(error);

  /* A model file with no compiler to build it: a compile error that names the compiler. */
  setenv("CXX", "/nonexistent/c++", 1);
  code = saltation_solve_json(
      "{\"model\": {\"define\": {\"name\": \"decay\", \"states\": [\"x\"], \"parameters\": [{\"name\": \"x0\"}],"
      " \"initial_state\": {\"x\": \"x0\"}, \"flow\": {\"x\": \"-x\"},"
      " \"guards\": [{\"name\": \"half\", \"expression\": \"x - 0.5\", \"direction\": \"falling\"}]}},"
      " \"backend\": \"cpu\", \"theta\": [[1.0]]}",
      &result, &error);
  CHECK(code == SALTATION_COMPILE_ERROR);
  CHECK(result == NULL);
  CHECK(error != NULL && strstr(error, "/nonexistent/c++") != NULL);
  if (error) fprintf(stderr, "(expected) %s\n", error);
  saltation_free(error);

  CHECK(strcmp(saltation_status_name(2), "settled") == 0);
  CHECK(strcmp(saltation_code_name(SALTATION_COMPILE_ERROR), "compile error") == 0);
  CHECK(strcmp(saltation_code_name(SALTATION_CUDA_ERROR), "CUDA error") == 0);
  CHECK(strlen(saltation_version()) > 0);
  if (failures == 0) printf("test_c_api: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
