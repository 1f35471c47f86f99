package cairntest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// thingRecord is a thing as persisted in <state_dir>/thing-<id>.json. Pointers and nil maps
// keep the difference between an unset (null) argument and an empty one.
type thingRecord struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Size      *int64            `json:"size"`
	Tags      map[string]string `json:"tags"`
	Secret    *string           `json:"secret"`
	CreatedAt string            `json:"created_at"`
	Revision  int64             `json:"revision"`
	FailOn    *string           `json:"fail_on"`
	Rules     []ruleRecord      `json:"rules"`
	Settings  *settingsRecord   `json:"settings,omitempty"`
}

type ruleRecord struct {
	Port     int64  `json:"port"`
	Protocol string `json:"protocol"`
}

type settingsRecord struct {
	Mode     *string `json:"mode"`
	Replicas *int64  `json:"replicas"`
}

const thingPrefix, thingSuffix = "thing-", ".json"

func thingPath(dir, id string) string { return filepath.Join(dir, thingPrefix+id+thingSuffix) }

// newID returns n random bytes as hex.
func newID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// validID keeps ids (which come from import and data source arguments) from naming files
// outside the state directory.
func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".."
}

// loadThing reads a thing; found is false when its file does not exist.
func loadThing(dir, id string) (rec thingRecord, found bool, err error) {
	if !validID(id) {
		return rec, false, nil
	}
	b, err := os.ReadFile(thingPath(dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, false, fmt.Errorf("%s: %w", thingPath(dir, id), err)
	}
	return rec, true, nil
}

// saveThing writes a thing atomically (temporary file and rename).
func saveThing(dir string, rec thingRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".thing-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), thingPath(dir, rec.ID)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// deleteThing removes a thing; a thing already gone is not an error.
func deleteThing(dir, id string) error {
	if !validID(id) {
		return nil
	}
	err := os.Remove(thingPath(dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// countThings counts the thing files in dir.
func countThings(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), thingPrefix) && strings.HasSuffix(e.Name(), thingSuffix) {
			n++
		}
	}
	return n, nil
}
