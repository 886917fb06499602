#include "analyzer/archive/trace_id.h"

#include <xxhash.h>

#include <cstdio>
#include <fstream>
#include <vector>

namespace incise::analyzer {

struct TraceIdHasher::State {
  XXH3_state_t* xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

TraceIdHasher::TraceIdHasher() : state_(std::make_unique<State>()) {
  XXH3_64bits_reset(state_->xxh);
}

TraceIdHasher::~TraceIdHasher() = default;

void TraceIdHasher::update(const void* data, size_t size) {
  XXH3_64bits_update(state_->xxh, data, size);
}

std::string TraceIdHasher::hex() const {
  char id[17];
  std::snprintf(id, sizeof id, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits_digest(state_->xxh)));
  return id;
}

Result<std::string> traceIdOfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error("cannot open " + path);
  TraceIdHasher hasher;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Error("cannot read " + path);
  return hasher.hex();
}

}  // namespace incise::analyzer
