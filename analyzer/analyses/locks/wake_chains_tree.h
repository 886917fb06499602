// The longest waits' wake chains as one indented tree, each wait once.
//
// The chains of the longest waits share links: the waker of one long wait
// had itself waited, and that wait is often among the longest too, or the
// link of another chain. Printed chain by chain, the same waits come back
// again and again. Here each wait is one node: a chain starts a tree (its
// number is its rank) unless its first wait is already a node (that node
// then says "also the Nth longest"), and a chain that reaches a wait
// already shown ends in a reference to it instead of repeating it.
//
//   std::vector<WakeTreeNode> tree = wakeChainTree(chains);
//   for (const WakeTreeNode& n : tree) {
//     indent(n.depth);
//     if (n.see != 0) print("as in chain", n.see); else print(n.link.wait, n.link.waker_tid);
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyzer/analyses/locks/wake_chains.h"

namespace incise::analyzer {

struct WakeTreeNode {
  const WakeLink* link = nullptr;  // into the chains given
  size_t depth = 0;                // 0: a chain's first wait; k: its k-th link after that
  size_t chain = 0;                // the chain (1-based) whose walk placed this node
  std::vector<size_t> ranks;       // 1-based ranks among the longest waits of this wait
  // A reference, not a wait: the chain goes on as from the node of this
  // wait, shown earlier in chain `see` (1-based); `link` is that wait.
  size_t see = 0;
};

// In the order to print; `chains` must outlive the result.
std::vector<WakeTreeNode> wakeChainTree(const std::vector<WakeChain>& chains);

}  // namespace incise::analyzer
