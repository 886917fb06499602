// libbpfOptions<T>(): a libbpf options struct (bpf_uprobe_opts,
// bpf_map_create_opts, ...) zeroed with its size set, what LIBBPF_OPTS
// declares in C. That macro is a GNU statement expression around a compound
// literal, which clang rejects under -Wpedantic in C++.
//
//   auto opts = libbpfOptions<bpf_uprobe_opts>();
//   opts.bpf_cookie = cookie;
//   bpf_program__attach_uprobe_opts(program, pid, path, offset, &opts);
#pragma once

#include <cstring>

namespace incise::recorder {

template <typename Options>
Options libbpfOptions() {
  Options options;
  // Every byte, padding included: libbpf refuses options whose bytes past
  // the fields it knows are not zero.
  std::memset(&options, 0, sizeof(options));
  options.sz = sizeof(options);
  return options;
}

}  // namespace incise::recorder
