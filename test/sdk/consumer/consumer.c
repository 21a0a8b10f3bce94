/*===- consumer.c - a C application on the installed SDK ------------------===*
 *
 * The C API alone, built with `pkg-config --cflags --libs tcc` or
 * tcc::runtime: loads the fixture artifact, runs "infer" and prints y.
 *
 *===----------------------------------------------------------------------===*/

#include <tcc/tcc.h>

#include <stdio.h>

static int fail(const char *what) {
  fprintf(stderr, "consumer-c: %s: %s\n", what, tcc_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  tcc_artifact_t artifact;
  if (tcc_artifact_load(argv[1], &artifact) != TCC_OK)
    return fail("load");
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  tcc_session_t session;
  if (tcc_session_create(artifact, &options, &session) != TCC_OK)
    return fail("session");
  tcc_artifact_destroy(artifact); /* the session keeps the library loaded */
  const float b[3] = {1, 1, 1}, x[6] = {0, 1, 2, 3, 4, 5};
  const int64_t bShape[1] = {3}, xShape[2] = {2, 3};
  float y[6];
  if (tcc_session_set_param(session, "b", TCC_DTYPE_F32, 1, bShape, b, sizeof b) != TCC_OK ||
      tcc_session_set_input(session, "x", TCC_DTYPE_F32, 2, xShape, x, sizeof x) != TCC_OK ||
      tcc_session_run(session, "infer") != TCC_OK ||
      tcc_session_copy_output(session, "y", y, sizeof y) != TCC_OK)
    return fail("infer");
  printf("runtime %s y: %g %g %g %g %g %g\n", tcc_runtime_version(), y[0], y[1], y[2], y[3], y[4],
         y[5]);
  tcc_session_destroy(session);
  return 0;
}
