//go:build !unix

package server

import "net"

// listenUnix listens on a unix socket; outside unix its access is the
// directory's ACL's, and there is no umask to set.
func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }
