#include "analyzer/analyses/locks/wake_chains_tree.h"

#include <map>
#include <tuple>

namespace incise::analyzer {
namespace {

using WaitKey = std::tuple<LockId, uint64_t, uint64_t, uint64_t>;  // lock, tid, start, end

WaitKey keyOf(const LockWait& w) {
  return {w.lock, w.tid, w.start, w.end};
}

}  // namespace

std::vector<WakeTreeNode> wakeChainTree(const std::vector<WakeChain>& chains) {
  std::vector<WakeTreeNode> nodes;
  std::map<WaitKey, size_t> node_of;  // a wait shown -> its node
  for (size_t c = 0; c < chains.size(); ++c) {
    const std::vector<WakeLink>& links = chains[c].links;
    if (links.empty()) continue;
    auto first = node_of.find(keyOf(links.front().wait));
    if (first != node_of.end()) {  // shown already, inside an earlier chain
      nodes[first->second].ranks.push_back(c + 1);
      continue;
    }
    for (size_t depth = 0; depth < links.size(); ++depth) {
      const WakeLink& link = links[depth];
      auto shown = node_of.find(keyOf(link.wait));
      if (shown != node_of.end()) {
        nodes.push_back(
            {.link = &link, .depth = depth, .chain = c + 1, .see = nodes[shown->second].chain});
        break;
      }
      node_of.emplace(keyOf(link.wait), nodes.size());
      nodes.push_back({.link = &link, .depth = depth, .chain = c + 1});
      if (depth == 0) nodes.back().ranks.push_back(c + 1);
    }
  }
  return nodes;
}

}  // namespace incise::analyzer
