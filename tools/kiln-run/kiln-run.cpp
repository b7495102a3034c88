//===- kiln-run.cpp - Run an artifact on .npy inputs ----------------------===//
//
// Part of Kiln. Loads a CPU artifact (docs/ABI.md), reads its inputs from
// .npy files, runs its graph and saves each result as a .npy file or prints
// a summary of it; with --repeat, times the runs. For users without Python,
// as iree-run-module is for IREE.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <optional>
#include <string>
#include <vector>

using namespace llvm;

namespace {
cl::OptionCategory kilnCategory("Kiln options");
cl::opt<std::string> artifactPath(cl::Positional, cl::Required,
                                  cl::desc("<artifact .so>"),
                                  cl::cat(kilnCategory));
cl::list<std::string> inputPaths(cl::Positional,
                                 cl::desc("<input .npy files, in order>"),
                                 cl::cat(kilnCategory));
cl::opt<std::string>
    graphName("graph",
              cl::desc("The graph to run (default: the artifact's only one)"),
              cl::cat(kilnCategory));
cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Save result i as <dir>/result<i>.npy (else print a "
                       "summary of each)"),
              cl::cat(kilnCategory));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Run this many more times and print the "
                                  "time per run"),
                         cl::init(0), cl::cat(kilnCategory));

/// An element type of a signature: its name there and its .npy descriptor.
struct DType {
  StringRef name;
  StringRef descr;
  size_t bytes;
};

constexpr DType kDTypes[] = {
    {"f64", "<f8", 8},
    {"f32", "<f4", 4},
    {"f16", "<f2", 2},
    {"si64", "<i8", 8},
    {"si32", "<i4", 4},
    {"si16", "<i2", 2},
    {"si8", "|i1", 1},
    {"ui8", "|u1", 1},
    {"i1", "|b1", 1},
    {"complex<f32>", "<c8", 8},
    {"complex<f64>", "<c16", 16},
};

/// A tensor type of the signature: its shape (-1 for `?`) and dtype.
struct TensorType {
  SmallVector<int64_t> shape;
  const DType *dtype = nullptr;
};

struct Tensor {
  SmallVector<int64_t> shape;
  const DType *dtype = nullptr;
  std::vector<char> data;
};

[[noreturn]] void fail(const Twine &message) {
  errs() << "kiln-run: " << message << "\n";
  std::exit(1);
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  SmallVector<std::string> sizes;
  for (int64_t size : shape)
    sizes.push_back(size < 0 ? "?" : std::to_string(size));
  return "[" + join(sizes, ", ") + "]";
}

/// Parses "tensor<?x4xf32>".
std::optional<TensorType> parseTensorType(StringRef text) {
  text = text.trim();
  if (!text.consume_front("tensor<") || !text.consume_back(">"))
    return std::nullopt;
  TensorType type;
  // The element type follows the last 'x' before it (a complex type's
  // own 'x' excluded); a 0-d tensor has none.
  size_t complexAt = text.find("complex<");
  size_t split = complexAt == StringRef::npos ? text.rfind('x')
                 : complexAt == 0             ? StringRef::npos
                                              : complexAt - 1;
  StringRef element =
      split == StringRef::npos ? text : text.drop_front(split + 1);
  StringRef dims = split == StringRef::npos ? "" : text.take_front(split);
  for (const DType &dtype : kDTypes)
    if (element == dtype.name)
      type.dtype = &dtype;
  if (!type.dtype)
    return std::nullopt;
  SmallVector<StringRef> parts;
  if (!dims.empty())
    dims.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t size;
    if (part == "?")
      type.shape.push_back(-1);
    else if (!part.getAsInteger(10, size) && size >= 0)
      type.shape.push_back(size);
    else
      return std::nullopt;
  }
  return type;
}

/// Splits "(A, B) -> (C, D)" (or "A -> C") into its input and result types.
std::pair<std::vector<TensorType>, std::vector<TensorType>>
parseSignature(StringRef text) {
  auto [inputs, results] = text.split(" -> ");
  auto parseList = [&](StringRef list) {
    list = list.trim();
    if (list.consume_front("("))
      list.consume_back(")");
    std::vector<TensorType> types;
    // Only commas outside <...> separate entries.
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= list.size(); ++i) {
      if (i < list.size() && list[i] == '<')
        ++depth;
      else if (i < list.size() && list[i] == '>')
        --depth;
      else if (i == list.size() || (list[i] == ',' && depth == 0)) {
        StringRef entry = list.slice(start, i).trim();
        start = i + 1;
        if (entry.empty())
          continue;
        std::optional<TensorType> type = parseTensorType(entry);
        if (!type)
          fail("the artifact's signature has a type kiln-run does not take: " +
               entry);
        types.push_back(*type);
      }
    }
    return types;
  };
  return {parseList(inputs), parseList(results)};
}

/// Reads a .npy file (format 1.0 to 3.0, C order, little-endian).
Tensor readNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> file = MemoryBuffer::getFile(path);
  if (!file)
    fail("cannot read " + path + ": " + file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (!bytes.consume_front("\x93NUMPY") || bytes.size() < 4)
    fail(path + " is not a .npy file");
  unsigned major = static_cast<unsigned char>(bytes[0]);
  bytes = bytes.drop_front(2);
  size_t headerLength = static_cast<unsigned char>(bytes[0]) |
                        static_cast<unsigned char>(bytes[1]) << 8;
  bytes = bytes.drop_front(2);
  if (major >= 2) {
    if (bytes.size() < 2)
      fail(path + " is not a .npy file");
    headerLength |=
        static_cast<size_t>(static_cast<unsigned char>(bytes[0])) << 16 |
        static_cast<size_t>(static_cast<unsigned char>(bytes[1])) << 24;
    bytes = bytes.drop_front(2);
  }
  if (bytes.size() < headerLength)
    fail(path + ": truncated header");
  StringRef header = bytes.take_front(headerLength);
  bytes = bytes.drop_front(headerLength);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find("'" + key.str() + "':");
    if (at == StringRef::npos)
      fail(path + ": no '" + key + "' in the header");
    return header.drop_front(at + key.size() + 3).ltrim();
  };
  Tensor tensor;
  StringRef descr = field("descr");
  descr = descr.drop_front().take_until([](char c) { return c == '\''; });
  for (const DType &dtype : kDTypes)
    if (descr == dtype.descr ||
        (dtype.descr.front() == '|' && descr == dtype.descr.drop_front()))
      tensor.dtype = &dtype;
  if (!tensor.dtype)
    fail(path + ": dtype '" + descr + "' is not one kiln-run takes");
  if (field("fortran_order").starts_with("True"))
    fail(path + ": Fortran order; save it in C order");
  StringRef shape = field("shape");
  shape = shape.drop_front().take_until([](char c) { return c == ')'; });
  SmallVector<StringRef> sizes;
  shape.split(sizes, ',', -1, /*KeepEmpty=*/false);
  for (StringRef size : sizes) {
    int64_t value;
    if (size.trim().getAsInteger(10, value) || value < 0)
      fail(path + ": bad shape");
    tensor.shape.push_back(value);
  }
  size_t expected = numElements(tensor.shape) * tensor.dtype->bytes;
  if (bytes.size() != expected)
    fail(path + ": " + Twine(bytes.size()) + " bytes of data for shape " +
         formatShape(tensor.shape) + ", not " + Twine(expected));
  tensor.data.assign(bytes.begin(), bytes.end());
  return tensor;
}

void writeNpy(StringRef path, const Tensor &tensor) {
  std::string shape;
  for (int64_t size : tensor.shape)
    shape += std::to_string(size) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 1);
  std::string header = "{'descr': '" + tensor.dtype->descr.str() +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // The data starts at a multiple of 64 bytes; the header ends with '\n'.
  size_t total = alignTo(10 + header.size() + 1, 64);
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::error_code error;
  raw_fd_ostream os(path, error);
  if (error)
    fail("cannot write " + path + ": " + error.message());
  os << "\x93NUMPY" << '\x01' << '\x00';
  os << static_cast<char>(header.size() & 0xff)
     << static_cast<char>(header.size() >> 8);
  os << header;
  os.write(tensor.data.data(), tensor.data.size());
}

/// Prints the tensor's shape, dtype and first elements.
void printSummary(unsigned index, const Tensor &tensor) {
  outs() << "result " << index << ": " << formatShape(tensor.shape) << " "
         << tensor.dtype->name;
  int64_t count = std::min<int64_t>(numElements(tensor.shape), 8);
  StringRef printable[] = {"f64",  "f32", "si64", "si32",
                           "si16", "si8", "ui8",  "i1"};
  if (count && llvm::is_contained(printable, tensor.dtype->name)) {
    outs() << " [";
    for (int64_t i = 0; i < count; ++i) {
      const char *at = tensor.data.data() + i * tensor.dtype->bytes;
      StringRef name = tensor.dtype->name;
      auto read = [&](auto value) {
        std::memcpy(&value, at, sizeof(value));
        return value;
      };
      if (i)
        outs() << ", ";
      if (name == "f64")
        outs() << read(double());
      else if (name == "f32")
        outs() << read(float());
      else if (name == "si64")
        outs() << read(int64_t());
      else if (name == "si32")
        outs() << read(int32_t());
      else if (name == "si16")
        outs() << read(int16_t());
      else if (name == "si8")
        outs() << static_cast<int>(read(int8_t()));
      else
        outs() << static_cast<unsigned>(read(uint8_t()));
    }
    outs() << (numElements(tensor.shape) > count ? ", ...]" : "]");
  }
  outs() << "\n";
}

/// The graphs the artifact exports (kiln_<graph>_signature).
std::vector<std::string> findGraphs(StringRef path) {
  Expected<object::OwningBinary<object::ObjectFile>> binary =
      object::ObjectFile::createObjectFile(path);
  if (!binary)
    fail("cannot read " + path + ": " + toString(binary.takeError()));
  auto *elf = dyn_cast<object::ELFObjectFileBase>(binary->getBinary());
  if (!elf)
    fail(path + " is not an ELF shared object");
  std::vector<std::string> graphs;
  for (const object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators()) {
    Expected<StringRef> name = symbol.getName();
    if (!name) {
      consumeError(name.takeError());
      continue;
    }
    StringRef graph = *name;
    if (graph.consume_front("kiln_") && graph.consume_back("_signature"))
      graphs.push_back(graph.str());
  }
  return graphs;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(kilnCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Kiln's artifact runner: runs a CPU artifact's graph on .npy inputs\n");

  std::string graph = graphName;
  if (graph.empty()) {
    std::vector<std::string> graphs = findGraphs(artifactPath);
    if (graphs.size() != 1)
      fail(artifactPath + " exports " + Twine(graphs.size()) + " graphs (" +
           join(graphs, ", ") + "): name one with --graph");
    graph = graphs.front();
  }
  std::string absolute = artifactPath;
  if (sys::path::is_relative(absolute)) {
    SmallString<256> path(absolute);
    sys::fs::make_absolute(path);
    absolute = path.str().str();
  }
  void *library = dlopen(absolute.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    fail(Twine("cannot load ") + artifactPath + ": " + dlerror());
  auto symbol = [&](const std::string &name) {
    void *address = dlsym(library, name.c_str());
    if (!address)
      fail(artifactPath + " has no " + name + " (is the graph '" + graph +
           "'?)");
    return address;
  };
  auto *signature =
      static_cast<const char *>(symbol("kiln_" + graph + "_signature"));
  StringRef device =
      static_cast<const char *>(symbol("kiln_" + graph + "_device"));
  if (device != "cpu")
    fail("the graph runs on " + device + "; kiln-run runs CPU artifacts");
  using RunFn =
      int32_t (*)(void *const *, void *const *, const int64_t *, void *);
  using SizesFn = int32_t (*)(const int64_t *, int64_t *);
  auto run = reinterpret_cast<RunFn>(symbol("kiln_" + graph + "_run"));
  auto resultSizes =
      reinterpret_cast<SizesFn>(symbol("kiln_" + graph + "_result_sizes"));
  auto [inputTypes, resultTypes] = parseSignature(signature);
  if (dlsym(library, ("kiln_" + graph + "_checks").c_str()))
    fail("the graph has run-time checks, which kiln-run does not read yet");

  if (inputPaths.size() != inputTypes.size())
    fail("the graph takes " + Twine(inputTypes.size()) + " inputs " +
         signature + ", given " + Twine(inputPaths.size()));
  std::vector<Tensor> inputs;
  std::vector<int64_t> inputSizes;
  for (auto [index, path] : llvm::enumerate(inputPaths)) {
    Tensor tensor = readNpy(path);
    const TensorType &type = inputTypes[index];
    bool matches =
        tensor.dtype == type.dtype && tensor.shape.size() == type.shape.size();
    for (auto [size, expected] : llvm::zip(tensor.shape, type.shape)) {
      matches &= expected < 0 || size == expected;
      if (expected < 0)
        inputSizes.push_back(size);
    }
    if (!matches)
      fail("input " + Twine(index) + " (" + path + ") is " +
           formatShape(tensor.shape) + " " + tensor.dtype->name +
           "; the graph takes " + formatShape(type.shape) + " " +
           type.dtype->name);
    // The artifact reads 16-byte aligned buffers: vector data is.
    inputs.push_back(std::move(tensor));
  }
  size_t numDynamic = 0;
  for (const TensorType &type : resultTypes)
    numDynamic += llvm::count(type.shape, -1);
  std::vector<int64_t> dynamicResultSizes(numDynamic);
  resultSizes(inputSizes.data(), dynamicResultSizes.data());
  std::vector<Tensor> results;
  size_t nextDynamic = 0;
  for (const TensorType &type : resultTypes) {
    Tensor tensor;
    tensor.dtype = type.dtype;
    for (int64_t size : type.shape)
      tensor.shape.push_back(size < 0 ? dynamicResultSizes[nextDynamic++]
                                      : size);
    tensor.data.assign(numElements(tensor.shape) * type.dtype->bytes, 0);
    results.push_back(std::move(tensor));
  }
  std::vector<void *> inputPointers, resultPointers;
  for (Tensor &tensor : inputs)
    inputPointers.push_back(tensor.data.data());
  for (Tensor &tensor : results)
    resultPointers.push_back(tensor.data.data());

  auto runOnce = [&] {
    if (run(inputPointers.data(), resultPointers.data(), inputSizes.data(),
            nullptr) != 0)
      fail("the graph's run failed");
  };
  runOnce();
  if (repeat > 0) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0; i < repeat; ++i)
      runOnce();
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    outs() << format("%u runs: %.4f ms per run\n", repeat.getValue(),
                     elapsed.count() / repeat);
  }
  for (auto [index, tensor] : llvm::enumerate(results)) {
    if (outputDir.empty()) {
      printSummary(index, tensor);
      continue;
    }
    SmallString<256> path(outputDir);
    sys::path::append(path, "result" + std::to_string(index) + ".npy");
    writeNpy(path, tensor);
  }
  return 0;
}
