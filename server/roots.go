package server

import (
	"slices"
)

// roots returns the MCP roots every server is shown: the project root and
// the workspace folders of every frontend that completed initialize, each
// once, the project first.
func (s *Server) roots() []string {
	var out []string
	s.mu.Lock()
	if s.project != "" {
		out = append(out, s.project)
	}
	s.mu.Unlock()
	sessions := s.sessionsNow()
	// By id, so that the order does not change from one call to the next.
	slices.SortFunc(sessions, func(a, b *session) int { return a.id - b.id })
	for _, sess := range sessions {
		sess.mu.Lock()
		if sess.state == sessionInitializing || sess.state == sessionInitialized {
			for _, f := range sess.folders {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
		sess.mu.Unlock()
	}
	return out
}

// rootsChanged gives the workspace the roots as they are now: a frontend
// came, went, or changed its folders.
func (s *Server) rootsChanged() {
	if w, err := s.workspace(); err == nil {
		w.SetRoots(s.roots())
	}
}
