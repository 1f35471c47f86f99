package httpfunc_test

import (
	"bytes"
	"io"
	"net/http"
)

func readAll(r *http.Request) ([]byte, error) { return io.ReadAll(r.Body) }

func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
