package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// notifySignals returns a context that SIGINT or SIGTERM cancels, with a
// *signalError as its cause, and a function that stops listening. After
// the first signal the default handling returns, so a second Ctrl-C kills
// the process at once.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(&signalError{sig: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
		<-done
	}
}

// interruption is the signal that canceled ctx as an error carrying its
// exit code (130 or 143), or nil when no signal did.
func interruption(ctx context.Context) *signalError {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}
