/*===- two_artifacts.c - two compiled models in one process ---------------===*
 *
 * Loads two artifacts that tcc compiled (argv[1], argv[2]; both take a
 * "features" input of f32[3,4] and produce "logits") through the C API in one
 * process, runs both on the same input and prints their outputs, so the test
 * can check that each artifact keeps its own code, descriptor and parameters
 * (an artifact is loaded RTLD_LOCAL and exports only its descriptor).
 *
 *===----------------------------------------------------------------------===*/

#include "tcc/tcc.h"

#include <stdio.h>

static int check(tcc_status s, const char *what) {
  if (s != TCC_OK) {
    fprintf(stderr, "%s: %s\n", what, tcc_last_error());
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  tcc_artifact_t artifacts[2];
  tcc_session_t sessions[2];
  float x[12] = {5.1f, 3.5f, 1.4f, 0.2f, -0.7f, 2.25f, 0.125f, 3.5f, 6.3f, -3.3f, 6.0f, 2.5f};
  int64_t shape[2] = {3, 4};
  for (int i = 0; i < 2; ++i)
    if (check(tcc_artifact_load(argv[i + 1], &artifacts[i]), "load") ||
        check(tcc_session_create(artifacts[i], NULL, &sessions[i]), "session"))
      return 1;
  for (int i = 0; i < 2; ++i) {
    if (check(tcc_session_set_input(sessions[i], "features", TCC_DTYPE_F32, 2, shape, x,
                                    sizeof x), "set_input") ||
        check(tcc_session_run(sessions[i], "infer"), "run"))
      return 1;
  }
  for (int i = 0; i < 2; ++i) {
    float y[9];
    if (check(tcc_session_copy_output(sessions[i], "logits", y, sizeof y), "output"))
      return 1;
    printf("artifact %d:", i);
    for (int k = 0; k < 9; ++k)
      printf(" %.6g", y[k]);
    printf("\n");
  }
  for (int i = 0; i < 2; ++i) {
    tcc_session_destroy(sessions[i]);
    tcc_artifact_destroy(artifacts[i]);
  }
  return 0;
}
