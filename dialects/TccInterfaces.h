//===- TccInterfaces.h - interfaces of the tcc dialect ---------------------===//

#ifndef TCC_DIALECTS_TCCINTERFACES_H
#define TCC_DIALECTS_TCCINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dialects/TccInterfaces.h.inc"

#endif // TCC_DIALECTS_TCCINTERFACES_H
