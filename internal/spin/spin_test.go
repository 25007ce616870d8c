package spin

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestStoreReleasePublishes passes plain-memory payloads through a flag
// written with StoreRelease: the reader, after its atomic load sees the
// episode, must see the payload written before it (and under -race the
// detector checks the happens-before edge).
func TestStoreReleasePublishes(t *testing.T) {
	const rounds = 2000
	var flag, ack uint64
	payload := make([]int, rounds+1)
	done := make(chan int)
	go func() {
		bad := 0
		for e := uint64(1); e <= rounds; e++ {
			for atomic.LoadUint64(&flag) < e {
				runtime.Gosched()
			}
			if payload[e] != int(e)*3 {
				bad++
			}
			StoreRelease(&ack, e)
		}
		done <- bad
	}()
	for e := uint64(1); e <= rounds; e++ {
		payload[e] = int(e) * 3
		StoreRelease(&flag, e)
		for atomic.LoadUint64(&ack) < e {
			runtime.Gosched()
		}
	}
	if bad := <-done; bad != 0 {
		t.Fatalf("%d of %d payloads not visible after the flag", bad, rounds)
	}
}
