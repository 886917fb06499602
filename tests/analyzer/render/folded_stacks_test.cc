#include "analyzer/render/folded_stacks.h"

#include <gtest/gtest.h>

#include <sstream>

namespace incise::analyzer {
namespace {

TEST(FoldedStacksTest, MergesPathsAndSortsLines) {
  FoldedStacks folded;
  folded.add({"main", "work", "leaf"}, 3);
  folded.add({"main", "idle"}, 1);
  folded.add({"main", "work", "leaf"}, 2);
  folded.add({"main"}, 0);  // zero weight: ignored
  folded.add({}, 5);        // no frames: ignored
  std::ostringstream out;
  folded.write(out);
  EXPECT_EQ(out.str(), "main;idle 1\nmain;work;leaf 5\n");
  EXPECT_EQ(folded.total(), 6u);
}

TEST(FoldedStacksTest, ARootFrameGoesAboveThePathsRoot) {
  NameTable names;
  const std::vector<NameId> path = {names.intern("main"), names.intern("work")};
  FoldedStacks folded;
  folded.add(path, names, 2, "req=7");
  folded.add(path, names, 1, "req;8");  // cleaned like any frame
  folded.add(path, names, 4);
  std::ostringstream out;
  folded.write(out);
  EXPECT_EQ(out.str(), "main;work 4\nreq:8;main;work 1\nreq=7;main;work 2\n");
}

TEST(FoldedStacksTest, CleansSeparatorsInFrameNames) {
  FoldedStacks folded;
  folded.add({"a;b", "line\nbreak", ""}, 1);
  std::ostringstream out;
  folded.write(out);
  EXPECT_EQ(out.str(), "a:b;line break;[unknown] 1\n");
}

TEST(FoldedStacksTest, SplitIsTheInverseOfJoin) {
  EXPECT_EQ(FoldedStacks::split("a;b;c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(FoldedStacks::split("a"), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace incise::analyzer
