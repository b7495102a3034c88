//===- Passes.td - loop dialect transformation passes --------------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_LOOP_TRANSFORMS_PASSES_TD
#define KILN_DIALECT_LOOP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def InlinePointwisePass : Pass<"kiln-loop-inline"> {
  let summary = "Inlines pointwise producers into the nodes that read them";
  let description = [{
    Replaces each `loop.load` from a tensor defined by `loop.pointwise` with a
    copy of the producer's body evaluated at the load's indices, so that the
    producer's tensor is recomputed instead of materialised. A producer with no
    readers left is erased.

    A producer read by more than one node is still materialised ("realised")
    when its body is heavy: more than `max-reads` loads or more than `max-ops`
    operations. A consumer stops absorbing producers that other nodes read
    too once its body would hold more than `max-consumer-reads` loads; one
    that it alone reads it absorbs whatever its loads, as nothing is then
    recomputed and the producer's tensor need not be written (a layer norm
    gradient's normalized input, read only by the residual add after it). The defaults are Inductor's, but
    for `max-consumer-reads`, one more than Inductor's 8: a normalization's
    output reads three row statistics (the sum, and the deviations' sum and
    sum of squares that make its variance exact), and with its input, bias,
    weight and a residual it must still fold into the activation after it.
    Nor does a consumer absorb a producer once its body would hold more than
    `max-consumer-ops` operations (Inductor bounds a fusion to 64 nodes): a
    body of hundreds of operations spends its time computing, not moving
    data, so writing its value once costs little, and code generation
    works on kernels of a bounded size, in time linear in the graph
    (a chain of thousands of pointwise ops would otherwise be one kernel).

    Inside the fused body, an f16/bf16 producer value that was rounded only to
    be widened again by its reader is used at f32 precision
    (`keep-f32-intermediates`), as Inductor computes fused kernels.

    Before:
    ```mlir
    %0 = loop.pointwise : tensor<8xf32> {
    ^bb0(%i: index):
      %a = loop.load %x[%i] : tensor<8xf32>
      %r = arith.maximumf %a, %zero : f32
      loop.yield %r : f32
    }
    %1 = loop.pointwise : tensor<8xf32> {
    ^bb0(%i: index):
      %v = loop.load %0[%i] : tensor<8xf32>
      %m = arith.mulf %v, %v : f32
      loop.yield %m : f32
    }
    ```
    After:
    ```mlir
    %1 = loop.pointwise : tensor<8xf32> {
    ^bb0(%i: index):
      %a = loop.load %x[%i] : tensor<8xf32>
      %r = arith.maximumf %a, %zero : f32
      %m = arith.mulf %r, %r : f32
      loop.yield %m : f32
    }
    ```
  }];
  let options = [
    Option<"maxReads", "max-reads", "unsigned", /*default=*/"4",
           "Realise a producer with several readers if it loads more often">,
    Option<"maxOps", "max-ops", "unsigned", /*default=*/"30",
           "Realise a producer with several readers if it has more ops">,
    Option<"maxConsumerReads", "max-consumer-reads", "unsigned",
           /*default=*/"9",
           "Stop inlining into a consumer that would load more often">,
    Option<"maxConsumerOps", "max-consumer-ops", "unsigned",
           /*default=*/"256",
           "Stop inlining into a consumer that would hold more operations">,
    Option<"keepF32Intermediates", "keep-f32-intermediates", "bool",
           /*default=*/"true",
           "Skip rounding an inlined f16/bf16 value that its reader widens "
           "again (Inductor's numerics); off rounds at every op like eager">,
  ];
}

def LoopCSEPass : Pass<"kiln-loop-cse"> {
  let summary = "Eliminates common subexpressions, hashing nodes with their bodies";
  let description = [{
    Upstream's `cse`, with one difference: an operation with regions is
    hashed with the operations of its regions (their names, attributes,
    result types and the values they take from outside it), not only with
    its own. A loop node reads its inputs in its body, through `loop.load`,
    and has no operands but its dynamic sizes: under upstream's hash, every
    node of a result type hashes alike and is compared with every other, so
    that `cse` of a graph costs the square of its nodes. Which operations are
    equivalent, and so the result, is upstream's.
  }];
}

def FuseEpiloguesPass : Pass<"kiln-loop-fuse-epilogues"> {
  let summary = "Fuses the pointwise reader of a matrix product into it";
  let description = [{
    A `loop.matmul` whose only reader is a `loop.pointwise` of its shape that
    reads it at its own index (a bias, an activation, a residual, the
    rounding) takes the reader's body as its epilogue: each sum goes through
    it before it is stored, so the product is never written and read back.
    A reader whose leading dimensions collapse into the product's (a
    Linear's `[batch * tokens, features]` product read as `[batch, tokens,
    features]`, at the linearized index) is fused too: the epilogue recovers
    the reader's indices from the product's, and a `tensor.expand_shape` of
    the product replaces the reader.
    With `library-only`, only epilogues that a GEMM library applies itself
    (a bias along the columns, then relu) are fused: the GPU's products are
    library calls. There, when the readers of a 16-bit product do more, but
    each adds a bias along the columns to the sums it reads (a Linear whose
    result is viewed as a batch of sequences, or split into q, k and v), the
    library adds the bias and rounds, as eager's addmm does: the readers
    read the rounded product instead of f32 sums. With
    `tensor-core-products` too, products that Kiln's own tensor-core kernels
    compute (`kiln-loop-to-gpu`'s `matmul-kernels`) take any epilogue.

    Before:
    ```mlir
    %p = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32>
    %y = loop.pointwise : tensor<8x32xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %p[%i, %j] : tensor<8x32xf32>
      %b = loop.load %bias[%j] : tensor<32xf32>
      %s = arith.addf %b, %v : f32
      loop.yield %s : f32
    }
    ```
    After:
    ```mlir
    %y = loop.matmul %x, %w : tensor<8x64xf32>, tensor<64x32xf32> -> tensor<8x32xf32> epilogue {
    ^bb0(%i: index, %j: index, %sum: f32):
      %b = loop.load %bias[%j] : tensor<32xf32>
      %s = arith.addf %b, %sum : f32
      loop.yield %s : f32
    }
    ```
  }];
  let options = [
    Option<"libraryOnly", "library-only", "bool", /*default=*/"false",
           "Fuse only epilogues a GEMM library applies (bias, relu)">,
    Option<"tensorCoreProducts", "tensor-core-products", "bool",
           /*default=*/"false",
           "With library-only, fuse any epilogue into the products Kiln's "
           "tensor-core kernels compute (16-bit operands whose rows hold a "
           "multiple of 8 elements)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::kiln::loop::LoopDialect"];
}

def FuseRowsPass : Pass<"kiln-loop-fuse-rows"> {
  let summary = "Fuses reductions and the nodes that use them, row by row";
  let description = [{
    Groups each `loop.reduce` with the later nodes that read it at their own
    row (the reduction's result has one value per row, as with keepdim) into
    a `loop.kernel`: the nodes run row by row, and the reductions stay in
    registers for the nodes after them. Softmax (max, sum of exponentials,
    division) and LayerNorm (mean, variance, normalisation) become one kernel
    that reads each row while it is in cache, instead of three kernels that
    each read the whole input from memory.

    A node joins when it has the reduction's rows and reads the group's row
    values only at its own row; a reader that cannot join runs after the
    kernel, and past it only readers that use nothing defined after the
    group's last member join, moving up. Later reductions over the same rows
    that merge partials made alongside the seed's (sibling column passes)
    join too. Values used after the kernel, and nodes with columns, are the
    kernel's results.

    Before:
    ```mlir
    %m = loop.reduce "max" over [64] : tensor<8x1xf32> {...}
    %y = loop.pointwise : tensor<8x64xf32> {
    ^bb0(%i: index, %j: index):
      %v = loop.load %x[%i, %j] : tensor<8x64xf32>
      %mx = loop.load %m[%i, %c0] : tensor<8x1xf32>
      ...
    }
    ```
    After:
    ```mlir
    %y = loop.kernel rows(1) -> tensor<8x64xf32> {
      %m = loop.reduce "max" over [64] : tensor<8x1xf32> {...}
      %y = loop.pointwise : tensor<8x64xf32> {...}
      loop.kernel_yield %y : tensor<8x64xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::kiln::loop::LoopDialect"];
}

def SplitReductionsPass : Pass<"kiln-loop-split-reductions"> {
  let summary = "Splits reductions with few long results into two levels";
  let description = [{
    A reduction with fewer than `max-results` results of at least
    `min-elements` elements each (static sizes) becomes partial reductions
    over chunks of one reduction dimension (the outermost with room for
    the chunks, else the longest), the chunk an extra,
    last, result dimension, and a reduction of each result's partials: a
    target that runs rows in parallel (a GPU block per row) then spreads
    few long rows over about `partial-results` rows. Positions past the
    split dimension's end contribute the combiner's identity (sums and
    products) or repeat the last element (max and min). Partials keep the
    accumulator's precision (f32 for f16 and bf16). "welford" does not
    split.

    A reduction down columns (a sum over a matrix's rows: a bias gradient,
    a normalization's weight gradient; `isColumnReduction`) splits first
    whenever its flattened reduction space holds more than two chunks of
    `column-chunk` elements: partials over `column-chunk` consecutive
    positions, the chunk an extra *first* result dimension, so that each
    partial still reads along its innermost dimension and a GPU kernel
    whose lanes take consecutive results reads each row segment at once;
    the partials' reduction splits again until they are few. One whose
    result has unit dimensions after its columns' (a per-channel statistic
    of a channels-last image kept as `[1, C, 1, 1]`) first drops them, and
    its users read it through a `tensor.expand_shape`.

    Before:
    ```mlir
    %s = loop.reduce "sum" over [1000000] : tensor<f32> {...}
    ```
    After:
    ```mlir
    %p = loop.reduce "sum" over [977] : tensor<1024xf32> {
    ^bb0(%c: index, %k: index):
      // the original body at position min(c * 977 + k, 999999), or 0 past it
    }
    %s = loop.reduce "sum" over [1024] : tensor<f32> {
    ^bb0(%c: index):
      %v = loop.load %p[%c] : tensor<1024xf32>
      loop.yield %v : f32
    }
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"65536",
           "Split reductions of at least this many elements per result">,
    Option<"maxResults", "max-results", "int64_t", /*default=*/"128",
           "Split reductions of fewer results than this">,
    Option<"partialResults", "partial-results", "int64_t", /*default=*/"1024",
           "Aim for this many partial results in all">,
    Option<"columnChunk", "column-chunk", "int64_t", /*default=*/"128",
           "Elements per partial of a reduction down columns (0: do not "
           "split those apart)">,
  ];
  let dependentDialects = ["::mlir::kiln::loop::LoopDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FuseSiblingsPass : Pass<"kiln-loop-fuse-siblings"> {
  let summary = "Fuses pointwise nodes, and reductions, that read a common "
                "tensor";
  let description = [{
    Horizontal fusion: pointwise nodes of one shape that read a common
    tensor (and none of each other) become one `loop.kernel` over their
    rows (all dimensions but the last), so the kernel reads each row of the
    common tensor once for all of them instead of once per node. Rows must
    hold at least `min-row-bytes` (as f32), so that a row is worth the
    block or thread that runs it. Reductions of one result type and
    reduction shape that read a common tensor and none of each other (a
    layer norm's weight and bias gradients) become one kernel too, over all
    their result dimensions (each node a row value).

    Before:
    ```mlir
    %a = loop.pointwise : tensor<8x512xf32> {... loop.load %x[%i, %j] ...}
    %b = loop.pointwise : tensor<8x512xf32> {... loop.load %x[%i, %j] ...}
    ```
    After:
    ```mlir
    %k:2 = loop.kernel rows(1) -> tensor<8x512xf32>, tensor<8x512xf32> {
      %a = loop.pointwise : tensor<8x512xf32> {...}
      %b = loop.pointwise : tensor<8x512xf32> {...}
      loop.kernel_yield %a, %b : tensor<8x512xf32>, tensor<8x512xf32>
    }
    ```
  }];
  let options = [
    Option<"minRowBytes", "min-row-bytes", "int64_t", /*default=*/"1024",
           "Fuse only rows of at least this many bytes (as f32)">,
  ];
  let dependentDialects = ["::mlir::kiln::loop::LoopDialect"];
}

def ExpandConvolutionsPass : Pass<"kiln-loop-expand-convolutions"> {
  let summary = "Expands loop.convolution into window sums, or patches and "
                "a matrix product";
  let description = [{
    Rewrites each `loop.convolution` of a graph whose filters read at most
    `direct-depth` inputs each (channels per group times kernel positions)
    and no fewer than there are filters per group (the patches would be at
    least as large as the result: depthwise convolutions, say) into a
    `loop.reduce "sum"` over each output's window of the input times the
    filter, which fuses like a pooling window, and every other one into the
    input's patches
    (im2col: a pointwise node of `[groups, channels per group x kernel
    positions, batch x output positions]`, 0 where a window leaves the
    image), the filters regrouped per group, a `loop.matmul` of the two, and
    an index-map node that reads the product back in `[batch, filters,
    outputs...]` order. The code generators and the GEMM libraries then see
    a matrix product; the readers of the convolution inline the index map.

    Before:
    ```mlir
    %y = loop.convolution %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64,
        padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
        : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x8x8xf32>
    ```
    After:
    ```mlir
    %patches = loop.pointwise : tensor<1x27x128xf32> { ... }
    %weights = loop.pointwise : tensor<1x4x27xf32> { ... }
    %product = loop.matmul %weights, %patches
        : tensor<1x4x27xf32>, tensor<1x27x128xf32> -> tensor<1x4x128xf32>
    %y = loop.pointwise : tensor<2x4x8x8xf32> { ... }
    ```

    A depthwise convolution (`groups = 6` over 6 channels, 3x3 filters)
    becomes one node instead:
    ```mlir
    %y = loop.reduce "sum" over [1, 3, 3] : tensor<2x6x8x8xf32> {
    ^bb0(%n: index, %f: index, %h: index, %w: index, %c: index, %i: index, %j: index):
      ... // input[n, f + c, h + i - 1, w + j - 1] (0 outside) * weight[f, c, i, j]
    }
    ```

    With `library` (the GPU pipeline's), the 1-d and 2-d convolutions of
    f32, f16 and bf16, depthwise ones too, are left to the target's
    convolution library instead, in its layout: nodes transpose the input
    and filters to channels-last, a `channels_last` loop.convolution sums
    into the operands' dtype (rounding each sum once, as eager PyTorch's
    library convolution does) and a node reads its result back in `[batch,
    filters, outputs...]` order, converted to the original result's dtype.
    The transposes inline their producers and the readers inline the last
    node, so the library reads and writes what neighbouring kernels write
    and read. A `channels_last` convolution is left as it is (and is an
    error without `library`).
  }];
  let options = [
    Option<"directDepth", "direct-depth", "int64_t",
           /*default=*/"kDefaultDirectConvolutionDepth",
           "Compute convolutions whose filters read at most this many "
           "inputs directly, as window sums (0: none; the default is "
           "kiln-fx-to-loop's direct-convolution-depth)">,
    Option<"library", "library", "bool", /*default=*/"false",
           "Leave the 1-d and 2-d convolutions of f32, f16 and bf16 to the "
           "target's convolution library (before `direct-depth`), as "
           "channels-last convolutions">,
  ];
  let dependentDialects = [
    "::mlir::kiln::loop::LoopDialect",
    "::mlir::arith::ArithDialect",
  ];
}

def FormAttentionPass : Pass<"kiln-loop-form-attention"> {
  let summary = "Forms loop.attention from attention written out as products around a softmax";
  let description = [{
    Finds attention that a model writes out, as `kiln-loop-inline` leaves
    it: the scores' `loop.matmul` (keys read transposed), the softmax's
    maximum and sum (`loop.reduce`) and probabilities (`loop.pointwise`),
    each recomputing the same pointwise work on the scores (a scale, a
    soft cap, a mask, a bias from the indices), and the probabilities'
    `loop.matmul` with the values. Replaces the chain with one
    `loop.attention` whose scores region holds that work, where the GPU's
    attention kernel computes the node (f16 and bf16 operands, equal head
    sizes, a multiple of 16, at most 128). The scores are not rounded to 16
    bits before the region, and rows whose every score is -inf yield zeros
    rather than NaN, as PyTorch's fused attention gives them.

    Before:
    ```mlir
    %s = loop.matmul %q, %k {transpose_rhs} : ... -> tensor<2x8x8xbf16>
    %max = loop.reduce "max" over [8] : tensor<2x8x1xf32> { g(%s) }
    %sum = loop.reduce "sum" over [8] : tensor<2x8x1xf32> { exp(g(%s) - %max) }
    %p = loop.pointwise : tensor<2x8x8xbf16> { exp(g(%s) - %max) / %sum }
    %o = loop.matmul %p, %v : ... -> tensor<2x8x64xbf16>
    ```
    After:
    ```mlir
    %o = loop.attention %q, %k, %v {scale = 0.125 : f64} : ...
        -> tensor<2x8x64xbf16> scores { g(%score) }
    ```
  }];
  let dependentDialects = ["::mlir::kiln::loop::LoopDialect"];
}

def ExpandAttentionPass : Pass<"kiln-loop-expand-attention"> {
  let summary = "Writes loop.attention and its gradients out as products "
                "and a softmax";
  let description = [{
    Rewrites each `loop.attention` into the scores' `loop.matmul` (reading
    the keys transposed), a node that scales them (and hides later keys
    when causal), the softmax's row maximum and sum (`loop.reduce`), the
    probabilities rounded to the operands' type, and their `loop.matmul`
    with the values: what row fusion turns into two products around one
    row kernel, on targets without an attention kernel. A logsumexp result
    becomes a node of max + log(sum).

    Each `loop.attention_backward` becomes the scores, the probabilities
    from its logsumexp, and the four products of the gradients (dV = pᵀ·dO,
    dP = dO·vᵀ, dQ = dS·k, dK = dSᵀ·q) around dS = p·(dP - delta)·scale.

    With `kernels` (the GPU pipeline's `attention-kernels`), the nodes that
    the GPU's attention kernels compute are kept: f16 and bf16 operands
    whose query, key and value head sizes are equal, a multiple of 16 and
    at most 128.

    Before:
    ```mlir
    %o = loop.attention %q, %k, %v {scale = 0.125 : f64}
        : tensor<2x8x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>
        -> tensor<2x8x64xf32>
    ```
    After:
    ```mlir
    %s = loop.matmul %q, %k {transpose_rhs} : ... -> tensor<2x8x16xf32>
    %scaled = loop.pointwise : tensor<2x8x16xf32> { ... }
    %max = loop.reduce "max" ... : tensor<2x8x1xf32>
    %e = loop.pointwise : tensor<2x8x16xf32> { ... }  // exp(s - max)
    %sum = loop.reduce "sum" ... : tensor<2x8x1xf32>
    %p = loop.pointwise : tensor<2x8x16xf32> { ... }  // e / sum
    %o = loop.matmul %p, %v : ... -> tensor<2x8x64xf32>
    ```
  }];
  let options = [
    Option<"kernels", "kernels", "bool", /*default=*/"false",
           "Keep the nodes that the GPU's attention kernel computes">,
  ];
  let dependentDialects = [
    "::mlir::kiln::loop::LoopDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

def ChannelsLastPass : Pass<"kiln-loop-channels-last"> {
  let summary = "Stores image nodes channels-last around library convolutions "
                "and channels-last images";
  let description = [{
    In each graph with a `channels_last` loop.convolution (every graph with
    `all-graphs`), every 4-d `loop.pointwise` node whose only uses are loads
    in loop bodies and constant `tensor.dim`s computes `[N, H, W, C]`
    instead of `[N, C, H, W]`: its index space is permuted, its body reads
    the same values, and each load of it reads the permuted position. In
    other graphs, such 4-d pointwise and `loop.reduce` nodes move where
    they read channels-last images: every 4-d tensor they load (but at
    constant positions) they read at the channel index last, past unit
    dimensions (an NHWC input; a per-channel statistic kept as
    `[1, C, 1, 1]`, which moves to `[1, 1, 1, C]`), as a max pooling's
    gradient of NHWC images does; a reduction's own dimensions stay after
    the result's. A node that then copies a tensor of its own type
    unchanged (the transpose that fed the library, or that writes a
    graph's NHWC result) folds away. Kernels between two convolutions then
    read and write the library's layout; the graph's inputs and results
    keep PyTorch's, transposed once at the graph's edges.

    Before:
    ```mlir
    %a = loop.pointwise : tensor<2x8x4x4xbf16> {...}     // [N, C, H, W]
    %t = loop.pointwise : tensor<2x4x4x8xbf16> {
    ^bb0(%n: index, %h: index, %w: index, %c: index):
      %v = loop.load %a[%n, %c, %h, %w] : tensor<2x8x4x4xbf16>
      loop.yield %v : bf16
    }
    %y = loop.convolution %t, %f {channels_last, ...}
    ```
    After:
    ```mlir
    %a = loop.pointwise : tensor<2x4x4x8xbf16> {...}     // [N, H, W, C]
    %y = loop.convolution %a, %f {channels_last, ...}
    ```
  }];
  let options = [
    Option<"allGraphs", "all-graphs", "bool", /*default=*/"false",
           "Store images channels-last in graphs without library "
           "convolutions too">,
  ];
  let dependentDialects = ["::mlir::kiln::loop::LoopDialect",
                           "::mlir::tensor::TensorDialect"];
}

def FusionReportPass : Pass<"kiln-fusion-report"> {
  let summary = "Prints the kernels of each lowered graph and the bytes they move";
  let description = [{
    For every graph of loop nodes (a block holding them, such as an
    `fx.graph` after `kiln-lower-to-loop`), prints the kernels it will run (a
    `loop.kernel`, or a node outside kernels), how many nodes and reductions
    each holds, the bytes each reads (each outside tensor once) and writes,
    and where in the user's program its work comes from (the locations of
    its nodes and of the ops inlined into them). The total is set against
    the ideal: each input the graph uses read once, each output written
    once. Sizes that are dynamic print as `?`. The IR is left unchanged.

    ```
    fusion report for @softmax: 1 kernel, 4096 bytes moved, ideal 4096 (1.00x)
      kernel 0: loop.kernel, 3 nodes (2 reductions), reads 2048, writes 2048
        from softmax.py:12:8
    ```
  }];
}

#endif // KILN_DIALECT_LOOP_TRANSFORMS_PASSES_TD
