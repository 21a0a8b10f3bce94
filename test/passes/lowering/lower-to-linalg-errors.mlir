// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg --verify-diagnostics %s

// The pass fails, naming the op, when a tcc op cannot be lowered.

// Tests that an unsigned constant stored as a resource blob (which cannot be
// reinterpreted as signless without copying the blob) is reported.
func.func @resource_constant_ui8() -> tensor<4xui8> {
  // expected-error @+1 {{failed to legalize operation 'tcc.constant'}}
  %0 = tcc.constant dense_resource<blob> : tensor<4xui8>
  return %0 : tensor<4xui8>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x0400000001020304"
    }
  }
#-}
