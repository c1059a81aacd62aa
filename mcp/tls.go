package mcp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/freecode/freecode/config"
)

// newRemoteTransport builds the transport of one server. Plain http dials
// loopback only; https dials anything but link-local and metadata
// addresses; both checks run on the resolved address. No proxy: a proxy
// would dial on our behalf, out of the policy's reach.
func newRemoteTransport(tlsConf *tls.Config, timeout time.Duration) *http.Transport {
	plain := newPolicyDialer(timeout, true)
	secure := newPolicyDialer(timeout, false)
	return &http.Transport{
		Proxy:       nil,
		DialContext: plain.DialContext,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := secure.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			conf := tlsConf.Clone()
			if conf.ServerName == "" {
				conf.ServerName, _, _ = net.SplitHostPort(addr)
			}
			hctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			tc := tls.Client(conn, conf)
			if err := tc.HandshakeContext(hctx); err != nil {
				conn.Close()
				return nil, err
			}
			return tc, nil
		},
		// HTTP/1.1 with keep-alive: over HTTP/2 a TLS alert (say, a
		// missing client certificate) surfaces as "http2: client conn could
		// not be established", and MCP gains little from multiplexing.
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
}

// remoteTLSConfig loads caBundle (replacing the system roots) and the
// client certificate for mTLS, with errors that name the file at fault.
func remoteTLSConfig(srv config.Server) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if srv.CABundle != "" {
		pool, err := loadCABundle(srv.CABundle)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	switch {
	case srv.ClientCert == "" && srv.ClientKey == "":
	case srv.ClientCert == "":
		return nil, fmt.Errorf("clientKey %s is set but clientCert is not: mTLS needs both", srv.ClientKey)
	case srv.ClientKey == "":
		return nil, fmt.Errorf("clientCert %s is set but clientKey is not: mTLS needs both", srv.ClientCert)
	default:
		certPEM, err := readPEMFile("clientCert", srv.ClientCert)
		if err != nil {
			return nil, err
		}
		keyPEM, err := readPEMFile("clientKey", srv.ClientKey)
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			if strings.Contains(err.Error(), "does not match") {
				return nil, fmt.Errorf("clientKey %s does not match clientCert %s", srv.ClientKey, srv.ClientCert)
			}
			// X509KeyPair's errors hold no key material.
			return nil, fmt.Errorf("clientCert %s / clientKey %s: %w", srv.ClientCert, srv.ClientKey, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

func readPEMFile(field, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s %s: file not found", field, path)
		}
		return nil, fmt.Errorf("%s %s: %w", field, path, err)
	}
	return data, nil
}

// loadCABundle reads a PEM file of CA certificates. Unlike
// x509.CertPool.AppendCertsFromPEM, it says what is wrong with a bad file.
func loadCABundle(path string) (*x509.CertPool, error) {
	data, err := readPEMFile("caBundle", path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("caBundle %s: certificate %d: %w", path, n, err)
		}
		pool.AddCert(cert)
	}
	if n == 0 {
		return nil, fmt.Errorf("caBundle %s: no PEM CERTIFICATE block found", path)
	}
	return pool, nil
}
