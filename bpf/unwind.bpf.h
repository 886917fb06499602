/* User stacks unwound in the kernel from compact CFI tables, for code built
 * without frame pointers (Debian's libc, python3, postgres, redis...).
 *
 *   struct unwind_walk walk;  // or a per-CPU slot: see unwind_user_stack
 *   int count = unwind_user_stack(regs, ip, frames, trampoline, pending, &walk);  // -1: fp
 *
 * The recorder (recorder/metadata/unwind_table_loader.h) loads each executable
 * object's rows (bpf/unwind_table.h, built from .eh_frame by
 * objfile/cfi_rows.h) once per build-id and each process's executable
 * mappings; a step looks the pc up in both (two binary searches), computes
 * the CFA from rsp or rbp, reads the return address at CFA - 8 and the
 * caller's rbp where the row says it was saved. Where an object has no
 * table (JIT code, Go, objects without .eh_frame) it takes a frame-pointer
 * step instead, so V8's and Go's frame chains still walk; in an object with
 * tables, rbp is no frame pointer, so a pc no FDE covers (other than at the
 * leaf) or a rule the step does not follow ends the walk instead of
 * guessing. The walk ends at a frame without a return address (_start,
 * clone3): such a stack is whole.
 *
 * A process without tables yet, or a pc outside every mapping the recorder
 * gave (a library mapped since), is reported in unwind_requests (and a new
 * request wakes the recorder through unwind_wakeups); until the recorder
 * answers, a fork that has not exec'd is walked by its parent's tables, and
 * any other process by frame pointers.
 *
 * Every BPF object that walks stacks includes this header, and the tables
 * are big: each object's maps below are one-slot handles, and the recorder
 * puts the same rows array, process, request and wake-up tables in every
 * object's slot (no slot: -g fp, frame-pointer walks only). The frame loop
 * is a bpf_loop callback, so the verifier checks one step, not
 * MAX_STACK_DEPTH of them.
 */
#ifndef INCISE_BPF_UNWIND_BPF_H
#define INCISE_BPF_UNWIND_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "bpf/events.h"
#include "bpf/unwind_table.h"

/* Inner maps are declared by sizes, not types: clang leaves a struct used
 * only here as a forward declaration in BTF, which libbpf cannot size. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(
      values, struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
        __uint(max_entries, 1);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(union unwind_row_slot));
      });
} unwind_rows SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(
      values, struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __uint(max_entries, UNWIND_MAX_PROCESS_CHUNKS);
        __uint(key_size, sizeof(struct unwind_process_key));
        __uint(value_size, sizeof(struct unwind_process_chunk));
      });
} unwind_processes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(
      values, struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, UNWIND_MAX_REQUESTS);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(struct unwind_request));
      });
} unwind_requests SEC(".maps");

/* A record per new request, only to wake the recorder (the requests
 * themselves are in unwind_requests, one per process however many walks). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
  __uint(max_entries, 1);
  __type(key, __u32);
  __array(
      values, struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, UNWIND_WAKEUP_RING_BYTES);
      });
} unwind_wakeups SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, UNWIND_STAT_SLOTS);
  __type(key, __u32);
  __type(value, __u64);
} unwind_stats SEC(".maps");

/* The stack memory a walk reads, a page at a time (struct unwind_window):
 * a frame's caller is usually in the same page, so most steps read no user
 * memory, and a user read costs more than a map lookup. */
#define UNWIND_WINDOW_BYTES 4096
struct unwind_window {
  __u64 generation; /* changed by every load: a walk whose load is not the last reloads */
  __u8 bytes[UNWIND_WINDOW_BYTES];
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct unwind_window);
} unwind_windows SEC(".maps");

/* Rows found by earlier walks on this CPU, by (table, address): most
 * samples repeat the return addresses of earlier ones, and a hit costs no
 * index lookup and no search. Direct-mapped; an entry's sequence is odd
 * while it is written, so a walk nested in another's write (a program
 * interrupting another on this CPU) neither reads nor writes it half-done. */
#define UNWIND_ROW_CACHE_LOG2 11
struct unwind_cached_row {
  __u64 key; /* table << 32 | address; 0: empty */
  __u64 sequence;
  struct unwind_row row;
};

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1u << UNWIND_ROW_CACHE_LOG2);
  __type(key, __u32);
  __type(value, struct unwind_cached_row);
} unwind_row_cache SEC(".maps");

#define UNWIND_LOWEST_ADDRESS 4096
#define UNWIND_WALKING 0xffffffff

/* One walk's registers and caches, where the program that walks keeps
 * them (struct unwind_context). */
struct unwind_walk {
  __u64 pc, sp, bp;
  /* The mapping the last pc fell in (most frames share their caller's),
   * and the one before it (stacks go back and forth between two objects:
   * the program and libc). */
  struct unwind_mapping map, other_map;
  /* The stack bytes [window_base, window_end) in this CPU's unwind_window,
   * while its generation is window_generation. */
  __u64 window_base, window_end, window_generation;
  /* Pending uretprobes: their trampoline and the innermost return_instance. */
  __u64 trampoline;
  __u64 pending;
  __u32 pid;   /* whose tables the walk reads: the process's, or its parent's (a new fork) */
  __u32 asker; /* the walked process: requests name it */
  __u32 count;
  __u32 end;            /* enum unwind_end, UNWIND_WALKING until it ends */
  __u32 return_address; /* pc is a return address: its call is at pc - 1 */
  __u32 cfi_frames, fp_frames;
  __u32 row_misses; /* rows not in the row cache: searched */
};

static __always_inline void unwind_count(__u32 slot, __u64 amount) {
  __u64* counter = bpf_map_lookup_elem(&unwind_stats, &slot);
  if (counter) *counter += amount;
}

static __always_inline void* unwind_shared(void* handle) {
  __u32 zero = 0;
  return bpf_map_lookup_elem(handle, &zero);
}

static __always_inline void unwind_request(__u32 pid, __u32 reason, __u64 pc) {
  void* requests = unwind_shared(&unwind_requests);
  if (!requests) return;
  struct unwind_request* pending = bpf_map_lookup_elem(requests, &pid);
  __u64 now = bpf_ktime_get_ns();
  if (pending) {
    /* A hint: a racing update losing a reason only delays it to the next walk. */
    __u32 reasons = pending->reasons;
    if (reasons & reason) return;
    pending->reasons = reasons | reason;
    if (reasons != 0) return; /* already waiting for the recorder */
    pending->pc = pc;
    pending->time = now;
    /* A process unknown or exec'd since is new work: answered at once. A pc
     * outside every mapping soon after an answer (frame-pointer steps
     * through code without them make many) waits for the loader's next look,
     * at most the retry window later. */
    if (reason == UNWIND_REQUEST_UNMAPPED_PC && now - pending->answered < UNWIND_REQUEST_RETRY_NS)
      return;
    void* wakeups = unwind_shared(&unwind_wakeups);
    if (wakeups) bpf_ringbuf_output(wakeups, &pid, sizeof(pid), BPF_RB_FORCE_WAKEUP);
    return;
  }
  struct unwind_request request = {.reasons = reason, .pc = pc, .time = now};
  if (bpf_map_update_elem(requests, &pid, &request, BPF_NOEXIST) != 0) return;
  void* wakeups = unwind_shared(&unwind_wakeups);
  if (wakeups) bpf_ringbuf_output(wakeups, &pid, sizeof(pid), BPF_RB_FORCE_WAKEUP);
}

/* `words` 8-byte words of user memory at `address` into `out`, from the
 * walk's window: a miss loads the rest of address's page (a stack's callers
 * are above their callees, and the page is mapped if address is). */
static __always_inline bool unwind_read(struct unwind_walk* w, __u64 address, __u64* out,
                                        __u32 words) {
  __u32 size = words * 8;
  __u32 zero = 0;
  struct unwind_window* window = bpf_map_lookup_elem(&unwind_windows, &zero);
  if (!window) return bpf_probe_read_user(out, size, (const void*)address) == 0;
  if (address < w->window_base || address + size > w->window_end ||
      window->generation != w->window_generation) {
    __u64 length = UNWIND_WINDOW_BYTES - (address & (UNWIND_WINDOW_BYTES - 1));
    if (length < size) return bpf_probe_read_user(out, size, (const void*)address) == 0;
    if (bpf_probe_read_user(window->bytes, length, (const void*)address) != 0) {
      w->window_end = 0;
      return false;
    }
    w->window_generation = ++window->generation;
    w->window_base = address;
    w->window_end = address + length;
  }
  __u64 offset = address - w->window_base;
  if (offset > UNWIND_WINDOW_BYTES - size) return false;
  for (__u32 i = 0; i < words; i++) out[i] = *(__u64*)&window->bytes[offset + i * 8];
  return true;
}

/* The return address a pending uretprobe's trampoline stands in for. */
static __always_inline __u64 unwind_real_return(struct unwind_walk* w, __u64 address) {
  if (!w->pending || address != w->trampoline) return address;
  struct return_instance* instance = (struct return_instance*)w->pending;
  __u64 real = 0, next = 0;
  bpf_probe_read_kernel(&real, sizeof(real), &instance->orig_ret_vaddr);
  bpf_probe_read_kernel(&next, sizeof(next), &instance->next);
  w->pending = next;
  return real;
}

/* One binary search over rows, for bpf_loop: the first row in [low, high)
 * whose address is above `target` ends up at `low`. Each halving is its own
 * callback run: as a plain loop the verifier followed every path of 24
 * halvings (past its 1 M instruction limit). */
struct unwind_row_search {
  void* rows;
  __u32 target;
  __u32 low, high;
  __u32 failed;
  struct unwind_row found; /* row low - 1 once low has moved: no lookup after the search */
};

static long unwind_row_search_step(__u64 index, void* context) {
  struct unwind_row_search* s = context;
  if (s->low >= s->high) return 1;
  __u32 middle = s->low + (s->high - s->low) / 2;
  union unwind_row_slot* slot = bpf_map_lookup_elem(s->rows, &middle);
  if (!slot) {
    s->failed = 1;
    return 1;
  }
  if (slot->row.address <= s->target) {
    s->low = middle + 1;
    s->found = slot->row;
  } else {
    s->high = middle;
  }
  return 0;
}

/* The same over a chunk's mappings, by start. */
struct unwind_mapping_search {
  struct unwind_process_chunk* chunk;
  __u64 target;
  __u32 low, high;
};

static long unwind_mapping_search_step(__u64 index, void* context) {
  struct unwind_mapping_search* s = context;
  if (s->low >= s->high) return 1;
  __u32 middle = (s->low + (s->high - s->low) / 2) & (UNWIND_CHUNK_MAPPINGS - 1);
  if (s->chunk->mapping[middle].start <= s->target)
    s->low = middle + 1;
  else
    s->high = middle;
  return 0;
}

/* Finds pc's mapping in the process's chunks and keeps it in the walk. */
static __always_inline bool unwind_find_mapping(struct unwind_walk* w, __u64 pc) {
  void* processes = unwind_shared(&unwind_processes);
  if (!processes) return false;
  struct unwind_process_key key = {.pid = w->pid, .chunk = 0};
  struct unwind_process_chunk* first = bpf_map_lookup_elem(processes, &key);
  if (!first) return false;
  /* The last chunk starting at or below pc. */
  __u32 chunks = first->chunks;
  for (__u32 i = 1; i < UNWIND_MAX_CHUNKS; i++) {
    if (i >= chunks || first->chunk_start[i] > pc) break;
    key.chunk = i;
  }
  struct unwind_process_chunk* chunk = first;
  if (key.chunk != 0) {
    chunk = bpf_map_lookup_elem(processes, &key);
    if (!chunk) return false;
  }
  __u32 count = chunk->mappings;
  if (count > UNWIND_CHUNK_MAPPINGS) count = UNWIND_CHUNK_MAPPINGS;
  struct unwind_mapping_search search = {.chunk = chunk, .target = pc, .high = count};
  bpf_loop(UNWIND_CHUNK_MAPPINGS_LOG2 + 1, unwind_mapping_search_step, &search, 0);
  if (search.low == 0) return false;
  struct unwind_mapping* found = &chunk->mapping[(search.low - 1) & (UNWIND_CHUNK_MAPPINGS - 1)];
  if (pc >= found->end) return false;
  w->map = *found;
  return true;
}

static __always_inline struct unwind_cached_row* unwind_cache_entry(__u64 key) {
  __u32 slot =
      (__u32)((key ^ (key >> 32) * 0x9e3779b1u) * 0x9e3779b1u) >> (32 - UNWIND_ROW_CACHE_LOG2);
  return bpf_map_lookup_elem(&unwind_row_cache, &slot);
}

static __always_inline bool unwind_cache_get(struct unwind_cached_row* entry, __u64 key,
                                             struct unwind_row* out) {
  __u64 sequence = *(volatile __u64*)&entry->sequence;
  if ((sequence & 1) || *(volatile __u64*)&entry->key != key) return false;
  *out = entry->row;
  asm volatile("" ::: "memory");
  return *(volatile __u64*)&entry->sequence == sequence;
}

static __always_inline void unwind_cache_put(struct unwind_cached_row* entry, __u64 key,
                                             const struct unwind_row* row) {
  __u64 sequence = *(volatile __u64*)&entry->sequence;
  if ((sequence & 1) ||
      __sync_val_compare_and_swap(&entry->sequence, sequence, sequence + 1) != sequence)
    return;
  entry->key = key;
  entry->row = *row;
  asm volatile("" ::: "memory");
  *(volatile __u64*)&entry->sequence = sequence + 2;
}

/* The row covering ELF address `address` of the current mapping's object:
 * from the row cache, else the page index bounds the search to the rows of
 * address's page. */
static __always_inline bool unwind_find_row(struct unwind_walk* w, __u64 address,
                                            struct unwind_row* out) {
  __u64 key = (__u64)w->map.table << 32 | (__u32)address;
  struct unwind_cached_row* cached = unwind_cache_entry(key);
  if (cached && unwind_cache_get(cached, key, out)) return true;
  w->row_misses++;
  void* rows = unwind_shared(&unwind_rows);
  if (!rows || address < w->map.page_base) return false;
  __u64 page = (address - w->map.page_base) >> UNWIND_INDEX_PAGE_SHIFT;
  if (page >= w->map.pages) return false;
  __u32 slot = w->map.page_index + (__u32)page;
  union unwind_row_slot* entry = bpf_map_lookup_elem(rows, &slot);
  if (!entry) return false;
  /* Rows from the one covering the page's start to the one covering the next's. */
  __u32 low = entry->page_rows[0], high = entry->page_rows[1];
  __u32 count = w->map.rows;
  if (high >= count) high = count - 1;
  if (low > high) return false;
  struct unwind_row_search search = {.rows = rows,
                                     .target = (__u32)address,
                                     .low = w->map.first_row + low,
                                     .high = w->map.first_row + high + 1};
  __u32 first = search.low;
  bpf_loop(UNWIND_MAX_ROWS_LOG2 + 1, unwind_row_search_step, &search, 0);
  /* Every row of the range after address: address is ahead of the object's
   * first row (page 0 before its first FDE). */
  if (search.failed || search.low <= first) return false;
  *out = search.found;
  if (cached) unwind_cache_put(cached, key, out);
  return true;
}

/* The caller's frame by the frame-pointer chain: [rbp] = caller's rbp,
 * [rbp + 8] = return address. rbp below sp is no frame of this stack. */
static __always_inline bool unwind_fp_step(struct unwind_walk* w) {
  if (w->bp < UNWIND_LOWEST_ADDRESS || w->bp < w->sp) {
    w->end = w->bp < UNWIND_LOWEST_ADDRESS ? UNWIND_END_ZERO_PC : UNWIND_END_BAD_FRAME;
    return false;
  }
  __u64 frame[2];
  if (!unwind_read(w, w->bp, frame, 2)) {
    w->end = UNWIND_END_READ_FAILED;
    return false;
  }
  w->sp = w->bp + 16;
  w->bp = frame[0];
  w->pc = frame[1];
  w->return_address = 1;
  w->fp_frames++;
  return true;
}

/* rt_sigframe at the trampoline's sp: uc (uc_flags, uc_link, uc_stack: 40
 * bytes), then uc_mcontext = struct sigcontext: r8..r15, rdi, rsi, rbp, rbx,
 * rdx, rax, rcx, rsp, rip (arch/x86/include/uapi/asm/sigcontext.h). */
#define SIGCONTEXT_AT 40
#define SIGCONTEXT_RBP 10
#define SIGCONTEXT_RSP 15
#define SIGCONTEXT_RIP 16
_Static_assert(SIGCONTEXT_RIP == SIGCONTEXT_RSP + 1, "rsp and rip are read as a pair");

static __always_inline bool unwind_signal_step(struct unwind_walk* w) {
  /* The three registers only: the whole sigcontext on the stack would take
   * room the programs that walk need. */
  __u64 at = w->sp + SIGCONTEXT_AT;
  __u64 bp, sp_ip[2];
  if (!unwind_read(w, at + SIGCONTEXT_RBP * 8, &bp, 1) ||
      !unwind_read(w, at + SIGCONTEXT_RSP * 8, sp_ip, 2)) {
    w->end = UNWIND_END_READ_FAILED;
    return false;
  }
  w->bp = bp;
  w->sp = sp_ip[0];
  w->pc = sp_ip[1];
  w->return_address = 0; /* the interrupted instruction itself */
  w->cfi_frames++;
  return true;
}

/* One CFI step by `row` (see bpf/unwind_table.h). */
static __always_inline bool unwind_cfi_step(struct unwind_walk* w, struct unwind_row* row) {
  __u8 kind = row->cfa & ~UNWIND_CFA_SCALED;
  __s64 offset = row->offset;
  if (row->cfa & UNWIND_CFA_SCALED) offset *= 8;
  __u64 cfa;
  switch (kind) {
    case UNWIND_CFA_RSP:
      cfa = w->sp + offset;
      break;
    case UNWIND_CFA_RBP:
      cfa = w->bp + offset;
      break;
    case UNWIND_CFA_DEREF_RSP:
    case UNWIND_CFA_DEREF_RBP: {
      __u64 at = (kind == UNWIND_CFA_DEREF_RSP ? w->sp : w->bp) + offset;
      if (!unwind_read(w, at, &cfa, 1)) {
        w->end = UNWIND_END_READ_FAILED;
        return false;
      }
      break;
    }
    case UNWIND_CFA_PLT:
      cfa = w->sp + 8 + (((w->pc & 15) >= (__u64)offset) ? 8 : 0);
      break;
    case UNWIND_CFA_SIGNAL:
      return unwind_signal_step(w);
    case UNWIND_CFA_OUTERMOST:
      w->end = UNWIND_END_OUTERMOST;
      return false;
    case UNWIND_CFA_NONE:
      /* No FDE here, in an object that has them: hand-written code outside
       * its CFI (clone3 ends its FDE before the syscall). At the leaf (or an
       * interrupted pc) it has pushed nothing: the return address is at sp.
       * Deeper, nothing says where the frame is, and rbp is no frame
       * pointer in such objects: the walk ends rather than guess. */
      if (w->return_address) {
        w->end = UNWIND_END_NO_CFI;
        return false;
      }
      cfa = w->sp + 8;
      break;
    default: /* a rule the step does not follow (longjmp, vfork's popped return address) */
      w->end = UNWIND_END_UNSUPPORTED;
      return false;
  }
  /* A caller's frame is above its callee's: anything else is a loop or garbage. */
  if (cfa <= w->sp) {
    w->end = UNWIND_END_BAD_FRAME;
    return false;
  }
  __u8 rbp_base = row->rbp & UNWIND_RBP_BASE_MASK;
  __s64 rbp_offset = (__s64)((__s8)((row->rbp & UNWIND_RBP_OFFSET_MASK) << 2) >> 2) * 8;
  __u64 saved[2]; /* [0]: the caller's rbp when it sits right below the return address */
  if (rbp_base == UNWIND_RBP_AT_CFA && rbp_offset == -16) {
    /* The common case (push %rbp first): rbp and return address in one read. */
    if (!unwind_read(w, cfa - 16, saved, 2)) {
      w->end = UNWIND_END_READ_FAILED;
      return false;
    }
    w->bp = saved[0];
  } else {
    if (!unwind_read(w, cfa - 8, &saved[1], 1)) {
      w->end = UNWIND_END_READ_FAILED;
      return false;
    }
    if (rbp_base == UNWIND_RBP_AT_CFA || rbp_base == UNWIND_RBP_AT_RBP) {
      __u64 at = (rbp_base == UNWIND_RBP_AT_CFA ? cfa : w->bp) + rbp_offset;
      if (!unwind_read(w, at, &w->bp, 1)) w->bp = 0;
    } else if (rbp_base == UNWIND_RBP_UNKNOWN) {
      w->bp = 0;
    }
  }
  w->pc = saved[1];
  w->sp = cfa;
  w->return_address = 1;
  w->cfi_frames++;
  return true;
}

/* Word by word in registers: a struct on the stack here would take room the
 * programs that walk need (their stack and this function's share 512 bytes). */
static __always_inline void unwind_swap_mappings(struct unwind_walk* w) {
  __u64* a = (__u64*)&w->map;
  __u64* b = (__u64*)&w->other_map;
  for (__u32 i = 0; i < sizeof(struct unwind_mapping) / 8; i++) {
    __u64 t = a[i];
    a[i] = b[i];
    b[i] = t;
  }
}

/* From frame (pc, sp, bp) to its caller's; false when the walk ends (why:
 * w->end). A global function, so the verifier checks it once, on its own,
 * instead of in every state the frame loop reaches: verified inline, a
 * program with one walk took ~600 k of the verifier's 1 M instructions. */
__noinline int unwind_frame(struct unwind_walk* w) {
  if (!w) return 0;
  __u64 pc = w->pc;
  bool stepped;
  __u32 ask = 0;
  if (pc < w->map.start || pc >= w->map.end) {
    if (pc >= w->other_map.start && pc < w->other_map.end) {
      unwind_swap_mappings(w);
    } else {
      /* An empty mapping (start = end = 0) is never the other one. */
      if (w->map.end != 0) w->other_map = w->map;
      if (!unwind_find_mapping(w, pc)) {
        ask = UNWIND_REQUEST_UNMAPPED_PC;
        w->map.start = w->map.end = 0;
        w->map.rows = 0;
        w->map.flags = 0;
      }
    }
  }
  /* Every frame in an object whose rows are not built yet asks (a pending
   * request absorbs the asks at one lookup each) until they are. */
  if (w->map.flags & UNWIND_MAPPING_UNBUILT) {
    ask = UNWIND_REQUEST_OBJECT;
    unwind_count(UNWIND_STAT_UNBUILT_FRAMES, 1);
  }
  if (ask) unwind_request(w->asker, ask, pc);
  /* Objects without tables (JIT code, Go) keep frame pointers; pcs before
   * an object's first row are in no FDE. */
  struct unwind_row row = {.cfa = UNWIND_CFA_NONE};
  if (w->map.rows == 0) {
    stepped = unwind_fp_step(w);
  } else {
    unwind_find_row(w, pc - w->map.bias - w->return_address, &row);
    stepped = unwind_cfi_step(w, &row);
  }
  if (stepped) w->pc = unwind_real_return(w, w->pc);
  return stepped;
}

struct unwind_context {
  __u64* frames; /* room for MAX_STACK_DEPTH; outside `walk`, which unwind_frame may write */
  struct unwind_walk* walk;
};

/* Step `index` writes frame `index` and steps to its caller: the loop's
 * index is the frame count. (Counted in the walk instead, the count is a
 * value the verifier tracks exactly, and it checked the step once per
 * depth.) */
static long unwind_step(__u64 index, void* context) {
  struct unwind_context* c = context;
  struct unwind_walk* w = c->walk;
  if (w->pc < UNWIND_LOWEST_ADDRESS) {
    w->end = UNWIND_END_ZERO_PC;
    return 1;
  }
  if (index >= MAX_STACK_DEPTH) {
    w->end = UNWIND_END_DEPTH;
    return 1;
  }
  c->frames[index] = w->pc;
  w->count = index + 1;
  return unwind_frame(w) ? 0 : 1;
}

/* The user stack of the current task from its user registers into `frames`
 * (leaf first), starting at `ip` (regs->ip, or the probed code's address
 * while a uprobe single-steps); -1 when the process has no tables yet (the
 * caller then walks frame pointers). `trampoline` and `pending` come from
 * the task's pending uretprobes (bpf/stack.bpf.h). `w` holds the walk's
 * state: on the caller's stack, or, for a program whose own frame leaves
 * too little of the 512 bytes its deepest calls share (unwind_frame's and
 * the searches' frames come on top), a per-CPU slot nothing else on that
 * CPU uses meanwhile. */
static __always_inline int unwind_user_stack(struct pt_regs* regs, __u64 ip, __u64* frames,
                                             __u64 trampoline, __u64 pending,
                                             struct unwind_walk* w) {
  void* processes = unwind_shared(&unwind_processes);
  if (!processes) return -1; /* -g fp */
  __u32 pid = bpf_get_current_pid_tgid() >> 32;
  struct unwind_process_key key = {.pid = pid, .chunk = 0};
  struct unwind_process_chunk* first = bpf_map_lookup_elem(processes, &key);
  struct task_struct* task = bpf_get_current_task_btf();
  /* Reads through the task by helper, not directly: see user_walk_setup. */
  __u64 start_stack = BPF_CORE_READ(task, mm, start_stack);
  if (!first) {
    unwind_request(pid, UNWIND_REQUEST_UNKNOWN_PROCESS, 0);
    /* A fork the recorder has not answered yet: until it execs (a new
     * stack), its parent's mappings are its own, and so are their tables
     * (a library it maps since is a pc outside them: a request). */
    key.pid = BPF_CORE_READ(task, real_parent, tgid);
    first = bpf_map_lookup_elem(processes, &key);
    if (!first || first->start_stack != start_stack) {
      unwind_count(UNWIND_END_NO_PROCESS, 1);
      return -1;
    }
  } else if (first->start_stack != start_stack) {
    unwind_request(pid, UNWIND_REQUEST_EXEC, 0);
    unwind_count(UNWIND_END_NO_PROCESS, 1);
    return -1;
  }
  /* After the exec check: a fork of the recorder gets tables once it execs. */
  if (first->flags & UNWIND_PROCESS_FRAME_POINTERS) return -1;
  __builtin_memset(w, 0, sizeof(*w));
  w->pc = ip;
  w->sp = regs->sp;
  w->bp = regs->bp;
  w->trampoline = trampoline;
  w->pending = pending;
  w->pid = key.pid;
  w->asker = pid;
  w->end = UNWIND_WALKING;
  /* At the trampoline's first byte the thread is returning to its caller. */
  w->pc = unwind_real_return(w, w->pc);
  struct unwind_context c = {.frames = frames, .walk = w};
  bpf_loop(MAX_STACK_DEPTH + 1, unwind_step, &c, 0);
  __u32 end = w->end;
  unwind_count(end < UNWIND_END_KINDS ? end : UNWIND_END_DEPTH, 1);
  unwind_count(UNWIND_STAT_CFI_FRAMES, w->cfi_frames);
  unwind_count(UNWIND_STAT_FP_FRAMES, w->fp_frames);
  unwind_count(UNWIND_STAT_ROW_MISSES, w->row_misses);
  __u32 count = w->count;
  return count > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : (int)count;
}

#endif /* INCISE_BPF_UNWIND_BPF_H */
