// DenseIdIndex: each distinct key gets the next id once, later lookups find
// it again, across growth and with colliding hashes.
#include "analyzer/symbolize/dense_id_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace incise::analyzer {
namespace {

struct Keys {
  std::vector<std::string> keys;
  DenseIdIndex index;
  std::pair<uint32_t, bool> add(const std::string& key, uint64_t hash) {
    auto found = index.findOrInsert(hash, static_cast<uint32_t>(keys.size()),
                                    [&](uint32_t id) { return keys[id] == key; });
    if (found.second) keys.push_back(key);
    return found;
  }
};

TEST(DenseIdIndexTest, NumbersDistinctKeysDenselyAndFindsThemAfterGrowth) {
  Keys k;
  for (uint32_t i = 0; i < 5000; ++i) {
    auto [id, inserted] =
        k.add("k" + std::to_string(i), std::hash<std::string>()("k" + std::to_string(i)));
    EXPECT_TRUE(inserted);
    EXPECT_EQ(id, i);
  }
  for (uint32_t i = 0; i < 5000; i += 7) {
    auto [id, inserted] =
        k.add("k" + std::to_string(i), std::hash<std::string>()("k" + std::to_string(i)));
    EXPECT_FALSE(inserted);
    EXPECT_EQ(id, i);
  }
  EXPECT_EQ(k.index.size(), 5000u);
}

TEST(DenseIdIndexTest, EqualHashesAreToldApartByTheCallersComparison) {
  Keys k;
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(k.add("same-hash-" + std::to_string(i), 42).second);
  for (int i = 0; i < 200; ++i) {
    auto [id, inserted] = k.add("same-hash-" + std::to_string(i), 42);
    EXPECT_FALSE(inserted);
    EXPECT_EQ(k.keys[id], "same-hash-" + std::to_string(i));
  }
  EXPECT_EQ(k.index.size(), 200u);
}

}  // namespace
}  // namespace incise::analyzer
