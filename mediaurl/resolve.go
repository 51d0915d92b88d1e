package mediaurl

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// The errors Resolve returns, wrapped with the detail of the case.
var (
	ErrRemoteDisabled = errors.New("mediaurl: remote media URLs are not fetched by this server (send the data inline as a base64 data: URL, or start it with --allow-remote-media)")
	ErrScheme         = errors.New("mediaurl: only data:, http: and https: URLs are accepted")
	ErrBadDataURL     = errors.New("mediaurl: malformed data: URL (want data:<media type>;base64,<data>)")
	ErrTooLarge       = errors.New("mediaurl: the media is too large")
	ErrAddress        = errors.New("mediaurl: the URL's host is not a public address")
	ErrFetch          = errors.New("mediaurl: fetching the URL failed")
	ErrTimeout        = errors.New("mediaurl: fetching the URL took too long")
)

// Options configure a Resolver.
type Options struct {
	AllowRemote bool          // fetch http(s) URLs; off, they are refused
	MaxBytes    int           // cap on one item's decoded or fetched bytes; default 32 MiB
	Timeout     time.Duration // cap on one fetch, redirects included; default 15 s
	// Redirects is how many redirects a fetch follows; default 3.
	Redirects int
}

// Media is one resolved item.
type Media struct {
	MediaType string // as declared by the data: URL or the response; may be wrong or empty
	Data      []byte
}

// Resolver resolves media URLs; safe for concurrent use.
type Resolver struct {
	opts   Options
	client *http.Client
	dialer *net.Dialer
	// lookup resolves a host name and publicAddr says whether a connection
	// may go to an address: seams for tests, which must not touch the
	// network yet reach their own loopback server.
	lookup     func(ctx context.Context, host string) ([]netip.Addr, error)
	publicAddr func(ip net.IP) bool
}

// New returns a Resolver.
func New(opts Options) *Resolver {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 32 << 20
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 15 * time.Second
	}
	if opts.Redirects <= 0 {
		opts.Redirects = 3
	}
	r := &Resolver{opts: opts, publicAddr: isPublic, lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}}
	r.dialer = &net.Dialer{Timeout: opts.Timeout, Control: r.controlDial}
	r.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           r.dial,
			TLSHandshakeTimeout:   opts.Timeout,
			ResponseHeaderTimeout: opts.Timeout,
			MaxIdleConns:          4,
			IdleConnTimeout:       30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > opts.Redirects {
				return fmt.Errorf("more than %d redirects", opts.Redirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("a redirect to a %s: URL", req.URL.Scheme)
			}
			return nil
		},
	}
	return r
}

// AllowRemote reports whether http(s) URLs are fetched.
func (r *Resolver) AllowRemote() bool { return r.opts.AllowRemote }

// MaxBytes is the cap on one item.
func (r *Resolver) MaxBytes() int { return r.opts.MaxBytes }

// Resolve returns the bytes a URL names.
func (r *Resolver) Resolve(ctx context.Context, rawURL string) (Media, error) {
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch strings.ToLower(scheme) {
	case "data":
		return r.decodeData(rawURL)
	case "http", "https":
		if !r.opts.AllowRemote {
			return Media{}, ErrRemoteDisabled
		}
		return r.fetch(ctx, rawURL)
	}
	return Media{}, ErrScheme
}

// DecodeBase64 decodes base64 data sent inline (an Anthropic source's
// data), within the byte cap.
func (r *Resolver) DecodeBase64(mediaType, b64 string) (Media, error) {
	// The decoded size is known from the encoded length: refuse before
	// allocating.
	if n := base64.StdEncoding.DecodedLen(len(b64)); n > r.opts.MaxBytes+2 {
		return Media{}, fmt.Errorf("%w: about %d bytes, above the limit of %d", ErrTooLarge, n, r.opts.MaxBytes)
	}
	b64 = strings.TrimRight(b64, "\r\n")
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil && len(b64)%4 != 0 { // some clients leave the padding off
		data, err = base64.RawStdEncoding.DecodeString(b64)
	}
	if err != nil {
		return Media{}, fmt.Errorf("%w: the data is not valid base64", ErrBadDataURL)
	}
	if len(data) > r.opts.MaxBytes {
		return Media{}, fmt.Errorf("%w: %d bytes, above the limit of %d", ErrTooLarge, len(data), r.opts.MaxBytes)
	}
	return Media{MediaType: mediaType, Data: data}, nil
}

func (r *Resolver) decodeData(rawURL string) (Media, error) {
	meta, b64, ok := strings.Cut(rawURL[len("data:"):], ",")
	if !ok || !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return Media{}, ErrBadDataURL
	}
	mediaType, _, _ := strings.Cut(meta[:len(meta)-len(";base64")], ";")
	return r.DecodeBase64(strings.ToLower(mediaType), b64)
}

func (r *Resolver) fetch(ctx context.Context, rawURL string) (Media, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Media{}, fmt.Errorf("%w: the URL does not parse", ErrFetch)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Media{}, fmt.Errorf("%w: %v", ErrFetch, err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return Media{}, r.fetchError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Media{}, fmt.Errorf("%w: the server answered %s", ErrFetch, resp.Status)
	}
	if resp.ContentLength > int64(r.opts.MaxBytes) {
		return Media{}, fmt.Errorf("%w: %d bytes, above the limit of %d", ErrTooLarge, resp.ContentLength, r.opts.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.opts.MaxBytes)+1))
	if err != nil {
		return Media{}, r.fetchError(ctx, err)
	}
	if len(data) > r.opts.MaxBytes {
		return Media{}, fmt.Errorf("%w: more than the limit of %d bytes", ErrTooLarge, r.opts.MaxBytes)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return Media{MediaType: mediaType, Data: data}, nil
}

// fetchError classifies a failed fetch: the address policy, the deadline
// (the request's context or one of the transport's own timeouts, which are
// the same length and may fire first), or the network.
func (r *Resolver) fetchError(ctx context.Context, err error) error {
	var netErr net.Error
	switch {
	case errors.Is(err, ErrAddress):
		var addrErr *addressError
		if errors.As(err, &addrErr) {
			return addrErr
		}
		return ErrAddress
	case ctx.Err() != nil, errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Errorf("%w (limit %s)", ErrTimeout, r.opts.Timeout)
	}
	return fmt.Errorf("%w: %v", ErrFetch, err)
}

// addressError is a refused dial, naming the address.
type addressError struct{ ip net.IP }

func (e *addressError) Error() string {
	return fmt.Sprintf("%s (it resolves to %s)", ErrAddress.Error(), e.ip)
}
func (e *addressError) Unwrap() error { return ErrAddress }

// dial connects to the first of a host's addresses that answers.
func (r *Resolver) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ips, err := r.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no address for %s", host)
	}
	var first error
	for _, ip := range ips {
		conn, err := r.dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// controlDial runs on every connection after its address is resolved and
// before it connects: the one place the real destination is known.
func (r *Resolver) controlDial(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || !r.publicAddr(ip) {
		return &addressError{ip: ip}
	}
	return nil
}
