package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// TestMakeRunCtrlCExitsZero runs `make run` as a terminal would, in its own process group, and
// sends SIGINT to the whole group as Ctrl-C does: the platform stops cleanly and make exits 0.
func TestMakeRunCtrlCExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole platform")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Skipf("no Makefile at the repository root %s", root)
	}
	ctx := context.Background()
	dbURL, drop, err := pgtest.CreateDatabase(ctx, "makerun")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)

	env := append(os.Environ(), "DATABASE_URL="+dbURL, "CHAININTEL_HTTP_ADDR=127.0.0.1:0",
		"CHAININTEL_SIM_RATE=1", "MAKEFLAGS=",
		// Not dev/tmp/stack.json: a developer's own `make run` in this tree keeps its state there.
		"CHAININTEL_STATE_FILE="+filepath.Join(t.TempDir(), "stack.json"))

	// Through make, as a developer runs it. make itself, in the same process group, dies by
	// the SIGINT as any interrupted make does; what must not happen is a failing child
	// (make's "Error 1" line, or go run's "exit status").
	seen, err := runUntilCtrlC(t, root, env, "make", "-s", "run")
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ws, _ := ee.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Fatalf("make run exited %d after Ctrl-C, want 0 or an interrupted make; output:\n%s", ee.ExitCode(), seen)
		}
	case err != nil:
		t.Fatal(err)
	}
	for _, bad := range []string{"Error ", "exit status", "error:"} {
		if strings.Contains(seen, bad) {
			t.Fatalf("Ctrl-C of make run printed %q; output:\n%s", bad, seen)
		}
	}
	if !strings.Contains(seen, "chainintel stopped") {
		t.Fatalf("no clean stop in the output:\n%s", seen)
	}

	// The binary make built, on its own: a clean stop is exit 0.
	seen, err = runUntilCtrlC(t, root, env, filepath.Join(root, ".cache", "run", "chainintel"))
	if err != nil {
		t.Fatalf("chainintel after Ctrl-C: %v, want exit 0; output:\n%s", err, seen)
	}
}

// runUntilCtrlC starts name in its own process group, waits for the platform's "Press Ctrl-C"
// line, sends SIGINT to the whole group as a terminal's Ctrl-C does, and returns the output and
// the wait error.
func runUntilCtrlC(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	var seen []string
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "Press Ctrl-C to stop.") {
			ready = true
			break
		}
	}
	if !ready {
		_ = cmd.Wait()
		t.Fatalf("%s did not come up:\n%s", name, strings.Join(seen, "\n"))
	}
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	err = cmd.Wait()
	return strings.Join(seen, "\n"), err
}
