package app

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/api"
)

// TestFunctionArchiveEscapeOverHTTP: POST /v1/functions with the archive of issue 11 (its
// second link made through its first, its file through both) is a 400 naming the link, and
// nothing is written outside the server's directory; the function routes never show where
// the server keeps code.
func TestFunctionArchiveEscapeOverHTTP(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "a", "b", "state") // code goes to dir/functions/code/NAME-ID: four levels up is top/a
	a := start(t, Config{Dir: dir, Listen: "127.0.0.1:0", Token: "tok"})
	send := func(method, path string, in any) (int, string) {
		t.Helper()
		var body io.Reader
		if in != nil {
			b, _ := json.Marshal(in)
			body = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, a.URL()+path, body)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	zipOf := func(files map[string]string, links ...[2]string) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, l := range links {
			h := &zip.FileHeader{Name: l[0], Method: zip.Store}
			h.SetMode(fs.ModeSymlink | 0o777)
			w, _ := zw.CreateHeader(h)
			io.WriteString(w, l[1])
		}
		for name, body := range files {
			h := &zip.FileHeader{Name: name, Method: zip.Deflate}
			h.SetMode(0o755)
			w, _ := zw.CreateHeader(h)
			io.WriteString(w, body)
		}
		zw.Close()
		return buf.Bytes()
	}
	escape := zipOf(map[string]string{"a/b/c/d/l/m/ESCAPED": "written outside", "bootstrap": "#!/bin/sh\n"},
		[2]string{"a/b/c/d/l", "../../../.."}, [2]string{"a/b/c/d/l/m", "../../../.."})
	status, body := send("POST", "/v1/functions", api.CreateFunctionRequest{Name: "escape", Runtime: "provided", Code: escape})
	if status != http.StatusBadRequest || !strings.Contains(body, `below its link \"a/b/c/d/l\"`) {
		t.Errorf("POST /v1/functions with the escaping archive: %d %s, want 400 naming the link", status, body)
	}
	filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "ESCAPED" {
			t.Errorf("the archive wrote %s", p)
		}
		return nil
	})

	ok := zipOf(map[string]string{"bootstrap": "#!/bin/sh\n"})
	if status, body := send("POST", "/v1/functions", api.CreateFunctionRequest{Name: "fine", Runtime: "provided", Code: ok}); status != http.StatusCreated {
		t.Fatalf("POST /v1/functions: %d %s", status, body)
	}
	for _, path := range []string{"/v1/functions", "/v1/functions/fine"} {
		status, body := send("GET", path, nil)
		if status != http.StatusOK || strings.Contains(body, dir) || strings.Contains(body, "codeDir") {
			t.Errorf("GET %s: %d %s; want 200 without the server's directory", path, status, body)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "functions", "code")); err != nil {
		t.Errorf("the code directory: %v", err)
	}
}
