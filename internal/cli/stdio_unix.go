//go:build unix

package cli

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The sidecar reads requests and writes responses on pipes or sockets,
// one small message each way per request. Through os.File, every read and
// write is a system call the Go runtime treats as possibly long: a
// blocking read of the next request lets the scheduler's monitor thread
// poll every 20 µs and hand the serving goroutine's processor to another
// thread, and each system call wakes the monitor if it slept. On a machine
// whose CPUs wake each other slowly, those wake-ups cost a request more
// than the request itself.
//
// pollFile instead puts stdin in non-blocking mode, reads it with raw
// system calls (which cannot block: they copy what the kernel has and
// return), and waits in Go's network poller when there is nothing to read;
// rawWriter writes stdout the same way. Between requests every processor
// is then idle and the monitor sleeps; a request wakes the one thread the
// poller hands it to.
type pollFile struct {
	f  *os.File // kept: its finalizer would close the descriptor
	rc syscall.RawConn
}

// maxRawIO bounds one raw read or write, so that none holds its thread
// long (a raw system call is not preemptible).
const maxRawIO = 256 << 10

// pollable returns fd as a pollFile when it is a pipe or a socket that Go's
// poller takes, else nil (the descriptor then stays as it was). Terminals
// and files are left alone: their mode is shared with whoever else has
// them open.
func pollable(fd int, name string) *pollFile {
	if !pipeOrSocket(fd) {
		return nil
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), name)
	// A file the poller took supports deadlines; on one it refused, a read
	// in non-blocking mode would fail with EAGAIN instead of waiting.
	rc, err := f.SyscallConn()
	if err != nil || f.SetDeadline(time.Time{}) != nil {
		_ = syscall.SetNonblock(fd, false)
		return nil
	}
	return &pollFile{f: f, rc: rc}
}

// pipeOrSocket reports whether fd is a pipe or a socket.
func pipeOrSocket(fd int) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false
	}
	t := st.Mode & syscall.S_IFMT
	return t == syscall.S_IFIFO || t == syscall.S_IFSOCK
}

// requestInput returns what the sidecar reads requests from: stdin, through
// the poller when it is a pipe or a socket.
func requestInput() io.Reader {
	if p := pollable(0, "stdin"); p != nil {
		return p
	}
	return os.Stdin
}

// responseOutput returns what the sidecar writes responses to: out (the
// private handle on stdout), written with raw system calls when it is a
// pipe or a socket.
func responseOutput(out *os.File) io.Writer {
	fd := int(out.Fd())
	if !pipeOrSocket(fd) || syscall.SetNonblock(fd, true) != nil {
		return out
	}
	return &rawWriter{f: out, fd: fd}
}

func (p *pollFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	b = b[:min(len(b), maxRawIO)]
	var n int
	var errno syscall.Errno
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawWriter writes a non-blocking descriptor that is not in the poller
// (there, every time the host read a response, the poller would wake a
// thread to report room to write). Should the host leave no room, the
// write waits in poll(2), a system call the runtime knows may block, as
// os.File's write would have waited in write(2).
type rawWriter struct {
	f  *os.File // kept: its finalizer would close the descriptor
	fd int
}

func (w *rawWriter) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := min(len(b)-n, maxRawIO)
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(w.fd), uintptr(unsafe.Pointer(&b[n])), uintptr(c))
		switch e {
		case 0:
			n += int(r)
		case syscall.EINTR:
		case syscall.EAGAIN:
			if err := w.waitRoom(); err != nil {
				return n, err
			}
		default:
			return n, &os.PathError{Op: "write", Path: w.f.Name(), Err: e}
		}
	}
	return n, nil
}

// waitRoom waits until the descriptor has room to write.
func (w *rawWriter) waitRoom() error {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil || err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "write", Path: w.f.Name(), Err: err}
			}
			return nil
		}
	}
}
