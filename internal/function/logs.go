package function

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Log bounds: each function keeps its current log file and one older one, each up to
// maxLogBytes, so at most 2*maxLogBytes per function; a line is cut at maxLineBytes.
const (
	maxLogBytes  = 1 << 20
	maxLineBytes = 8 << 10
)

// LogEntry is one line a function's process printed, or one that cairn wrote about an
// invocation (Stream "cairn": START, END, REPORT and failures).
type LogEntry struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"requestId,omitempty"` // a process's init output: the invocation it was started for
	// EventRequestID is the RequestId of the custom-resource event the invocation handled (the
	// one a stack's events show), "" for other payloads.
	EventRequestID string `json:"eventRequestId,omitempty"`
	Stream         string `json:"stream"` // stdout, stderr or cairn
	Message        string `json:"message"`
}

// logbook keeps the logs of every function as JSON lines in dir/NAME.log, rotated to
// NAME.log.1, so that logs outlive the process (the CLI runs cairn in-process per command).
type logbook struct {
	dir string
	mu  sync.Mutex
	now func() time.Time
}

func (b *logbook) path(name string) string { return filepath.Join(b.dir, name+".log") }

// write appends e to name's log, rotating first when the file is full. Errors are dropped:
// losing a log line must never fail an invocation.
func (b *logbook) write(name string, e LogEntry) {
	if e.Time.IsZero() {
		e.Time = b.now().UTC()
	}
	if len(e.Message) > maxLineBytes {
		e.Message = e.Message[:maxLineBytes] + "...(cut)"
	}
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.path(name)
	if st, err := os.Stat(p); err == nil && st.Size()+int64(len(line)) >= maxLogBytes {
		_ = os.Rename(p, p+".1")
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
}

// read returns name's entries, oldest first, of one request when requestID is set (an
// invocation's request id, or the RequestId of the custom-resource event it handled), the last
// limit of them when limit > 0.
func (b *logbook) read(name, requestID string, limit int) ([]LogEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []LogEntry
	for _, p := range []string{b.path(name) + ".1", b.path(name)} {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot read the logs of function %s: %w", name, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), 64<<10)
		for sc.Scan() {
			var e LogEntry
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if requestID == "" || e.RequestID == requestID || e.EventRequestID == requestID {
				out = append(out, e)
			}
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func (b *logbook) remove(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = os.Remove(b.path(name))
	_ = os.Remove(b.path(name) + ".1")
}

// lineWriter turns a process's output stream into log entries, one per line, tagged with
// the request the process is working on when the line ends.
type lineWriter struct {
	stream  string
	emit    func(stream, line string)
	mu      sync.Mutex
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.emit(w.stream, string(bytes.TrimRight(w.partial[:i], "\r")))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxLineBytes {
		w.emit(w.stream, string(w.partial))
		w.partial = nil
	}
	return len(p), nil
}

// flush emits a last line without a newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.emit(w.stream, string(w.partial))
		w.partial = nil
	}
}
