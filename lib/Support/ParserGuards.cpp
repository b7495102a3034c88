//===- ParserGuards.cpp - Inputs MLIR's parser cannot take ----------------===//
//
// Part of Kiln.
//
//===----------------------------------------------------------------------===//

#include "kiln/Support/ParserGuards.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

/// Whether `c` may continue an identifier or keyword.
static bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// Whether `text` starts with the keyword `word`.
static bool startsWithWord(StringRef text, StringRef word) {
  return text.starts_with(word) &&
         (text.size() == word.size() || !isIdentifierChar(text[word.size()]));
}

/// The location of `offset` in `buffer`.
static Location getLocation(llvm::MemoryBufferRef buffer, size_t offset,
                            MLIRContext *context) {
  StringRef before = buffer.getBuffer().take_front(offset);
  unsigned line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  unsigned column =
      offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  return FileLineColLoc::get(context, buffer.getBufferIdentifier(), line,
                             column);
}

LogicalResult mlir::kiln::checkParserGuards(llvm::MemoryBufferRef buffer,
                                            MLIRContext *context) {
  StringRef text = buffer.getBuffer();
  bool found = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    // Comments and strings say nothing to the parser.
    if (c == '/' && text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        break;
      continue;
    }
    if (c == '"') {
      for (++i; i < e && text[i] != '"'; ++i)
        i += text[i] == '\\';
      continue;
    }
    if ((i > 0 && isIdentifierChar(text[i - 1])) ||
        !startsWithWord(text.substr(i), "array"))
      continue;
    StringRef rest = text.substr(i + 5).ltrim();
    if (!rest.consume_front("<") || !startsWithWord(rest.ltrim(), "index"))
      continue;
    emitError(getLocation(buffer, i, context))
        << "dense arrays of `index` are not supported: use `array<i64: ...>`";
    found = true;
  }
  return failure(found);
}
