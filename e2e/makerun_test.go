package e2e

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainintel/chainintel/libs/pgstore/pgtest"
)

// Ctrl-C in the terminal of `make run` (SIGINT to its whole process group, make included)
// stops the platform cleanly: the command exits 0, so make reports no error.
func TestMakeRunStopsCleanly(t *testing.T) {
	if os.Getenv("CHAININTEL_E2E_URL") != "" {
		t.Skip("the platform under test is not ours to stop (CHAININTEL_E2E_URL)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	dbURL, drop, err := pgtest.CreateDatabase(context.Background(), "e2e_makerun")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	cmd := exec.Command("make", "--no-print-directory", "run")
	cmd.Dir = repoRoot()
	cmd.Env = stackEnv(dbURL)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a terminal's foreground group of its own
	var logs strings.Builder
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	group := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-group, syscall.SIGKILL) })
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "chainintel is running") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
		done <- cmd.Wait()
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("make run ended while starting (%v):\n%s", err, logs.String())
	case <-time.After(180 * time.Second):
		t.Fatal("make run did not start within 180 s")
	}
	if err := syscall.Kill(-group, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		// GNU make ends itself with the SIGINT it received, once its recipe has ended (the
		// shell then reports 130, as for any interrupted make): the recipe's own status shows in
		// make reporting an error for it, or not.
		var exit *exec.ExitError
		interrupted := errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGINT
		if (err != nil && !interrupted) || strings.Contains(logs.String(), "Error") || !strings.Contains(logs.String(), "chainintel stopped") {
			t.Fatalf("make run after Ctrl-C: %v, want the command's status 0 and no error reported:\n%s", err, tail(logs.String()))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("make run did not stop within 60 s of Ctrl-C")
	}
}

func tail(s string) string { return s[max(0, len(s)-3000):] }
