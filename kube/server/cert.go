package server

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"slices"
	"time"
)

// staleCert reports whether the serving certificate in file must be made again: it expires
// within 30 days, or it does not name every host and address it serves (a --kube-host added
// since). A missing or unreadable file is not stale: the library makes one.
func staleCert(file string, dns []string, ips []net.IP, now time.Time) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return true
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return true
	}
	if now.Add(30 * 24 * time.Hour).After(cert.NotAfter) {
		return true
	}
	for _, d := range dns {
		if !slices.Contains(cert.DNSNames, d) {
			return true
		}
	}
	for _, ip := range ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return true
		}
	}
	return false
}
