// kiln-opt crash-2c308474c3c3.mlir --kiln-cpu-pipeline
// from test/Conversion/FXToLoop/scatter.mlir#5 (mutated): ran past 60 s

fx.graph @index_put_separate_indices(%x: tensor<6x10x8xf32>, %i: tensor<4xsi64>, %j: tensor<4xsi64>, %v: tensor<f32>) -> tensor<6x10x8xf32> {
  %0 = fx.index_put %x, %i, %j, %v {accumulate = false, index_positions = array<i64: 0, 9223372036854775807>} : (tensor<6x10x8xf32>, tensor<4xsi64>, tensor<4xsi64>, tensor<f32>) -> tensor<6x10x8xf32>
  fx.output %0 : tensor<6x10x8xf32>
}

