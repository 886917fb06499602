/* The tables the in-kernel user-stack unwinder reads (bpf/unwind.bpf.h),
 * filled by the recorder (recorder/metadata/unwind_table_loader.h). Shared by both
 * sides, like events.h: fixed-width fields only.
 *
 * Rows: every loaded object's unwind rows (objfile/cfi_rows.h builds them
 * from .eh_frame; loaded once per file), back to back in one array, one row
 * per address range of an object, sorted, each saying how to find the
 * caller's frame from there; before them, an index of the row each page
 * starts in.
 *
 * Processes: per process its executable mappings, sorted by start, in
 * chunks of UNWIND_CHUNK_MAPPINGS keyed by (pid, chunk); each names the
 * rows of its object and the load bias.
 *
 * A row found at (pc - bias) says, for CFA = reg + offset:
 *   caller's pc = *(CFA - 8), caller's sp = CFA, caller's rbp per the rbp field.
 * Worked example (a function with a frame pointer at 0x1130):
 *   { 0x1130, RSP, rbp unchanged, 8 }            before push %rbp: CFA = rsp + 8
 *   { 0x1131, RSP, AT_CFA | (-16/8 & 0x3f), 16 } after it: rbp saved at CFA - 16
 *   { 0x1134, RBP, AT_CFA | (-16/8 & 0x3f), 16 } after mov %rsp,%rbp: CFA = rbp + 16
 */
#ifndef INCISE_BPF_UNWIND_TABLE_H
#define INCISE_BPF_UNWIND_TABLE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bounds of the tables: rows of all objects (the recorder sizes the array
 * within this), chunks of one process, and processes. */
#define UNWIND_MAX_ROWS_LOG2 24 /* 16 M rows, 128 MiB; node alone has 372 k */
#define UNWIND_MAX_ROWS (1u << UNWIND_MAX_ROWS_LOG2)
#define UNWIND_CHUNK_MAPPINGS_LOG2 6
#define UNWIND_CHUNK_MAPPINGS (1u << UNWIND_CHUNK_MAPPINGS_LOG2)
#define UNWIND_MAX_CHUNKS 16 /* 1,024 executable mappings per process */
#define UNWIND_MAX_PROCESS_CHUNKS 32768
#define UNWIND_MAX_REQUESTS 16384
#define UNWIND_WAKEUP_RING_BYTES 4096

/* struct unwind_row.cfa: how to find the canonical frame address. */
enum unwind_cfa {
  UNWIND_CFA_NONE = 0,        /* no call-frame information here: a frame-pointer step */
  UNWIND_CFA_RSP = 1,         /* CFA = rsp + offset */
  UNWIND_CFA_RBP = 2,         /* CFA = rbp + offset */
  UNWIND_CFA_DEREF_RSP = 3,   /* CFA = *(rsp + offset) */
  UNWIND_CFA_DEREF_RBP = 4,   /* CFA = *(rbp + offset) */
  UNWIND_CFA_PLT = 5,         /* CFA = rsp + 8, + 8 when (pc & 15) >= offset */
  UNWIND_CFA_SIGNAL = 6,      /* a signal trampoline: the interrupted registers are at rsp */
  UNWIND_CFA_OUTERMOST = 7,   /* no return address: the stack ends here (_start, clone3) */
  UNWIND_CFA_UNSUPPORTED = 8, /* a rule the unwinder does not follow: the walk ends */
};
/* Or'ed into cfa: offset counts 8-byte words (frames over 32 KiB). */
#define UNWIND_CFA_SCALED 0x80

/* struct unwind_row.rbp: where the caller's rbp is. Bits 7-6 the base,
 * bits 5-0 a signed offset in 8-byte words (-256..248 bytes). */
#define UNWIND_RBP_UNCHANGED 0x00 /* the caller's rbp is this frame's */
#define UNWIND_RBP_AT_CFA 0x40    /* saved at CFA + offset */
#define UNWIND_RBP_AT_RBP 0x80    /* saved at rbp + offset */
#define UNWIND_RBP_UNKNOWN 0xc0   /* not known: 0 from here on */
#define UNWIND_RBP_BASE_MASK 0xc0
#define UNWIND_RBP_OFFSET_MASK 0x3f

struct unwind_row {
  __u32 address; /* ELF virtual address where the rule starts */
  __u8 cfa;      /* enum unwind_cfa | UNWIND_CFA_SCALED */
  __u8 rbp;      /* UNWIND_RBP_* | offset / 8 */
  __s16 offset;  /* of the CFA rule, bytes (or words with UNWIND_CFA_SCALED) */
};

/* An object's block in the rows array: its page index, then its rows. The
 * index has an element per index page (UNWIND_INDEX_PAGE_BYTES of the
 * object's code): the row covering the page's first byte and the one
 * covering the next page's, so one lookup bounds a search to the rows of one
 * page (libc: ~2 on average, one or two halvings instead of 15 of all). A
 * page's element costs as much as a row: smaller pages would cost more rows
 * than they save halvings. */
#define UNWIND_INDEX_PAGE_SHIFT 10
#define UNWIND_INDEX_PAGE_BYTES (1u << UNWIND_INDEX_PAGE_SHIFT)
union unwind_row_slot {
  struct unwind_row row;
  __u32 page_rows[2]; /* page index entry, relative to the object's first row */
};

struct unwind_mapping {
  __u64 start;      /* first address of the executable mapping */
  __u64 end;        /* one past its last address */
  __u64 bias;       /* address - ELF virtual address */
  __u64 page_base;  /* ELF virtual address of the index's page 0 */
  __u32 first_row;  /* the object's rows in the rows array */
  __u32 rows;       /* 0: no table (JIT code, Go, no .eh_frame): frame-pointer steps */
  __u32 page_index; /* array element of the page index (one per page) */
  __u32 pages;
  __u32 table; /* the rows' id, never reused while recording: keys walks' row caches */
  __u32 flags; /* UNWIND_MAPPING_* */
};

/* unwind_mapping.flags: the object's rows are not built yet (a
 * whole-machine recording builds an object's rows once a walk reaches it,
 * not for every object every process maps): frame-pointer steps, and the
 * walk asks for them (UNWIND_REQUEST_OBJECT). */
#define UNWIND_MAPPING_UNBUILT 1

struct unwind_process_key {
  __u32 pid;
  __u32 chunk;
};

struct unwind_process_chunk {
  __u32 mappings; /* used entries of mapping[] */
  __u32 chunks;   /* chunk 0 only: chunks of this process */
  __u32 flags;    /* chunk 0 only: UNWIND_PROCESS_* */
  __u32 reserved;
  /* Chunk 0 only: mm->start_stack when the maps were read (a changed one
   * means an exec since) and the first start of every chunk. */
  __u64 start_stack;
  __u64 chunk_start[UNWIND_MAX_CHUNKS];
  struct unwind_mapping mapping[UNWIND_CHUNK_MAPPINGS];
};

/* unwind_process_chunk.flags: walk this process by frame pointer, ask for
 * nothing (the recorder itself, and its forks before they exec). */
#define UNWIND_PROCESS_FRAME_POINTERS 1

/* Why a process asks the recorder for tables (unwind_requests values, or'ed). */
#define UNWIND_REQUEST_UNKNOWN_PROCESS 1 /* no entry yet */
#define UNWIND_REQUEST_UNMAPPED_PC 2     /* a pc outside every mapping the entry has */
#define UNWIND_REQUEST_EXEC 4            /* the entry describes an image before exec */
#define UNWIND_REQUEST_OBJECT 8          /* a pc in a mapping whose object's rows are not built */

/* One entry per process that asked, kept while it lives: the recorder
 * clears `reasons` when it answers. A pc outside every mapping within
 * UNWIND_REQUEST_RETRY_NS of the answer does not wake it (frame-pointer
 * steps through code without frame pointers would wake it at every walk);
 * after an answer the loader looks again once the window has passed. */
struct unwind_request {
  __u32 reasons; /* 0: answered, nothing pending */
  __u32 reserved;
  __u64 pc;       /* UNWIND_REQUEST_UNMAPPED_PC: the pc that was outside; _OBJECT: in the object */
  __u64 time;     /* bpf_ktime_get_ns() of the walk that asked */
  __u64 answered; /* CLOCK_MONOTONIC ns of the recorder's last answer; 0: none yet */
};
#define UNWIND_REQUEST_RETRY_NS 20000000ull

/* How walks ended (unwind_stats, a per-CPU array indexed by these). */
enum unwind_end {
  UNWIND_END_OUTERMOST = 0,   /* at a frame without a return address: the whole stack */
  UNWIND_END_ZERO_PC = 1,     /* a return address below 4096 (a frame-pointer chain's end) */
  UNWIND_END_DEPTH = 2,       /* MAX_STACK_DEPTH frames */
  UNWIND_END_READ_FAILED = 3, /* stack memory could not be read */
  UNWIND_END_BAD_FRAME = 4,   /* a caller's sp at or below its callee's, or a bad frame pointer */
  UNWIND_END_NO_PROCESS = 5,  /* no tables for the process yet: frame-pointer walk */
  UNWIND_END_UNSUPPORTED = 6, /* a rule it does not follow (longjmp, vfork) */
  UNWIND_END_NO_CFI = 7,      /* a return address no FDE of its object covers */
  UNWIND_END_KINDS = 8,
};
/* Also counted: frames stepped by CFI and by frame pointer. */
#define UNWIND_STAT_CFI_FRAMES 8
#define UNWIND_STAT_FP_FRAMES 9
/* Of those by frame pointer: in an object whose rows were not built yet. */
#define UNWIND_STAT_UNBUILT_FRAMES 10
/* Of those by CFI: rows not in the row cache (searched in the rows array). */
#define UNWIND_STAT_ROW_MISSES 11
#define UNWIND_STAT_SLOTS 12

#endif /* INCISE_BPF_UNWIND_TABLE_H */
