package oauth

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// loopbackPeer tells whose the other end of c is, c being a TCP
// connection the callback accepted on 127.0.0.1: the kernel's socket
// tables (/proc/net/tcp, tcp6) name the owner of every socket of this
// network namespace. The other end of the browser's connection is the
// browser's socket, the user's; a local user who learnt the sign-in's
// state and answers the callback first has a socket of its own (see
// callbackServer.serve).
//
// Such a user could reset its connection as soon as it sent its request:
// its socket is then gone from the tables and the request still waits to
// be read. But so is the callback's own end of the connection, which is
// how that case is told from an other end that is no socket of this
// namespace at all (a forwarder's from another machine): there the
// callback's end is established, in two reads of the tables in a row (a
// reset between the two is seen in the second).
func loopbackPeer(c net.Conn) peer {
	local, err1 := netip.ParseAddrPort(c.LocalAddr().String())
	remote, err2 := netip.ParseAddrPort(c.RemoteAddr().String())
	if err1 != nil || err2 != nil {
		return peer{}
	}
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	ours := true
	for range 2 {
		theirs, ourEnd, ok := findSockets(local, remote)
		switch {
		case !ok:
			return peer{}
		case theirs.found:
			return theirs
		}
		ours = ours && ourEnd
	}
	return peer{known: true, ours: ours}
}

// findSockets reads the socket tables once for the two ends of the
// connection from remote to local: the other end's socket, and whether
// ours is established. ok is false when no table could be read.
func findSockets(local, remote netip.AddrPort) (theirs peer, oursEstablished, ok bool) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		ok = true
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			l, ok1 := procAddr(fields[1])
			r, ok2 := procAddr(fields[2])
			switch {
			case !ok1 || !ok2:
			case l == remote && r == local:
				uid, err := strconv.Atoi(fields[7])
				if err != nil {
					continue
				}
				// An inode of 0 is a socket no process holds any more.
				theirs = peer{known: true, found: true, uid: uid, orphan: fields[9] == "0"}
			case l == local && r == remote:
				oursEstablished = fields[3] == "01" // TCP_ESTABLISHED
			}
		}
		f.Close()
	}
	return theirs, oursEstablished, ok
}

// procAddr parses an address of /proc/net/tcp or tcp6: the address's
// 32-bit words in hex, each in the machine's byte order, a colon, the port
// in hex. An IPv4-mapped IPv6 address is returned as the IPv4 one.
func procAddr(s string) (netip.AddrPort, bool) {
	addrHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(addrHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		// The word as the kernel printed it, a number; in memory, in
		// the machine's order, it is the address's bytes.
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, ok := netip.AddrFromSlice(b)
	port, err := strconv.ParseUint(portHex, 16, 16)
	if !ok || err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}
