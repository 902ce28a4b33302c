package vfs

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Linux io_uring ABI (include/uapi/linux/io_uring.h): part of the kernel's
// interface, not ours to change.
const (
	sysIOUringSetup    = 425
	sysIOUringEnter    = 426
	sysIOUringRegister = 427

	uringOffSQRing   = 0
	uringOffCQRing   = 0x8000000
	uringOffSQEs     = 0x10000000
	uringFeatSingle  = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	uringRegEventFD  = 4      // IORING_REGISTER_EVENTFD
	uringOpFsync     = 3      // IORING_OP_FSYNC
	uringGetEvents   = 1 << 0 // IORING_ENTER_GETEVENTS
	uringFsyncData   = 1 << 0 // IORING_FSYNC_DATASYNC
	uringSQEAsync    = 1 << 4 // IOSQE_ASYNC: run in a kernel worker, never inline
	uringSQESizeByte = 64
	uringCQESizeByte = 16
)

// uringEntriesCount is the submission ring's size, and so the most fsyncs
// in flight through it at once; more go through the direct system call.
const uringEntriesCount = 128

// uringParams is struct io_uring_params.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// errRingDown reports that the ring cannot finish a request; the caller
// syncs directly instead.
var errRingDown = errors.New("vfs: io_uring unavailable")

// errCompletionLost reports that a request reached the kernel but its
// completion could not be read: the fsync's outcome is unknown, and a
// direct retry could succeed where the lost one reported a write-back
// error, so it is the sync's error.
var errCompletionLost = errors.New("vfs: io_uring fdatasync outcome lost")

// ring submits fdatasync requests to an io_uring and hands each completion
// to the goroutine waiting for it. A waiting goroutine parks like one
// waiting for the network, instead of occupying a thread in a blocking
// system call: the Go runtime then neither hands its processor to another
// thread while the disk works nor wakes its monitor thread to do so, and on
// a virtual machine where every thread switch is expensive that was a large
// share of a busy node's CPU (see doc.go).
//
// Completions arrive on an eventfd the runtime's network poller watches. A
// reaper goroutine runs only while requests are in flight.
type ring struct {
	fd      int
	entries uint32
	sqes    []byte
	sqHead  *uint32
	sqTail  *uint32
	sqMask  *uint32
	sqArray unsafe.Pointer
	cqHead  *uint32
	cqTail  *uint32
	cqMask  *uint32
	cqes    unsafe.Pointer
	event   io.Reader // the eventfd (an *os.File; a seam for tests)

	mu      sync.Mutex
	next    uint64
	waiters map[uint64]chan int32
	reaping bool
	down    bool
	synced  atomic.Uint64 // fsyncs completed through the ring
}

// newRing sets up a ring of entries submission slots, or says why it
// cannot (an old kernel, or io_uring refused by a seccomp policy or by
// /proc/sys/kernel/io_uring_disabled).
func newRing(entries uint32) (*ring, error) {
	var p uringParams
	fd, _, errno := syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, os.NewSyscallError("io_uring_setup", errno)
	}
	r := &ring{fd: int(fd), entries: p.sqEntries, waiters: map[uint64]chan int32{}}
	if err := r.mapRings(&p); err != nil {
		syscall.Close(r.fd)
		return nil, err
	}
	if err := r.registerEventFD(); err != nil {
		syscall.Close(r.fd)
		return nil, err
	}
	return r, nil
}

// mapRings maps the submission and completion rings and the entry array.
// The mappings live as long as the process: rings are never torn down.
func (r *ring) mapRings(p *uringParams) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uringCQESizeByte)
	single := p.features&uringFeatSingle != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	sq, err := mmapRing(r.fd, uringOffSQRing, sqSize)
	if err != nil {
		return err
	}
	cq := sq
	if !single {
		if cq, err = mmapRing(r.fd, uringOffCQRing, cqSize); err != nil {
			return err
		}
	}
	if r.sqes, err = mmapRing(r.fd, uringOffSQEs, int(p.sqEntries)*uringSQESizeByte); err != nil {
		return err
	}
	r.sqHead, r.sqTail, r.sqMask = word(sq, p.sqOff.head), word(sq, p.sqOff.tail), word(sq, p.sqOff.ringMask)
	r.sqArray = unsafe.Pointer(&sq[p.sqOff.array])
	r.cqHead, r.cqTail, r.cqMask = word(cq, p.cqOff.head), word(cq, p.cqOff.tail), word(cq, p.cqOff.ringMask)
	r.cqes = unsafe.Pointer(&cq[p.cqOff.cqes])
	return nil
}

func mmapRing(fd int, off int64, size int) ([]byte, error) {
	b, err := syscall.Mmap(fd, off, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap io_uring", err)
	}
	return b, nil
}

func word(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }

// registerEventFD makes the kernel signal an eventfd on every completion;
// the eventfd is non-blocking, so reads of it park in the network poller.
func (r *ring) registerEventFD() error {
	efd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return os.NewSyscallError("eventfd2", errno)
	}
	fd32 := int32(efd)
	_, _, errno = syscall.Syscall6(sysIOUringRegister, uintptr(r.fd), uringRegEventFD, uintptr(unsafe.Pointer(&fd32)), 1, 0, 0)
	if errno != 0 {
		syscall.Close(int(efd))
		return os.NewSyscallError("io_uring_register eventfd", errno)
	}
	r.event = os.NewFile(efd, "io_uring-eventfd")
	return nil
}

// fdatasync makes fd's data durable through the ring and waits for it. It
// answers errRingDown, having done nothing, when the ring is full or out of
// order; the caller then makes the system call itself.
func (r *ring) fdatasync(fd uintptr) error {
	done, err := r.submit(fd)
	if err != nil {
		return err
	}
	res := <-done
	if res == ringLostResult {
		return errCompletionLost
	}
	if res < 0 {
		return syscall.Errno(-res)
	}
	r.synced.Add(1)
	return nil
}

// submit queues one fdatasync of fd and returns where its result arrives.
func (r *ring) submit(fd uintptr) (<-chan int32, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down || len(r.waiters) >= int(r.entries) {
		return nil, errRingDown
	}
	tail := *r.sqTail
	if tail-atomic.LoadUint32(r.sqHead) >= r.entries {
		return nil, errRingDown
	}
	r.next++
	idx := tail & *r.sqMask
	sqe := r.sqes[idx*uringSQESizeByte : (idx+1)*uringSQESizeByte]
	clear(sqe)
	sqe[0] = uringOpFsync
	sqe[1] = uringSQEAsync
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
	*(*uint32)(unsafe.Pointer(&sqe[28])) = uringFsyncData
	*(*uint64)(unsafe.Pointer(&sqe[32])) = r.next
	*(*uint32)(unsafe.Add(r.sqArray, 4*idx)) = idx
	atomic.StoreUint32(r.sqTail, tail+1)
	if err := r.enter(); err != nil {
		// The entry may still be taken by a later enter; nothing waits
		// for it, and one extra fsync is harmless. The ring is not used
		// again.
		r.down = true
		return nil, errRingDown
	}
	done := make(chan int32, 1)
	r.waiters[r.next] = done
	if !r.reaping {
		r.reaping = true
		go r.reap()
	}
	return done, nil
}

// enter hands the queued entry to the kernel.
func (r *ring) enter() error {
	for {
		n, _, errno := syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), 1, 0, 0, 0, 0)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return errno
		case n != 1:
			return errRingDown
		}
		return nil
	}
}

// reap delivers completions until nothing is in flight. Should the eventfd
// fail, the ring takes no new request and the reaper waits for the
// completions of those in flight in io_uring_enter instead: each must get
// its own result, as a direct retry could report success for an fsync
// whose write-back error the ring's request took. Should that fail too,
// every waiter gets errCompletionLost.
func (r *ring) reap() {
	var buf [8]byte
	polled := true
	for {
		r.mu.Lock()
		r.drainLocked()
		if len(r.waiters) == 0 {
			r.reaping = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if polled {
			if _, err := r.event.Read(buf[:]); err != nil {
				polled = false
				r.turnOff()
			}
			continue
		}
		if err := r.waitCompletion(); err != nil {
			r.fail()
			return
		}
	}
}

// waitCompletion blocks in io_uring_enter until the completion ring holds
// an entry.
func (r *ring) waitCompletion() error {
	for {
		_, _, errno := syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), 0, 1, uringGetEvents, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return errno
	}
}

// drainLocked hands every completion in the ring to its waiter.
func (r *ring) drainLocked() {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	for ; head != tail; head++ {
		cqe := unsafe.Add(r.cqes, uringCQESizeByte*uintptr(head&*r.cqMask))
		id := *(*uint64)(cqe)
		res := *(*int32)(unsafe.Add(cqe, 8))
		if done, ok := r.waiters[id]; ok {
			delete(r.waiters, id)
			done <- res
		}
	}
	atomic.StoreUint32(r.cqHead, head)
}

// fail takes the ring out of use and releases every waiter with
// ringLostResult.
func (r *ring) fail() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down, r.reaping = true, false
	for id, done := range r.waiters {
		delete(r.waiters, id)
		done <- ringLostResult
	}
}

// ringLostResult is the result a waiter gets when its completion cannot be
// read: not an errno the kernel uses.
const ringLostResult = -1 << 30

// turnOff stops new requests from using the ring; those in flight finish.
func (r *ring) turnOff() {
	r.mu.Lock()
	r.down = true
	r.mu.Unlock()
}

func (r *ring) isDown() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down
}
