package testpki

import (
	"crypto/tls"
	"io"
	"testing"
)

// TestHandshake: a server certificate of one CA and a client certificate
// of another make a mutual TLS handshake on 127.0.0.1, each side trusting
// the other's CA; a client of a third CA is refused.
func TestHandshake(t *testing.T) {
	serverCA, clientCA, rogueCA := NewCA(t, "server CA"), NewCA(t, "client CA"), NewCA(t, "rogue CA")
	_, _, serverPair := serverCA.Issue(t, "server", false)
	_, _, clientPair := clientCA.Issue(t, "client", true)
	_, _, roguePair := rogueCA.Issue(t, "rogue", true)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverPair}, ClientCAs: clientCA.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_, _ = io.WriteString(c, "ok")
			c.Close()
		}
	}()
	dial := func(pair tls.Certificate) error {
		c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{
			RootCAs: serverCA.Pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12,
		})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = io.ReadAll(c)
		return err
	}
	if err := dial(clientPair); err != nil {
		t.Errorf("client of the trusted CA: %v", err)
	}
	if err := dial(roguePair); err == nil {
		t.Error("client of a rogue CA accepted")
	}
}
