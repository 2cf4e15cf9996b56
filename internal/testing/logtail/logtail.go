// Package logtail reads the end of a log file, for a failing test to print
// what a process it started said last.
package logtail

import (
	"os"
	"strings"
)

// Tail is the last n lines of the file at path, or why it cannot be read.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
