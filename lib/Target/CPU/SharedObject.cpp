//===- SharedObject.cpp - Linking Kiln artifacts --------------------------===//
//
// Part of Kiln. An artifact is one object file linked into a shared object.
// The system's linker does the linking; Kiln only finds it and its inputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CPU/CPUTarget.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;
using namespace mlir::kiln;

/// The first linker found: LLVM 22's lld, any lld, then GNU ld.
static std::optional<std::string> findLinker() {
  const char *fixed = "/usr/lib/llvm-22/bin/ld.lld";
  if (llvm::sys::fs::can_execute(fixed))
    return std::string(fixed);
  for (const char *name : {"ld.lld", "ld"}) {
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  }
  return std::nullopt;
}

LogicalResult mlir::kiln::linkSharedObject(StringRef objectPath,
                                           StringRef outputPath,
                                           const LinkOptions &options,
                                           std::string &error) {
  std::optional<std::string> linker = findLinker();
  if (!linker) {
    error = "no linker found (looked for ld.lld and ld)";
    return failure();
  }
  SmallVector<std::string> args = {*linker, "-shared",        "--as-needed",
                                   "-o",    outputPath.str(), objectPath.str()};
  for (const std::string &dir : options.libraryDirs) {
    args.push_back("-L" + dir);
    args.push_back("-rpath=" + dir);
  }
  for (const std::string &library : options.libraries)
    args.push_back("-l:" + library);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*linker, argRefs, /*Env=*/std::nullopt,
                                         /*Redirects=*/{}, /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &message);
  if (status != 0) {
    error = "linking with " + *linker + " failed" +
            (message.empty() ? "" : ": " + message) + " (exit status " +
            std::to_string(status) + ")";
    return failure();
  }
  return success();
}

FailureOr<std::string>
mlir::kiln::findRuntimeLibraryDir(const char *argv0, StringRef fileName,
                                  StringRef fallbackDir) {
  SmallVector<std::string> candidates;
  std::string tool = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRuntimeLibraryDir));
  if (!tool.empty()) {
    SmallString<256> besideTool(llvm::sys::path::parent_path(tool));
    llvm::sys::path::append(besideTool, "..", "lib");
    candidates.push_back(std::string(besideTool));
  }
  if (!fallbackDir.empty())
    candidates.push_back(fallbackDir.str());
  for (const std::string &dir : candidates) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, fileName);
    if (!llvm::sys::fs::exists(path))
      continue;
    SmallString<256> real;
    if (!llvm::sys::fs::real_path(dir, real))
      return std::string(real);
    return dir;
  }
  return failure();
}
