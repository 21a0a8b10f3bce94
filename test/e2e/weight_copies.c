/*===- weight_copies.c - a 16-bit step sees set_param ---------------------===*
 *
 * Drives a bf16 training artifact (argv[1], examples/gpt.tcc at --batch=2)
 * through the C API to check that its 16-bit weight copies (state that
 * train_step's forward reads and its update rewrites, made from the
 * parameters by init_state) follow the parameters: one session runs a step,
 * has a weight halved with set_param and runs again; a fresh session that
 * gets the halved weight before its first step runs the same step. The
 * learning rate is 0, so no step changes a parameter, and the two losses
 * after the change must be the same bits (printed as hex floats), and not
 * those of the first step. infer reads the copies too: its logits after
 * set_param must be the fresh session's, bit for bit.
 *
 *===----------------------------------------------------------------------===*/

#include "tcc/tcc.h"

#include <stdio.h>
#include <stdlib.h>

static int check(tcc_status s, const char *what) {
  if (s != TCC_OK) {
    fprintf(stderr, "%s: %s\n", what, tcc_last_error());
    return 1;
  }
  return 0;
}

enum { BATCH = 2, T = 8, V = 16 };
static const char *kWeight = "blocks.0.fc1.weight";

/* One train_step on fixed tokens and labels; its loss in *LOSS. */
static int step(tcc_session_t s, float *loss) {
  int64_t tokens[BATCH * T], labels[BATCH * T];
  for (int i = 0; i < BATCH * T; ++i) {
    tokens[i] = (i * 7 + 3) % V;
    labels[i] = (i * 5 + 1) % V;
  }
  int64_t shape[2] = {BATCH, T};
  float lr = 0.0f, count = 1.0f;
  return check(tcc_session_set_input(s, "tokens", TCC_DTYPE_I64, 2, shape, tokens,
                                     sizeof tokens), "tokens") ||
         check(tcc_session_set_input(s, "y", TCC_DTYPE_I64, 2, shape, labels, sizeof labels),
               "labels") ||
         check(tcc_session_set_input(s, "lr", TCC_DTYPE_F32, 0, NULL, &lr, sizeof lr), "lr") ||
         check(tcc_session_set_input(s, "step", TCC_DTYPE_F32, 0, NULL, &count, sizeof count),
               "step") ||
         check(tcc_session_run(s, "train_step"), "train_step") ||
         check(tcc_session_copy_output(s, "loss", loss, sizeof *loss), "loss");
}

/* infer on the same tokens; the sum of its logits in *SUM (in one order:
 * equal bits for equal logits). */
static int infer(tcc_session_t s, double *sum) {
  int64_t tokens[BATCH * T];
  for (int i = 0; i < BATCH * T; ++i)
    tokens[i] = (i * 7 + 3) % V;
  int64_t shape[2] = {BATCH, T};
  static float logits[BATCH * T * V];
  if (check(tcc_session_set_input(s, "tokens", TCC_DTYPE_I64, 2, shape, tokens, sizeof tokens),
            "tokens") ||
      check(tcc_session_run(s, "infer"), "infer") ||
      check(tcc_session_copy_output(s, "logits", logits, sizeof logits), "logits"))
    return 1;
  *sum = 0;
  for (int i = 0; i < BATCH * T * V; ++i)
    *sum += logits[i] * (double)(i % 7 + 1);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  tcc_artifact_t artifact;
  tcc_session_t first, fresh;
  int32_t init;
  if (check(tcc_artifact_load(argv[1], &artifact), "load") ||
      check(tcc_artifact_find_entry(artifact, "init_state", &init), "init_state") ||
      check(tcc_session_create(artifact, NULL, &first), "session"))
    return 1;
  enum { ROWS = 128, COLS = 32 };
  static float w[ROWS * COLS];
  int64_t shape[2] = {ROWS, COLS};
  float before, after, again;
  double inferBefore, inferAfter, inferFresh;
  if (step(first, &before) || infer(first, &inferBefore) ||
      check(tcc_session_get_param(first, kWeight, w, sizeof w), "get_param"))
    return 1;
  for (int i = 0; i < ROWS * COLS; ++i)
    w[i] *= 0.5f;
  if (check(tcc_session_set_param(first, kWeight, TCC_DTYPE_F32, 2, shape, w, sizeof w),
            "set_param") ||
      infer(first, &inferAfter) || step(first, &after) ||
      check(tcc_session_create(artifact, NULL, &fresh), "session") ||
      check(tcc_session_set_param(fresh, kWeight, TCC_DTYPE_F32, 2, shape, w, sizeof w),
            "set_param") ||
      infer(fresh, &inferFresh) || step(fresh, &again))
    return 1;
  printf("first step: %a\n", before);
  printf("after set_param: %a\n", after);
  printf("fresh session: %a\n", again);
  printf("infer first: %a\n", inferBefore);
  printf("infer after set_param: %a\n", inferAfter);
  printf("infer fresh session: %a\n", inferFresh);
  tcc_session_destroy(first);
  tcc_session_destroy(fresh);
  tcc_artifact_destroy(artifact);
  return 0;
}
