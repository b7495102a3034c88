//===- LoopOps.td - loop dialect operations ------------------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_IR_LOOPOPS_TD
#define KILN_DIALECT_LOOP_IR_LOOPOPS_TD

include "kiln/Dialect/Loop/IR/LoopAttrs.td"
include "kiln/Dialect/Loop/IR/LoopBase.td"
include "kiln/Dialect/Loop/IR/LoopInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Loop_PointwiseOp : Loop_Op<"pointwise", [
    RecursiveMemoryEffects, SingleBlock, Loop_NodeOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Defines a tensor element by element";
  let description = [{
    The result's index space is its shape. The body has one `index` argument
    per dimension and yields the element at that index, as a signless scalar.
    Dynamic dimensions of the result take their sizes from `dynamic_sizes`, in
    order.

    ```mlir
    %r = loop.pointwise(%n) : tensor<?x64xf32> {
    ^bb0(%i: index, %j: index):
      %a = loop.load %x[%i, %j] : tensor<?x64xf32>
      %b = loop.load %y[%j] : tensor<64xf32>
      %s = arith.addf %a, %b : f32
      loop.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? `:` type($result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The yield that ends the body.
    YieldOp getYield();
    /// The induction variables, one per result dimension.
    ::mlir::Block::BlockArgListType getInductionVars() {
      return getBody().front().getArguments();
    }
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::llvm::SmallVector<int64_t> getIndexSpaceShape() {
      return ::llvm::to_vector(getResultType().getShape());
    }
  }];
}

def Loop_ReduceOp : Loop_Op<"reduce", [
    RecursiveMemoryEffects, SingleBlock, AttrSizedOperandSegments,
    Loop_NodeOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Defines a tensor by combining values over a reduction space";
  let description = [{
    For every index of the result, combines the values the body yields over
    every index of the reduction space (`over`, whose dynamic sizes follow
    it) with its combiner (`kind`, written as a string): "sum", "prod",
    "max" or "min" (max and min propagate
    NaN, as PyTorch's do), or "welford": the sum of squared deviations from
    the values' mean (M2), accumulated in one pass by Welford's update and
    Chan's merge of partial (count, mean, M2) states; floats only. The body has one `index` argument per result
    dimension, then one per reduction dimension. It yields the value to
    combine in the accumulator's type: the result's scalar type, or f32 for
    f16/bf16 results (rounded once, at the end), as PyTorch accumulates.

    ```mlir
    %s = loop.reduce "sum"(%n) over [64] : tensor<?xbf16> {
    ^bb0(%i: index, %k: index):
      %v = loop.load %x[%i, %k] : tensor<?x64xbf16>
      %w = arith.extf %v : bf16 to f32
      loop.yield %w : f32
    }
    ```
  }];
  let arguments = (ins Loop_CombiningKindAttr:$kind,
                       Variadic<Index>:$dynamic_sizes,
                       Variadic<Index>:$reduction_dynamic_sizes,
                       DenseI64ArrayAttr:$reduction_shape);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<ReduceCombiningKind>($kind) (`(` $dynamic_sizes^ `)`)? `over`
    custom<DynamicIndexList>($reduction_dynamic_sizes, $reduction_shape)
    `:` type($result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    YieldOp getYield();
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::llvm::SmallVector<int64_t> getIndexSpaceShape();
    /// The induction variables of the result's dimensions.
    ::llvm::ArrayRef<::mlir::BlockArgument> getResultInductionVars() {
      return getBody().front().getArguments().take_front(
          getResultType().getRank());
    }
    /// The induction variables of the reduction dimensions.
    ::llvm::ArrayRef<::mlir::BlockArgument> getReductionInductionVars() {
      return getBody().front().getArguments().drop_front(
          getResultType().getRank());
    }
  }];
}

def Loop_ScatterOp : Loop_Op<"scatter", [
    RecursiveMemoryEffects, SingleBlock, AttrSizedOperandSegments,
    Loop_NodeOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Defines a tensor as `init` plus values added at indices the body computes";
  let description = [{
    For every index of the update space (`over`, whose dynamic sizes follow
    it), the body yields a value and the indices of the result element it
    combines into with its combiner (`kind`, written as a string); the
    result is `init` with every value
    combined. With "sum", several values at one element add up, in an
    unspecified order (atomically where updates run in parallel); "prod"
    multiplies likewise (a compare-and-swap loop on the element's bits, as
    no target has an atomic product); "max" and "min" keep the largest or smallest (NaN
    propagating for floats); with
    "assign", the element takes one of them, unspecified which (as in
    PyTorch's scatters and `index_put` with duplicate indices).
    The body has one `index` argument per update dimension and ends in
    `loop.scatter_yield`, whose value has the result's scalar type.

    ```mlir
    %g = loop.scatter "sum" %zeros over [8, 64]
        : tensor<100x64xf32> -> tensor<100x64xf32> {
    ^bb0(%n: index, %d: index):
      %i = loop.load %ids[%n] : tensor<8xsi64>
      %row = arith.index_cast %i : i64 to index
      %v = loop.load %grad[%n, %d] : tensor<8x64xf32>
      loop.scatter_yield %v at [%row, %d] : f32
    }
    ```

    Scatters are not nodes that inlining or fusion rewrite: their producers
    are stored, and a scatter runs as a kernel of its own.
  }];
  let arguments = (ins Loop_CombiningKindAttr:$kind, AnyRankedTensor:$init,
                       Variadic<Index>:$dynamic_sizes,
                       Variadic<Index>:$update_dynamic_sizes,
                       DenseI64ArrayAttr:$update_shape);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    custom<ScatterCombiningKind>($kind) $init (`(` $dynamic_sizes^ `)`)? `over`
    custom<DynamicIndexList>($update_dynamic_sizes, $update_shape)
    `:` type($init) `->` type($result) attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    ScatterYieldOp getYield();
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::llvm::SmallVector<int64_t> getIndexSpaceShape() {
      return ::llvm::to_vector(getUpdateShape());
    }
  }];
}

def Loop_ScatterYieldOp : Loop_Op<"scatter_yield", [
    Pure, ReturnLike, Terminator, HasParent<"ScatterOp">
  ]> {
  let summary = "Yields a scatter's value and the result indices it goes to";
  let arguments = (ins AnyType:$value, Variadic<Index>:$indices);
  let assemblyFormat = [{
    $value `at` ` ` `[` $indices `]` attr-dict `:` type($value)
  }];
}

def Loop_MatmulOp : Loop_Op<"matmul", [
    RecursiveMemoryEffects, SingleBlock, Loop_NodeOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Multiplies matrices, or batches of matrices";
  let description = [{
    `result[b..., i, j]` is the sum over `k` of `lhs[b..., i, k] *
    rhs[b..., k, j]`, accumulated in f32 for floating-point elements of at
    most 32 bits (f64 for f64). With `transpose_lhs`, `lhs` is stored
    `[b..., K, M]` and read transposed; with `transpose_rhs`, `rhs` is stored
    `[b..., N, K]` (a linear layer's weight). Both operands share their
    element type and, with the result, their leading batch dimensions.
    Unlike `pointwise` and `reduce`, the node has no body for the product:
    code generators emit a tiled kernel for it, or call a GEMM library.
    Dynamic dimensions of the result take their sizes from `dynamic_sizes`,
    in order.

    Without an epilogue the result holds the sums rounded to the operands'
    element type, or, for f16 and bf16 operands, unrounded in an f32 result.
    An `epilogue` computes each element from its sum instead: it takes the
    result's indices and the sum (in the accumulator type) and yields the
    element, so a bias, an activation and the rounding happen before the
    product is stored (fusion moves pointwise readers here).

    ```mlir
    %y = loop.matmul(%n) %x, %w {transpose_rhs}
        : tensor<?x768xbf16>, tensor<3072x768xbf16> -> tensor<?x3072xbf16>
    %z = loop.matmul %x, %w : tensor<8x64xbf16>, tensor<64x32xbf16>
        -> tensor<8x32xbf16> epilogue {
    ^bb0(%i: index, %j: index, %sum: f32):
      %b = loop.load %bias[%j] : tensor<32xf32>
      %s = arith.addf %sum, %b : f32
      %r = arith.truncf %s : f32 to bf16
      loop.yield %r : bf16
    }
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       Variadic<Index>:$dynamic_sizes,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region AnyRegion:$epilogue);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? $lhs `,` $rhs attr-dict `:` type($lhs) `,`
    type($rhs) `->` type($result) (`epilogue` $epilogue^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::llvm::SmallVector<int64_t> getIndexSpaceShape() {
      return ::llvm::to_vector(getResultType().getShape());
    }
    /// The number of leading batch dimensions.
    int64_t getNumBatchDims() { return getResultType().getRank() - 2; }
    /// The type sums accumulate in: f64 for f64 operands, else f32.
    ::mlir::FloatType getAccumulatorType();
    /// Whether an epilogue computes the elements from the sums.
    bool hasEpilogue() { return !getEpilogue().empty(); }
    /// The epilogue's yield; only with an epilogue.
    YieldOp getEpilogueYield();
  }];
}

def Loop_AttentionOp : Loop_Op<"attention", [
    RecursiveMemoryEffects, SingleBlock, Loop_NodeOpInterface,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "Scaled dot-product attention, its scores kept on chip";
  let description = [{
    For queries `[b..., L, E]`, keys `[b..., S, E]` and values `[b...,
    S, Ev]`, `result[b..., i, :]` is the sum over keys `j` of `p[i, j] *
    value[b..., j, :]`, where `p[i, :]` is the softmax over the keys of
    `scale * dot(query[b..., i, :], key[b..., j, :])`. With `causal`, key
    `j` is hidden from query `i` where `j > i` (PyTorch's top-left
    alignment). Scores, their softmax and the sums are f32 for 16-bit
    operands (f64 for f64); the result holds the sums rounded to the
    operands' element type. The batch dimensions and the sequence lengths
    `L` and `S` may be dynamic, the head sizes `E` and `Ev` are static;
    `dynamic_sizes` are the result's dynamic sizes, in order.

    With a second result, the node also yields each query's logsumexp
    `[b..., L]` in the accumulator type: the log of the sum over the keys
    of `exp(score)`, +inf for a row with every key hidden, which is what
    `loop.attention_backward` takes (its probabilities `exp(score -
    logsumexp)` are then 0 for such rows).

    A `scores` region modifies each score before the softmax: it takes the
    score's indices `[b..., i, j]` and the scaled score (in the accumulator
    type) and yields the score the softmax sees, so that additive and
    boolean masks (-inf hides a key), soft-capping and biases computed from
    the indices (ALiBi) run inside the kernel. It reads other tensors with
    `loop.load` and is evaluated only for `i < L` and `j < S`; `causal`
    hides keys after it. A row with every key hidden yields zeros, as
    PyTorch's `scaled_dot_product_attention` does.

    The node is what a code generator computes in one kernel that never
    writes the scores (flash attention). Like `loop.matmul` it has no body
    for its products; `kiln-loop-expand-attention` rewrites it into its
    products and softmax (`loop.matmul`, `loop.reduce` and `loop.pointwise`
    nodes) where the target has no kernel for it.

    ```mlir
    %o = loop.attention(%b, %l) %q, %k, %v {scale = 0.125 : f64, causal}
        : tensor<?x16x?x64xbf16>, tensor<?x16x?x64xbf16>,
          tensor<?x16x?x64xbf16> -> tensor<?x16x?x64xbf16>
    %m = loop.attention %q, %k, %v {scale = 0.125 : f64}
        : tensor<2x8x128x64xbf16>, tensor<2x8x128x64xbf16>,
          tensor<2x8x128x64xbf16> -> tensor<2x8x128x64xbf16> scores {
    ^bb0(%i0: index, %i1: index, %i2: index, %i3: index, %score: f32):
      %bias = loop.load %mask[%i0, %c0, %i2, %i3] : tensor<2x1x128x128xf32>
      %s = arith.addf %score, %bias : f32
      loop.yield %s : f32
    }
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value, Variadic<Index>:$dynamic_sizes,
                       F64Attr:$scale, UnitAttr:$causal);
  let results = (outs AnyRankedTensor:$result,
                      Optional<AnyRankedTensor>:$logsumexp);
  let regions = (region AnyRegion:$scores);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? $query `,` $key `,` $value attr-dict `:`
    type($query) `,` type($key) `,` type($value) `->` type($result)
    (`,` type($logsumexp)^)? (`scores` $scores^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    ::llvm::SmallVector<int64_t> getIndexSpaceShape() {
      return ::llvm::to_vector(getResultType().getShape());
    }
    /// The number of leading batch dimensions.
    int64_t getNumBatchDims() { return getResultType().getRank() - 2; }
    /// The type scores and sums are computed in: f64 for f64 operands,
    /// else f32.
    ::mlir::FloatType getAccumulatorType();
    /// Whether a region modifies the scores.
    bool hasScoreModifier() { return !getScores().empty(); }
    /// The scores region's yield; only with one.
    YieldOp getScoresYield();
  }];
}

def Loop_AttentionBackwardOp : Loop_Op<"attention_backward", [
    RecursiveMemoryEffects, SingleBlock, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Loop_NodeOpInterface, ["getResultDynamicSizes"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "The gradients of `loop.attention` from its logsumexp";
  let description = [{
    The gradients of attention's queries, keys and values (`[b..., L, E]`,
    `[b..., S, E]`, `[b..., S, Ev]`) from the gradient of its result `grad`
    (`[b..., L, Ev]`), the forward's `logsumexp` per query and `delta`, each
    query's `Σ grad[b..., i, :] · result[b..., i, :]` (both `[b..., L]` in
    the accumulator type). With `s` the scores as `loop.attention` with the
    same `scale`, `causal` and `scores` region computes them:

    ```
    p = exp(s - logsumexp[i])         dv = pᵀ · grad
    dp = grad · valueᵀ                ds = p · (dp - delta[i])
    dq = scale · ds · key             dk = scale · dsᵀ · query
    ```

    The scores region must pass the score's gradient through unchanged: it
    adds to the score values that do not depend on it (masks, biases from
    the indices) or hides it (a select of -inf). The probabilities and the
    products are computed in the accumulator type; each gradient is rounded
    to its operand's element type. `query_sizes` are the query's (and its
    gradient's) dynamic sizes, `key_sizes` the key's and the value's, in
    order. A code generator computes the node without writing the scores;
    `kiln-loop-expand-attention` writes them out elsewhere.

    ```mlir
    %dq, %dk, %dv = loop.attention_backward %q, %k, %v, %do, %lse, %delta
        {scale = 0.125 : f64, causal}
        : tensor<2x8x128x64xbf16>, tensor<2x8x256x64xbf16>,
          tensor<2x8x256x64xbf16>, tensor<2x8x128x64xbf16>,
          tensor<2x8x128xf32>, tensor<2x8x128xf32>
        -> tensor<2x8x128x64xbf16>, tensor<2x8x256x64xbf16>,
           tensor<2x8x256x64xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value, AnyRankedTensor:$grad,
                       AnyRankedTensor:$logsumexp, AnyRankedTensor:$delta,
                       Variadic<Index>:$query_sizes,
                       Variadic<Index>:$key_sizes,
                       F64Attr:$scale, UnitAttr:$causal);
  let results = (outs AnyRankedTensor:$grad_query, AnyRankedTensor:$grad_key,
                      AnyRankedTensor:$grad_value);
  let regions = (region AnyRegion:$scores);
  let assemblyFormat = [{
    (`query_sizes` `(` $query_sizes^ `)`)? (`key_sizes` `(` $key_sizes^ `)`)?
    $query `,` $key `,` $value `,` $grad `,` $logsumexp `,` $delta attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($grad) `,`
    type($logsumexp) `,` type($delta) `->` type($grad_query) `,`
    type($grad_key) `,` type($grad_value) (`scores` $scores^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    int64_t getNumBatchDims() { return getResultType().getRank() - 2; }
    /// f64 for f64 operands, else f32.
    ::mlir::FloatType getAccumulatorType();
    bool hasScoreModifier() { return !getScores().empty(); }
    YieldOp getScoresYield();
  }];
}

def Loop_ConvolutionOp : Loop_Op<"convolution", [
    Pure, Loop_NodeOpInterface
  ]> {
  let summary = "Convolves a batch of images with filters, in groups";
  let description = [{
    For an input `[N, C, X...]` and filters `[F, C / groups, K...]`,
    `result[n, f, o...]` is the sum over `c` and `k...` of
    `input[n, g * C / groups + c, o * stride + k * dilation - padding] *
    weight[f, c, k...]`, with `g` the group of filter `f` (`f / (F /
    groups)`) and inputs outside the image reading 0. `stride`, `padding`
    and `dilation` have one entry per spatial dimension. Sums accumulate as
    `loop.matmul`'s do, and the result holds them: the operands' element
    type, or f32 for f16 and bf16 operands (a bias, an activation and the
    rounding are the reader's, as after a matrix product). The batch and
    the spatial sizes may be dynamic (a spatial size on both sides or
    neither); `dynamic_sizes` are the result's dynamic sizes, in order.

    With `channels_last` the channels are the last dimension of all three:
    input `[N, X..., C]`, filters `[F, K..., C / groups]` and result
    `[N, O..., F]`, the layout a convolution library's fastest kernels
    read.

    Like `loop.matmul` the node has no body. On targets without a
    convolution library `kiln-loop-expand-convolutions` rewrites it into
    the input's patches and a matrix product of the filters with them
    (im2col), or, for filters that read few inputs (depthwise ones), into a
    `loop.reduce` of each output's window (summed in f32 for 16-bit
    operands too). On the GPU the same pass gives the others to the
    library: the operands are transposed to channels-last nodes and the
    convolution becomes a `channels_last` one, which runs as a library call.

    ```mlir
    %y = loop.convolution(%n) %x, %w {stride = array<i64: 1, 1>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1}
        : tensor<?x64x56x56xbf16>, tensor<64x64x3x3xbf16> -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$weight,
                       Variadic<Index>:$dynamic_sizes,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups,
                       UnitAttr:$channels_last);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? $input `,` $weight attr-dict `:` type($input)
    `,` type($weight) `->` type($result)
  }];
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    /// The number of spatial dimensions.
    int64_t getNumSpatialDims() { return getResultType().getRank() - 2; }
    /// The dimension of the channels (of filters, in the result).
    int64_t getChannelDim() {
      return getChannelsLast() ? getResultType().getRank() - 1 : 1;
    }
    /// The dimension of spatial dimension `index`, in all three tensors.
    int64_t getSpatialDim(int64_t index) {
      return getChannelsLast() ? index + 1 : index + 2;
    }
    /// The result's shape: a convolution has no body.
    ::llvm::SmallVector<int64_t> getIndexSpaceShape() {
      return ::llvm::to_vector(getResultType().getShape());
    }
  }];
}

def Loop_KernelOp : Loop_Op<"kernel", [
    RecursiveMemoryEffects, SingleBlock
  ]> {
  let summary = "Groups nodes that run as one kernel, one row at a time";
  let description = [{
    The nodes in the body run together, row by row: the first `rows`
    dimensions of every node's result index the rows, and each row runs all
    nodes in order before the next row needs them. A reduction over a row's
    columns (its result has only size-1 dimensions after the rows) stays in
    registers for the later nodes of the same row, which read it at their own
    row index (and index 0 in the size-1 dimensions); nodes with columns are
    stored. `loop.kernel_yield` names the results that leave the kernel:
    every node with columns, and any reduction or row value the graph still
    needs. This is how softmax and LayerNorm read their input once.

    ```mlir
    %y = loop.kernel rows(1) -> tensor<8x64xf32> {
      %m = loop.reduce "max" over [64] : tensor<8x1xf32> {
      ^bb0(%i: index, %u: index, %k: index):
        %v = loop.load %x[%i, %k] : tensor<8x64xf32>
        loop.yield %v : f32
      }
      %e = loop.pointwise : tensor<8x64xf32> {
      ^bb0(%i: index, %j: index):
        %v = loop.load %x[%i, %j] : tensor<8x64xf32>
        %c0 = arith.constant 0 : index
        %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
        %d = arith.subf %v, %mx : f32
        loop.yield %d : f32
      }
      loop.kernel_yield %e : tensor<8x64xf32>
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$rows);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `rows` `(` $rows `)` `->` type($results) attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The yield that ends the body.
    KernelYieldOp getYield();
    /// The nodes of the kernel, in order.
    auto getNodes() { return getBody().front().without_terminator(); }
  }];
}

def Loop_KernelYieldOp : Loop_Op<"kernel_yield", [
    Pure, ReturnLike, Terminator, HasParent<"KernelOp">
  ]> {
  let summary = "Names the tensors that a kernel stores";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Loop_CheckOp : Loop_Op<"check", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>
  ]> {
  let summary = "Fails the graph's run when a flag computed from its inputs is set";
  let description = [{
    A run-time check that eager PyTorch makes and a compiled graph must make
    too: where `flag`, a 0-d integer tensor, is positive once the graph has
    run, the run fails with `message`, "<Python exception>: <text>" (for
    example "RuntimeError: ZeroDivisionError" for an integer division by
    zero, as PyTorch's CPU kernels raise). The lowering computes the flag
    as the largest of a condition over a tensor's elements (a divisor equal
    to zero, an index outside its dimension).

    It stands in the graph's body, beside its nodes, only while
    `kiln-fx-to-loop` runs: at its end the pass makes each check's flag a
    result of the graph, after its own results, and lists their messages in
    the graph's `kiln.checks` attribute, which the artifact exports
    (`kiln_<graph>_checks`) for the runtime to read after each run. The
    check writes to no tensor, but it must stay: it counts as reading its
    flag and writing state outside the graph.

    ```mlir
    %zero = loop.reduce "max" over [8] : tensor<si32> { ... }
    loop.check %zero, "RuntimeError: ZeroDivisionError" : tensor<si32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[AnyInteger]>:$flag, StrAttr:$message);
  let assemblyFormat = "$flag `,` $message attr-dict `:` type($flag)";
}

def Loop_LoadOp : Loop_Op<"load", [
    Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>
  ]> {
  let summary = "Reads one element of a tensor inside a node's body";
  let description = [{
    Reads the element of `source` at `indices` (one per dimension) and yields
    it as a signless scalar: `si*`/`ui*` elements load as `i*`. Loads are
    pure and run at every index of their node, so every index must stay
    inside its dimension; the verifier rejects an induction variable of the
    node that runs past the static dimension it indexes.

    ```mlir
    %v = loop.load %t[%i, %c0] : tensor<8x1xsi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, Variadic<Index>:$indices);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` type($source)
  }];
  let hasVerifier = 1;
}

def Loop_YieldOp : Loop_Op<"yield", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["PointwiseOp", "ReduceOp", "MatmulOp", "AttentionOp",
                 "AttentionBackwardOp"]>
  ]> {
  let summary = "Yields the element a node computes at the current index";
  let description = [{
    ```mlir
    loop.yield %v : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // KILN_DIALECT_LOOP_IR_LOOPOPS_TD
