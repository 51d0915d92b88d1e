package mediaurl

import (
	"net"
	"net/netip"
)

// nonPublic are the ranges a server-side fetch must never reach beyond
// what net.IP's predicates cover: shared (carrier NAT), IETF protocol
// assignments, benchmarking, reserved and broadcast addresses, and the
// IPv6 documentation and discard prefixes.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// isPublic reports whether ip is a public unicast address. IPv6 forms that
// embed an IPv4 address (mapped, NAT64, 6to4) are judged by that address.
func isPublic(ip net.IP) bool {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return false
	}
	a = embeddedIPv4(a.Unmap())
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address a NAT64 or 6to4 address carries,
// or a itself.
func embeddedIPv4(a netip.Addr) netip.Addr {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16]))
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return a
}
