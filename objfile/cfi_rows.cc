// CfiRows: see cfi_rows.h. The encodings are the LSB's .eh_frame (CIE and
// FDE records, DW_EH_PE pointer encodings) and DWARF 4's call-frame
// instructions (section 6.4.2) and expression opcodes.
#include "objfile/cfi_rows.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace incise::objfile {
namespace {

// x86-64 DWARF register numbers.
constexpr uint64_t kRbp = 6;
constexpr uint64_t kRsp = 7;
constexpr uint64_t kRip = 16;

// A program's remember_state stack deeper than this is malformed.
constexpr size_t kMaxRememberedStates = 64;

// Reads little-endian values and LEB128 numbers inside [begin, end); any read
// past the end sets failed() and returns 0 from then on.
class Cursor {
 public:
  Cursor(const uint8_t* begin, const uint8_t* end) : at_(begin), end_(end) {}

  bool failed() const { return failed_; }
  bool atEnd() const { return failed_ || at_ >= end_; }
  const uint8_t* position() const { return at_; }
  size_t left() const { return failed_ ? 0 : static_cast<size_t>(end_ - at_); }

  template <typename T>
  T fixed() {
    if (left() < sizeof(T)) return fail<T>();
    T value;
    std::memcpy(&value, at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  uint8_t u8() { return fixed<uint8_t>(); }

  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (left() == 0) return fail<uint64_t>();
      uint8_t byte = *at_++;
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return fail<uint64_t>();  // more than 10 bytes
  }
  int64_t sleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (left() == 0) return fail<int64_t>();
      uint8_t byte = *at_++;
      value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        if (shift + 7 < 64 && (byte & 0x40)) value |= ~uint64_t{0} << (shift + 7);
        return static_cast<int64_t>(value);
      }
    }
    return fail<int64_t>();
  }
  // A NUL-terminated string.
  std::string_view cstring() {
    const void* nul = left() > 0 ? std::memchr(at_, 0, left()) : nullptr;
    if (nul == nullptr) return fail<std::string_view>();
    std::string_view text(reinterpret_cast<const char*>(at_),
                          static_cast<size_t>(static_cast<const uint8_t*>(nul) - at_));
    at_ += text.size() + 1;
    return text;
  }
  std::string_view bytes(uint64_t count) {
    if (count > left()) return fail<std::string_view>();
    std::string_view out(reinterpret_cast<const char*>(at_), count);
    at_ += count;
    return out;
  }
  void skip(uint64_t count) { (void)bytes(count); }

  // A DW_EH_PE-encoded pointer; `field_vaddr` is where this field is mapped
  // (for pc-relative values). Encodings other than absolute and pc-relative
  // (text-, data-, function-relative, aligned, indirect) fail: .eh_frame
  // records of x86-64 objects use pcrel|sdata4.
  uint64_t pointer(uint8_t encoding, uint64_t field_vaddr) {
    if (encoding == 0xff) return fail<uint64_t>();  // DW_EH_PE_omit
    uint64_t value = 0;
    switch (encoding & 0x0f) {
      case 0x00:
        value = fixed<uint64_t>();
        break;  // absptr
      case 0x01:
        value = uleb();
        break;  // uleb128
      case 0x02:
        value = fixed<uint16_t>();
        break;  // udata2
      case 0x03:
        value = fixed<uint32_t>();
        break;  // udata4
      case 0x04:
        value = fixed<uint64_t>();
        break;  // udata8
      case 0x09:
        value = static_cast<uint64_t>(sleb());
        break;  // sleb128
      case 0x0a:
        value = static_cast<uint64_t>(fixed<int16_t>());
        break;  // sdata2
      case 0x0b:
        value = static_cast<uint64_t>(fixed<int32_t>());
        break;  // sdata4
      case 0x0c:
        value = fixed<uint64_t>();
        break;  // sdata8
      default:
        return fail<uint64_t>();
    }
    switch (encoding & 0x70) {
      case 0x00:
        break;
      case 0x10:
        value += field_vaddr;
        break;  // pcrel
      default:
        return fail<uint64_t>();
    }
    if (encoding & 0x80) return fail<uint64_t>();  // indirect: the value is elsewhere
    return value;
  }

 private:
  template <typename T>
  T fail() {
    failed_ = true;
    at_ = end_;
    return T{};
  }

  const uint8_t* at_;
  const uint8_t* end_;
  bool failed_ = false;
};

struct RegisterRule {
  enum Kind : uint8_t { kSame, kUndefined, kOffset, kExpression, kOther };
  Kind kind = kSame;
  int64_t offset = 0;           // kOffset: saved at CFA + offset
  std::string_view expression;  // kExpression: saved at the address it yields
};

struct FrameState {
  uint64_t cfa_register = kRsp;
  int64_t cfa_offset = 8;
  std::string_view cfa_expression;  // non-empty: the CFA is this expression's value
  RegisterRule rbp;
  RegisterRule ra;
};

struct Cie {
  uint64_t code_alignment = 1;
  int64_t data_alignment = -8;
  uint64_t return_register = kRip;
  uint8_t fde_encoding = 0;  // absptr
  bool has_augmentation_data = false;
  bool signal_frame = false;
  std::string_view instructions;
  FrameState initial;  // after the initial instructions (DW_CFA_restore's target)
};

// The single DW_OP_bregN operation of `expression`, with what follows it.
struct BaseRegister {
  uint64_t reg = 0;
  int64_t offset = 0;
  std::string_view rest;
};
std::optional<BaseRegister> leadingBaseRegister(std::string_view expression) {
  auto* begin = reinterpret_cast<const uint8_t*>(expression.data());
  Cursor ops(begin, begin + expression.size());
  uint8_t op = ops.u8();
  if (ops.failed() || op < 0x70 || op > 0x8f) return std::nullopt;  // DW_OP_breg0..31
  BaseRegister base{.reg = uint64_t{op} - 0x70u, .offset = ops.sleb()};
  if (ops.failed()) return std::nullopt;
  base.rest = expression.substr(static_cast<size_t>(ops.position() - begin));
  return base;
}

// The CFA expression binutils and lld emit for a whole .plt section
// (DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litN;
// DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus): rsp + 8, plus 8 once the
// entry has pushed its relocation index (rip & 15 >= N). Returns N.
std::optional<int64_t> pltThreshold(std::string_view expression) {
  static constexpr uint8_t kHead[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
  static constexpr uint8_t kTail[] = {0x2a, 0x33, 0x24, 0x22};
  constexpr size_t kLength = sizeof(kHead) + 1 + sizeof(kTail);
  if (expression.size() != kLength) return std::nullopt;
  auto* ops = reinterpret_cast<const uint8_t*>(expression.data());
  if (std::memcmp(ops, kHead, sizeof(kHead)) != 0) return std::nullopt;
  uint8_t literal = ops[sizeof(kHead)];
  if (literal < 0x30 || literal > 0x4f) return std::nullopt;  // DW_OP_lit0..31
  if (std::memcmp(ops + sizeof(kHead) + 1, kTail, sizeof(kTail)) != 0) return std::nullopt;
  return literal - 0x30;
}

CfiRow classify(const FrameState& state, bool signal_frame, uint64_t address) {
  CfiRow row{.address = address};
  if (signal_frame) {
    row.cfa = CfaRule::kSignalFrame;
    return row;
  }
  if (state.ra.kind == RegisterRule::kUndefined) {
    row.cfa = CfaRule::kOutermost;
    return row;
  }
  if (state.ra.kind != RegisterRule::kOffset || state.ra.offset != -8) {
    row.cfa = CfaRule::kUnsupported;
    return row;
  }
  if (state.cfa_expression.empty()) {
    row.cfa = state.cfa_register == kRsp   ? CfaRule::kRspOffset
              : state.cfa_register == kRbp ? CfaRule::kRbpOffset
                                           : CfaRule::kUnsupported;
    row.offset = state.cfa_offset;
  } else if (std::optional<int64_t> threshold = pltThreshold(state.cfa_expression)) {
    row.cfa = CfaRule::kPlt;
    row.offset = *threshold;
  } else if (std::optional<BaseRegister> base = leadingBaseRegister(state.cfa_expression);
             base && base->rest == std::string_view("\x06", 1) &&  // DW_OP_deref
             (base->reg == kRsp || base->reg == kRbp)) {
    row.cfa = base->reg == kRsp ? CfaRule::kDerefRsp : CfaRule::kDerefRbp;
    row.offset = base->offset;
  } else {
    row.cfa = CfaRule::kUnsupported;
  }
  if (row.cfa == CfaRule::kUnsupported) {
    row.offset = 0;
    return row;
  }
  switch (state.rbp.kind) {
    case RegisterRule::kSame:
    case RegisterRule::kUndefined:
      row.rbp = RbpRule::kUnchanged;
      break;
    case RegisterRule::kOffset:
      row.rbp = RbpRule::kAtCfa;
      row.rbp_offset = state.rbp.offset;
      break;
    case RegisterRule::kExpression:
      if (std::optional<BaseRegister> base = leadingBaseRegister(state.rbp.expression);
          base && base->rest.empty() && base->reg == kRbp) {
        row.rbp = RbpRule::kAtRbp;
        row.rbp_offset = base->offset;
      } else {
        row.rbp = RbpRule::kUnknown;
      }
      break;
    case RegisterRule::kOther:
      row.rbp = RbpRule::kUnknown;
      break;
  }
  return row;
}

// Runs one call-frame program. `rows` receives (address, state) pairs in
// program order; `cie` is null while running the CIE's own initial
// instructions. Returns false on a malformed program.
class FrameProgram {
 public:
  FrameProgram(const Cie& cie, uint64_t start, uint64_t eh_frame_vaddr,
               const uint8_t* section_begin)
      : cie_(cie),
        location_(start),
        eh_frame_vaddr_(eh_frame_vaddr),
        section_begin_(section_begin) {}

  template <typename OnRow>
  bool run(std::string_view program, FrameState& state, const FrameState& initial, OnRow&& on_row) {
    auto* begin = reinterpret_cast<const uint8_t*>(program.data());
    Cursor in(begin, begin + program.size());
    std::vector<FrameState> remembered;
    while (!in.atEnd()) {
      uint8_t op = in.u8();
      uint8_t low = op & 0x3f;
      switch (op & 0xc0) {
        case 0x40:  // DW_CFA_advance_loc
          advance(low, state, on_row);
          continue;
        case 0x80:  // DW_CFA_offset
          setRule(state, low,
                  RegisterRule{.kind = RegisterRule::kOffset, .offset = scaled(in.uleb())});
          continue;
        case 0xc0:  // DW_CFA_restore
          restore(state, initial, low);
          continue;
      }
      switch (op) {
        case 0x00:
          break;      // DW_CFA_nop
        case 0x01: {  // DW_CFA_set_loc
          uint64_t field = fieldVaddr(in);
          uint64_t target = in.pointer(cie_.fde_encoding, field);
          if (in.failed() || target < location_) return false;
          on_row(location_, state);
          location_ = target;
          break;
        }
        case 0x02:
          advance(in.u8(), state, on_row);
          break;
        case 0x03:
          advance(in.fixed<uint16_t>(), state, on_row);
          break;
        case 0x04:
          advance(in.fixed<uint32_t>(), state, on_row);
          break;
        case 0x05: {  // DW_CFA_offset_extended
          uint64_t reg = in.uleb();
          setRule(state, reg,
                  RegisterRule{.kind = RegisterRule::kOffset, .offset = scaled(in.uleb())});
          break;
        }
        case 0x06:
          restore(state, initial, in.uleb());
          break;    // DW_CFA_restore_extended
        case 0x07:  // DW_CFA_undefined
          setRule(state, in.uleb(), RegisterRule{.kind = RegisterRule::kUndefined});
          break;
        case 0x08:
          setRule(state, in.uleb(), RegisterRule{});
          break;      // DW_CFA_same_value
        case 0x09: {  // DW_CFA_register
          uint64_t reg = in.uleb();
          (void)in.uleb();
          setRule(state, reg, RegisterRule{.kind = RegisterRule::kOther});
          break;
        }
        case 0x0a:  // DW_CFA_remember_state
          if (remembered.size() >= kMaxRememberedStates) return false;
          remembered.push_back(state);
          break;
        case 0x0b:  // DW_CFA_restore_state: the CFA and register rules come back
          if (remembered.empty()) return false;
          state = remembered.back();
          remembered.pop_back();
          break;
        case 0x0c:  // DW_CFA_def_cfa
          state.cfa_register = in.uleb();
          state.cfa_offset = static_cast<int64_t>(in.uleb());
          state.cfa_expression = {};
          break;
        case 0x0d:  // DW_CFA_def_cfa_register
          state.cfa_register = in.uleb();
          state.cfa_expression = {};
          break;
        case 0x0e:
          state.cfa_offset = static_cast<int64_t>(in.uleb());
          break;    // def_cfa_offset
        case 0x0f:  // DW_CFA_def_cfa_expression
          state.cfa_expression = in.bytes(in.uleb());
          if (state.cfa_expression.empty()) return false;
          break;
        case 0x10: {  // DW_CFA_expression
          uint64_t reg = in.uleb();
          setRule(
              state, reg,
              RegisterRule{.kind = RegisterRule::kExpression, .expression = in.bytes(in.uleb())});
          break;
        }
        case 0x11: {  // DW_CFA_offset_extended_sf
          uint64_t reg = in.uleb();
          setRule(state, reg,
                  RegisterRule{.kind = RegisterRule::kOffset, .offset = scaledSigned(in.sleb())});
          break;
        }
        case 0x12:  // DW_CFA_def_cfa_sf
          state.cfa_register = in.uleb();
          state.cfa_offset = scaledSigned(in.sleb());
          state.cfa_expression = {};
          break;
        case 0x13:
          state.cfa_offset = scaledSigned(in.sleb());
          break;      // def_cfa_offset_sf
        case 0x14:    // DW_CFA_val_offset
        case 0x15: {  // DW_CFA_val_offset_sf
          uint64_t reg = in.uleb();
          if (op == 0x14)
            (void)in.uleb();
          else
            (void)in.sleb();
          setRule(state, reg, RegisterRule{.kind = RegisterRule::kOther});
          break;
        }
        case 0x16: {  // DW_CFA_val_expression
          uint64_t reg = in.uleb();
          in.skip(in.uleb());
          setRule(state, reg, RegisterRule{.kind = RegisterRule::kOther});
          break;
        }
        case 0x2e:
          (void)in.uleb();
          break;      // DW_CFA_GNU_args_size
        case 0x2f: {  // DW_CFA_GNU_negative_offset_extended
          uint64_t reg = in.uleb();
          setRule(state, reg,
                  RegisterRule{.kind = RegisterRule::kOffset, .offset = -scaled(in.uleb())});
          break;
        }
        default:
          return false;  // not an x86-64 opcode
      }
    }
    if (in.failed()) return false;
    on_row(location_, state);
    return true;
  }

 private:
  int64_t scaled(uint64_t factored) const {
    return static_cast<int64_t>(factored) * cie_.data_alignment;
  }
  int64_t scaledSigned(int64_t factored) const { return factored * cie_.data_alignment; }

  template <typename OnRow>
  void advance(uint64_t delta, const FrameState& state, OnRow& on_row) {
    on_row(location_, state);
    location_ += delta * cie_.code_alignment;
  }

  void setRule(FrameState& state, uint64_t reg, RegisterRule rule) const {
    if (reg == kRbp) state.rbp = rule;
    if (reg == cie_.return_register) state.ra = rule;
  }
  void restore(FrameState& state, const FrameState& initial, uint64_t reg) const {
    if (reg == kRbp) state.rbp = initial.rbp;
    if (reg == cie_.return_register) state.ra = initial.ra;
  }
  uint64_t fieldVaddr(const Cursor& in) const {
    return eh_frame_vaddr_ + static_cast<uint64_t>(in.position() - section_begin_);
  }

  const Cie& cie_;
  uint64_t location_;
  uint64_t eh_frame_vaddr_;
  const uint8_t* section_begin_;
};

class EhFrameReader {
 public:
  EhFrameReader(std::string_view section, uint64_t vaddr)
      : begin_(reinterpret_cast<const uint8_t*>(section.data())),
        end_(begin_ + section.size()),
        vaddr_(vaddr) {}

  CfiRows read() {
    CfiRows out;
    // Rows come to ~1 per 5 bytes of the section (libc, cc1plus, bash): one
    // allocation for an object of a million rows instead of twenty copies.
    out.rows.reserve(static_cast<size_t>(end_ - begin_) / 4);
    std::vector<Fde> fdes;
    Cursor records(begin_, end_);
    while (records.left() >= 4) {
      uint64_t length = records.fixed<uint32_t>();
      if (length == 0) break;  // the terminator
      if (length == 0xffffffff) length = records.fixed<uint64_t>();
      if (records.failed() || length > records.left() || length < 4) {
        ++out.stats.skipped_entries;
        break;  // the rest cannot be framed
      }
      const uint8_t* body = records.position();
      records.skip(length);
      Cursor entry(body, body + length);
      uint32_t id = entry.fixed<uint32_t>();
      if (id == 0) continue;  // a CIE, parsed when an FDE names it
      // The CIE pointer counts back from the id field itself to the CIE's start.
      const uint8_t* id_field = body;
      if (id > static_cast<uint64_t>(id_field - begin_)) {
        ++out.stats.skipped_entries;
        continue;
      }
      const Cie* cie = cieAt(id_field - id);
      std::optional<Fde> fde = cie ? readFde(*cie, entry) : std::nullopt;
      if (!fde) {
        ++out.stats.skipped_entries;
        continue;
      }
      fdes.push_back(*fde);
    }
    std::sort(fdes.begin(), fdes.end(),
              [](const Fde& a, const Fde& b) { return a.start < b.start; });
    for (size_t i = 0; i < fdes.size(); ++i) {
      const Fde& fde = fdes[i];
      // Overlapping FDEs (a linker bug or a crafted file): the later start wins.
      uint64_t end = fde.end;
      if (i + 1 < fdes.size()) end = std::min(end, fdes[i + 1].start);
      if (end <= fde.start) continue;
      if (!appendRows(fde, end, out)) {
        ++out.stats.skipped_entries;
        continue;
      }
      ++out.stats.fdes;
      if (i + 1 == fdes.size() || fdes[i + 1].start != end) append(out, CfiRow{.address = end});
    }
    return out;
  }

 private:
  struct Fde {
    const Cie* cie = nullptr;
    uint64_t start = 0, end = 0;
    std::string_view instructions;
  };

  const Cie* cieAt(const uint8_t* record) {
    auto found = cies_.find(record);
    if (found != cies_.end()) return found->second ? &*found->second : nullptr;
    std::optional<Cie> cie = readCie(record);
    auto& slot = cies_[record];
    slot = std::move(cie);
    return slot ? &*slot : nullptr;
  }

  // `record` points at the CIE's length field.
  std::optional<Cie> readCie(const uint8_t* record) {
    Cursor framing(record, end_);
    uint32_t length = framing.fixed<uint32_t>();
    if (framing.failed() || length == 0xffffffff || length < 4 || length > framing.left())
      return std::nullopt;
    Cursor in(framing.position(), framing.position() + length);
    if (in.fixed<uint32_t>() != 0) return std::nullopt;
    uint8_t version = in.u8();
    if (version != 1 && version != 3) return std::nullopt;
    std::string_view augmentation = in.cstring();
    if (augmentation.find("eh") != std::string_view::npos) return std::nullopt;  // pre-gcc-3
    Cie cie;
    cie.code_alignment = in.uleb();
    cie.data_alignment = in.sleb();
    cie.return_register = version == 1 ? in.u8() : in.uleb();
    if (!augmentation.empty()) {
      if (augmentation[0] != 'z') return std::nullopt;  // unknown augmentations cannot be skipped
      cie.has_augmentation_data = true;
      uint64_t data_length = in.uleb();
      if (in.failed() || data_length > in.left()) return std::nullopt;
      Cursor data(in.position(), in.position() + data_length);
      for (char c : augmentation.substr(1)) {
        switch (c) {
          case 'L':
            (void)data.u8();
            break;
          case 'P': {
            uint8_t encoding = data.u8();
            // Personality pointers may be indirect: only their size matters here.
            uint8_t size_class = encoding & 0x0f;
            if (size_class == 0x01 || size_class == 0x09)
              (void)data.uleb();
            else
              data.skip(size_class == 0x02 || size_class == 0x0a   ? 2
                        : size_class == 0x03 || size_class == 0x0b ? 4
                                                                   : 8);
            break;
          }
          case 'R':
            cie.fde_encoding = data.u8();
            break;
          case 'S':
            cie.signal_frame = true;
            break;
          case 'B':
          case 'G':
            break;
          default:
            return std::nullopt;
        }
      }
      if (data.failed()) return std::nullopt;
      in.skip(data_length);
    }
    if (in.failed() || cie.code_alignment == 0) return std::nullopt;
    cie.instructions = in.bytes(in.left());
    FrameState initial;
    initial.ra = RegisterRule{.kind = RegisterRule::kUndefined};
    FrameProgram program(cie, 0, vaddr_, begin_);
    if (!program.run(cie.instructions, initial, initial, [](uint64_t, const FrameState&) {}))
      return std::nullopt;
    cie.initial = initial;
    return cie;
  }

  std::optional<Fde> readFde(const Cie& cie, Cursor& in) {
    uint64_t field = vaddr_ + static_cast<uint64_t>(in.position() - begin_);
    Fde fde{.cie = &cie};
    fde.start = in.pointer(cie.fde_encoding, field);
    uint64_t range = in.pointer(cie.fde_encoding & 0x0f, 0);
    if (cie.has_augmentation_data) in.skip(in.uleb());
    if (in.failed() || range == 0 || fde.start + range < fde.start) return std::nullopt;
    fde.end = fde.start + range;
    fde.instructions = in.bytes(in.left());
    return fde;
  }

  bool appendRows(const Fde& fde, uint64_t end, CfiRows& out) {
    const Cie& cie = *fde.cie;
    std::vector<CfiRow>& rows = fde_rows_;  // reused: one allocation, not one per FDE
    rows.clear();
    FrameState state = cie.initial;
    FrameProgram program(cie, fde.start, vaddr_, begin_);
    bool ok = program.run(fde.instructions, state, cie.initial,
                          [&](uint64_t address, const FrameState& at) {
                            if (address >= end) return;
                            CfiRow row = classify(at, cie.signal_frame, address);
                            // An advance of 0 replaces the row at that address.
                            if (!rows.empty() && rows.back().address == address) rows.pop_back();
                            rows.push_back(row);
                          });
    if (!ok) return false;
    for (const CfiRow& row : rows) {
      if (row.cfa == CfaRule::kUnsupported) ++out.stats.unsupported_rows;
      append(out, row);
    }
    return true;
  }

  static void append(CfiRows& out, const CfiRow& row) {
    if (!out.rows.empty()) {
      CfiRow& last = out.rows.back();
      if (last.address == row.address) {
        last = row;
        if (out.rows.size() >= 2 && out.rows[out.rows.size() - 2].sameRule(last))
          out.rows.pop_back();
        return;
      }
      if (last.sameRule(row)) return;
    }
    out.rows.push_back(row);
  }

  const uint8_t* begin_;
  const uint8_t* end_;
  uint64_t vaddr_;
  std::unordered_map<const uint8_t*, std::optional<Cie>> cies_;
  std::vector<CfiRow> fde_rows_;
};

}  // namespace

Result<CfiRows> buildCfiRows(std::string_view eh_frame, uint64_t eh_frame_vaddr) {
  if (eh_frame.size() < 8) return Error(".eh_frame is empty");
  return EhFrameReader(eh_frame, eh_frame_vaddr).read();
}

}  // namespace incise::objfile
