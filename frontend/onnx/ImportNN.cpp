// Placeholder while the NN handlers are written (helper task); replaced wholesale.
#include "frontend/onnx/ImportContext.h"
void tcc::onnx_frontend::registerNNHandlers(HandlerTable &) {}
