package kit

import "sync"

// KeyedMutex serialises the writes of this process to one remote secret.
// Providers without check-and-set (AWS) push a property by reading the
// secret, merging the field and writing it back; two pushes of different
// properties of one secret must not lose one of them. Locks exist only while
// held, so the map does not grow with every key ever written.
type KeyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// Lock locks key and returns the function that unlocks it.
func (k *KeyedMutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()

	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
