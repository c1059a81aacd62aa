package frontend

import "sync"

// queue holds the notifications not yet delivered. It is unbounded: the
// read loop must never wait for OnNotification, and a notification lost
// would leave a frontend showing a state that is no more.
type queue struct {
	// mu guards the fields below; cond waits on it.
	mu     sync.Mutex
	cond   *sync.Cond
	items  []Notification
	closed bool
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(n Notification) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.items = append(q.items, n)
		q.cond.Signal()
	}
}

// pop waits for the next notification; false once the queue is closed
// and the notifications before that delivered.
func (q *queue) pop() (Notification, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return Notification{}, false
	}
	n := q.items[0]
	q.items[0] = Notification{}
	q.items = q.items[1:]
	return n, true
}

func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}
