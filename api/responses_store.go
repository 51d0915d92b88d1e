package api

import (
	"container/list"
	"sync"
)

// storedResponse is a finished response kept for GET /v1/responses/{id}
// and for requests that continue it with previous_response_id.
type storedResponse struct {
	object  responseObject
	history []ChatMessage // the whole conversation including this answer
	images  []promptImage // the images history's markers stand for
}

// responseStore is a bounded in-memory store: beyond its capacity the
// oldest response is evicted.
type responseStore struct {
	capacity int

	mu    sync.Mutex // guards byID and order
	byID  map[string]*list.Element
	order *list.List // of *storedResponse ids, oldest at the front
}

type storeEntry struct {
	id  string
	val storedResponse
}

func newResponseStore(capacity int) *responseStore {
	return &responseStore{capacity: capacity, byID: map[string]*list.Element{}, order: list.New()}
}

// put stores a response, evicting the oldest when full.
func (s *responseStore) put(id string, r storedResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byID[id]; ok {
		el.Value.(*storeEntry).val = r
		return
	}
	s.byID[id] = s.order.PushBack(&storeEntry{id: id, val: r})
	for s.order.Len() > s.capacity {
		oldest := s.order.Front()
		s.order.Remove(oldest)
		delete(s.byID, oldest.Value.(*storeEntry).id)
	}
}

// get returns a stored response.
func (s *responseStore) get(id string) (storedResponse, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byID[id]
	if !ok {
		return storedResponse{}, false
	}
	return el.Value.(*storeEntry).val, true
}
