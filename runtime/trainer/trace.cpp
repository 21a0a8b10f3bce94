//===- trace.cpp - a Chrome / Perfetto trace of a training run ------------===//

#include "runtime/trainer/trace.h"
#include "runtime/trainer/outputs.h"

#include "runtime/support/file_io.h"

#include <algorithm>
#include <cstdio>

namespace tcc::train {
namespace {

/// NAME as a JSON string's body (the names are ours or ONNX node names).
std::string escaped(const std::string &name) {
  std::string out;
  for (char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", c);
      out += code;
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace

void TraceWriter::open(const std::string &path) {
  checkWritableFile(path, "--trace");
  path_ = path;
  start_ = std::chrono::steady_clock::now();
}

void TraceWriter::span(Track track, const std::string &name, double start, double end,
                       const std::string &args) {
  char times[96];
  std::snprintf(times, sizeof times, "\"ts\": %.3f, \"dur\": %.3f", start,
                end > start ? end - start : 0.0);
  std::string event = "{\"name\": \"" + escaped(name) + "\", \"ph\": \"X\", \"pid\": 1, \"tid\": " +
                      std::to_string(int(track)) + ", " + times;
  if (!args.empty())
    event += ", \"args\": {" + args + "}";
  event += "}";
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
  int data = int(track) - int(Track::Data);
  if (data >= 10 && data % 10 == 0)
    workers_ = std::max(workers_, data / 10);
}

void TraceWriter::finish() {
  if (!active())
    return;
  // Metadata events name the process and the tracks.
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
                     "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
                     "{\"name\": \"tcc training\"}}";
  const std::pair<Track, const char *> tracks[] = {{Track::Steps, "steps"},
                                                   {Track::Data, "data loading"},
                                                   {Track::Evaluation, "evaluation"},
                                                   {Track::Checkpoints, "checkpoint writes"},
                                                   {Track::Kernels, "kernels"}};
  for (const auto &[track, name] : tracks)
    json += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " +
            std::to_string(int(track)) + ", \"args\": {\"name\": \"" + name + "\"}}";
  // The tracks of further data workers.
  for (int w = 1; w <= workers_; ++w)
    json += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " +
            std::to_string(int(dataTrack(w))) + ", \"args\": {\"name\": \"data loading " +
            std::to_string(w + 1) + "\"}}";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string &event : events_)
      json += ",\n" + event;
  }
  json += "\n]}\n";
  // Inactive from here, written or not: a failure is reported once (the
  // run's destructor finishes the trace again).
  std::string path = std::move(path_);
  path_.clear();
  std::string error;
  if (!tcc::rt::writeFileAtomic(path, {{json.data(), json.size()}}, /*durable=*/false, &error))
    die("--trace " + error);
}

} // namespace tcc::train
