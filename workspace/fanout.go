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
	// up, statuses aside (a server's status that only statuses followed is
	// replaced by its next, so statuses are bounded by the servers plus
	// the other events). Beyond it the oldest queued event is
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
	// Tasks asks for *TaskEvent: for frontends, told of the tasks their
	// calls started.
	Tasks bool
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
	queue    list.List               // of Event, in publish order
	statuses map[string]queuedStatus // server → its latest queued *StatusEvent
	others   int                     // queued events that are not statuses
	pushed   int                     // events that are not statuses ever queued
	capacity int
	missed   int // events dropped since the last *MissedEvent was taken
	// behind is set from a drop until its *MissedEvent was delivered:
	// the subscriber will read the state again, so the order of the
	// statuses is moot. (missed is 0 while the pump holds the event.)
	behind  bool
	toolSet bool // SubscribeOptions.ToolSet
	logs    bool // SubscribeOptions.Logs
	reviews bool // SubscribeOptions.Reviews
	tasks   bool // SubscribeOptions.Tasks
}

// queuedStatus is a server's latest queued status, and the count of other
// events queued before it (Subscription.pushed then): while that count has
// not moved, nothing but statuses came after it, and a newer status of the
// server can take its place.
type queuedStatus struct {
	el     *list.Element
	pushed int
}

func newSubscription(opts *SubscribeOptions, unsub func()) *Subscription {
	s := &Subscription{
		ch:       make(chan Event),
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		pumped:   make(chan struct{}),
		unsub:    unsub,
		statuses: make(map[string]queuedStatus),
		capacity: DefaultCapacity,
	}
	if opts != nil && opts.Capacity > 0 {
		s.capacity = opts.Capacity
	}
	if opts != nil {
		s.toolSet, s.reviews = opts.ToolSet, opts.Reviews
		s.logs = opts.Logs
		s.tasks = opts.Tasks
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
	if _, ok := ev.(*TaskEvent); ok && !s.tasks {
		return
	}
	s.mu.Lock()
	if st, ok := ev.(*StatusEvent); ok {
		// Only the latest status of a server is worth delivering, and it
		// goes where it happened, after the events published before it. A
		// queued status that only statuses followed takes the newer one's
		// value in its place; one that other events followed stays, so
		// that those events reach the subscriber after the state they
		// happened in (a server's resources changed after it was
		// connected, not before), and the newer one queues behind them.
		// Once events were dropped the order is moot (the subscriber reads
		// the state again on its *MissedEvent): the older one goes.
		name := st.Status.Name
		q, ok := s.statuses[name]
		switch {
		case ok && q.pushed == s.pushed:
			q.el.Value = ev
		case ok && s.behind:
			s.queue.Remove(q.el)
			s.statuses[name] = queuedStatus{el: s.queue.PushBack(ev), pushed: s.pushed}
		default:
			s.statuses[name] = queuedStatus{el: s.queue.PushBack(ev), pushed: s.pushed}
		}
	} else {
		if s.others >= s.capacity {
			s.dropOldest()
		}
		s.queue.PushBack(ev)
		s.others++
		s.pushed++
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// dropOldest drops the oldest queued event that is not a status. The
// first drop also drops every status a newer one of its server follows:
// the subscriber reads the state again on its *MissedEvent, so only each
// server's latest is worth keeping, and the statuses stay bounded by the
// servers plus the other events. The caller holds mu.
func (s *Subscription) dropOldest() {
	if !s.behind {
		s.behind = true
		for el := s.queue.Front(); el != nil; {
			next := el.Next()
			if st, ok := el.Value.(*StatusEvent); ok && s.statuses[st.Status.Name].el != el {
				s.queue.Remove(el)
			}
			el = next
		}
	}
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
		if s.statuses[st.Status.Name].el == el {
			delete(s.statuses, st.Status.Name)
		}
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
		if _, ok := s.statuses[ev.Status.Name]; ok && s.behind {
			return // a newer one is queued, and the order is moot (push)
		}
		// A newer status of the server queued with only statuses before
		// it takes this one's place, as push would have had it, had this
		// one not been taken out to be delivered.
		for el := s.queue.Front(); el != nil; el = el.Next() {
			st, ok := el.Value.(*StatusEvent)
			if !ok {
				break
			}
			if st.Status.Name == ev.Status.Name {
				return
			}
		}
		el := s.queue.PushFront(ev)
		if _, ok := s.statuses[ev.Status.Name]; !ok {
			// It is the server's latest again; a newer status may take
			// its place only while no other event is queued behind it.
			pushed := -1
			if s.others == 0 {
				pushed = s.pushed
			}
			s.statuses[ev.Status.Name] = queuedStatus{el: el, pushed: pushed}
		}
		// Else a newer status is queued: this one still goes first, as
		// the events queued between them happened in its state.
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
			if _, ok := ev.(*MissedEvent); ok {
				s.mu.Lock()
				s.behind = s.missed > 0
				s.mu.Unlock()
			}
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
