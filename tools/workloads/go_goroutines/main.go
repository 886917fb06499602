// go_goroutines: four goroutines each burn CPU in a function of their own
// (spinAlpha, spinBeta, spinGamma, spinDelta) for a while, so every CPU
// sample in one of those functions belongs to one known goroutine.
//
// A fifth goroutine naps: it sleeps --naps times for 3 ms in nanosleep(2)
// called directly (a blocking system call keeps the goroutine on its
// thread), so its thread leaves its CPU in that goroutine each time.
//
// It prints its own truth as key=value lines (tools/workloads/README.md):
// pid, then for each function the id of the goroutine that ran it, as the
// runtime prints it in a stack dump ("goroutine 18 [running]:"), the
// napping goroutine's id and how many naps it took.
//
//	go_goroutines --ms 400 --naps 20
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var sink uint64

// goroutineID is the calling goroutine's id, from the first line of its
// stack dump: Go offers no other way to read it.
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

// spin burns CPU until the deadline; each caller below is its own frame.
func spin(until time.Time) uint64 {
	x := uint64(1)
	for time.Now().Before(until) {
		for i := 0; i < 10000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

//go:noinline
func spinAlpha(until time.Time) uint64 { return spinLoop(until) }

//go:noinline
func spinBeta(until time.Time) uint64 { return spinLoop(until) }

//go:noinline
func spinGamma(until time.Time) uint64 { return spinLoop(until) }

//go:noinline
func spinDelta(until time.Time) uint64 { return spinLoop(until) }

// napNanosleep sleeps in nanosleep(2) until the whole nap has passed
// (a signal, such as the runtime's preemption signal, cuts a sleep short).
//
//go:noinline
func napNanosleep(nap time.Duration) int {
	calls := 0
	request := syscall.NsecToTimespec(int64(nap))
	for {
		var left syscall.Timespec
		calls++
		if err := syscall.Nanosleep(&request, &left); err != syscall.EINTR {
			return calls
		}
		request = left
	}
}

// spinLoop is spin kept out of line, so its caller stays on the stack.
//
//go:noinline
func spinLoop(until time.Time) uint64 { return spin(until) }

func main() {
	ms := flag.Int("ms", 400, "milliseconds each goroutine burns CPU")
	naps := flag.Int("naps", 20, "3 ms naps the napping goroutine takes")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go_goroutines [--ms N] [--naps N]")
		fmt.Fprintln(os.Stderr, "Four goroutines burn CPU, each in its own function (spinAlpha, spinBeta,")
		fmt.Fprintln(os.Stderr, "spinGamma, spinDelta), a fifth sleeps N times 3 ms in nanosleep(2);")
		fmt.Fprintln(os.Stderr, "prints the goroutine id that ran each.")
		fmt.Fprintln(os.Stderr, "example: go_goroutines --ms 400 --naps 20")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *ms < 1 || *ms > 600000 {
		fmt.Fprintln(os.Stderr, "go_goroutines: --ms 1..600000")
		os.Exit(2)
	}
	if *naps < 0 || *naps > 100000 {
		fmt.Fprintln(os.Stderr, "go_goroutines: --naps 0..100000")
		os.Exit(2)
	}
	functions := []struct {
		name string
		run  func(time.Time) uint64
	}{
		{"spinAlpha", spinAlpha}, {"spinBeta", spinBeta}, {"spinGamma", spinGamma}, {"spinDelta", spinDelta},
	}
	ids := make([]uint64, len(functions))
	var done sync.WaitGroup
	var mu sync.Mutex
	for i, f := range functions {
		done.Add(1)
		go func(i int, run func(time.Time) uint64) {
			defer done.Done()
			ids[i] = goroutineID()
			x := run(time.Now().Add(time.Duration(*ms) * time.Millisecond))
			mu.Lock()
			sink += x
			mu.Unlock()
		}(i, f.run)
	}
	var napper uint64
	napCalls := 0
	done.Add(1)
	go func() {
		defer done.Done()
		napper = goroutineID()
		for i := 0; i < *naps; i++ {
			napCalls += napNanosleep(3 * time.Millisecond)
		}
	}()
	done.Wait()
	fmt.Printf("pid=%d\n", os.Getpid())
	for i, f := range functions {
		fmt.Printf("goroutine_%s=%d\n", f.name, ids[i])
	}
	fmt.Printf("goroutine_nap=%d\n", napper)
	fmt.Printf("naps=%d\n", *naps)
	fmt.Printf("nanosleep_calls=%d\n", napCalls)
	fmt.Printf("sink=%d\n", sink)
}
