//go:build !race

package function

const raceEnabled = false
