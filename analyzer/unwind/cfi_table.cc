// CfiTable: see cfi_table.h.
#include "analyzer/unwind/cfi_table.h"

#include <dwarf.h>
#include <elf.h>

#include <cstring>
#include <mutex>

namespace incise::analyzer {
namespace {

template <typename T>
void put(std::string& image, size_t at, const T& value) {
  std::memcpy(image.data() + at, &value, sizeof(value));
}

void initLibelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

RegisterRule registerRule(Dwarf_Frame* frame, int regno) {
  Dwarf_Op ops_mem[3];
  Dwarf_Op* ops = nullptr;
  size_t nops = 0;
  RegisterRule rule;
  if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0) return rule;  // undefined
  if (nops == 0) {
    rule.kind = ops == nullptr ? RegisterRule::kSameValue : RegisterRule::kUndefined;
    return rule;
  }
  rule.kind = RegisterRule::kExpression;
  rule.ops.assign(ops, ops + nops);
  return rule;
}

}  // namespace

SimpleCfa simpleCfa(std::span<const Dwarf_Op> ops) {
  SimpleCfa simple;
  if (ops.size() != 1) return simple;
  const Dwarf_Op& op = ops[0];
  if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31) {
    simple.regno = op.atom - DW_OP_breg0;
    simple.offset = op.number;
  } else if (op.atom == DW_OP_bregx && op.number <= 127) {
    simple.regno = static_cast<int>(op.number);
    simple.offset = op.number2;
  }
  return simple;
}

SimpleLocation simpleLocation(std::span<const Dwarf_Op> ops) {
  SimpleLocation simple;
  if (ops.empty() || ops[0].atom != DW_OP_call_frame_cfa) return simple;
  size_t next = 1;
  uint64_t offset = 0;
  if (next < ops.size() && ops[next].atom == DW_OP_plus_uconst) offset = ops[next++].number;
  bool value = next < ops.size() && ops[next].atom == DW_OP_stack_value;
  if (value) ++next;
  if (next != ops.size()) return simple;
  simple.kind = value ? SimpleLocation::kIsCfaPlus : SimpleLocation::kSavedAtCfaPlus;
  simple.offset = offset;
  return simple;
}

std::string buildEhFrameElf(const format::ObjectSymbols& object) {
  // Layout: Ehdr | .eh_frame_hdr | .eh_frame | .shstrtab | (align 8) Shdr[4].
  // The header section comes first: libdw stops at .eh_frame.
  static constexpr char kNames[] = "\0.eh_frame_hdr\0.eh_frame\0.shstrtab";
  constexpr uint32_t kHdrName = 1, kFrameName = 15, kStrName = 25;
  size_t hdr_at = sizeof(Elf64_Ehdr);
  size_t frame_at = hdr_at + object.eh_frame_hdr.size();
  size_t names_at = frame_at + object.eh_frame.size();
  size_t shdrs_at = (names_at + sizeof(kNames) + 7) & ~size_t{7};
  std::string image(shdrs_at + 4 * sizeof(Elf64_Shdr), '\0');

  Elf64_Ehdr ehdr{};
  std::memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
  ehdr.e_ident[EI_CLASS] = ELFCLASS64;
  ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
  ehdr.e_ident[EI_VERSION] = EV_CURRENT;
  ehdr.e_type = object.elf_type != 0 ? object.elf_type : ET_DYN;
  ehdr.e_machine = EM_X86_64;
  ehdr.e_version = EV_CURRENT;
  ehdr.e_shoff = shdrs_at;
  ehdr.e_ehsize = sizeof(Elf64_Ehdr);
  ehdr.e_shentsize = sizeof(Elf64_Shdr);
  ehdr.e_shnum = 4;
  ehdr.e_shstrndx = 3;
  put(image, 0, ehdr);
  std::memcpy(image.data() + hdr_at, object.eh_frame_hdr.data(), object.eh_frame_hdr.size());
  std::memcpy(image.data() + frame_at, object.eh_frame.data(), object.eh_frame.size());
  std::memcpy(image.data() + names_at, kNames, sizeof(kNames));

  auto section = [](uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, size_t offset,
                    size_t size, uint64_t align) {
    Elf64_Shdr s{};
    s.sh_name = name;
    s.sh_type = type;
    s.sh_flags = flags;
    s.sh_addr = addr;
    s.sh_offset = offset;
    s.sh_size = size;
    s.sh_addralign = align;
    return s;
  };
  // An empty .eh_frame_hdr is left out of the search by giving it no data:
  // libdw then scans .eh_frame linearly.
  put(image, shdrs_at + 1 * sizeof(Elf64_Shdr),
      section(kHdrName, object.eh_frame_hdr.empty() ? SHT_NULL : SHT_PROGBITS, SHF_ALLOC,
              object.eh_frame_hdr_vaddr, hdr_at, object.eh_frame_hdr.size(), 4));
  put(image, shdrs_at + 2 * sizeof(Elf64_Shdr),
      section(kFrameName, SHT_PROGBITS, SHF_ALLOC, object.eh_frame_vaddr, frame_at,
              object.eh_frame.size(), 8));
  put(image, shdrs_at + 3 * sizeof(Elf64_Shdr),
      section(kStrName, SHT_STRTAB, 0, 0, names_at, sizeof(kNames), 1));
  return image;
}

Result<std::unique_ptr<CfiTable>> CfiTable::create(const format::ObjectSymbols& object) {
  if (object.eh_frame.empty()) return Error(object.path + ": no .eh_frame in the trace");
  initLibelf();
  std::unique_ptr<CfiTable> table(new CfiTable());
  table->image_ = buildEhFrameElf(object);
  table->elf_ = elf_memory(table->image_.data(), table->image_.size());
  if (table->elf_ == nullptr)
    return Error(object.path + ": in-memory ELF for .eh_frame: " + elf_errmsg(-1));
  table->cfi_ = dwarf_getcfi_elf(table->elf_);
  if (table->cfi_ == nullptr)
    return Error(object.path + ": libdw rejects the .eh_frame: " + dwarf_errmsg(-1));
  return table;
}

CfiTable::~CfiTable() {
  if (cfi_ != nullptr) dwarf_cfi_end(cfi_);
  if (elf_ != nullptr) elf_end(elf_);
}

const CfiRule* CfiTable::tryLookup(uint64_t vaddr) {
  auto [it, inserted] = cache_.try_emplace(vaddr);
  Entry& entry = it->second;
  if (!inserted) {
    ++cache_hits_;
    return entry.has_rule ? &entry.rule : nullptr;
  }
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi_, vaddr, &frame) != 0 || frame == nullptr) return nullptr;
  Dwarf_Op* cfa_ops = nullptr;
  size_t cfa_nops = 0;
  Dwarf_Addr start = 0, end = 0;
  bool signal = false;
  int ra_regno = dwarf_frame_info(frame, &start, &end, &signal);
  if (dwarf_frame_cfa(frame, &cfa_ops, &cfa_nops) == 0 && cfa_nops > 0 && ra_regno >= 0) {
    entry.rule.cfa.assign(cfa_ops, cfa_ops + cfa_nops);
    entry.rule.return_address = registerRule(frame, ra_regno);
    entry.rule.rbp = registerRule(frame, 6);
    entry.rule.signal_frame = signal;
    entry.rule.simple_cfa = simpleCfa(entry.rule.cfa);
    if (entry.rule.return_address.kind == RegisterRule::kExpression)
      entry.rule.simple_return_address = simpleLocation(entry.rule.return_address.ops);
    if (entry.rule.rbp.kind == RegisterRule::kExpression)
      entry.rule.simple_rbp = simpleLocation(entry.rule.rbp.ops);
    entry.has_rule = true;
  }
  free(frame);
  return entry.has_rule ? &entry.rule : nullptr;
}

}  // namespace incise::analyzer
