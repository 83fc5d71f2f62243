package e2e

import (
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	p, stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start platform:", err)
		os.Exit(1)
	}
	current = p
	code := m.Run()
	stop()
	os.Exit(code)
}
