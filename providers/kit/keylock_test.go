package kit

import (
	"sync"
	"testing"
)

func TestKeyedMutexSerialisesOneKeyAndForgetsIt(t *testing.T) {
	var k KeyedMutex
	var wg sync.WaitGroup
	counter := 0
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer k.Lock("secret")()
			counter++ // a data race without the lock; -race would report it
		}()
	}
	wg.Wait()
	if counter != 50 || len(k.locks) != 0 {
		t.Fatalf("counter %d, %d locks left", counter, len(k.locks))
	}
}
