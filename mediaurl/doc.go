// Package mediaurl turns the URL of an image or a file in a request into
// its bytes, under the server's policy.
//
// A data: URL (base64) is decoded, within a byte cap. A remote http(s) URL
// is refused unless the server allows remote media; then it is fetched
// with a size cap and a deadline, over connections that refuse loopback,
// private, link-local and other non-public addresses. The address check
// runs on the IP each connection actually dials (a net.Dialer Control
// hook), after name resolution, so a name that resolves to an internal
// address — at first or on a later lookup (DNS rebinding) — or a redirect
// to one gets nowhere. Environment proxies are not used: through a proxy
// the dialed address would be the proxy's.
package mediaurl
