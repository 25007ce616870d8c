package check

import (
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestHostableThreads(t *testing.T) {
	h := HostableThreads()
	if h.ThreadLimit != 10000 {
		t.Logf("the runtime's thread limit is %d (not the default 10000)", h.ThreadLimit)
	}
	if h.Max < 1 || h.Max > h.ThreadLimit || h.ByThreads >= h.ThreadLimit {
		t.Fatalf("Max %d, ByThreads %d with a thread limit of %d: want 1 <= Max <= ByThreads < the limit", h.Max, h.ByThreads, h.ThreadLimit)
	}
	// Reading the limit leaves it as it was.
	if got := debug.SetMaxThreads(h.ThreadLimit); got != h.ThreadLimit {
		t.Errorf("the thread limit is %d after HostableThreads, was %d", got, h.ThreadLimit)
	}
	if err := h.Refuse(h.Max); err != nil {
		t.Errorf("Refuse(Max=%d) = %v, want nil", h.Max, err)
	}
	err := h.Refuse(h.Max + 1)
	if err == nil {
		t.Fatalf("Refuse(%d) = nil above Max", h.Max+1)
	}
	for _, want := range []string{strconv.Itoa(h.Max + 1), "at most " + strconv.Itoa(h.Max) + " threads here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Refuse(%d) = %q, want it to contain %q", h.Max+1, err, want)
		}
	}
}

func TestHostableRefuseSaysWhy(t *testing.T) {
	byThreads := Hostable{Max: 9900, ByThreads: 9900, ByMemory: 50000, ThreadLimit: 10000}
	if err := byThreads.Refuse(65536); err == nil || !strings.Contains(err.Error(), "limit of 10000 OS threads") {
		t.Errorf("thread-bound refusal %v does not name the runtime's limit", err)
	}
	byMemory := Hostable{Max: 4000, ByThreads: 9900, ByMemory: 4000, ThreadLimit: 10000, AvailableBytes: 1000 << 20}
	if err := byMemory.Refuse(8000); err == nil || !strings.Contains(err.Error(), "half the available memory is 500 MiB") || !strings.Contains(err.Error(), "at most 4000") {
		t.Errorf("memory-bound refusal %v does not name the memory and the largest count", err)
	}
}
