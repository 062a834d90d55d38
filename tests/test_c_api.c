/* The C API used from C: a good request, a bad one, and the status names. Exits non-zero on failure. */
#include <stdio.h>
#include <string.h>

#include "saltation/c_api.h"

static int failures = 0;
#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                               \
    }                                                           \
  } while (0)

int main(void) {
  char *result = NULL, *error = NULL;
  int code = saltation_solve_json(
      "{\"model\": \"bouncing_ball\", \"options\": {\"t_final\": 1.0}, \"backend\": \"cpu\", \"theta\": [[1.0, 0.0, 0.5]]}",
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

  CHECK(strcmp(saltation_status_name(2), "settled") == 0);
  CHECK(strcmp(saltation_code_name(SALTATION_CUDA_ERROR), "CUDA error") == 0);
  CHECK(strlen(saltation_version()) > 0);
  if (failures == 0) printf("test_c_api: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
