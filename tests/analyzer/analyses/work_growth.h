// How a count of work steps grows with the input: the non-timing check that
// an analysis stays linear (or n log n) whatever the lock pattern.
//
//   // n log n: 4x the waits take ~5x the steps; a quadratic scan would take 16x.
//   expectWorkGrowth("wait_work", workFor, /*n=*/4000, /*times=*/4, /*most_growth=*/6,
//                    /*most_work_at_n=*/4000 * 100);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

namespace incise::analyzer {

// work_of(times x n) stays under most_growth x work_of(n), and work_of(n)
// under most_work_at_n. Both figures go into the test's XML as `what`.
inline void expectWorkGrowth(const std::string& what,
                             const std::function<uint64_t(uint64_t)>& work_of, uint64_t n,
                             uint64_t times, uint64_t most_growth, uint64_t most_work_at_n) {
  uint64_t small = work_of(n);
  uint64_t large = work_of(times * n);
  testing::Test::RecordProperty(what, std::to_string(small) + " -> " + std::to_string(large));
  EXPECT_LT(large, most_growth * small) << what << ": " << small << " -> " << large;
  EXPECT_LT(small, most_work_at_n) << what << " at " << n;
}

}  // namespace incise::analyzer
