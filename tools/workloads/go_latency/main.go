// go_latency: a Go function with known latencies, for checking that latency
// recording pairs a Go function's entry with its return although goroutines
// park, move between threads and have their stacks copied.
//
// --goroutines goroutines each call timedCall --calls times; every
// --slow-every-th call sleeps --slow-us (time.Sleep: the goroutine parks and
// may resume on another thread), the others return at once. Every call first
// recurses --depth levels through growStack, whose frames force the runtime
// to copy the goroutine's stack on the first calls.
//
// Every duration is the monotonic clock around the call, so a recorder's
// interval (inside the call) is at most the printed one; a fast call can
// still take milliseconds when its thread waits for a CPU.
//
// Output (stdout, key=value): pid, goroutines, calls (all goroutines),
// slow_calls, fast_calls, call_ns.min_slow, call_ns.max_fast, call_ns.max,
// call.bucket.B (calls measured in log2 bucket B: [2^B, 2^(B+1)) ns), elapsed_ns.
package main

import (
	"flag"
	"fmt"
	"math/bits"
	"os"
	"sort"
	"sync"
	"time"
)

//go:noinline
func growStack(depth int) int {
	var pad [256]byte
	pad[depth%256] = byte(depth)
	if depth == 0 {
		return int(pad[0])
	}
	return growStack(depth-1) + int(pad[depth%256])
}

//go:noinline
func timedCall(sleep time.Duration, depth int) int {
	n := growStack(depth)
	if sleep > 0 {
		time.Sleep(sleep)
	}
	return n
}

func main() {
	goroutines := flag.Int("goroutines", 4, "goroutines calling timedCall")
	calls := flag.Int("calls", 500, "timedCall calls per goroutine")
	slowEvery := flag.Int("slow-every", 10, "every N-th call sleeps --slow-us (0: none)")
	slowUs := flag.Int("slow-us", 2000, "microseconds a slow call sleeps")
	depth := flag.Int("depth", 64, "growStack levels per call (256-byte frames)")
	flag.Parse()

	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	slow, fast := 0, 0
	minSlow, maxFast := time.Duration(1<<62), time.Duration(0)
	maxAll := time.Duration(0)
	buckets := map[int]int{}
	for g := 0; g < *goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= *calls; i++ {
				isSlow := *slowEvery != 0 && i%*slowEvery == 0
				sleep := time.Duration(0)
				if isSlow {
					sleep = time.Duration(*slowUs) * time.Microsecond
				}
				before := time.Now()
				timedCall(sleep, *depth)
				took := time.Since(before)
				mu.Lock()
				if took > maxAll {
					maxAll = took
				}
				bucket := bits.Len64(uint64(took.Nanoseconds())) - 1
				if bucket < 0 {
					bucket = 0
				}
				buckets[bucket]++
				if isSlow {
					slow++
					if took < minSlow {
						minSlow = took
					}
				} else {
					fast++
					if took > maxFast {
						maxFast = took
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Printf("pid=%d\n", os.Getpid())
	fmt.Printf("goroutines=%d\n", *goroutines)
	fmt.Printf("calls=%d\n", slow+fast)
	fmt.Printf("slow_calls=%d\n", slow)
	fmt.Printf("fast_calls=%d\n", fast)
	fmt.Printf("call_ns.min_slow=%d\n", minSlow.Nanoseconds())
	fmt.Printf("call_ns.max_fast=%d\n", maxFast.Nanoseconds())
	fmt.Printf("call_ns.max=%d\n", maxAll.Nanoseconds())
	var used []int
	for b := range buckets {
		used = append(used, b)
	}
	sort.Ints(used)
	for _, b := range used {
		fmt.Printf("call.bucket.%d=%d\n", b, buckets[b])
	}
	fmt.Printf("elapsed_ns=%d\n", time.Since(start).Nanoseconds())
}
