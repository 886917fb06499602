// go_waits: goroutines that wait on a sync.RWMutex and a sync.Cond in ways
// that are certain to block, so the count of slow-path waits is known:
//
//   - readers blocked on a writer: the writer holds the RWMutex and keeps it
//     until every reader's RLock has registered as pending (RLock's slow
//     path, the reader semaphore);
//   - a writer blocked on readers: the readers hold read locks until the
//     writer's Lock has registered the readers it waits for (Lock's slow
//     path, the writer semaphore), and the last RUnlock hands it on;
//   - condition waits: waiters call Cond.Wait until a broadcast of the next
//     generation; every Wait is one wait on the Cond's notify list.
//
// It prints its own truth as key=value lines (tools/workloads/README.md):
// pid, the RWMutex's and the Cond's addresses, the waits of each kind, and
// the goroutine ids of the readers, the writer, the waiters and the
// signaller.
//
//	go_waits --readers 3 --rounds 50 --waiters 3 --procs 2
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// sync.RWMutex keeps its pending readers' count and the readers a pending
// writer waits for after its Mutex and two semaphores (w, writerSem,
// readerSem, readerCount, readerWait; the same in every Go release with
// the register ABI). The workload reads them to know that a goroutine has
// entered the slow path, never to change them.
const rwmutexMaxReaders = 1 << 30

func readerCount(rw *sync.RWMutex) int32 {
	return atomic.LoadInt32((*int32)(unsafe.Add(unsafe.Pointer(rw), 16)))
}

func readerWait(rw *sync.RWMutex) int32 {
	return atomic.LoadInt32((*int32)(unsafe.Add(unsafe.Pointer(rw), 20)))
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

type ids struct {
	mu   sync.Mutex
	seen map[uint64]bool
}

func (s *ids) add(id uint64) {
	s.mu.Lock()
	s.seen[id] = true
	s.mu.Unlock()
}

func (s *ids) list() string {
	names := make([]string, 0, len(s.seen))
	for id := range s.seen {
		names = append(names, fmt.Sprint(id))
	}
	return strings.Join(names, ",")
}

// readersBlockOnWriter: each round the writer takes the lock, `readers`
// goroutines call RLock, and the writer unlocks only when all of them are
// pending: each RLock waited on the reader semaphore.
//
//go:noinline
func readersBlockOnWriter(rw *sync.RWMutex, readers, rounds int, readerIds, writerIds *ids) uint64 {
	var waits uint64
	for r := 0; r < rounds; r++ {
		rw.Lock()
		var done sync.WaitGroup
		for i := 0; i < readers; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				readerIds.add(goroutineID())
				rw.RLock()
				rw.RUnlock()
			}()
		}
		for readerCount(rw) != int32(readers)-rwmutexMaxReaders {
			runtime.Gosched()
		}
		waits += uint64(readers)
		writerIds.add(goroutineID())
		rw.Unlock()
		done.Wait()
	}
	return waits
}

// writerBlocksOnReaders: each round `readers` goroutines take read locks,
// a writer calls Lock, and the readers unlock only when the writer counts
// them as the readers it waits for: its Lock waited on the writer
// semaphore, released by the last RUnlock.
//
//go:noinline
func writerBlocksOnReaders(rw *sync.RWMutex, readers, rounds int, readerIds, writerIds *ids) uint64 {
	var waits uint64
	for r := 0; r < rounds; r++ {
		var holding, done sync.WaitGroup
		holding.Add(readers)
		// Set by the first reader that sees the writer pending: the others
		// may see readerWait drop once it has unlocked.
		var writerPending int32
		for i := 0; i < readers; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				readerIds.add(goroutineID())
				rw.RLock()
				holding.Done()
				for atomic.LoadInt32(&writerPending) == 0 {
					if readerWait(rw) == int32(readers) {
						atomic.StoreInt32(&writerPending, 1)
					}
					runtime.Gosched()
				}
				rw.RUnlock()
			}()
		}
		holding.Wait()
		done.Add(1)
		go func() {
			defer done.Done()
			writerIds.add(goroutineID())
			rw.Lock()
			rw.Unlock()
		}()
		done.Wait()
		waits++
	}
	return waits
}

// condWaits: `waiters` goroutines wait for each of `rounds` generations a
// signaller broadcasts; it broadcasts the next one when all have seen the
// last. Returns the Wait calls the waiters made.
//
//go:noinline
func condWaits(waiters, rounds int, waiterIds, signallerIds *ids) (uint64, *sync.Cond) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	generation := 0
	var waits uint64
	var caughtUp int32
	var done sync.WaitGroup
	for i := 0; i < waiters; i++ {
		done.Add(1)
		go func() {
			defer done.Done()
			waiterIds.add(goroutineID())
			seen := 0
			for seen < rounds {
				mu.Lock()
				for generation == seen {
					cond.Wait()
					waits++
				}
				seen = generation
				mu.Unlock()
				atomic.AddInt32(&caughtUp, 1)
			}
		}()
	}
	signallerIds.add(goroutineID())
	for r := 1; r <= rounds; r++ {
		// Every waiter is inside Wait (or about to be) before the broadcast:
		// it holds mu from its check to Wait's unlock.
		for atomic.LoadInt32(&caughtUp) != int32(waiters*(r-1)) {
			runtime.Gosched()
		}
		mu.Lock()
		generation = r
		cond.Broadcast()
		mu.Unlock()
	}
	done.Wait()
	return waits, cond
}

func main() {
	readers := flag.Int("readers", 3, "readers per round of the RWMutex phases")
	rounds := flag.Int("rounds", 50, "rounds of each phase")
	waiters := flag.Int("waiters", 3, "goroutines that wait on the Cond")
	procs := flag.Int("procs", 0, "GOMAXPROCS (0: the runtime's default, the online CPUs)")
	waitMs := flag.Int("wait-ms", 0, "milliseconds to sleep before the first phase")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr,
			"usage: go_waits [--readers N] [--rounds N] [--waiters N] [--procs N] [--wait-ms N]")
		fmt.Fprintln(os.Stderr, "Readers blocked on a writer, a writer blocked on readers (one sync.RWMutex)")
		fmt.Fprintln(os.Stderr, "and goroutines waiting on a sync.Cond; prints the waits of each kind.")
		fmt.Fprintln(os.Stderr, "example: go_waits --readers 3 --rounds 50 --waiters 3")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *readers < 1 || *readers > 1024 || *rounds < 1 || *rounds > 100000 || *waiters < 1 ||
		*waiters > 1024 || *procs < 0 || *procs > 1024 || *waitMs < 0 || *waitMs > 60000 {
		fmt.Fprintln(os.Stderr, "go_waits: --readers 1..1024, --rounds 1..100000, "+
			"--waiters 1..1024, --procs 0..1024, --wait-ms 0..60000")
		os.Exit(2)
	}
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	// Time for a recorder that probes the program at its exec to do so
	// before the first wait.
	time.Sleep(time.Duration(*waitMs) * time.Millisecond)

	rw := &sync.RWMutex{}
	blockedReaders := &ids{seen: map[uint64]bool{}}
	releasingWriters := &ids{seen: map[uint64]bool{}}
	releasingReaders := &ids{seen: map[uint64]bool{}}
	blockedWriters := &ids{seen: map[uint64]bool{}}
	waiterIds := &ids{seen: map[uint64]bool{}}
	signallerIds := &ids{seen: map[uint64]bool{}}
	readerWaits := readersBlockOnWriter(rw, *readers, *rounds, blockedReaders, releasingWriters)
	writerWaits := writerBlocksOnReaders(rw, *readers, *rounds, releasingReaders, blockedWriters)
	condWaitCount, cond := condWaits(*waiters, *rounds, waiterIds, signallerIds)

	fmt.Printf("pid=%d\n", os.Getpid())
	fmt.Printf("rwmutex_address=%#x\n", uintptr(unsafe.Pointer(rw)))
	fmt.Printf("cond_address=%#x\n", uintptr(unsafe.Pointer(cond)))
	fmt.Printf("gomaxprocs=%d\n", runtime.GOMAXPROCS(0))
	fmt.Printf("reader_waits=%d\n", readerWaits)
	fmt.Printf("writer_waits=%d\n", writerWaits)
	fmt.Printf("cond_waits=%d\n", condWaitCount)
	fmt.Printf("blocked_reader_goroutine_ids=%s\n", blockedReaders.list())
	fmt.Printf("releasing_writer_goroutine_ids=%s\n", releasingWriters.list())
	fmt.Printf("blocked_writer_goroutine_ids=%s\n", blockedWriters.list())
	fmt.Printf("releasing_reader_goroutine_ids=%s\n", releasingReaders.list())
	fmt.Printf("cond_waiter_goroutine_ids=%s\n", waiterIds.list())
	fmt.Printf("cond_signaller_goroutine_ids=%s\n", signallerIds.list())
}
