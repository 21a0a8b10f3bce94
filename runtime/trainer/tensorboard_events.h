//===- tensorboard_events.h - the TensorBoard plugin's C interface --------===//
//
// TensorBoard's Event messages are serialized by protoc-generated code,
// which needs protobuf's runtime; Debian's static libprotobuf-lite is not
// position-independent (local-exec TLS), and libtcc_runtime must load where
// protobuf is absent. So the generated code lives in a plugin,
// libtcc_tensorboard.so.0 beside the runtime, which the trainer loads with
// dlopen when --tensorboard is given: one function that serializes an
// Event, one that frees its bytes. Internal: not part of the SDK's API.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_TENSORBOARD_EVENTS_H
#define TCC_RUNTIME_TRAINER_TENSORBOARD_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#define TCC_TENSORBOARD_PLUGIN "libtcc_tensorboard.so.0"
#define TCC_TENSORBOARD_ENCODE_SYMBOL "tcc_tensorboard_encode"
#define TCC_TENSORBOARD_FREE_SYMBOL "tcc_tensorboard_free"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tcc_tensorboard_kind {
  TCC_TENSORBOARD_FILE_VERSION = 0, /* file_version "brain.Event:2" */
  TCC_TENSORBOARD_SESSION_START = 1, /* session_log START at STEP */
  TCC_TENSORBOARD_SCALARS = 2,       /* simple_value summaries TAGS = VALUES */
  TCC_TENSORBOARD_TEXT = 3,          /* TEXT_TAG as a text-plugin string tensor */
} tcc_tensorboard_kind;

typedef struct tcc_tensorboard_event {
  int32_t kind;
  double wall_time;
  int64_t step;
  int32_t num_scalars;
  const char *const *tags;
  const float *values;
  const char *text_tag;
  const char *text;
} tcc_tensorboard_event;

/** Serializes EVENT as a tensorboard.Event; *OUT_DATA (freed with
 *  tcc_tensorboard_free) holds *OUT_SIZE bytes. Returns 0, or -1 for an
 *  unknown kind or when memory runs out. */
typedef int (*tcc_tensorboard_encode_fn)(const tcc_tensorboard_event *event, char **out_data,
                                         size_t *out_size);
typedef void (*tcc_tensorboard_free_fn)(char *data);

#ifdef __cplusplus
}
#endif

#endif // TCC_RUNTIME_TRAINER_TENSORBOARD_EVENTS_H
