package workspace

import (
	"container/list"
	"sync"
)

// DefaultCapacity is how many events, statuses aside, a subscriber's queue
// holds by default.
const DefaultCapacity = 256

// SubscribeOptions configures a Subscription. A nil *SubscribeOptions means
// defaults.
type SubscribeOptions struct {
	// Capacity bounds the events queued for a subscriber that does not keep
	// up, statuses aside (those are bounded by the number of servers: only
	// each server's latest is kept). Beyond it the oldest queued event is
	// dropped and the subscriber gets a *MissedEvent. Default
	// DefaultCapacity.
	Capacity int
	// ToolSet asks for *ToolSetEvent, which most subscribers, who follow
	// the provider definitions' hashes, have no use for.
	ToolSet bool
	// Logs asks for *LogEvent: the servers' log lines, which only a
	// subscriber that shows them has use for; the others' queues they
	// would only fill.
	Logs bool
	// Reviews asks for *ReviewEvent: for frontends that show the tools
	// whose definitions await review.
	Reviews bool
}

// A Subscription receives the workspace's events in the order they
// happened, less superseded statuses and, if it falls too far behind,
// dropped events that a *MissedEvent reports. Publishing never waits for a
// subscriber: a Conn goroutine or the file watcher that publishes only
// queues.
type Subscription struct {
	ch     chan Event
	kick   chan struct{} // something was queued; buffered 1
	done   chan struct{} // closed by Close
	pumped chan struct{} // closed when pump has returned
	once   sync.Once
	unsub  func()

	// mu guards the queue.
	mu       sync.Mutex
	queue    list.List                // of Event, in publish order
	statuses map[string]*list.Element // server → its queued *StatusEvent
	others   int                      // queued events that are not statuses
	capacity int
	missed   int  // events dropped since the last *MissedEvent was taken
	toolSet  bool // SubscribeOptions.ToolSet
	logs     bool // SubscribeOptions.Logs
	reviews  bool // SubscribeOptions.Reviews
}

func newSubscription(opts *SubscribeOptions, unsub func()) *Subscription {
	s := &Subscription{
		ch:       make(chan Event),
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		pumped:   make(chan struct{}),
		unsub:    unsub,
		statuses: make(map[string]*list.Element),
		capacity: DefaultCapacity,
	}
	if opts != nil && opts.Capacity > 0 {
		s.capacity = opts.Capacity
	}
	if opts != nil {
		s.toolSet, s.reviews = opts.ToolSet, opts.Reviews
		s.logs = opts.Logs
	}
	go s.pump()
	return s
}

// Events returns the channel the events come on. It is closed by Close,
// and by the workspace's Close.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Close ends the subscription: its channel is closed and nothing more is
// queued for it. It is safe to call more than once and from any goroutine.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.unsub()
		close(s.done)
	})
	<-s.pumped
}

// push queues ev. It never blocks.
func (s *Subscription) push(ev Event) {
	if _, ok := ev.(*ToolSetEvent); ok && !s.toolSet {
		return
	}
	if _, ok := ev.(*LogEvent); ok && !s.logs {
		return
	}
	if _, ok := ev.(*ReviewEvent); ok && !s.reviews {
		return
	}
	s.mu.Lock()
	if st, ok := ev.(*StatusEvent); ok {
		// Only the latest status of a server is worth delivering; it goes
		// where it happened, after the events published before it.
		if el := s.statuses[st.Status.Name]; el != nil {
			s.queue.Remove(el)
		}
		s.statuses[st.Status.Name] = s.queue.PushBack(ev)
	} else {
		if s.others >= s.capacity {
			s.dropOldest()
		}
		s.queue.PushBack(ev)
		s.others++
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// dropOldest drops the oldest queued event that is not a status. The
// caller holds mu.
func (s *Subscription) dropOldest() {
	for el := s.queue.Front(); el != nil; el = el.Next() {
		if _, ok := el.Value.(*StatusEvent); !ok {
			s.queue.Remove(el)
			s.others--
			s.missed++
			return
		}
	}
}

// pop takes the next event to deliver: a *MissedEvent first if events were
// dropped.
func (s *Subscription) pop() (Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.missed > 0 {
		ev := &MissedEvent{Count: s.missed}
		s.missed = 0
		return ev, true
	}
	el := s.queue.Front()
	if el == nil {
		return nil, false
	}
	s.queue.Remove(el)
	ev := el.Value.(Event)
	if st, ok := ev.(*StatusEvent); ok {
		delete(s.statuses, st.Status.Name)
	} else {
		s.others--
	}
	return ev, true
}

// unpop puts back an event pop took that could not be delivered yet, so
// that it is coalesced, counted and dropped like the events queued after it.
func (s *Subscription) unpop(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev := ev.(type) {
	case *MissedEvent:
		s.missed += ev.Count
	case *StatusEvent:
		if s.statuses[ev.Status.Name] == nil { // else a newer status supersedes it
			s.statuses[ev.Status.Name] = s.queue.PushFront(ev)
		}
	default:
		s.queue.PushFront(ev)
		s.others++
		if s.others > s.capacity {
			s.dropOldest()
		}
	}
}

// pump delivers queued events to the channel, one at a time, for as long
// as the subscriber takes them. The event it holds while the subscriber is
// not reading goes back to the queue when more arrive: a subscriber that
// reads late gets the *MissedEvent first, and no status older than the
// latest.
func (s *Subscription) pump() {
	defer close(s.pumped)
	defer close(s.ch)
	for {
		ev, ok := s.pop()
		if !ok {
			select {
			case <-s.kick:
				continue
			case <-s.done:
				return
			}
		}
		select {
		case <-s.kick:
			s.unpop(ev)
			continue
		default:
		}
		select {
		case s.ch <- ev:
		case <-s.kick:
			s.unpop(ev)
		case <-s.done:
			return
		}
	}
}

// fanout is the set of subscriptions of a workspace.
type fanout struct {
	// mu serializes publishers, so every subscriber sees one order.
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

func (f *fanout) subscribe(opts *SubscribeOptions) *Subscription {
	var s *Subscription
	s = newSubscription(opts, func() {
		f.mu.Lock()
		delete(f.subs, s)
		f.mu.Unlock()
	})
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		s.Close()
		return s
	}
	if f.subs == nil {
		f.subs = make(map[*Subscription]struct{})
	}
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s
}

// publish queues evs for every subscriber. It never blocks on one.
func (f *fanout) publish(evs ...Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		for _, ev := range evs {
			s.push(ev)
		}
	}
}

// close ends every subscription.
func (f *fanout) close() {
	f.mu.Lock()
	f.closed = true
	subs := make([]*Subscription, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	f.mu.Unlock()
	for _, s := range subs {
		s.Close()
	}
}
