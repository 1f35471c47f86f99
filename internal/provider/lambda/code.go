package lambda

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
)

// The response modules AWS gives inline code, in cairn's own implementation of their
// documented interface.
var (
	//go:embed modules/cfn-response.js
	cfnResponseJS []byte
	//go:embed modules/cfnresponse.py
	cfnResponsePy []byte
)

// inlineCode packs inline source as the code of a function of runtime kind (nodejs or
// python): the module index with the response module beside it, where require('cfn-response')
// and import cfnresponse find them.
func inlineCode(kind, source string) ([]byte, error) {
	files := map[string][]byte{}
	switch kind {
	case "nodejs":
		files["index.js"] = []byte(source)
		files["node_modules/cfn-response/index.js"] = cfnResponseJS
	case "python":
		files["index.py"] = []byte(source)
		files["cfnresponse.py"] = cfnResponsePy
	default:
		return nil, fmt.Errorf("no inline code for runtime %q", kind)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"index.js", "index.py", "node_modules/cfn-response/index.js", "cfnresponse.py"} {
		b, ok := files[name]
		if !ok {
			continue
		}
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate}
		hdr.SetMode(0o644)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(b); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
