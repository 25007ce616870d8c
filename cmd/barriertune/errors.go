package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Exit codes of barriertune, documented in the root command's help and in
// docs/cli.md.
const (
	exitOK        = 0   // success
	exitFailure   = 1   // the command failed
	exitUsage     = 2   // bad command line: unknown command or flag, bad flag value
	exitCannotRun = 126 // omp-run: the program was found but cannot be run (env(1)'s code)
	exitNotFound  = 127 // omp-run: no such program (env(1)'s code)
	exitInterrupt = 130 // stopped by SIGINT (128+2)
	exitTerminate = 143 // stopped by SIGTERM (128+15)
)

// exitCodesHelp is the exit-code table printed in every command's help.
const exitCodesHelp = `Exit codes: 0 success, 1 failure, 2 usage error (unknown command or flag,
bad flag value), 130 interrupted by SIGINT (Ctrl-C), 143 stopped by SIGTERM.`

// exitError is an error that carries the process exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf formats a usage error: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// usageError marks err as a usage error (exit code 2); nil stays nil.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitUsage, err: err}
}

// signalError is the cause of a context canceled by a signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + signalName(e.sig) }

// exitCode is the process exit code for err.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var se *signalError
	if errors.As(err, &se) {
		return signalCode(se.sig)
	}
	return exitFailure
}

// signalCode is 128 plus the signal number, the shell's convention.
func signalCode(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerminate
	}
	return exitInterrupt
}

func signalName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}
