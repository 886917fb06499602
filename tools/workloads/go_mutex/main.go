// go_mutex: goroutines contend on one sync.Mutex whose holder faults fresh
// pages while it holds it (a packet handler that maps a new buffer under its
// lock), so every contended Lock parks its goroutine on the mutex's
// semaphore: the runtime sleeps no futex per contention.
//
// It prints its own truth as key=value lines (tools/workloads/README.md):
// pid, the mutex's address, the acquisitions, the contended ones (a TryLock
// that failed before the Lock), the time the lock was held, the part of it
// during which another goroutine waited for it, and the thread ids that
// unlocked it.
//
//	go_mutex --goroutines 4 --rounds 200 --pages 64 --procs 2
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const pageSize = 4096

type stack struct {
	mu           sync.Mutex
	acquisitions uint64
	contended    uint64
	heldNs       int64
	contendedNs  int64 // held after a contended acquisition
	holderTids   map[int]uint64
	base         time.Time
	holds        []span // in order: one holder at a time
	waits        []span // a failed TryLock to its Lock's return
}

// span is [start, end) in ns since stack.base.
type span struct{ start, end int64 }

// handlePacket takes the lock, counting the acquisition as contended when
// the lock was taken already, then faults `pages` fresh pages under it.
//
//go:noinline
func (s *stack) handlePacket(pages int) {
	contended := !s.mu.TryLock()
	var waitStart time.Time
	if contended {
		waitStart = time.Now()
		s.mu.Lock()
	}
	start := time.Now()
	if contended {
		s.waits = append(s.waits, span{waitStart.Sub(s.base).Nanoseconds(), start.Sub(s.base).Nanoseconds()})
	}
	s.acquisitions++
	if contended {
		s.contended++
	}
	faultFreshPages(pages)
	end := time.Now()
	held := end.Sub(start).Nanoseconds()
	s.holds = append(s.holds, span{start.Sub(s.base).Nanoseconds(), end.Sub(s.base).Nanoseconds()})
	s.heldNs += held
	if contended {
		s.contendedNs += held
	}
	// The thread that unlocks: the goroutine may have moved while it held,
	// and could move again before Unlock unless it is wired to its thread.
	runtime.LockOSThread()
	s.holderTids[syscall.Gettid()]++
	s.mu.Unlock()
	runtime.UnlockOSThread()
}

// heldWhileWaited is the time inside the holds during which another
// goroutine waited for the lock, and how many holds had some: each hold
// against the union of the waits (a goroutine never waits while it holds).
func heldWhileWaited(holds, waits []span) (ns int64, count uint64) {
	sort.Slice(waits, func(i, j int) bool { return waits[i].start < waits[j].start })
	var union []span
	for _, w := range waits {
		if n := len(union); n > 0 && w.start <= union[n-1].end {
			if w.end > union[n-1].end {
				union[n-1].end = w.end
			}
			continue
		}
		union = append(union, w)
	}
	next := 0
	for _, h := range holds {
		for next < len(union) && union[next].end <= h.start {
			next++
		}
		var overlap int64
		for i := next; i < len(union) && union[i].start < h.end; i++ {
			from, to := union[i].start, union[i].end
			if from < h.start {
				from = h.start
			}
			if to > h.end {
				to = h.end
			}
			overlap += to - from
		}
		if overlap > 0 {
			ns += overlap
			count++
		}
	}
	return ns, count
}

// goroutineID is the calling goroutine's id, as the runtime prints it in
// the first line of a stack dump ("goroutine 18 [running]:"): Go offers no
// other way to read it.
func goroutineID() uint64 {
	buffer := make([]byte, 64)
	buffer = buffer[:runtime.Stack(buffer, false)]
	fields := strings.Fields(string(buffer))
	if len(fields) < 2 || fields[0] != "goroutine" {
		return 0
	}
	id, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// faultFreshPages maps anonymous memory and writes a byte of every page:
// each write is a page fault the kernel has to serve with a zeroed page.
func faultFreshPages(pages int) {
	buffer, err := syscall.Mmap(-1, 0, pages*pageSize, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go_mutex: mmap:", err)
		os.Exit(1)
	}
	for offset := 0; offset < len(buffer); offset += pageSize {
		buffer[offset] = 1
	}
	if err := syscall.Munmap(buffer); err != nil {
		fmt.Fprintln(os.Stderr, "go_mutex: munmap:", err)
		os.Exit(1)
	}
}

func main() {
	goroutines := flag.Int("goroutines", 4, "goroutines that contend on the mutex")
	rounds := flag.Int("rounds", 200, "times each goroutine takes the mutex")
	pages := flag.Int("pages", 64, "fresh pages faulted while holding the mutex")
	procs := flag.Int("procs", 0, "GOMAXPROCS (0: the runtime's default, the online CPUs)")
	waitMs := flag.Int("wait-ms", 0, "milliseconds to sleep before the goroutines start")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr,
			"usage: go_mutex [--goroutines N] [--rounds N] [--pages N] [--procs N] [--wait-ms N]")
		fmt.Fprintln(os.Stderr, "Goroutines take one sync.Mutex and fault fresh pages while holding it;")
		fmt.Fprintln(os.Stderr, "prints the mutex address, acquisitions, contended ones and hold time.")
		fmt.Fprintln(os.Stderr, "example: go_mutex --goroutines 4 --rounds 200 --pages 64")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *goroutines < 1 || *goroutines > 4096 || *rounds < 1 || *rounds > 10000000 ||
		*pages < 0 || *pages > 65536 || *procs < 0 || *procs > 1024 || *waitMs < 0 || *waitMs > 60000 {
		fmt.Fprintln(os.Stderr, "go_mutex: --goroutines 1..4096, --rounds 1..10000000, "+
			"--pages 0..65536, --procs 0..1024, --wait-ms 0..60000")
		os.Exit(2)
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	// Time for a recorder that probes the program at its exec to do so
	// before the first wait.
	time.Sleep(time.Duration(*waitMs) * time.Millisecond)

	begin := time.Now()
	s := &stack{holderTids: map[int]uint64{}, base: begin}
	var done sync.WaitGroup
	goids := make([]string, *goroutines)
	for i := 0; i < *goroutines; i++ {
		done.Add(1)
		go func(i int) {
			defer done.Done()
			goids[i] = fmt.Sprint(goroutineID())
			for r := 0; r < *rounds; r++ {
				s.handlePacket(*pages)
			}
		}(i)
	}
	done.Wait()
	elapsed := time.Since(begin)

	tids := make([]int, 0, len(s.holderTids))
	for tid := range s.holderTids {
		tids = append(tids, tid)
	}
	sort.Ints(tids)
	names := make([]string, len(tids))
	for i, tid := range tids {
		names[i] = fmt.Sprint(tid)
	}
	fmt.Printf("pid=%d\n", os.Getpid())
	fmt.Printf("mutex_address=%#x\n", uintptr(unsafe.Pointer(&s.mu)))
	fmt.Printf("goroutines=%d\n", *goroutines)
	fmt.Printf("gomaxprocs=%d\n", runtime.GOMAXPROCS(0))
	fmt.Printf("acquisitions=%d\n", s.acquisitions)
	fmt.Printf("contended_acquisitions=%d\n", s.contended)
	fmt.Printf("hold_ns=%d\n", s.heldNs)
	fmt.Printf("contended_hold_ns=%d\n", s.contendedNs)
	waitedNs, waitedHolds := heldWhileWaited(s.holds, s.waits)
	fmt.Printf("held_while_waited_ns=%d\n", waitedNs)
	fmt.Printf("holds_while_waited=%d\n", waitedHolds)
	fmt.Printf("elapsed_ns=%d\n", elapsed.Nanoseconds())
	fmt.Printf("holder_tids=%s\n", strings.Join(names, ","))
	fmt.Printf("goroutine_ids=%s\n", strings.Join(goids, ","))
}
