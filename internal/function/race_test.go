//go:build race

package function

// raceEnabled: ThreadSanitizer maps far more memory than a function's limit allows, so the
// test bootstraps get a large limit and the memory test is skipped.
const raceEnabled = true
