/*
Copyright 2026 The provider-cloudsql-postgres Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package budget

import (
	"net/http"
	"sync"
)

// Windows keeps a Window for each of several keys (the provider's tenant
// configurations, each of which spends a quota of its own), made on first use,
// so that what one key spends never delays or refuses another's requests, nor
// those of the Window that the rest share. It is safe for concurrent use.
//
// A Window that admitted nothing within its period and that no request waits
// for is dropped when a new key's is made: it holds nothing that a new one
// would not, so memory stays bounded by the keys that sent requests within a
// period, and the Windows of configurations that are gone do not linger.
type Windows struct {
	newWindow func() *Window
	transport []TransportOption

	mu      sync.Mutex
	windows map[string]*keyedWindow
}

type keyedWindow struct {
	w *Window
	// waiting counts the requests waiting for w to admit them: w must not be
	// dropped under them, or the key would have two Windows at once.
	waiting int
}

// NewWindows makes a key's Window with newWindow (such as PerMinute) on its
// first request, and its Transports with o (such as WithObserver).
func NewWindows(newWindow func() *Window, o ...TransportOption) *Windows {
	return &Windows{newWindow: newWindow, transport: o, windows: map[string]*keyedWindow{}}
}

// Transport sends every request, retries included, within key's Window
// (made on first use, shared by every Transport of key), through
// http.DefaultTransport, and retries as NewTransport does.
func (ws *Windows) Transport(key string) http.RoundTripper {
	return newTransport(nil, func() (*Window, func()) { return ws.acquire(key) }, ws.transport...)
}

// Len is how many Windows are kept.
func (ws *Windows) Len() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return len(ws.windows)
}

// acquire returns key's Window, made if there is none, held until release is
// called.
func (ws *Windows) acquire(key string) (*Window, func()) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	k := ws.windows[key]
	if k == nil {
		ws.pruneLocked()
		k = &keyedWindow{w: ws.newWindow()}
		ws.windows[key] = k
	}
	k.waiting++
	return k.w, func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		k.waiting--
	}
}

// pruneLocked drops the Windows that hold nothing and that no request waits
// for.
func (ws *Windows) pruneLocked() {
	for key, k := range ws.windows {
		if k.waiting == 0 && k.w.idle() {
			delete(ws.windows, key)
		}
	}
}
