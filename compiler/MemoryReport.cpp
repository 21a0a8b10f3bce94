//===- MemoryReport.cpp - what the memory plan holds, for people ----------===//

#include "compiler/MemoryReport.h"

#include "compiler/cuda/CudaPipeline.h"
#include "dialects/TccNames.h"
#include "passes/training/RematSummary.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <map>

using namespace mlir;

namespace {

std::string human(int64_t bytes) {
  if (bytes < 0)
    return "-" + human(-bytes);
  std::string s;
  llvm::raw_string_ostream o(s);
  if (bytes >= (1 << 20))
    o << llvm::format("%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    o << llvm::format("%.1f KiB", bytes / 1024.0);
  else
    o << bytes << " B";
  return s;
}

const char *roleWord(int32_t role) {
  switch (role) {
  case TCC_ROLE_INPUT: return "input";
  case TCC_ROLE_OUTPUT: return "output";
  case TCC_ROLE_PARAM: return "param";
  case TCC_ROLE_STATE: return "state";
  }
  return "?";
}

/// The workspace the library calls of FN need on CHIP, at the device arena's
/// tail (they run in order on one stream and share it); CALLS and LARGEST
/// say which.
int64_t workspaceOf(func::FuncOp fn, llvm::StringRef chip, int64_t *calls = nullptr,
                    std::string *largest = nullptr) {
  int64_t workspace = 0, count = 0;
  fn.walk([&](func::CallOp call) {
    auto info = call->getAttrOfType<DictionaryAttr>(tcc::attr::libraryCall);
    auto kind = info ? info.getAs<IntegerAttr>("kind") : nullptr;
    auto params = info ? info.getAs<DenseI64ArrayAttr>("params") : nullptr;
    if (!kind || !params)
      return;
    ++count;
    int64_t bytes = tcc::libraryWorkspaceBytes(int32_t(kind.getInt()), params.asArrayRef(), chip);
    if (bytes > workspace) {
      workspace = bytes;
      if (largest)
        *largest = kind.getInt() == TCC_LIBRARY_CALL_MATMUL ? "a cuBLASLt matmul on " + chip.str()
                                                            : "a cuDNN convolution's im2col bound";
    }
  });
  if (calls)
    *calls = count;
  return workspace;
}

void printWorkspace(func::FuncOp fn, llvm::raw_ostream &os, llvm::StringRef chip) {
  int64_t calls = 0;
  std::string largest;
  int64_t workspace = workspaceOf(fn, chip, &calls, &largest);
  if (calls > 0)
    os << "  library workspace " << human(workspace) << " at the device arena's tail (shared by "
       << calls << " library call(s); the largest need: " << largest << ")\n";
}

/// The op position where E's live arena bytes peak, and the bytes there.
std::pair<int64_t, int64_t> peakOf(const tcc::PlannedEntry &e) {
  std::vector<int64_t> live = tcc::liveBytes(e);
  int64_t at = 0, bytes = 0;
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i] > bytes) {
      bytes = live[i];
      at = int64_t(i);
    }
  return {at, bytes};
}

/// The buffers of E live at op position AT, largest first.
std::vector<std::pair<int64_t, std::string>> liveAt(const tcc::PlannedEntry &e, int64_t at) {
  std::vector<std::pair<int64_t, std::string>> rows;
  for (const tcc::PlannedTensor &t : e.tensors)
    if (t.region == TCC_REGION_ARENA)
      rows.push_back({t.size, std::string(roleWord(t.role)) + " " + t.name});
  for (const tcc::PlannedTemp &t : e.temps)
    if (t.firstOp <= at && at <= t.lastOp)
      rows.push_back({t.size, "'" + (t.node.empty() ? std::string("?") : t.node) +
                                  "' (intermediate, ops " + std::to_string(t.firstOp) + ".." +
                                  std::to_string(t.lastOp) + ")"});
  llvm::stable_sort(rows, [](const auto &x, const auto &y) { return x.first > y.first; });
  return rows;
}

void printLiveAtPeak(const tcc::PlannedEntry &e, llvm::raw_ostream &os, size_t count,
                     llvm::StringRef indent) {
  auto [at, bytes] = peakOf(e);
  std::vector<std::pair<int64_t, std::string>> rows = liveAt(e, at);
  os << indent << "peak " << human(bytes) << " live at op " << at << " of @" << e.function
     << " (arena " << human(e.arenaSize) << " after packing); the largest buffers live there:\n";
  for (size_t i = 0; i < rows.size() && i < count; ++i)
    os << indent << "  " << llvm::right_justify(human(rows[i].first), 10) << "  "
       << rows[i].second << "\n";
  if (rows.size() > count)
    os << indent << "  and " << rows.size() - count << " more\n";
}

/// What tcc-rematerialize recorded on FN: the values, their bytes and flops.
void printRemat(func::FuncOp fn, llvm::raw_ostream &os) {
  std::optional<tcc::RematSummary> remat = tcc::readRematSummary(fn);
  ArrayAttr values = remat ? remat->recomputed : nullptr;
  if (!values)
    return;
  double flops = remat->recomputeFlops, step = remat->stepFlops;
  os << "  recomputed " << values.size() << " value(s) in the backward pass: "
     << llvm::format("%.3g", flops) << " flops, "
     << llvm::format("%.1f%%", step > 0 ? 100.0 * flops / step : 0.0)
     << " of the step's arithmetic\n";
  std::map<std::string, std::pair<int64_t, double>> byOp;
  for (Attribute a : values) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto op = d ? d.getAs<StringAttr>("op") : nullptr;
    if (!op)
      continue;
    auto &[bytes, f] = byOp[op.str()];
    if (auto b = d.getAs<IntegerAttr>("bytes"))
      bytes += b.getInt();
    if (auto x = d.getAs<FloatAttr>("flops"))
      f += x.getValueAsDouble();
  }
  for (auto &[op, v] : byOp)
    os << "    " << llvm::left_justify(op, 22) << " " << llvm::right_justify(human(v.first), 10)
       << " freed at their peaks, " << llvm::format("%.3g", v.second) << " flops\n";
}

} // namespace

std::string tcc::humanBytes(int64_t bytes) { return human(bytes); }

std::vector<int64_t> tcc::liveBytes(const PlannedEntry &e) {
  int64_t last = 0, resident = 0;
  for (const PlannedTemp &t : e.temps)
    last = std::max(last, t.lastOp);
  for (const PlannedTensor &t : e.tensors)
    if (t.region == TCC_REGION_ARENA)
      resident += t.size;
  std::vector<int64_t> delta(last + 2, 0);
  for (const PlannedTemp &t : e.temps) {
    delta[t.firstOp] += t.size;
    delta[t.lastOp + 1] -= t.size;
  }
  std::vector<int64_t> live(last + 1, 0);
  int64_t running = resident;
  for (int64_t i = 0; i <= last; ++i)
    live[i] = running += delta[i];
  return live;
}

tcc::MemoryFootprint tcc::memoryFootprint(ModuleOp module, ArrayRef<PlannedEntry> plans,
                                     StringRef chip) {
  MemoryFootprint f;
  for (const PlannedEntry &e : plans) {
    f.arena = std::max(f.arena, e.arenaSize);
    f.state = std::max(f.state, e.stateSize);
    if (!chip.empty())
      if (auto fn = module.lookupSymbol<func::FuncOp>(e.function))
        f.workspace = std::max(f.workspace, workspaceOf(fn, chip));
  }
  return f;
}

void tcc::printPeak(ArrayRef<PlannedEntry> plans, llvm::raw_ostream &os, size_t rows) {
  const PlannedEntry *largest = nullptr;
  for (const PlannedEntry &e : plans)
    if (!largest || e.arenaSize > largest->arenaSize)
      largest = &e;
  if (largest)
    printLiveAtPeak(*largest, os, rows, "");
}

int64_t tcc::rematModelPeak(ModuleOp module) {
  int64_t peak = 0;
  module.walk([&](func::FuncOp fn) {
    if (std::optional<tcc::RematSummary> remat = tcc::readRematSummary(fn))
      peak = std::max(peak, remat->peakAfter);
  });
  return peak;
}

void tcc::printMemoryReport(ModuleOp module, ArrayRef<PlannedEntry> plans,
                            ArrayRef<PlannedEntry> without, llvm::raw_ostream &os,
                            StringRef chip) {
  MemoryFootprint total = memoryFootprint(module, plans, chip);
  os << "memory: " << human(total.total()) << " (arena " << human(total.arena) << ", state "
     << human(total.state);
  if (total.workspace)
    os << ", library workspace " << human(total.workspace);
  os << ")";
  if (!without.empty()) {
    MemoryFootprint before = memoryFootprint(module, without, chip);
    os << "; " << human(before.total()) << " without recomputation";
  }
  os << "\n";
  for (const PlannedEntry &e : plans) {
    struct Row {
      std::string what;
      int64_t offset, size;
    };
    std::vector<Row> rows;
    int64_t inputs = 0, outputs = 0, temps = 0, params = 0, state = 0;
    for (const PlannedTensor &t : e.tensors) {
      if (t.role == TCC_ROLE_INPUT)
        inputs += t.size;
      if (t.role == TCC_ROLE_OUTPUT)
        outputs += t.size;
      if (t.role == TCC_ROLE_PARAM)
        params += t.size;
      if (t.role == TCC_ROLE_STATE)
        state += t.size;
      rows.push_back({std::string(roleWord(t.role)) + " " + t.name +
                          (t.role == TCC_ROLE_PARAM ? " (state)" : ""),
                      t.offset, t.size});
    }
    for (auto [index, temp] : llvm::enumerate(e.temps)) {
      temps += temp.size;
      rows.push_back({"intermediate #" + std::to_string(index) + " '" + temp.node + "' (ops " +
                          std::to_string(temp.firstOp) + ".." + std::to_string(temp.lastOp) + ")",
                      temp.offset, temp.size});
    }
    llvm::stable_sort(rows, [](const Row &x, const Row &y) { return x.size > y.size; });
    auto fn = module.lookupSymbol<func::FuncOp>(e.function);
    os << "memory plan of @" << e.function << ":\n"
       << "  arena " << human(e.arenaSize) << " (inputs " << human(inputs) << ", outputs "
       << human(outputs) << ", intermediates " << human(temps) << " before reuse)\n"
       << "  state " << human(e.stateSize) << " (parameters " << human(params)
       << ", optimizer state and accumulators " << human(state) << ")\n";
    if (!chip.empty() && fn)
      printWorkspace(fn, os, chip);
    printLiveAtPeak(e, os, 8, "  ");
    for (const PlannedEntry &w : without)
      if (w.function == e.function && w.arenaSize != e.arenaSize)
        os << "  without recomputation: arena " << human(w.arenaSize) << ", peak "
           << human(peakOf(w).second) << "\n";
    printRemat(fn, os);
    os << "  largest buffers:\n";
    for (size_t i = 0; i < rows.size() && i < 10; ++i)
      os << "    " << llvm::right_justify(human(rows[i].size), 10) << "  at "
         << llvm::right_justify(std::to_string(rows[i].offset), 8) << "  " << rows[i].what << "\n";
  }
}

namespace {

const tcc::PlannedEntry *largestArena(ArrayRef<tcc::PlannedEntry> plans) {
  const tcc::PlannedEntry *largest = nullptr;
  for (const tcc::PlannedEntry &e : plans)
    if (!largest || e.arenaSize > largest->arenaSize)
      largest = &e;
  return largest;
}

} // namespace

bool tcc::writeMemoryPlot(StringRef path, ArrayRef<PlannedEntry> plans,
                          ArrayRef<PlannedEntry> without, int64_t budget, int64_t state,
                          std::string &message) {
  const PlannedEntry *with = largestArena(plans), *before = largestArena(without);
  if (!with) {
    message = "no memory plan to draw";
    return false;
  }
  std::vector<int64_t> after = liveBytes(*with), plain;
  if (before)
    plain = liveBytes(*before);
  // State + live arena bytes: what the process holds at each op.
  int64_t top = std::max<int64_t>(budget, 1);
  for (const std::vector<int64_t> *series : {&after, &plain})
    for (int64_t v : *series)
      top = std::max(top, v + state);
  const int64_t width = 900, height = 420, left = 80, right = 20, bottom = 50, upper = 40;
  const int64_t plotW = width - left - right, plotH = height - upper - bottom;
  auto y = [&](double bytes) {
    return int64_t(std::lround(double(upper) + double(plotH) * (1.0 - bytes / double(top))));
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << left << "\" y=\"22\" font-size=\"15\">Memory over the step of @"
     << with->function << " (state + live arena bytes)</text>\n";
  // Axes and a tick per fifth of the range.
  os << "<line x1=\"" << left << "\" y1=\"" << upper << "\" x2=\"" << left << "\" y2=\""
     << upper + plotH << "\" stroke=\"black\"/>\n<line x1=\"" << left << "\" y1=\"" << upper + plotH
     << "\" x2=\"" << left + plotW << "\" y2=\"" << upper + plotH << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    double bytes = double(top) * i / 5;
    os << "<text x=\"" << left - 6 << "\" y=\"" << y(bytes) + 4 << "\" text-anchor=\"end\">"
       << human(int64_t(bytes)) << "</text>\n<line x1=\"" << left << "\" y1=\"" << y(bytes)
       << "\" x2=\"" << left + plotW << "\" y2=\"" << y(bytes) << "\" stroke=\"#ddd\"/>\n";
  }
  os << "<text x=\"" << left + plotW / 2 << "\" y=\"" << height - 15
     << "\" text-anchor=\"middle\">schedule (ops in order; each plan scaled to the width)</text>\n";
  auto polyline = [&](const std::vector<int64_t> &series, StringRef color, StringRef label,
                      int row) {
    if (series.empty())
      return;
    os << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"";
    // Both coordinates as doubles: "%.1f" of an integer read garbage (every
    // point landed above the plot area).
    for (size_t i = 0; i < series.size(); ++i)
      os << llvm::format("%.1f,%.1f ",
                         double(left) + double(plotW) * double(i) /
                                            double(std::max<size_t>(series.size() - 1, 1)),
                         double(y(double(series[i] + state))));
    os << "\"/>\n<text x=\"" << left + plotW - 10 << "\" y=\"" << upper + 16 * row
       << "\" text-anchor=\"end\" fill=\"" << color << "\">" << label << "</text>\n";
  };
  int64_t peakPlain = plain.empty() ? 0 : *std::max_element(plain.begin(), plain.end());
  int64_t peakAfter = *std::max_element(after.begin(), after.end());
  if (!plain.empty())
    polyline(plain, "#c0392b", "without recomputation: peak " + human(peakPlain + state), 1);
  polyline(after, "#2471a3",
           (plain.empty() ? "peak " : "with recomputation: peak ") + human(peakAfter + state), 2);
  if (budget > 0)
    os << "<line x1=\"" << left << "\" y1=\"" << y(double(budget)) << "\" x2=\"" << left + plotW
       << "\" y2=\"" << y(double(budget)) << "\" stroke=\"#27ae60\" stroke-dasharray=\"6,4\"/>\n"
       << "<text x=\"" << left + 6 << "\" y=\"" << y(double(budget)) - 5 << "\" fill=\"#27ae60\">budget "
       << human(budget) << "</text>\n";
  os << "</svg>\n";
  std::error_code ec;
  llvm::raw_fd_ostream file(path, ec);
  if (ec) {
    message = path.str() + ": " + ec.message();
    return false;
  }
  file << text;
  return true;
}
