//===- Launches.cpp - Kernel launches on the caller's stream --------------===//
//
// Part of Kiln. How the GPU kernels launch: in order on the stream the graph
// function receives, over one dimension of blocks and threads, each named
// for outlining; and the temporaries allocated on that stream.
//
//===----------------------------------------------------------------------===//

#include "GPUKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::kiln;

/// The most characters of an op's name a kernel's name takes.
static constexpr size_t kMaxKernelNameOpChars = 40;

Value StreamOrder::current(OpBuilder &b, Location loc, ValueRange extraArgs) {
  Value stream = extraArgs.front();
  auto it = tokens.find(stream);
  if (it != tokens.end())
    return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(stream);
  auto tokenType = gpu::AsyncTokenType::get(b.getContext());
  Value token = UnrealizedConversionCastOp::create(b, loc, tokenType, stream)
                    .getResult(0);
  tokens[stream] = token;
  return token;
}

Value mlir::kiln::allocateOnStream(OpBuilder &b, Location loc, MemRefType type,
                                   ValueRange dynamicSizes, StreamOrder &order,
                                   ValueRange extraArgs) {
  auto alloc = gpu::AllocOp::create(
      b, loc, type, gpu::AsyncTokenType::get(b.getContext()),
      ValueRange{order.current(b, loc, extraArgs)}, dynamicSizes,
      /*symbolOperands=*/ValueRange{});
  order.advance(extraArgs, alloc.getAsyncToken());
  return alloc.getMemref();
}

void mlir::kiln::deallocateOnStream(OpBuilder &b, Location loc, Value buffer,
                                    StreamOrder &order, ValueRange extraArgs) {
  auto dealloc = gpu::DeallocOp::create(
      b, loc, gpu::AsyncTokenType::get(b.getContext()),
      ValueRange{order.current(b, loc, extraArgs)}, buffer);
  order.advance(extraArgs, dealloc.getAsyncToken());
}

SmallVector<Value> mlir::kiln::getBufferSizes(OpBuilder &b, Location loc,
                                              Value buffer) {
  SmallVector<Value> sizes;
  for (int64_t dim = 0, rank = cast<MemRefType>(buffer.getType()).getRank();
       dim < rank; ++dim)
    sizes.push_back(memref::DimOp::create(b, loc, buffer, dim));
  return sizes;
}

Value mlir::kiln::allocateLikeOnStream(OpBuilder &b, Location loc, Value like,
                                       ArrayRef<Value> sizes, Type elementType,
                                       StreamOrder &order,
                                       ValueRange extraArgs) {
  auto type = cast<MemRefType>(like.getType());
  SmallVector<Value> dynamicSizes;
  for (auto [size, value] : llvm::zip_equal(type.getShape(), sizes))
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(value);
  return allocateOnStream(b, loc, MemRefType::get(type.getShape(), elementType),
                          dynamicSizes, order, extraArgs);
}

Value mlir::kiln::getProduct(OpBuilder &b, Location loc,
                             ArrayRef<Value> sizes) {
  Value product = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value size : sizes)
    product = arith::MulIOp::create(b, loc, product, size);
  return product;
}

/// `kiln_<kind>`, followed by the first name in `loc` (an fx op's) as an
/// identifier.
static std::string getKernelName(StringRef kind, Location loc) {
  std::string name = ("kiln_" + kind).str();
  StringRef opName;
  loc->walk([&](Location nested) {
    if (auto named = dyn_cast<NameLoc>(nested)) {
      opName = named.getName().getValue();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (opName.empty())
    return name;
  name += '_';
  for (char c : opName.take_front(kMaxKernelNameOpChars))
    name += llvm::isAlnum(c) ? c : '_';
  return name;
}

gpu::LaunchOp mlir::kiln::createLaunch(OpBuilder &b, Location loc,
                                       StringRef kind, Value blocks,
                                       Value threads, StreamOrder &order,
                                       ValueRange extraArgs,
                                       Value sharedBytes) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value token = order.current(b, loc, extraArgs);
  auto launch = gpu::LaunchOp::create(
      b, loc, blocks, one, one, threads, one, one, sharedBytes,
      gpu::AsyncTokenType::get(b.getContext()), ValueRange{token});
  order.advance(extraArgs, launch.getAsyncToken());
  // Outlining names the kernel after it and the op its node comes from
  // (kiln-fx-to-loop names locations): profiles then tell kernels apart.
  launch.setFunctionAttr(
      FlatSymbolRefAttr::get(b.getContext(), getKernelName(kind, loc)));
  return launch;
}

std::pair<gpu::LaunchOp, Value>
mlir::kiln::createFlatLaunch(OpBuilder &b, Location loc, StringRef kind,
                             Value blocks, Value threads, StreamOrder &order,
                             ValueRange extraArgs) {
  gpu::LaunchOp launch =
      createLaunch(b, loc, kind, blocks, threads, order, extraArgs);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value thread = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  return {launch, thread};
}

std::pair<gpu::LaunchOp, Value> mlir::kiln::createElementLaunch(
    OpBuilder &b, Location loc, StringRef kind, Value total, int64_t perThread,
    const LoopToGPUOptions &options, StreamOrder &order, ValueRange extraArgs) {
  Value threads = arith::ConstantIndexOp::create(b, loc, options.blockSize);
  Value perBlock =
      arith::ConstantIndexOp::create(b, loc, options.blockSize * perThread);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, perBlock);
  auto [launch, thread] =
      createFlatLaunch(b, loc, kind, blocks, threads, order, extraArgs);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfterValue(thread);
  Value first = arith::MulIOp::create(
      b, loc, thread, arith::ConstantIndexOp::create(b, loc, perThread));
  return {launch, first};
}
