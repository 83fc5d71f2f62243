package ratelimit

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// batchingScripter runs the GCRA script of concurrent decisions in one Redis pipeline: a single
// goroutine takes the first waiting decision, adds whatever else is waiting at that moment (it
// never waits for more), and sends them together. At low load every decision goes alone; under
// load one round trip and one pair of syscalls serve many requests. It implements the script
// methods redis_rate needs; everything but EVALSHA goes straight to the client.
type batchingScripter struct {
	redis.UniversalClient
	jobs    chan *scriptJob
	timeout time.Duration
	max     int
}

type scriptJob struct {
	ctx  context.Context // the caller's: a job whose caller gave up is not sent
	sha  string
	keys []string
	args []any
	done chan *redis.Cmd
}

func newBatchingScripter(rdb redis.UniversalClient, timeout time.Duration, maxBatch int) *batchingScripter {
	b := &batchingScripter{UniversalClient: rdb, jobs: make(chan *scriptJob, 4096), timeout: timeout, max: maxBatch}
	// One pipeline in flight: while it is on the wire the next batch forms, so under load
	// batches grow instead of splitting over more round trips (fewer syscalls per decision);
	// at low load a decision still goes alone at once.
	go b.loop()
	return b
}

// EvalSha queues the call for the next pipeline and waits for its answer.
func (b *batchingScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	j := &scriptJob{ctx: ctx, sha: sha, keys: keys, args: args, done: make(chan *redis.Cmd, 1)}
	select {
	case b.jobs <- j:
	case <-ctx.Done():
		return errCmd(ctx, ctx.Err())
	}
	select {
	case c := <-j.done:
		return c
	case <-ctx.Done():
		return errCmd(ctx, ctx.Err())
	}
}

func errCmd(ctx context.Context, err error) *redis.Cmd {
	c := redis.NewCmd(ctx)
	c.SetErr(err)
	return c
}

func (b *batchingScripter) loop() {
	batch := make([]*scriptJob, 0, b.max)
	cmds := make([]*redis.Cmd, 0, b.max)
	for first := range b.jobs {
		batch = append(batch[:0], first)
	fill:
		for len(batch) < b.max {
			select {
			case j := <-b.jobs:
				batch = append(batch, j)
			default:
				break fill
			}
		}
		// Callers that timed out while Redis was slow are gone: sending their decisions would
		// only keep the backlog (and the next callers' waits) long.
		live := batch[:0]
		for _, j := range batch {
			if err := j.ctx.Err(); err != nil {
				j.done <- errCmd(j.ctx, err)
				continue
			}
			live = append(live, j)
		}
		if batch = live; len(batch) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		if len(batch) == 1 {
			j := batch[0]
			j.done <- b.UniversalClient.EvalSha(ctx, j.sha, j.keys, j.args...)
			cancel()
			continue
		}
		cmds = cmds[:0]
		pipe := b.UniversalClient.Pipeline()
		for _, j := range batch {
			cmds = append(cmds, pipe.EvalSha(ctx, j.sha, j.keys, j.args...))
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		cancel()
		for i, j := range batch {
			j.done <- cmds[i]
		}
	}
}
