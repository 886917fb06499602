// Replays every committed fuzz input (seed corpus and regressions) through
// the same entry the fuzzer ran, in the normal build and under ASan+UBSan
// in CI: a crasher that comes back fails here, named by its file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_entries.h"

namespace incise::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = INCISE_FUZZ_DIR;

std::vector<fs::path> inputsOf(std::string_view entry) {
  std::vector<fs::path> files;
  for (const char* folder : {"corpus", "regressions"}) {
    fs::path dir = kFuzzDir / folder / std::string(entry);
    if (!fs::is_directory(dir)) continue;
    for (const auto& item : fs::directory_iterator(dir)) {
      if (item.is_regular_file()) files.push_back(item.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FuzzRegression : public ::testing::TestWithParam<FuzzEntry> {};

TEST_P(FuzzRegression, EveryCommittedInputRunsCleanly) {
  const FuzzEntry& entry = GetParam();
  std::vector<fs::path> files = inputsOf(entry.name);
  // Each target ships a seed corpus; an empty folder means a broken checkout.
  ASSERT_FALSE(files.empty()) << "no inputs under " << kFuzzDir << "/*/" << entry.name;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::string bytes = readBytes(file);
    EXPECT_EQ(entry.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Entries, FuzzRegression,
                         ::testing::ValuesIn(fuzzEntries().begin(), fuzzEntries().end()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FixBlockChecksums, MakesAMutatedBlockVerifyAgain) {
  // Seeds are "mode byte + trace"; a seed trace must open cleanly both ways.
  std::vector<fs::path> seeds = inputsOf("trace_reader");
  ASSERT_FALSE(seeds.empty());
  std::string file = readBytes(seeds.front()).substr(1);
  std::string copy = file;
  EXPECT_GT(fixBlockChecksums(copy), 1u);
  EXPECT_EQ(copy, file) << "a valid trace's checksums are already right";
  copy[copy.size() / 2] ^= 0x40;
  std::string fixed = copy;
  fixBlockChecksums(fixed);
  EXPECT_NE(fixed, copy);
}

}  // namespace
}  // namespace incise::fuzz
