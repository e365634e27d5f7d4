package data

import (
	"fmt"
	"os"
	"syscall"
)

// openRegular opens a regular file for reading, refusing a directory and
// every special file with an error naming it: a FIFO with no writer
// would block the open (and ignore signals) for ever, a device or socket
// yields no end. The open is non-blocking, so a FIFO is refused at once;
// on a regular file O_NONBLOCK has no effect.
func openRegular(path, what string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", what, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("data: %s: %w", what, err)
	}
	switch m := st.Mode(); {
	case m.IsDir():
		f.Close()
		return nil, fmt.Errorf("data: %s is a directory; give the path of a %s in it", path, what)
	case m&os.ModeNamedPipe != 0:
		f.Close()
		return nil, fmt.Errorf("data: %s is a named pipe (FIFO), not a regular file: a %s must be a file (write the stream to a file first)", path, what)
	case !m.IsRegular():
		f.Close()
		return nil, fmt.Errorf("data: %s is a %s, not a regular file: give the path of a %s", path, FileKind(m), what)
	}
	return f, nil
}

// FileKind names what a file that is not regular is ("directory", "named
// pipe (FIFO)", "character device", "block device", "socket" or "special
// file"), for errors that refuse it; "" for a regular file.
func FileKind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "block device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
