package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/freecode/freecode/config"
)

// seatbeltProfile is the sandbox-exec (Seatbelt) profile of p: everything
// denied but what a server needs to run, reads of the whole system but
// p's hidden paths, writes to p's writable paths and the temporary
// directories, and the network p allows; with an allow-list, only the
// proxy on the loopback port proxyPort. It is built on any system, so its
// text is tested everywhere; it has not been run on a Mac.
func seatbeltProfile(p Policy, proxyPort int) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read mach-lookup ipc-posix-shm ipc-posix-sem iokit-open)\n")
	b.WriteString("(allow file-read*)\n")
	// Seatbelt cannot show a copy in a file's place: a masked file is
	// hidden whole.
	hidden := append(slices.Clone(p.DenyRead), p.Masked...)
	if len(hidden) > 0 {
		b.WriteString("(deny file-read* file-write*")
		for _, d := range hidden {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbString(d))
		}
		b.WriteString(")\n")
	}
	b.WriteString("(allow file-write*")
	for _, w := range append([]string{p.Cwd}, p.Writable...) {
		fmt.Fprintf(&b, "\n  (subpath %s)", sbString(w))
	}
	b.WriteString("\n  (subpath \"/private/tmp\") (subpath \"/private/var/folders\")")
	b.WriteString("\n  (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\"))\n")
	// The hidden and protected paths stay so under a writable one:
	// Seatbelt takes the last rule that matches, and a path rule denies
	// a file's creation too, so no placeholder is needed here.
	if denyWrite := slices.Concat(hidden, p.Protected); len(denyWrite) > 0 {
		b.WriteString("(deny file-write*")
		for _, d := range denyWrite {
			fmt.Fprintf(&b, "\n  (subpath %s)", sbString(d))
		}
		b.WriteString(")\n")
	}
	switch p.Network {
	case config.NetworkAll:
		b.WriteString("(allow network*)\n")
	case config.NetworkDomains:
		fmt.Fprintf(&b, "(allow network-outbound (remote ip \"localhost:%d\"))\n", proxyPort)
	}
	return b.String()
}

// sbString quotes s as a Seatbelt (Scheme) string: only a backslash and
// a double quote are escaped there.
func sbString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
