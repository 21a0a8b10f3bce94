//===- Autodiff.h - what passes/autodiff/ offers, until BuildTrainStep moves ===//
//
// TODO(issue 14): a forwarding header for passes/BuildTrainStep.cpp, which is
// being split on another branch; delete it once that file includes
// ReverseMode.h and GradientRules.h itself.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_AUTODIFF_AUTODIFF_H
#define TCC_PASSES_AUTODIFF_AUTODIFF_H

#include "passes/autodiff/GradientRules.h"
#include "passes/autodiff/ReverseMode.h"

#endif // TCC_PASSES_AUTODIFF_AUTODIFF_H
