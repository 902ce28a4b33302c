package vfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testRing sets up a private ring, or skips where the kernel refuses
// io_uring (the direct path is then the only one, and other tests cover it).
func testRing(t testing.TB, entries uint32) *ring {
	t.Helper()
	r, err := newRing(entries)
	if err != nil {
		t.Skipf("io_uring unavailable here: %v", err)
	}
	return r
}

// pipeWriter returns the write end of a pipe, closed (both ends) at the
// end of the test: a descriptor fdatasync refuses with EINVAL.
func pipeWriter(t testing.TB) *os.File {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	return pw
}

func tempFile(t testing.TB, name string) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write([]byte("some data to make durable")); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitIdle polls until r's reaper has exited.
func waitIdle(t *testing.T, r *ring) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		reaping := r.reaping
		r.mu.Unlock()
		if !reaping {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reaper is still running with nothing in flight")
		}
		time.Sleep(time.Millisecond)
	}
}

// ensure that a sync through the ring completes and is counted, and that
// the reaper goes away once nothing is in flight.
func TestRingSyncsAFile(t *testing.T) {
	r := testRing(t, 8)
	f := tempFile(t, "a")
	if err := r.fdatasync(f.Fd()); err != nil {
		t.Fatalf("fdatasync through the ring: %v", err)
	}
	if got := r.synced.Load(); got != 1 {
		t.Fatalf("ring counted %d syncs, want 1", got)
	}
	waitIdle(t, r)
}

// ensure that the ring reports the errors the system call would: a pipe
// cannot be synced (EINVAL) either way, and syncThrough then keeps the
// ring in use because the system call fails too.
func TestRingErrorsMatchTheSystemCall(t *testing.T) {
	r := testRing(t, 8)
	pw := pipeWriter(t)
	direct := fdatasyncFD(pw.Fd())
	if !errors.Is(direct, syscall.EINVAL) {
		t.Fatalf("direct fdatasync of a pipe: %v, want EINVAL", direct)
	}
	if err := r.fdatasync(pw.Fd()); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("ring fdatasync of a pipe: %v, want EINVAL", err)
	}
	if err := syncThrough(r, pw.Fd()); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("syncThrough of a pipe: %v, want EINVAL", err)
	}
	if r.isDown() {
		t.Fatal("an EINVAL the system call shares turned the ring off")
	}
	waitIdle(t, r)
}

// ensure that a full ring makes syncThrough use the system call instead of
// waiting for room.
func TestFullRingFallsBackToTheSystemCall(t *testing.T) {
	r := testRing(t, 2)
	r.mu.Lock()
	for i := range int(r.entries) {
		r.waiters[uint64(1<<40+i)] = make(chan int32, 1) // occupy every slot
	}
	r.mu.Unlock()
	f := tempFile(t, "a")
	if err := syncThrough(r, f.Fd()); err != nil {
		t.Fatalf("syncThrough with a full ring: %v", err)
	}
	if got := r.synced.Load(); got != 0 {
		t.Fatalf("a full ring took %d syncs", got)
	}
	r.mu.Lock()
	clear(r.waiters)
	r.mu.Unlock()
	if err := syncThrough(r, f.Fd()); err != nil || r.synced.Load() != 1 {
		t.Fatalf("with room again: err %v, ring syncs %d, want nil and 1", err, r.synced.Load())
	}
	waitIdle(t, r)
}

// ensure that many goroutines syncing at once through a small ring all
// succeed (the ring takes what it has room for, the rest go direct) and
// that the reaper ends afterwards.
func TestRingUnderConcurrentSyncs(t *testing.T) {
	r := testRing(t, 4)
	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		f := tempFile(t, fmt.Sprintf("f%d", g))
		wg.Go(func() {
			for range each {
				if err := syncThrough(r, f.Fd()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent syncThrough: %v", err)
	}
	if r.synced.Load() == 0 {
		t.Fatal("no sync went through the ring")
	}
	waitIdle(t, r)
}

// ensure that a turned-off ring is not used and syncs still succeed.
func TestTurnedOffRingIsNotUsed(t *testing.T) {
	r := testRing(t, 8)
	r.turnOff()
	if err := syncThrough(r, tempFile(t, "a").Fd()); err != nil {
		t.Fatalf("syncThrough on a turned-off ring: %v", err)
	}
	if got := r.synced.Load(); got != 0 {
		t.Fatalf("a turned-off ring took %d syncs", got)
	}
}

// gatedEvent stands in for a ring's eventfd: each read says it began on
// entered and returns the error the test sends on reply.
type gatedEvent struct {
	entered chan struct{}
	reply   chan error
}

func (g gatedEvent) Read([]byte) (int, error) {
	g.entered <- struct{}{}
	return 0, <-g.reply
}

// ensure that a request in flight when the eventfd fails still gets the
// kernel's own result, not a direct retry (which could report success for
// an fsync whose write-back error the ring's request took), and that the
// ring takes no new request afterwards.
func TestEventFDFailureKeepsTheResultInFlight(t *testing.T) {
	r := testRing(t, 8)
	pw := pipeWriter(t)
	ev := gatedEvent{entered: make(chan struct{}), reply: make(chan error)}
	r.event = ev
	const placeholder = 1 << 40 // keeps the reaper waiting until the request is in
	r.mu.Lock()
	r.waiters[placeholder] = make(chan int32, 1)
	r.reaping = true
	r.mu.Unlock()
	go r.reap()
	<-ev.entered // the reaper drained nothing and waits on the eventfd
	done, err := r.submit(pw.Fd())
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	r.mu.Lock()
	delete(r.waiters, placeholder)
	r.mu.Unlock()
	ev.reply <- errors.New("eventfd read failed")
	if res := <-done; res != -int32(syscall.EINVAL) {
		t.Fatalf("request in flight when the eventfd failed got %d, want the kernel's -EINVAL", res)
	}
	if !r.isDown() {
		t.Fatal("a ring whose eventfd failed stays in use")
	}
	waitIdle(t, r)
	if err := syncThrough(r, tempFile(t, "a").Fd()); err != nil || r.synced.Load() != 0 {
		t.Fatalf("after failure: err %v, ring syncs %d, want nil and 0", err, r.synced.Load())
	}
}

// ensure that when the ring cannot deliver completions at all, every
// waiter gets an error that syncThrough returns as it is (the outcome of
// its fsync is unknown, so a direct retry could succeed falsely) and the
// ring is not used again.
func TestRingFailureFailsWaiters(t *testing.T) {
	r := testRing(t, 8)
	done := make(chan int32, 1)
	r.mu.Lock()
	r.waiters[7] = done
	r.reaping = true
	r.mu.Unlock()
	r.fail()
	if got := <-done; got != ringLostResult {
		t.Fatalf("waiter got %d, want the lost-completion result", got)
	}
	if !r.isDown() {
		t.Fatal("a failed ring stays in use")
	}
	if err := syncThrough(&fakeRing{err: errCompletionLost}, tempFile(t, "b").Fd()); !errors.Is(err, errCompletionLost) {
		t.Fatalf("syncThrough of a lost completion: %v, want it returned, not retried", err)
	}
	if err := syncThrough(r, tempFile(t, "a").Fd()); err != nil || r.synced.Load() != 0 {
		t.Fatalf("after failure: err %v, ring syncs %d, want nil and 0", err, r.synced.Load())
	}
}

// fakeRing answers every fdatasync with err and records turnOff.
type fakeRing struct {
	err error
	off bool
}

func (f *fakeRing) fdatasync(uintptr) error { return f.err }
func (f *fakeRing) turnOff()                { f.off = true }

// ensure that syncThrough returns an I/O error as the ring reported it,
// without asking again (the kernel reports a write-back error once, so a
// second fsync could wrongly succeed), that answers meaning the request
// never ran (ECANCELED: io-wq could not start a worker) sync directly, and
// that an EINVAL the system call does not share turns the ring off.
func TestSyncThroughErrorHandling(t *testing.T) {
	f := tempFile(t, "a")
	eio := &fakeRing{err: syscall.EIO}
	if err := syncThrough(eio, f.Fd()); !errors.Is(err, syscall.EIO) {
		t.Fatalf("ring EIO: syncThrough returned %v, want EIO", err)
	}
	if eio.off {
		t.Fatal("an I/O error turned the ring off")
	}
	for _, transient := range []error{syscall.EAGAIN, syscall.EINTR, errRingDown, syscall.ECANCELED} {
		fr := &fakeRing{err: transient}
		if err := syncThrough(fr, f.Fd()); err != nil || fr.off {
			t.Fatalf("ring %v: syncThrough returned %v (ring off %v), want a direct sync", transient, err, fr.off)
		}
	}
	inval := &fakeRing{err: syscall.EINVAL}
	if err := syncThrough(inval, f.Fd()); err != nil {
		t.Fatalf("ring EINVAL on a syncable file: %v, want the direct sync's nil", err)
	}
	if !inval.off {
		t.Fatal("an EINVAL only the ring reports left the ring on")
	}
}

// ensure that a File.Sync that overlaps another sync goes through the
// shared ring where the kernel offers io_uring, that a lone one goes by
// the system call when the runtime has processors to spare (the ring
// costs a lone sync twice the CPU), and that SyncMethod says which path
// is in use.
func TestOSFileSyncUsesTheSharedRingWhenSyncsOverlap(t *testing.T) {
	f, err := OS{}.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	r := sharedRing()
	if r == nil {
		t.Skipf("io_uring unavailable: %s", SyncMethod())
	}
	before := r.synced.Load()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if lone := syncDirectly(1, runtime.GOMAXPROCS(0)); lone && r.synced.Load() != before {
		t.Fatal("a lone File.Sync went through the ring")
	}
	before = r.synced.Load()
	syncsInFlight.Add(1) // another sync in flight
	err = f.Sync()
	syncsInFlight.Add(-1)
	if err != nil {
		t.Fatal(err)
	}
	if r.synced.Load() == before {
		t.Fatal("a File.Sync overlapping another did not go through the shared ring")
	}
	if got := SyncMethod(); got != "io_uring" {
		t.Fatalf("SyncMethod() = %q, want io_uring", got)
	}
	waitIdle(t, r)
}

// ensure that a sync goes by the system call only when it is the only one
// in flight and the runtime has another processor: with GOMAXPROCS=1 a
// thread blocked in fdatasync holds the only processor (three nodes fell
// to a third of their throughput), and overlapping syncs go to the ring.
func TestSyncDirectlyOnlyWhenLoneAndProcessorsToSpare(t *testing.T) {
	cases := []struct {
		inFlight int32
		procs    int
		want     bool
	}{
		{1, 2, true}, {1, 8, true},
		{2, 2, false}, {5, 8, false},
		{1, 1, false}, {2, 1, false},
	}
	for _, c := range cases {
		if got := syncDirectly(c.inFlight, c.procs); got != c.want {
			t.Errorf("syncDirectly(%d in flight, %d processors) = %v, want %v", c.inFlight, c.procs, got, c.want)
		}
	}
}

// ensure that syncOverlapping hands an overlapping sync to the ring, and
// that the count of syncs in flight comes back down on both paths.
func TestSyncOverlappingPicksThePath(t *testing.T) {
	f := tempFile(t, "a")
	fr := &countingRing{}
	if err := syncOverlapping(fr, f.Fd()); err != nil {
		t.Fatalf("lone sync: %v", err)
	}
	if want := btoi(!syncDirectly(1, runtime.GOMAXPROCS(0))); fr.calls != want {
		t.Fatalf("lone sync with GOMAXPROCS %d: ring calls %d, want %d", runtime.GOMAXPROCS(0), fr.calls, want)
	}
	before := fr.calls
	syncsInFlight.Add(1)
	err := syncOverlapping(fr, f.Fd())
	syncsInFlight.Add(-1)
	if err != nil || fr.calls != before+1 {
		t.Fatalf("overlapping sync: err %v, ring calls %d, want nil and %d", err, fr.calls, before+1)
	}
	if n := syncsInFlight.Load(); n != 0 {
		t.Fatalf("syncs in flight after both = %d, want 0", n)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countingRing counts the syncs handed to it and answers each as done.
type countingRing struct{ calls int }

func (c *countingRing) fdatasync(uintptr) error { c.calls++; return nil }
func (c *countingRing) turnOff()                {}

// ensure that Sync holds the file's descriptor through the sync: a closed
// file is refused as closed before any descriptor number reaches the
// kernel (a number that might by then name another file).
func TestSyncOfAClosedFileIsRefused(t *testing.T) {
	f, err := OS{}.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Sync of a closed file: %v, want os.ErrClosed", err)
	}
}
