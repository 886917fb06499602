// The programs of a loaded BPF object with the kernel's information on each
// (bpf_prog_info: run counts and times, JIT image addresses), skipping those
// not loaded (the other variant of a hook) and those the kernel will not
// describe.
//
//   forEachLoadedProgram(object, [](const bpf_program* program, int fd, const bpf_prog_info& info)
//   {
//     std::printf("%s: %llu runs\n", bpf_program__name(program), info.run_cnt);
//   });
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

namespace incise::recorder {

template <typename Visit>
void forEachLoadedProgram(const bpf_object* object, Visit&& visit) {
  if (!object) return;
  bpf_program* program = nullptr;
  bpf_object__for_each_program(program, object) {
    int fd = bpf_program__fd(program);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) continue;
    visit(static_cast<const bpf_program*>(program), fd, info);
  }
}

}  // namespace incise::recorder
