// go_goroutines: four goroutines each burn CPU in a function of their own
// (spinAlpha, spinBeta, spinGamma, spinDelta) for a while, so every CPU
// sample in one of those functions belongs to one known goroutine.
//
// It prints its own truth as key=value lines (tools/workloads/README.md):
// pid, then for each function the id of the goroutine that ran it, as the
// runtime prints it in a stack dump ("goroutine 18 [running]:").
//
//	go_goroutines --ms 400
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
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

// spinLoop is spin kept out of line, so its caller stays on the stack.
//
//go:noinline
func spinLoop(until time.Time) uint64 { return spin(until) }

func main() {
	ms := flag.Int("ms", 400, "milliseconds each goroutine burns CPU")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go_goroutines [--ms N]")
		fmt.Fprintln(os.Stderr, "Four goroutines burn CPU, each in its own function (spinAlpha, spinBeta,")
		fmt.Fprintln(os.Stderr, "spinGamma, spinDelta); prints the goroutine id that ran each.")
		fmt.Fprintln(os.Stderr, "example: go_goroutines --ms 400")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *ms < 1 || *ms > 600000 {
		fmt.Fprintln(os.Stderr, "go_goroutines: --ms 1..600000")
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
	done.Wait()
	fmt.Printf("pid=%d\n", os.Getpid())
	for i, f := range functions {
		fmt.Printf("goroutine_%s=%d\n", f.name, ids[i])
	}
	fmt.Printf("sink=%d\n", sink)
}
