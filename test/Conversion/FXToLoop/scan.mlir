// RUN: kiln-opt %s -split-input-file --pass-pipeline='builtin.module(fx.graph(kiln-fx-to-loop{fail-on-unsupported}))' | FileCheck %s

// cumsum of a short row: element j sums the row's elements at positions
// r <= j (others add 0), in f32 for bf16.
// CHECK-LABEL: fx.graph @cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<4x16xbf16>)
// CHECK: loop.reduce "sum" over [16] : tensor<4x16xbf16> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[R:.+]]: index):
// CHECK-NEXT: %[[V:.+]] = loop.load %[[X]][%[[I]], %[[R]]]
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT: %[[IN:.+]] = arith.cmpi ule, %[[R]], %[[J]]
// CHECK-NEXT: %[[S:.+]] = arith.select %[[IN]], %[[W]], %{{.+}} : f32
// CHECK-NEXT: loop.yield %[[S]] : f32
fx.graph @cumsum(%x: tensor<4x16xbf16>) -> tensor<4x16xbf16> {
  %0 = fx.cumsum %x {dim = -1 : i64} : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
  fx.output %0 : tensor<4x16xbf16>
}

// -----

// cumsum of a longer row (5000 > 256) runs in blocks of 71 = ceil(sqrt(5000)):
// each block's total, then for each block the totals of the blocks before
// it, then each element sums its block up to itself, the block's first
// term bringing the blocks before; partial sums stay in f32.
// CHECK-LABEL: fx.graph @long_cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<2x5000xbf16>)
// CHECK: %[[TOTALS:.+]] = loop.reduce "sum" over [71] : tensor<2x71xf32> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[B:.+]]: index, %[[K:.+]]: index):
// CHECK-NEXT: %[[START:.+]] = arith.muli %[[B]], %c71
// CHECK-NEXT: %[[P:.+]] = arith.addi %[[START]], %[[K]]
// CHECK-NEXT: %[[IN:.+]] = arith.cmpi ule, %[[P]], %c4999
// CHECK: loop.load %[[X]]
// CHECK: arith.select %[[IN]]
// CHECK: %[[BEFORE:.+]] = loop.reduce "sum" over [71] : tensor<2x71xf32> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[B2:.+]]: index, %[[E:.+]]: index):
// CHECK-NEXT: loop.load %[[TOTALS]]
// CHECK-NEXT: arith.cmpi ult, %[[E]], %[[B2]]
// CHECK: loop.reduce "sum" over [71] : tensor<2x5000xbf16> {
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J:.+]]: index, %[[K2:.+]]: index):
// CHECK-NEXT: %[[BLOCK:.+]] = arith.divui %[[J]], %c71
// CHECK: arith.cmpi ule, %{{.+}}, %[[J]]
// CHECK: %[[PREFIX:.+]] = loop.load %[[BEFORE]][%{{.+}}, %[[BLOCK]]]
// CHECK: %[[WITH:.+]] = arith.addf %[[PREFIX]], %{{.+}} : f32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[K2]], %c0
// CHECK: arith.select %[[FIRST]], %[[WITH]], %{{.+}} : f32
fx.graph @long_cumsum(%x: tensor<2x5000xbf16>) -> tensor<2x5000xbf16> {
  %0 = fx.cumsum %x {dim = 1 : i64} : (tensor<2x5000xbf16>) -> tensor<2x5000xbf16>
  fx.output %0 : tensor<2x5000xbf16>
}

// -----

// cumprod of a bool mask accumulates in si64 with identity 1; the scanned
// dimension need not be the last.
// CHECK-LABEL: fx.graph @cumprod_of_a_mask
// CHECK: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK: loop.reduce "prod" over [3] : tensor<3x5xsi64> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[R:.+]]: index):
// CHECK-NEXT: loop.load %{{.+}}[%[[R]], %[[J]]]
// CHECK-NEXT: arith.extui %{{.+}} : i1 to i64
// CHECK-NEXT: %[[IN:.+]] = arith.cmpi ule, %[[R]], %[[I]]
// CHECK-NEXT: arith.select %[[IN]], %{{.+}}, %[[ONE]] : i64
fx.graph @cumprod_of_a_mask(%m: tensor<3x5xi1>) -> tensor<3x5xsi64> {
  %0 = fx.cumprod %m {dim = 0 : i64} : (tensor<3x5xi1>) -> tensor<3x5xsi64>
  fx.output %0 : tensor<3x5xsi64>
}

// -----

// sort: an element's rank counts the elements that go before it (NaN last)
// or tie with it earlier; values and positions are stored at the ranks.
// CHECK-LABEL: fx.graph @sort
// CHECK-SAME: (%[[X:.+]]: tensor<3x8xf32>)
// CHECK: %[[RANKS:.+]] = loop.reduce "sum" over [8] : tensor<3x8xsi64> {
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index, %[[R:.+]]: index):
// CHECK-DAG: %[[E:.+]] = loop.load %[[X]][%[[I]], %[[J]]]
// CHECK-DAG: %[[C:.+]] = loop.load %[[X]][%[[I]], %[[R]]]
// CHECK-DAG: arith.cmpf olt, %[[C]], %[[E]]
// CHECK-DAG: arith.cmpf uno, %[[E]], %[[E]]
// CHECK-DAG: arith.cmpi ult, %[[R]], %[[J]]
// CHECK: arith.extui %{{.+}} : i1 to i64
// CHECK: loop.scatter "assign" %{{.+}} over [3, 8] : tensor<3x8xf32> -> tensor<3x8xf32>
// CHECK: %[[RANK:.+]] = loop.load %[[RANKS]]
// CHECK: %[[TO:.+]] = arith.index_cast %[[RANK]] : i64 to index
// CHECK: loop.scatter_yield %{{.+}} at [%{{.+}}, %[[TO]]] : f32
// CHECK: loop.scatter "assign" %{{.+}} over [3, 8] : tensor<3x8xsi64> -> tensor<3x8xsi64>
fx.graph @sort(%x: tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xsi64>) {
  %0:2 = fx.sort %x {dim = -1 : i64} : (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xsi64>)
  fx.output %0#0, %0#1 : tensor<3x8xf32>, tensor<3x8xsi64>
}

// -----

// A scan longer than 65536 doubles: the input in f32, 17 nodes that add
// each element's partial sum d = 1, 2, ..., 65536 positions before it (if
// any), then the result's bf16.
// CHECK-LABEL: fx.graph @long_cumsum
// CHECK-SAME: (%[[X:.+]]: tensor<2x70000xbf16>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[P0:.+]] = loop.pointwise : tensor<2x70000xf32>
// CHECK: arith.extf
// CHECK: loop.pointwise : tensor<2x70000xf32>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[HAS:.+]] = arith.cmpi uge, %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[BACK:.+]] = arith.subi %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[AT:.+]] = arith.select %[[HAS]], %[[BACK]], %[[J]] : index
// CHECK-NEXT: %[[OWN:.+]] = loop.load %[[P0]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[EARLIER:.+]] = loop.load %[[P0]][%[[I]], %[[AT]]]
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[EARLIER]], %[[OWN]] : f32
// CHECK-NEXT: arith.select %[[HAS]], %[[SUM]], %[[OWN]] : f32
// CHECK-COUNT-16: loop.pointwise : tensor<2x70000xf32>
// CHECK-NOT: loop.pointwise : tensor<2x70000xf32>
// CHECK: loop.pointwise : tensor<2x70000xbf16>
// CHECK: arith.truncf
fx.graph @long_cumsum(%x: tensor<2x70000xbf16>) -> tensor<2x70000xbf16> {
  %0 = fx.cumsum %x {dim = 1 : i64} : (tensor<2x70000xbf16>) -> tensor<2x70000xbf16>
  fx.output %0 : tensor<2x70000xbf16>
}

// -----

// A sort longer than 4096 elements runs a bitonic network over positions,
// padded to 8192: the positions, 13 * 14 / 2 = 91 stages that order each
// position's pair (position xor 1 in the first stage) by the elements
// there (unsigned for ui8; the swap of descending; ties by position;
// padding, at 5000 and after, last), then the values and the positions.
// CHECK-LABEL: fx.graph @long_sort
// CHECK-SAME: (%[[X:.+]]: tensor<2x5000xui8>)
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[LAST:.+]] = arith.constant 4999 : index
// CHECK-DAG: %[[LENGTH:.+]] = arith.constant 5000 : index
// CHECK: %[[P0:.+]] = loop.pointwise : tensor<2x8192xsi64>
// CHECK-NEXT: ^bb0(%{{.+}}: index, %[[J0:.+]]: index):
// CHECK-NEXT: arith.index_cast %[[J0]] : index to i64
// CHECK: loop.pointwise : tensor<2x8192xsi64>
// CHECK-NEXT: ^bb0(%[[I:.+]]: index, %[[J:.+]]: index):
// CHECK-NEXT: %[[PARTNER:.+]] = arith.xori %[[J]], %[[C1]] : index
// CHECK-NEXT: %[[MINE:.+]] = loop.load %[[P0]][%[[I]], %[[J]]]
// CHECK-NEXT: %[[THEIRS:.+]] = loop.load %[[P0]][%[[I]], %[[PARTNER]]]
// CHECK: %[[TP:.+]] = arith.index_cast %[[THEIRS]] : i64 to index
// CHECK: %[[TAT:.+]] = arith.minui %[[TP]], %[[LAST]]
// CHECK: %[[TE:.+]] = loop.load %[[X]][%[[I]], %[[TAT]]]
// CHECK: %[[ME:.+]] = loop.load %[[X]]
// CHECK: arith.cmpi ult, %[[ME]], %[[TE]] : i8
// CHECK: arith.cmpi uge, %[[TP]], %[[LENGTH]] : index
// CHECK: arith.select %{{.+}}, %[[THEIRS]], %[[MINE]] : i64
// CHECK-COUNT-90: loop.pointwise : tensor<2x8192xsi64>
// CHECK-NOT: loop.pointwise : tensor<2x8192xsi64>
// CHECK: loop.pointwise : tensor<2x5000xui8>
// CHECK: loop.pointwise : tensor<2x5000xsi64>
// CHECK-NOT: loop.pointwise
fx.graph @long_sort(%x: tensor<2x5000xui8>) -> (tensor<2x5000xui8>, tensor<2x5000xsi64>) {
  %0:2 = fx.sort %x {dim = 1 : i64, descending = true} : (tensor<2x5000xui8>) -> (tensor<2x5000xui8>, tensor<2x5000xsi64>)
  fx.output %0#0, %0#1 : tensor<2x5000xui8>, tensor<2x5000xsi64>
}

// -----

// An unsigned short sort compares unsigned.
// CHECK-LABEL: fx.graph @unsigned_sort
// CHECK: loop.reduce "sum" over [8] : tensor<3x8xsi64>
// CHECK: arith.cmpi ult, %{{.+}}, %{{.+}} : i8
fx.graph @unsigned_sort(%x: tensor<3x8xui8>) -> (tensor<3x8xui8>, tensor<3x8xsi64>) {
  %0:2 = fx.sort %x {dim = -1 : i64} : (tensor<3x8xui8>) -> (tensor<3x8xui8>, tensor<3x8xsi64>)
  fx.output %0#0, %0#1 : tensor<3x8xui8>, tensor<3x8xsi64>
}

// -----

// topk: a sort, largest first, then the first k along the dimension.
// CHECK-LABEL: fx.graph @topk
// CHECK: %[[RANKS:.+]] = loop.reduce "sum" over [6] : tensor<6x2xsi64>
// CHECK: arith.cmpi slt
// CHECK: loop.scatter "assign"
// CHECK: loop.pointwise : tensor<2x2xsi32>
fx.graph @topk(%x: tensor<6x2xsi32>) -> (tensor<2x2xsi32>, tensor<2x2xsi64>) {
  %0:2 = fx.topk %x {k = 2 : i64, dim = 0 : i64} : (tensor<6x2xsi32>) -> (tensor<2x2xsi32>, tensor<2x2xsi64>)
  fx.output %0#0, %0#1 : tensor<2x2xsi32>, tensor<2x2xsi64>
}

// -----

// masked_scatter: counts of the true mask elements up to each position (a
// quadratic reduction, as cumsum), then a node that takes source's element
// count - 1 where the mask is true, self's elsewhere.
// CHECK-LABEL: fx.graph @masked_scatter
// CHECK: %[[COUNTS:.+]] = loop.reduce "sum" over [6] : tensor<6xsi64>
// CHECK: arith.cmpi ule
// CHECK: loop.pointwise : tensor<2x3xf32>
// CHECK: loop.load %[[COUNTS]]
// CHECK: arith.select
fx.graph @masked_scatter(%x: tensor<2x3xf32>, %m: tensor<3xi1>, %s: tensor<5xf32>) -> tensor<2x3xf32> {
  %0 = fx.masked_scatter %x, %m, %s : (tensor<2x3xf32>, tensor<3xi1>, tensor<5xf32>) -> tensor<2x3xf32>
  fx.output %0 : tensor<2x3xf32>
}

// -----

// masked_scatter of more than 4096 elements: the mask's flags in row-major
// order, then their scan in blocks (78 elements each), as cumsum's.
// CHECK-LABEL: fx.graph @long_masked_scatter
// CHECK: %[[FLAGS:.+]] = loop.pointwise : tensor<6000xsi64>
// CHECK: arith.extui %{{.+}} : i1 to i64
// CHECK: loop.reduce "sum" over [78] : tensor<77xsi64>
// CHECK: loop.load %[[FLAGS]]
// CHECK: loop.reduce "sum" over [77] : tensor<77xsi64>
// CHECK: %[[COUNTS:.+]] = loop.reduce "sum" over [78] : tensor<6000xsi64>
// CHECK: loop.pointwise : tensor<2x3000xf32>
// CHECK: loop.load %[[COUNTS]]
fx.graph @long_masked_scatter(%x: tensor<2x3000xf32>, %m: tensor<3000xi1>, %s: tensor<6000xf32>) -> tensor<2x3000xf32> {
  %0 = fx.masked_scatter %x, %m, %s : (tensor<2x3000xf32>, tensor<3000xi1>, tensor<6000xf32>) -> tensor<2x3000xf32>
  fx.output %0 : tensor<2x3000xf32>
}

// -----

// Tests that self broadcasts against the mask: a column read at column 0.
// CHECK-LABEL: fx.graph @masked_scatter_into_a_broadcast_column
// CHECK: %[[COUNTS:.+]] = loop.reduce "sum" over [12] : tensor<12xsi64>
// CHECK: loop.pointwise : tensor<4x3xf32>
// CHECK: loop.load %[[COUNTS]]
// CHECK: %[[SOURCE:.+]] = loop.load %arg2[%{{.+}}] : tensor<20xf32>
// CHECK: %[[KEPT:.+]] = loop.load %arg0[%{{.+}}, %c0] : tensor<4x1xf32>
// CHECK: %[[SET:.+]] = loop.load %arg1[%{{.+}}] : tensor<3xi1>
// CHECK: arith.select %[[SET]], %[[SOURCE]], %[[KEPT]] : f32
fx.graph @masked_scatter_into_a_broadcast_column(%x: tensor<4x1xf32>, %m: tensor<3xi1>, %s: tensor<20xf32>) -> tensor<4x3xf32> {
  %0 = fx.masked_scatter %x, %m, %s : (tensor<4x1xf32>, tensor<3xi1>, tensor<20xf32>) -> tensor<4x3xf32>
  fx.output %0 : tensor<4x3xf32>
}

// -----

// Tests masked_scatter over dynamic sizes: the mask's flags over the
// run-time element count (rows times 8), scanned in blocks of 64; the
// source's element read at the count less one, delinearized by its own
// run-time sizes and clamped to its last element.
// CHECK-LABEL: fx.graph @dynamic_masked_scatter
// CHECK-DAG: %[[ROWS:.+]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[SOURCE_ROWS:.+]] = tensor.dim %arg2, %c0
// CHECK-DAG: %[[COUNT:.+]] = arith.muli %[[ROWS]], %c8
// CHECK-DAG: %[[SOURCE_COUNT:.+]] = arith.muli %[[SOURCE_ROWS]], %c8
// CHECK: %[[FLAGS:.+]] = loop.pointwise(%[[COUNT]]) : tensor<?xsi64>
// CHECK: loop.load %arg1[%{{.+}}, %c0] : tensor<?x1xi1>
// CHECK: loop.reduce "sum"(%{{.+}}) over [64] : tensor<?xsi64>
// CHECK: loop.load %[[FLAGS]]
// CHECK: %[[COUNTS:.+]] = loop.reduce "sum"(%[[COUNT]]) over [64] : tensor<?xsi64>
// CHECK: %[[LAST:.+]] = arith.subi %[[SOURCE_COUNT]], %c1
// CHECK: loop.pointwise(%[[ROWS]]) : tensor<?x8xf32>
// CHECK: loop.load %[[COUNTS]]
// CHECK: %[[K:.+]] = arith.minui %{{.+}}, %[[LAST]] : index
// CHECK: arith.remui %[[K]], %c8
// CHECK: arith.divui %[[K]], %c8
// CHECK: loop.load %arg2
// CHECK: loop.load %arg0[%{{.+}}, %{{.+}}] : tensor<?x8xf32>
fx.graph @dynamic_masked_scatter(%x: tensor<?x8xf32>, %m: tensor<?x1xi1>, %s: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = fx.masked_scatter %x, %m, %s : (tensor<?x8xf32>, tensor<?x1xi1>, tensor<?x8xf32>) -> tensor<?x8xf32>
  fx.output %0 : tensor<?x8xf32>
}

// -----

// A row of dynamic length scans in blocks of 64: ceil(n / 64) block totals,
// the totals scanned in blocks of 64 in turn (two levels more, the last
// combining its totals over the run-time number of blocks), each block's
// "before" the scan at the block before it, then each element over its
// block. It sorts in blocks
// of 1024: each element's rank in its block (over min(n, 1024)), the blocks
// sorted by those ranks, then per element and other block a binary search
// of 11 steps (1024, 512, ..., 1) over the sorted block (over the
// run-time number of blocks); values go to the sum of the two counts.
// CHECK-LABEL: fx.graph @dynamic_rows
// CHECK-SAME: (%[[X:.+]]: tensor<4x?xf32>
// CHECK: tensor.dim %[[X]], %c1
// CHECK: %[[LEN:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[LAST:.+]] = arith.subi %[[LEN]], %c1
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[LEN]], %c64
// CHECK: %[[TOTALS:.+]] = loop.reduce "sum"(%[[BLOCKS]]) over [64] : tensor<4x?xf32> {
// CHECK: arith.cmpi ule, %{{.+}}, %[[LAST]]
// CHECK: %[[BLOCKS2:.+]] = arith.ceildivui %[[BLOCKS]], %c64
// CHECK: loop.reduce "sum"(%[[BLOCKS2]]) over [64] : tensor<4x?xf32> {
// CHECK: loop.load %[[TOTALS]]
// CHECK: %[[BLOCKS3:.+]] = arith.ceildivui %[[BLOCKS2]], %c64
// CHECK: loop.reduce "sum"(%[[BLOCKS3]]) over [64] : tensor<4x?xf32> {
// CHECK: loop.reduce "sum"(%[[BLOCKS3]]) over [%[[BLOCKS3]]] : tensor<4x?xf32> {
// CHECK: loop.reduce "sum"(%[[BLOCKS2]]) over [64] : tensor<4x?xf32> {
// CHECK: loop.pointwise(%[[BLOCKS2]]) : tensor<4x?xf32> {
// CHECK: %[[SCANNED:.+]] = loop.reduce "sum"(%[[BLOCKS]]) over [64] : tensor<4x?xf32> {
// CHECK: %[[BEFORE:.+]] = loop.pointwise(%[[BLOCKS]]) : tensor<4x?xf32> {
// CHECK: arith.subi %{{.+}}, %c1
// CHECK: loop.load %[[SCANNED]]
// CHECK: loop.reduce "sum"(%{{.+}}) over [64] : tensor<4x?xf32> {
// CHECK: loop.load %[[BEFORE]]
// CHECK: tensor.dim %[[X]], %c1
// CHECK: %[[M:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[BLOCK:.+]] = arith.minui %[[M]], %c1024
// CHECK: %[[SORT_BLOCKS:.+]] = arith.ceildivui %[[M]], %c1024
// CHECK: %[[IN_BLOCK:.+]] = loop.reduce "sum"(%{{.+}}) over [%[[BLOCK]]] : tensor<4x?xsi64> {
// CHECK: %[[SORTED:.+]] = loop.scatter "assign" %[[X]](%{{.+}}) over [4, %{{.+}}] : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK: %[[ACROSS:.+]] = loop.reduce "sum"(%{{.+}}) over [%[[SORT_BLOCKS]]] : tensor<4x?xsi64> {
// CHECK-COUNT-11: loop.load %[[SORTED]]
// CHECK: loop.scatter "assign" %{{.+}} over [4, %{{.+}}] : tensor<4x?xf32> -> tensor<4x?xf32>
// CHECK: loop.load %[[IN_BLOCK]]
// CHECK: loop.load %[[ACROSS]]
fx.graph @dynamic_rows(%x: tensor<4x?xf32> {fx.guard = #fx.tensor_guard<sizes = [4, s0]>})
    -> (tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xsi64>)
    attributes {symbols = [#fx.symbol<"s0", min = 2>]} {
  %0 = fx.cumsum %x {dim = 1 : i64} : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %1:2 = fx.sort %x {dim = 1 : i64} : (tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xsi64>)
  fx.output %0, %1#0, %1#1 : tensor<4x?xf32>, tensor<4x?xf32>, tensor<4x?xsi64>
}
