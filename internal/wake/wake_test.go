package wake

import (
	"runtime"
	"testing"
	"time"
)

func TestBlockWake(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		if _, err := BlockWake(5, time.Second); err == nil {
			t.Fatal("BlockWake with GOMAXPROCS=1 returned no error")
		}
		return
	}
	d, err := BlockWake(5, time.Second)
	if err != nil || d <= 0 {
		t.Fatalf("BlockWake = %v, %v", d, err)
	}
	if _, err := BlockWake(5, time.Nanosecond); err == nil {
		t.Error("BlockWake with a 1 ns limit returned no error")
	}
}
