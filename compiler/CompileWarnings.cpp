//===- CompileWarnings.cpp - warnings a cached artifact replays -----------===//
//
// A compile that reuses a cached artifact says what the compile that stored
// it said: its warnings are kept as text, one line each, and emitted again.
//
//===---------------------------------------------------------------------===//

#include "compiler/Compilation.h"

using namespace mlir;

namespace {

/// A line of Compilation::warnings: the name, file, line and column of the
/// location (a NameLoc around a FileLineColLoc, or a FileLineColLoc) and
/// the message, with tabs and newlines escaped.
std::string warningLine(Diagnostic &diag) {
  auto escape = [](StringRef text) {
    std::string out;
    for (char c : text)
      out += c == '\\' ? "\\\\" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : std::string(1, c);
    return out;
  };
  std::string name, file;
  unsigned line = 0, col = 0;
  Location loc = diag.getLocation();
  if (auto n = dyn_cast<NameLoc>(loc)) {
    name = n.getName().str();
    loc = n.getChildLoc();
  }
  if (auto f = dyn_cast<FileLineColLoc>(loc)) {
    file = f.getFilename().str();
    line = f.getLine();
    col = f.getColumn();
  }
  return escape(name) + "\t" + escape(file) + "\t" + std::to_string(line) + "\t" +
         std::to_string(col) + "\t" + escape(diag.str()) + "\n";
}

} // namespace

LogicalResult tcc::recordWarning(Diagnostic &diag, std::string &into) {
  if (diag.getSeverity() == DiagnosticSeverity::Warning)
    into += warningLine(diag);
  return failure();
}

void tcc::replayWarnings(MLIRContext &context, StringRef text) {
  auto unescape = [](StringRef text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\\' || i + 1 == text.size()) {
        out += text[i];
        continue;
      }
      char c = text[++i];
      out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
    }
    return out;
  };
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, false);
  for (StringRef l : lines) {
    SmallVector<StringRef, 5> f;
    l.split(f, '\t');
    if (f.size() != 5)
      continue;
    unsigned line = 0, col = 0;
    f[2].getAsInteger(10, line);
    f[3].getAsInteger(10, col);
    Location loc = UnknownLoc::get(&context);
    if (!f[1].empty())
      loc = FileLineColLoc::get(&context, unescape(f[1]), line, col);
    if (!f[0].empty())
      loc = NameLoc::get(StringAttr::get(&context, unescape(f[0])), loc);
    emitWarning(loc) << unescape(f[4]);
  }
}
