//===- OutlineKernels.cpp - One function per kernel of a graph ------------===//
//
// Part of Kiln. kiln-outline-kernels: each loop nest of a bufferized graph
// function becomes a call of a function of its own, and alike nests share
// one, so that code generation compiles each distinct kernel once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Passes.h"

#include "kiln/Codegen/GraphBufferization.h"
#include "kiln/Target/FunctionEquivalence.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "kiln/Target/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

/// Whether `op` computes a value from constants alone (a constant, or pure
/// arithmetic of such values), which a function can compute again rather
/// than take as an argument; `known` memoizes the answers.
static bool isComputedFromConstants(Operation *op,
                                    DenseMap<Operation *, bool> &known) {
  if (!op)
    return false;
  if (auto it = known.find(op); it != known.end())
    return it->second;
  bool computed =
      op->hasTrait<OpTrait::ConstantLike>() ||
      (op->getNumRegions() == 0 && isPure(op) && op->getNumResults() == 1 &&
       llvm::all_of(op->getOperands(), [&](Value operand) {
         return isComputedFromConstants(operand.getDefiningOp(), known);
       }));
  known[op] = computed;
  return computed;
}

/// Adds `op`, computed from constants, to `ops` after the ops it uses.
static void addWithOperands(Operation *op, llvm::SetVector<Operation *> &ops) {
  if (ops.contains(op))
    return;
  for (Value operand : op->getOperands())
    addWithOperands(operand.getDefiningOp(), ops);
  ops.insert(op);
}

/// What `nest` reads from outside it, in the order it first reads them: what
/// is computed from constants, which the outlined function computes again
/// (in `recomputed`, operands first), so that its sizes stay constants, and
/// the rest, which become its arguments.
static void collectCaptures(Operation *nest,
                            llvm::SetVector<Operation *> &recomputed,
                            llvm::SetVector<Value> &arguments) {
  DenseMap<Operation *, bool> known;
  nest->walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (nest->isAncestor(operand.getParentRegion()->getParentOp()))
        continue;
      Operation *def = operand.getDefiningOp();
      if (isComputedFromConstants(def, known))
        addWithOperands(def, recomputed);
      else
        arguments.insert(operand);
    }
  });
}

namespace {
/// The outlined kernels of a module, found by their bodies.
class KernelTable {
public:
  explicit KernelTable(ModuleOp module) : symbols(module) {}

  /// Outlines `nest`, a top-level op of `graph`, into a call of a function
  /// that holds it: a new one, placed after `graph`'s earlier ones, or one
  /// that holds a nest like it.
  void outline(func::FuncOp graph, Operation *nest);

private:
  /// A function alike to `candidate` outlined before, or null.
  func::FuncOp findAlike(func::FuncOp candidate, llvm::hash_code hash);

  SymbolTable symbols;
  DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> kernels;
  /// The last function outlined from each graph.
  DenseMap<Operation *, Operation *> lastKernel;
};
} // namespace

func::FuncOp KernelTable::findAlike(func::FuncOp candidate,
                                    llvm::hash_code hash) {
  for (func::FuncOp kernel : kernels.lookup(hash)) {
    if (areFunctionsAlike(kernel, candidate))
      return kernel;
  }
  return nullptr;
}

void KernelTable::outline(func::FuncOp graph, Operation *nest) {
  llvm::SetVector<Operation *> recomputed;
  llvm::SetVector<Value> arguments;
  collectCaptures(nest, recomputed, arguments);

  Location loc = nest->getLoc();
  OpBuilder builder(graph->getContext());
  auto type = builder.getFunctionType(
      llvm::map_to_vector(arguments, [](Value v) { return v.getType(); }),
      nest->getResultTypes());
  auto kernel = func::FuncOp::create(
      builder, loc, (graph.getSymName() + "_kernel").str(), type);
  kernel.setPrivate();
  // Kept out of its callers, it is compiled once, however often called, and
  // LLVM works on one kernel at a time. (func-to-llvm carries `passthrough`
  // over to the llvm.func.)
  kernel->setAttr("passthrough",
                  builder.getArrayAttr(builder.getStringAttr("noinline")));
  kernel->setAttr(
      "llvm.linkage",
      LLVM::LinkageAttr::get(builder.getContext(), LLVM::Linkage::Internal));
  Block *body = kernel.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(arguments.getArrayRef(), body->getArguments());
  for (Operation *op : recomputed)
    builder.clone(*op, mapping);
  Operation *copy = builder.clone(*nest, mapping);
  func::ReturnOp::create(builder, loc, copy->getResults());

  llvm::hash_code hash = hashFunctionBody(kernel);
  if (func::FuncOp alike = findAlike(kernel, hash)) {
    kernel->erase();
    kernel = alike;
  } else {
    // After the graph and its kernels so far, in the order they run.
    Operation *&last = lastKernel[graph];
    symbols.insert(
        kernel, std::next(Block::iterator(last ? last : graph.getOperation())));
    last = kernel;
    kernels[hash].push_back(kernel);
  }

  builder.setInsertionPoint(nest);
  auto call =
      func::CallOp::create(builder, loc, kernel, arguments.getArrayRef());
  nest->replaceAllUsesWith(call.getResults());
  nest->erase();
}

namespace {
struct OutlineKernelsPass
    : kiln::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    KernelTable table(module);
    for (auto graph : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (!graph->hasAttr(kGraphFuncAttrName) || graph.isExternal())
        continue;
      for (Block &block : graph.getBody()) {
        for (Operation &op : llvm::make_early_inc_range(block)) {
          if (op.getNumRegions() != 0)
            table.outline(graph, &op);
        }
      }
    }
  }
};
} // namespace
