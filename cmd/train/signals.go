package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals stop training as Ctrl-C does: SIGINT (Ctrl-C), SIGTERM
// (kill's default, and what batch schedulers send before they kill a job)
// and SIGHUP (the terminal went away).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalError is why the context of main is cancelled when a signal
// arrives. It matches context.Canceled, as the context's own error does.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string        { return signalName(e.sig) + " received" }
func (e *signalError) Is(target error) bool { return target == context.Canceled }

// signalName is a signal's name as kill -l and shells spell it.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// cancelOnSignal returns a context that the first of stopSignals cancels,
// with a *signalError as its cause. That signal's default action comes
// back at once, so a second signal ends the program straight away. A
// signal the program was started with ignored (SIGHUP under nohup, SIGINT
// in a background job) stays ignored. stop releases the signals.
func cancelOnSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	var sigs []os.Signal
	for _, s := range stopSignals {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		return ctx, func() { cancel(context.Canceled) }
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch) // before cancelling: the next signal has its default action
			cancel(&signalError{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(context.Canceled)
	}
}

// stoppedBy is the signal that cancelled ctx, nil when none did.
func stoppedBy(ctx context.Context) os.Signal {
	var se *signalError
	if errors.As(context.Cause(ctx), &se) {
		return se.sig
	}
	return nil
}

// exitStatus is train's exit status after run returned err: 0 on success,
// 128 plus the signal's number when a signal stopped it (130 for Ctrl-C,
// 143 for SIGTERM, 129 for SIGHUP, as shells report a program the signal
// killed), 2 for a command line train cannot run, else 1.
func exitStatus(ctx context.Context, err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(*usageError)):
		return 2
	case !errors.Is(err, context.Canceled):
		return 1
	}
	if n, ok := stoppedBy(ctx).(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGINT)
}
