//===- consumer.cpp - an application on the installed SDK, through tcc.hpp ===//
//
// Runs the runtime's fixture artifact (y = x + b) with parameters it sets
// itself, round-trips them through a checkpoint, and shows that a failing
// call surfaces as tcc::Error with the runtime's status and message.
//
//===----------------------------------------------------------------------===//

#include <tcc/tcc.hpp>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: consumer-cpp ARTIFACT.so CHECKPOINT\n");
    return 2;
  }
  try {
    tcc::Artifact artifact(argv[1]);
    tcc_session_options options = tcc::sessionOptions();
    options.skip_default_params = 1;
    tcc::Session session(artifact, options);
    const float b[] = {10, 20, 30};
    session.setParam<float>("b", b, {3});
    session.saveCheckpoint(argv[2], {{"step", "7"}});
    session.setParam<float>("b", tcc::Span<float>(b, 3), {3}); // unchanged value
    session.loadCheckpoint(argv[2]);
    std::vector<float> x = {1, 2, 3, 4, 5, 6.5f};
    session.setInput("x", x, {2, 3});
    session.run("infer");
    std::printf("y:");
    for (float v : session.output<float>("y"))
      std::printf(" %g", double(v));
    std::printf("\nstep %s\n", tcc::checkpointMetadata(argv[2], "step").value_or("?").c_str());
    try {
      session.setInput("x", x, {3, 2});
    } catch (const tcc::Error &e) {
      std::printf("error %s: %s\n", tcc_status_string(e.status()), e.what());
    }
  } catch (const tcc::Error &e) {
    std::fprintf(stderr, "consumer-cpp: %s\n", e.what());
    return 1;
  }
  return 0;
}
