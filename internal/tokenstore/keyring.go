package tokenstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	gokeyring "github.com/zalando/go-keyring"
)

// errKeyringDown means the keychain did not work for this Store once
// already (no Secret Service on the session bus, a timeout): it is not
// asked again, and the file serves instead.
var errKeyringDown = errors.New("the OS keychain is not available")

// keyringTimeout bounds one keychain operation. The Secret Service may
// wait on an unlock prompt; a sidecar started over SSH has nobody to
// answer it.
const keyringTimeout = 20 * time.Second

// keyring is the OS keychain through github.com/zalando/go-keyring: one
// generic password item per entry, named by service and prefix+key.
type keyring struct {
	service string
	prefix  string

	// mu guards down.
	mu   sync.Mutex
	down error // why the keychain is not used any more, or nil
}

func (k *keyring) get(key string) (json.RawMessage, error) {
	var v string
	err := k.do(func() (err error) {
		v, err = gokeyring.Get(k.service, k.prefix+key)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("the keychain's %s item for %q is not a JSON document", k.service, key)
	}
	return json.RawMessage(v), nil
}

func (k *keyring) set(key string, value json.RawMessage) error {
	return k.do(func() error { return gokeyring.Set(k.service, k.prefix+key, string(value)) })
}

func (k *keyring) remove(key string) error {
	return k.do(func() error { return gokeyring.Delete(k.service, k.prefix+key) })
}

// do runs op against the keychain, bounded by keyringTimeout. ErrNotFound
// and ErrSetDataTooBig are answers; any other failure marks the keychain
// down for this Store.
func (k *keyring) do(op func() error) error {
	k.mu.Lock()
	down := k.down
	k.mu.Unlock()
	if down != nil {
		return down
	}
	done := make(chan error, 1)
	// go-keyring takes no context: an operation that hangs is left
	// behind, and the keychain is not used again.
	go func() { done <- op() }()
	t := time.NewTimer(keyringTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-done:
	case <-t.C:
		err = fmt.Errorf("no answer within %v", keyringTimeout)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gokeyring.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, gokeyring.ErrSetDataTooBig):
		return err
	}
	k.mu.Lock()
	if k.down == nil {
		k.down = fmt.Errorf("%w: %v", errKeyringDown, err)
	}
	down = k.down
	k.mu.Unlock()
	return down
}
