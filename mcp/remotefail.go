package mcp

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// remoteFailure says why a remote server did not come up in the user's
// words first, then what FreeCode was doing (err, which it wraps and the
// log keeps whole): nothing listening, no such host, a certificate not
// trusted, or a web server that is not an MCP endpoint at that URL. An
// error it does not know is returned as it is.
func remoteFailure(rawURL string, probe *httpProbe, err error) error {
	if err == nil || failureOf(err) != nil || errors.Is(err, ErrURLRefused) {
		return err
	}
	host := rawURL
	if u, perr := url.Parse(rawURL); perr == nil && u.Host != "" {
		host = u.Host
	}
	var (
		dnsErr  *net.DNSError
		unknown x509.UnknownAuthorityError
		invalid x509.HostnameError
		expired x509.CertificateInvalidError
	)
	var cause string
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		cause = fmt.Sprintf("nothing is listening at %s (connection refused): is the server running, and is the URL's port right?", host)
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		cause = fmt.Sprintf("there is no host %s (the name does not resolve): check the URL", dnsErr.Name)
	case errors.As(err, &unknown):
		cause = fmt.Sprintf("%s's TLS certificate is not signed by an authority this machine trusts: set the entry's caBundle to the CA that signed it", host)
	case errors.As(err, &invalid):
		cause = fmt.Sprintf("%s's TLS certificate is for another name (%v)", host, invalid.Error())
	case errors.As(err, &expired):
		cause = fmt.Sprintf("%s's TLS certificate is not valid (%v)", host, expired.Error())
	case probe != nil && probe.seen.Load() && notMCP(probe):
		cause = fmt.Sprintf("%s answered the MCP handshake with %d %s: a web server is there, but not an MCP endpoint at this URL; check its path (servers often serve MCP at /mcp)",
			rawURL, probe.status, http.StatusText(probe.status))
	default:
		return err
	}
	return &Failure{Kind: FailureOther, Msg: cause + " (" + shortDetail(err) + ")", ExitCode: -1, Err: err}
}

// notMCP reports whether the answer to initialize was one a server that
// is not an MCP endpoint gives: not found, not allowed, not implemented, or
// a page (HTML) where JSON was asked for.
func notMCP(p *httpProbe) bool {
	switch p.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return p.status < 300 && p.contentType == "text/html"
}

// shortDetail is the last link of err's chain as it reads: the part of
// "connecting to …: calling …: sending …: Post …: dial tcp …: connect:
// connection refused" that is not said already.
func shortDetail(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		// The operation before it, too, when it is a short one (dial tcp …).
		if j := strings.LastIndex(s[:i], ": "); j >= 0 && i-j < 40 {
			return s[j+2:]
		}
		return s[i+2:]
	}
	return s
}
