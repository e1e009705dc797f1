// SPDX-License-Identifier: MIT
//
// Two goroutines that take turns over unbuffered channels: each send and
// receive blocks one of them, so the Go scheduler switches stacks
// (mcall, park_m, schedule, execute, gogo) about 4 times a round.  The
// program counts its own functions and their nesting, per goroutine, and
// prints them as tests/data/groundtruth/gt.h does.
package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

const rounds = 20

var names = []string{"main.main", "main.ping", "main.pong", "main.work"}

const (
	fMain = iota
	fPing
	fPong
	fWork
)

var calls [4]int64
var maxDepth int64
var sink int64

// enter counts function f entered at nesting depth d (1 outermost).
func enter(f int, d int64) {
	atomic.AddInt64(&calls[f], 1)
	for {
		m := atomic.LoadInt64(&maxDepth)
		if d <= m || atomic.CompareAndSwapInt64(&maxDepth, m, d) {
			return
		}
	}
}

//go:noinline
func work(d int64, v int) int {
	enter(fWork, d)
	atomic.AddInt64(&sink, int64(v))
	return v + 1
}

//go:noinline
func pong(d int64, in <-chan int, out chan<- int, done chan<- bool) {
	enter(fPong, d)
	for v := range in {
		out <- work(d+1, v)
	}
	done <- true
}

//go:noinline
func ping(d int64, in <-chan int, out chan<- int, v int) int {
	enter(fPing, d)
	out <- v
	return <-in
}

func main() {
	enter(fMain, 1)
	to, from := make(chan int), make(chan int)
	done := make(chan bool)
	go pong(1, to, from, done)
	v := 0
	for i := 0; i < rounds; i++ {
		v = ping(2, from, to, v)
	}
	close(to)
	<-done
	// Print from this thread: a write that a slow backend (ptrace) keeps
	// long may let sysmon hand the P to another thread, where main would
	// go on, and mt-fxt tells goroutines apart per thread (docs/formats/
	// fxt.md, known limits).  A locked goroutine resumes on its thread.
	runtime.LockOSThread()
	for i, n := range names {
		fmt.Printf("calls %s %d\n", n, calls[i])
	}
	fmt.Printf("depth %d\n", maxDepth)
}
